//! Alltoall: every rank packs its n outgoing blocks into its slot, block j at
//! `j * stride`, and arrives; then every rank unpacks piece `me` of every slot
//! into its receive buffer. Blocks that fit a slot half together go in one
//! step (`stride` = the block); larger ones in pieces of a sub-slot
//! ([`super::alltoallv::sub_slot`]) per step, the same piece of every block in
//! one step. One synchronization per step and two copies per byte, where a
//! schedule pays a message per pair (the schedule machinery's fixed cost
//! dominated small alltoalls; on a crowded host each of pairwise's n - 1
//! exchanges waits for its partner to be scheduled).
//! In place works as is: our slot holds every outgoing piece of a step before
//! the receive buffer is written, and a step writes only the bytes of the
//! blocks its pieces came from.
use super::{Counter, Session, CHUNK};
use crate::buf::{RecvBuf, SendBuf};

/// Whether `n` blocks of `blk` bytes fit one slot half (one step).
pub(crate) fn fits(n: usize, blk: usize) -> bool {
    n.checked_mul(blk).is_some_and(|t| t <= CHUNK)
}

/// As MPI_Alltoall: `send` (`None`: in place) holds `n` blocks of `sendcount`
/// elements, `recv` `n` blocks of `recvcount`; `blk`, a block's packed bytes, is the
/// same on every rank and on both sides.
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
    let stride = if fits(n, blk) {
        blk
    } else {
        super::alltoallv::sub_slot(n)
    };
    assert!(
        stride > 0 && n * stride <= CHUNK,
        "alltoall pieces exceed a slot half"
    );
    let mut off = 0;
    while off < blk {
        let len = stride.min(blk - off);
        let s = cx.next();
        cx.wait_free(s);
        // Nobody reads our slot half (n * stride <= CHUNK bytes) before we arrive.
        let slot = cx.area().slot(me, s);
        {
            let (src, scount) = match &send {
                Some(src) => (*src, sendcount),
                None => (recv.as_elems(), recvcount),
            };
            for j in 0..n {
                slot.sub(j * stride, len)
                    .pack_in(&src.block(j * scount, scount), off);
            }
        }
        cx.set(Counter::Flag, s);
        if cx.r.oversubscribed {
            cx.counted_step(s);
        } else {
            cx.ring_others();
            cx.wait_all(Counter::Flag, s);
        }
        cx.learn(s - 1);
        for j in 0..n {
            // Rank j published its slot (Acquire above), our piece at me * stride.
            cx.area()
                .slot(j, s)
                .sub(me * stride, len)
                .unpack_out(&mut recv.block_mut(j * recvcount, recvcount), off);
        }
        cx.set_done(s);
        off += len;
    }
}
