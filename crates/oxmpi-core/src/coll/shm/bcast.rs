//! Broadcast: the root copies (or packs) the message into the broadcast buffer
//! chunk by chunk, alternating its two halves, and publishes each chunk with
//! `release`; the others copy (or unpack) it out and report `done`. The root
//! reuses a half once every rank is done with the chunk two steps back, so the
//! copies in and out overlap. A message of at most [`INLINE`](super::INLINE) bytes travels in
//! the release line instead (same parity rule), with the publication, and one of
//! at most [`NEAR`](super::NEAR) bytes in the near broadcast buffer, in the
//! release line's page (`CollArena::root_stage`).
use super::{Session, CHUNK};
use crate::buf::RecvBuf;

/// `buf` is read at the root, written elsewhere; `m`, its packed byte count, is the
/// same on every rank (the caller checked the root and the datatype). Takes the
/// descriptor, not a view: the view made here, next to its uses, lets the compiler
/// skip the shape fields bcast never reads (a view made by the caller and passed in
/// cost 33 Ir more per call, bench/PROFILE.md).
pub(crate) fn bcast(mut sess: Session<'_>, buf: &mut RecvBuf<'_, '_>, m: usize, root: usize) {
    let mut buf = buf.elems_mut();
    let mut cx = sess.ctx();
    let mut off = 0;
    while off < m {
        let len = CHUNK.min(m - off);
        let s = cx.next();
        // A message of at most INLINE bytes (the same test on every rank: the
        // ranks' byte counts match) goes in the release line itself.
        if cx.me == root {
            cx.wait_free(s);
            // Nobody reads the half until we publish it.
            cx.area()
                .root_stage(s, m)
                .sub(0, len)
                .pack_in(&buf.as_elems(), off);
            cx.publish_release(s);
        } else {
            cx.wait_release(s);
            // The root published `len` bytes in the half (Acquire above).
            cx.area()
                .root_stage(s, m)
                .sub(0, len)
                .unpack_out(&mut buf, off);
        }
        // The root reads `done` only to reuse a half (`wait_free`), and is rung then.
        cx.set_done(s);
        off += len;
    }
}
