//! Broadcast: the root copies (or packs) the message into the broadcast buffer
//! chunk by chunk, alternating its two halves, and publishes each chunk with
//! `release`; the others copy (or unpack) it out and report `done`. The root
//! reuses a half once every rank is done with the chunk two steps back, so the
//! copies in and out overlap. A message of at most [`INLINE`] bytes travels in
//! the release line instead (same parity rule), with the publication.
use super::{copy, Session, CHUNK, INLINE};
use crate::datatype::Datatype;

/// # Safety
/// `buf` holds `count` elements of `dt` (read at the root, written elsewhere)
/// and `count * dt.size()` is the same on every rank.
pub(crate) unsafe fn bcast(
    mut sess: Session<'_>,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    root: usize,
) {
    let mut cx = sess.ctx();
    let m = count * dt.size();
    let contiguous = dt.is_contiguous();
    let base = buf.wrapping_offset(dt.true_lb());
    let mut off = 0;
    while off < m {
        let len = CHUNK.min(m - off);
        let s = cx.next();
        // A message of at most INLINE bytes (the same test on every rank: the
        // ranks' byte counts match) goes in the release line itself.
        let b = if m <= INLINE {
            cx.area().inline_bbuf(s)
        } else {
            cx.area().bbuf(s)
        };
        if cx.me == root {
            cx.wait_free(s);
            if contiguous {
                // SAFETY: the message's bytes [off, off + len) are at `base + off` for a contiguous type; the buffer half holds CHUNK >= len bytes.
                unsafe { copy(base.wrapping_add(off), b, len) };
            } else {
                // SAFETY: `buf` holds `count` elements of `dt`; the half holds `len` bytes that nobody reads until we publish it.
                unsafe { dt.pack_range(buf, count, off, std::slice::from_raw_parts_mut(b, len)) };
            }
            cx.publish_release(s);
        } else {
            cx.wait_release(s);
            if contiguous {
                // SAFETY: the root published `len` bytes in the half (Acquire above); the destination holds the message's bytes [off, off + len).
                unsafe { copy(b, base.wrapping_add(off), len) };
            } else {
                // SAFETY: as above; `buf` can hold `count` elements of `dt`.
                unsafe { dt.unpack_range(std::slice::from_raw_parts(b, len), buf, count, off) };
            }
        }
        // The root reads `done` only to reuse a half (`wait_free`), and is rung then.
        cx.set_done(s);
        off += len;
    }
}
