//! Allgather: every rank packs (a chunk of) its block into its slot and raises
//! its flag (on an oversubscribed host: arrives at a counted step, the last
//! releasing everyone); then every rank unpacks every slot into its receive
//! buffer.
use super::{copy, Counter, Session, CHUNK};
use crate::coll::util;
use crate::datatype::Datatype;

/// # Safety
/// As MPI_Allgather: `sendbuf` (unless in place) holds `sendcount` elements of
/// `sendtype`, `recvbuf` holds `n * recvcount` elements of `recvtype`, and the
/// block bytes `recvcount * recvtype.size()` are the same on every rank.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather(
    mut sess: Session<'_>,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
) {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let blk = recvcount * recvtype.size();
    let block_at = |j: usize| util::elem_ptr_mut(recvbuf, (j * recvcount) as isize, recvtype);
    let (src, scount, stype) = match sendbuf {
        Some(p) => (p, sendcount, sendtype),
        None => (block_at(me) as *const u8, recvcount, recvtype),
    };
    let mut off = 0;
    while off < blk {
        let len = CHUNK.min(blk - off);
        let s = cx.next();
        cx.wait_free(s);
        let slot = cx.area().slot(me, s);
        if stype.is_contiguous() {
            // SAFETY: a contiguous block's packed bytes [off, off + len) are at `src + true_lb + off`; the slot half holds CHUNK >= len bytes.
            unsafe {
                copy(
                    src.wrapping_offset(stype.true_lb()).wrapping_add(off),
                    slot,
                    len,
                )
            };
        } else {
            // SAFETY: `src` holds `scount` elements of `stype`; the slot half is ours.
            unsafe {
                stype.pack_range(src, scount, off, std::slice::from_raw_parts_mut(slot, len))
            };
        }
        cx.set(Counter::Flag, s);
        if cx.r.oversubscribed {
            // A counted step: the last to arrive wakes everyone with one call
            // (each flag ringing every sleeper cost n - 1 wake-ups per rank).
            if cx.arrive() {
                cx.publish_release(s);
            } else {
                cx.wait_release(s);
            }
        } else {
            cx.ring_when_complete(Counter::Flag, s, None);
            cx.wait_all(Counter::Flag, s);
        }
        cx.learn(s - 1);
        for j in 0..n {
            if j == me && sendbuf.is_none() {
                continue;
            }
            let from = cx.area().slot(j, s) as *const u8;
            let dst = block_at(j);
            if recvtype.is_contiguous() {
                // SAFETY: rank j published `len` bytes in its slot (Acquire above); block j of the receive buffer holds its packed bytes [off, off + len).
                unsafe {
                    copy(
                        from,
                        dst.wrapping_offset(recvtype.true_lb()).wrapping_add(off),
                        len,
                    )
                };
            } else {
                // SAFETY: as above; block j holds `recvcount` elements of `recvtype`.
                unsafe {
                    recvtype.unpack_range(
                        std::slice::from_raw_parts(from, len),
                        dst,
                        recvcount,
                        off,
                    )
                };
            }
        }
        cx.set_done(s);
        off += len;
    }
}
