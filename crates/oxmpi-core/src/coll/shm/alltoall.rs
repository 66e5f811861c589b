//! Alltoall (blocks that fit one slot half together): every rank packs its n
//! outgoing blocks into its slot, block j at `j * blk`, and arrives; then every
//! rank unpacks block `me` of every slot into its receive buffer. One
//! synchronization and two copies per block, where a schedule pays a message
//! per pair (the schedule machinery's fixed cost dominated small alltoalls).
//! In place works as is: our slot holds every outgoing block before the
//! receive buffer is written.
use super::{copy, Counter, Session, CHUNK};
use crate::coll::util;
use crate::datatype::Datatype;

/// Whether `n` blocks of `blk` bytes fit one slot half (the caller's condition
/// for taking this path).
pub(crate) fn fits(n: usize, blk: usize) -> bool {
    n.checked_mul(blk).is_some_and(|t| t <= CHUNK)
}

/// # Safety
/// As MPI_Alltoall: `sendbuf` (unless in place) holds `n * sendcount` elements
/// of `sendtype`, `recvbuf` holds `n * recvcount` elements of `recvtype`, the
/// block bytes `blk = recvcount * recvtype.size()` are the same on every rank
/// and those of a send block, and `fits(n, blk)`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoall(
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
    assert!(fits(n, blk), "alltoall blocks exceed a slot half");
    let (src, scount, stype) = match sendbuf {
        Some(p) => (p, sendcount, sendtype),
        None => (recvbuf as *const u8, recvcount, recvtype),
    };
    let s = cx.next();
    cx.wait_free(s);
    let slot = cx.area().slot(me, s);
    for j in 0..n {
        let from = util::elem_ptr(src, (j * scount) as isize, stype);
        let to = slot.wrapping_add(j * blk);
        if stype.is_contiguous() {
            // SAFETY: block j's packed bytes are at `from + true_lb` for a contiguous type; the slot half holds n * blk <= CHUNK bytes, nobody reads it before we arrive.
            unsafe { copy(from.wrapping_offset(stype.true_lb()), to, blk) };
        } else {
            // SAFETY: `from` holds `scount` elements of `stype` (block j); `to` has blk bytes of our slot.
            unsafe { stype.pack_range(from, scount, 0, std::slice::from_raw_parts_mut(to, blk)) };
        }
    }
    cx.set(Counter::Flag, s);
    if cx.r.oversubscribed {
        if cx.arrive() {
            cx.publish_release(s);
        } else {
            cx.wait_release(s);
        }
    } else {
        cx.ring_others();
        cx.wait_all(Counter::Flag, s);
    }
    cx.learn(s - 1);
    for j in 0..n {
        let from = cx.area().slot(j, s).wrapping_add(me * blk) as *const u8;
        let dst = util::elem_ptr_mut(recvbuf, (j * recvcount) as isize, recvtype);
        if recvtype.is_contiguous() {
            // SAFETY: rank j published its slot (Acquire above), block `me` at me * blk; block j of the receive buffer holds blk packed bytes at `dst + true_lb`.
            unsafe { copy(from, dst.wrapping_offset(recvtype.true_lb()), blk) };
        } else {
            // SAFETY: as above; block j holds `recvcount` elements of `recvtype`.
            unsafe {
                recvtype.unpack_range(std::slice::from_raw_parts(from, blk), dst, recvcount, 0)
            };
        }
    }
    cx.set_done(s);
}
