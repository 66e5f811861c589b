//! Gatherv and scatterv: blocks of up to [`CHUNK`] bytes go through the
//! slots as in [`super::rooted`] (one synchronization for all of them); larger
//! blocks go point-to-point, in one schedule every rank runs after the step
//! (empty on most ranks, but run everywhere so that the blocking collectives'
//! tags stay in step). Both ends of a block know its size (the root from its
//! counts, the other rank from its own count: the type signatures match), so
//! they agree on its way without exchanging anything, and nothing read from the
//! area decides a length or an offset. Empty blocks move nowhere, and a rank
//! with nothing to move waits for nobody: every rank takes the step (so the
//! steps stay in step) but a zero-count call does not synchronize. The path is
//! taken where the area exists already ([`super::acquire_made`]).
use super::rooted::{own_block, put, take};
use super::{Counter, Session, CHUNK};
use crate::coll::sched::Builder;
use crate::coll::util;
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use std::sync::atomic::Ordering;

/// Whether a block of `blk` bytes goes through the slots.
fn in_slot(blk: usize) -> bool {
    blk > 0 && blk <= CHUNK
}

/// # Safety
/// As MPI_Gatherv, arguments checked: `sendbuf` (`None`: in place, root only)
/// holds `sendcount` elements of `sendtype`; at the root, `recvbuf` holds
/// `recvcounts[j]` elements of `recvtype` at displacement `displs[j]` for every
/// rank j (`recvcounts` and `displs` have an entry per rank).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv(
    mut sess: Session<'_>,
    comm: &Comm,
    call: &str,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcounts: &[usize],
    displs: &[isize],
    recvtype: &Datatype,
    root: usize,
) -> Result<()> {
    let mut b = Builder::new(comm);
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let s = cx.next();
    if me != root {
        let src = sendbuf.expect("MPI_IN_PLACE is the root's only");
        let blk = util::packed_len(sendcount, sendtype);
        if in_slot(blk) {
            cx.wait_free(s);
            // SAFETY: our send buffer holds `sendcount` elements (`blk` bytes); the slot half holds CHUNK >= blk bytes and nobody reads it before our flag.
            unsafe { put(src, sendcount, sendtype, cx.area().slot(me, s), blk) };
        } else if blk > 0 {
            let inp = util::packed_input(&mut b, src, sendcount, sendtype);
            b.send(inp, root as i32);
        }
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, Some(root));
    } else {
        let size = recvtype.size();
        let mut outs = Vec::new();
        if let Some(src) = sendbuf {
            let dst = util::elem_ptr_mut(recvbuf, displs[me], recvtype);
            let blk = recvcounts[me] * size;
            // SAFETY: the send buffer and the root's block of the receive buffer hold `blk` bytes of their types (checked by the caller); distinct buffers.
            unsafe { own_block(src, sendcount, sendtype, dst, recvcounts[me], recvtype, blk) };
        }
        for j in (0..n).filter(|&j| j != me && recvcounts[j] * size > CHUNK) {
            let dst = util::elem_ptr_mut(recvbuf, displs[j], recvtype);
            let o = util::packed_output(&mut b, dst, recvcounts[j], recvtype);
            b.recv(o, j as i32);
            outs.push((o, j));
        }
        // Only the ranks whose blocks are in their slots are waited for (an
        // all-empty gatherv does not wait); every arrival that completes the
        // set of flags rings us, so a sleeping root is woken by the last.
        let slotted = |j: usize| j != me && in_slot(recvcounts[j] * size);
        let mut j = 0;
        cx.wait(|| {
            while j < n {
                if slotted(j) && cx.counter(Counter::Flag, j).load(Ordering::Acquire) < s {
                    return false;
                }
                j += 1;
            }
            true
        });
        if (0..n).all(|j| j == me || slotted(j)) {
            cx.learn(s - 1);
        }
        for j in (0..n).filter(|&j| j != me && in_slot(recvcounts[j] * size)) {
            let dst = util::elem_ptr_mut(recvbuf, displs[j], recvtype);
            // SAFETY: rank j published its block (recvcounts[j] elements, at most CHUNK bytes) in its slot (Acquire in wait_all); block j of the receive buffer holds them.
            unsafe {
                take(
                    cx.area().slot(j, s),
                    recvcounts[j] * size,
                    dst,
                    recvcounts[j],
                    recvtype,
                )
            };
        }
        for (o, j) in outs {
            let dst = util::elem_ptr_mut(recvbuf, displs[j], recvtype);
            util::finish_output(&mut b, o, dst, recvcounts[j], recvtype);
        }
    }
    cx.set_done(s);
    drop(sess);
    crate::coll::run(b, call)
}

/// # Safety
/// As MPI_Scatterv, arguments checked: at the root, `sendbuf` holds
/// `sendcounts[j]` elements of `sendtype` at displacement `displs[j]` for every
/// rank j; `recvbuf` (`None`: in place, root only) holds `recvcount` elements of
/// `recvtype`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv(
    mut sess: Session<'_>,
    comm: &Comm,
    call: &str,
    sendbuf: *const u8,
    sendcounts: &[usize],
    displs: &[isize],
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: usize,
) -> Result<()> {
    let mut b = Builder::new(comm);
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let s = cx.next();
    if me == root {
        let size = sendtype.size();
        // A root with nothing for the slots does not wait (a zero-count
        // scatterv must not synchronize).
        if (0..n).any(|j| j != me && in_slot(sendcounts[j] * size)) {
            cx.wait_free(s);
        }
        for j in (0..n).filter(|&j| j != me) {
            let (cnt, blk) = (sendcounts[j], sendcounts[j] * size);
            let src = util::elem_ptr(sendbuf, displs[j], sendtype);
            if in_slot(blk) {
                // SAFETY: block j of the send buffer holds `cnt` elements (`blk` bytes); rank j's slot half holds CHUNK >= blk bytes, unread before release.
                unsafe { put(src, cnt, sendtype, cx.area().slot(j, s), blk) };
            } else if blk > 0 {
                let inp = util::packed_input(&mut b, src, cnt, sendtype);
                b.send(inp, j as i32);
            }
        }
        cx.publish_release(s);
        if let Some(dst) = recvbuf {
            let src = util::elem_ptr(sendbuf, displs[me], sendtype);
            let blk = sendcounts[me] * size;
            // SAFETY: the root's block of the send buffer and the receive buffer hold `blk` bytes of their types (checked by the caller); distinct buffers.
            unsafe { own_block(src, sendcounts[me], sendtype, dst, recvcount, recvtype, blk) };
        }
    } else {
        let dst = recvbuf.expect("MPI_IN_PLACE is the root's only");
        let blk = util::packed_len(recvcount, recvtype);
        if in_slot(blk) {
            cx.wait_release(s);
            // SAFETY: the root published our block in our slot (Acquire in wait_release); the receive buffer holds `recvcount` elements (`blk` bytes).
            unsafe { take(cx.area().slot(me, s), blk, dst, recvcount, recvtype) };
        } else if blk > 0 {
            let o = util::packed_output(&mut b, dst, recvcount, recvtype);
            b.recv(o, root as i32);
            util::finish_output(&mut b, o, dst, recvcount, recvtype);
        }
    }
    cx.set_done(s);
    drop(sess);
    crate::coll::run(b, call)
}
