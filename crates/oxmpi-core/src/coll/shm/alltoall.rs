//! Alltoall (blocks that fit one slot half together): every rank packs its n
//! outgoing blocks into its slot, block j at `j * blk`, and arrives; then every
//! rank unpacks block `me` of every slot into its receive buffer. One
//! synchronization and two copies per block, where a schedule pays a message
//! per pair (the schedule machinery's fixed cost dominated small alltoalls).
//! In place works as is: our slot holds every outgoing block before the
//! receive buffer is written.
use super::{Counter, Session, CHUNK};
use crate::buf::{RecvBuf, SendBuf};

/// Whether `n` blocks of `blk` bytes fit one slot half (the caller's condition
/// for taking this path).
pub(crate) fn fits(n: usize, blk: usize) -> bool {
    n.checked_mul(blk).is_some_and(|t| t <= CHUNK)
}

/// As MPI_Alltoall: `send` (`None`: in place) holds `n` blocks of `sendcount`
/// elements, `recv` `n` blocks of `recvcount`; `blk`, a block's packed bytes, is the
/// same on every rank and on both sides, and `fits(n, blk)` (asserted).
pub(crate) fn alltoall(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    sendcount: usize,
    recv: &mut RecvBuf<'_, '_>,
    recvcount: usize,
    blk: usize,
) {
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut recv = recv.elems_mut();
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    assert!(fits(n, blk), "alltoall blocks exceed a slot half");
    let s = cx.next();
    cx.wait_free(s);
    // Nobody reads our slot half (n * blk <= CHUNK bytes) before we arrive.
    let slot = cx.area().slot(me, s);
    {
        let (src, scount) = match &send {
            Some(src) => (*src, sendcount),
            None => (recv.as_elems(), recvcount),
        };
        for j in 0..n {
            slot.sub(j * blk, blk)
                .pack_in(&src.block(j * scount, scount), 0);
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
        // Rank j published its slot (Acquire above), block `me` at me * blk.
        cx.area()
            .slot(j, s)
            .sub(me * blk, blk)
            .unpack_out(&mut recv.block_mut(j * recvcount, recvcount), 0);
    }
    cx.set_done(s);
}
