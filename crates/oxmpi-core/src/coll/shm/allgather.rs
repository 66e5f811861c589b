//! Allgather: every rank packs (a chunk of) its block into its slot and raises
//! its flag (on an oversubscribed host: arrives at a counted step, the last
//! releasing everyone); then every rank unpacks every slot into its receive
//! buffer. A block of at most [`INLINE_SLOT`](super::INLINE_SLOT) bytes (the same test on every rank)
//! goes in the rank's inline slot, beside its flag in its control line: a reader
//! gets the block with the line it waits on (one cache-line transfer a peer
//! instead of two).
use super::{Counter, Session, CHUNK};
use crate::buf::{RecvBuf, SendBuf};

/// As MPI_Allgather: `send` (`None`: in place) is this rank's block, `recv` holds `n *
/// recvcount` elements (MPI_Allgatherv with equal counts: block j at `displs[j]`), and
/// `blk`, a block's packed bytes, is the same on every rank.
pub(crate) fn allgather(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    recv: &mut RecvBuf<'_, '_>,
    recvcount: usize,
    displs: Option<&[isize]>,
    blk: usize,
) {
    // Block j's first element: MPI_Allgatherv's displacement (rank-local, so
    // only its placement may differ between ranks: the path is chosen from
    // the counts, which every rank shares), else j * recvcount. The caller
    // checked that every block lies inside `recv` (`VLayout::check`: a non-empty
    // block's displacement is non-negative and its end within the descriptor).
    let first = |j: usize| displs.map_or(j * recvcount, |d| d[j] as usize);
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut recv = recv.elems_mut();
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    let mut off = 0;
    while off < blk {
        let len = CHUNK.min(blk - off);
        let s = cx.next();
        cx.wait_free(s);
        // Nobody reads our slot half before our flag.
        let slot = cx.area().slot_for(me, s, blk).sub(0, len);
        match &send {
            Some(src) => slot.pack_in(src, off),
            None => slot.pack_in(&recv.as_elems().block(first(me), recvcount), off),
        }
        cx.set(Counter::Flag, s);
        if cx.r.oversubscribed {
            // A counted step: the last to arrive wakes everyone with one call
            // (each flag ringing every sleeper cost n - 1 wake-ups per rank).
            cx.counted_step(s);
        } else {
            cx.ring_when_complete(Counter::Flag, s, None);
            cx.wait_all(Counter::Flag, s);
        }
        cx.learn(s - 1);
        for j in 0..n {
            if j == me && send.is_none() {
                continue;
            }
            // Rank j published `len` bytes in its slot (Acquire above).
            cx.area()
                .slot_for(j, s, blk)
                .sub(0, len)
                .unpack_out(&mut recv.block_mut(first(j), recvcount), off);
        }
        cx.set_done(s);
        off += len;
    }
}
