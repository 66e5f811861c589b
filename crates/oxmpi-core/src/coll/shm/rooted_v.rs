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
use crate::buf::elems::{VBlocks, VBlocksMut, VLayout};
use crate::buf::{RecvBuf, SendBuf};
use crate::coll::api::dt;
use crate::coll::sched::Builder;
use crate::coll::util;
use crate::comm::Comm;
use crate::error::Result;
use std::sync::atomic::Ordering;

/// Whether a block of `blk` bytes goes through the slots.
fn in_slot(blk: usize) -> bool {
    blk > 0 && blk <= CHUNK
}

/// As MPI_Gatherv, arguments checked: `send` (`None`: in place, root only) is
/// this rank's block; at the root, `recv` is the receive descriptor with its
/// blocks' layout (checked against it when made; ignored elsewhere).
pub(crate) fn gatherv(
    mut sess: Session<'_>,
    comm: &Comm,
    call: &str,
    send: Option<&SendBuf<'_, '_>>,
    recv: Option<(&mut RecvBuf<'_, '_>, VLayout<'_>)>,
    root: usize,
) -> Result<()> {
    let mut b = Builder::new(comm);
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let sendtype = dt(send.and_then(|s| s.datatype()));
    let send = send.map(|s| s.elems());
    let recv = recv
        .filter(|_| me == root)
        .map(|(r, layout)| (dt(r.datatype()), VBlocksMut::new(r.elems_mut(), layout)));
    let s = cx.next();
    if let (false, Some(src)) = (me == root, &send) {
        let blk = util::packed_len(src.count(), sendtype);
        if in_slot(blk) {
            cx.wait_free(s);
            // Nobody reads our slot half (CHUNK >= blk bytes) before our flag.
            put(src, cx.area().slot(me, s), blk);
        } else if blk > 0 {
            let inp = util::packed_input(&mut b, src.ptr(), src.count(), sendtype);
            b.send(inp, root as i32);
        }
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, Some(root));
    } else if let Some((recvtype, mut recv)) = recv {
        let recvcounts = recv.counts();
        let size = recvtype.size();
        let mut outs = Vec::new();
        if let Some(src) = &send {
            let blk = recvcounts[me] * size;
            own_block(src, sendtype, &mut recv.get_mut(me), blk);
        }
        for j in (0..n).filter(|&j| j != me && recvcounts[j] * size > CHUNK) {
            let dst = recv.get_mut(j).ptr();
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
            // Rank j published its block (recvcounts[j] elements, at most CHUNK bytes) in its slot (Acquire in the wait).
            take(
                cx.area().slot(j, s),
                recvcounts[j] * size,
                &mut recv.get_mut(j),
            );
        }
        for (o, j) in outs {
            let dst = recv.get_mut(j).ptr();
            util::finish_output(&mut b, o, dst, recvcounts[j], recvtype);
        }
    } else {
        panic!("MPI_IN_PLACE is the root's only");
    }
    cx.set_done(s);
    drop(sess);
    crate::coll::run(b, call)
}

/// As MPI_Scatterv, arguments checked: at the root, `send` is the send
/// descriptor with its blocks' layout (checked against it when made; ignored
/// elsewhere); `recv` (`None`: in place, root only) is this rank's block.
pub(crate) fn scatterv(
    mut sess: Session<'_>,
    comm: &Comm,
    call: &str,
    send: Option<(&SendBuf<'_, '_>, VLayout<'_>)>,
    recv: Option<&mut RecvBuf<'_, '_>>,
    root: usize,
) -> Result<()> {
    let mut b = Builder::new(comm);
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let send = send
        .filter(|_| me == root)
        .map(|(s, layout)| (dt(s.datatype()), VBlocks::new(s.elems(), layout)));
    let recvtype = dt(recv.as_ref().and_then(|r| r.datatype()));
    let recv = recv.map(|r| r.elems_mut());
    let s = cx.next();
    if let Some((sendtype, send)) = send {
        let sendcounts = send.counts();
        let size = sendtype.size();
        // A root with nothing for the slots does not wait (a zero-count
        // scatterv must not synchronize).
        if (0..n).any(|j| j != me && in_slot(sendcounts[j] * size)) {
            cx.wait_free(s);
        }
        for j in (0..n).filter(|&j| j != me) {
            let (cnt, blk) = (sendcounts[j], sendcounts[j] * size);
            let src = send.get(j);
            if in_slot(blk) {
                // Rank j's slot half (CHUNK >= blk bytes) is unread before release.
                put(&src, cx.area().slot(j, s), blk);
            } else if blk > 0 {
                let inp = util::packed_input(&mut b, src.ptr(), cnt, sendtype);
                b.send(inp, j as i32);
            }
        }
        cx.publish_release(s);
        if let Some(mut dst) = recv {
            let blk = sendcounts[me] * size;
            own_block(&send.get(me), sendtype, &mut dst, blk);
        }
    } else {
        let mut dst = recv.expect("MPI_IN_PLACE is the root's only");
        let recvcount = dst.count();
        let blk = util::packed_len(recvcount, recvtype);
        if in_slot(blk) {
            cx.wait_release(s);
            // The root published our block in our slot (Acquire in wait_release).
            take(cx.area().slot(me, s), blk, &mut dst);
        } else if blk > 0 {
            let o = util::packed_output(&mut b, dst.ptr(), recvcount, recvtype);
            b.recv(o, root as i32);
            util::finish_output(&mut b, o, dst.ptr(), recvcount, recvtype);
        }
    }
    cx.set_done(s);
    drop(sess);
    crate::coll::run(b, call)
}
