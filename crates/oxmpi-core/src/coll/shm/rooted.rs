//! Gather and scatter of blocks that fit one slot half (up to [`CHUNK`] bytes
//! per rank), one synchronization each:
//! * gather: every other rank packs its block into its own slot and raises its
//!   flag (the last to do so rings the root); the root unpacks every slot into
//!   its receive buffer. On 2 ranks a block of at most [`INLINE`] bytes goes in
//!   the release line's inline half instead, published with `release` (a
//!   broadcast from the one other rank to the root, as any rank may root a
//!   bcast): the root reads it with the line it waits on;
//! * scatter: the root packs block j into rank j's slot and publishes
//!   `release`; every other rank unpacks its slot. Where the other ranks'
//!   blocks fit the release line's inline half together (`(n - 1) * blk <=`
//!   [`INLINE`], the same test on every rank: 2 ranks up to 24 bytes, 4 ranks
//!   8), they go there instead, in rank order without the root's, and reach
//!   every other rank with the publication itself: one cache-line transfer
//!   instead of two (the release line, then the slot's).
//!
//! The root's own block goes straight from its send to its receive buffer
//! (nothing to do in place). Where a schedule pays a message per rank (the
//! schedule machinery's fixed cost dominated small gathers and scatters), this
//! costs two copies per block.
use super::{Counter, Ctx, Session, CHUNK, INLINE};
use crate::buf::elems::{Elems, ElemsMut};
use crate::buf::{RecvBuf, SendBuf};
use crate::datatype::Datatype;
use crate::transport::shm::arena::Stage;

/// Packs the elements of `src` (`blk` packed bytes) to the start of `to`.
pub(super) fn put(src: &Elems<'_>, to: Stage<'_>, blk: usize) {
    to.sub(0, blk).pack_in(src, 0);
}

/// Unpacks `blk` bytes at the start of `from` into the elements of `dst`.
pub(super) fn take(from: Stage<'_>, blk: usize, dst: &mut ElemsMut<'_>) {
    from.sub(0, blk).unpack_out(dst, 0);
}

/// Copies the root's own block (`blk` packed bytes on both sides) from its send
/// to its receive buffer (through a temporary when the send type is not
/// contiguous).
pub(super) fn own_block(src: &Elems<'_>, stype: &Datatype, dst: &mut ElemsMut<'_>, blk: usize) {
    if blk == 0 {
        return;
    }
    if stype.is_contiguous() {
        dst.unpack(0, &src.span(0, src.count())[..blk]);
    } else {
        let mut tmp = vec![0u8; blk];
        src.pack(0, &mut tmp);
        dst.unpack(0, &tmp);
    }
}

/// Whether blocks of `blk` bytes take this path.
pub(crate) fn fits(blk: usize) -> bool {
    blk <= CHUNK
}

/// As MPI_Gather, arguments checked: `send` (`None`: in place, root only) is this
/// rank's block of `sendtype`, `recv` (the root's; ignored elsewhere) holds `n`
/// blocks of `recvcount`; every block is `blk` packed bytes and `fits(blk)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    recvcount: usize,
    root: usize,
    blk: usize,
) {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    assert!(fits(blk), "gather blocks exceed a slot half");
    // The views made here, next to their uses (as bcast: cheaper than passed in).
    let send = send.map(|s| s.elems());
    let mut recv = recv.filter(|_| me == root).map(|r| r.elems_mut());
    assert_eq!(
        recv.is_some(),
        me == root,
        "gather: the root's receive buffer"
    );
    let s = cx.next();
    // The same test on every rank (the blocks' sizes match).
    let inline = n == 2 && blk <= INLINE;
    match &mut recv {
        None if inline => {
            cx.wait_free(s);
            let src = send.expect("MPI_IN_PLACE is the root's only");
            // Nobody reads the inline half of this parity before `release = s`.
            put(&src, cx.area().inline_bbuf(s), blk);
            // `release` only grows (a barrier's second publisher may come late).
            cx.publish_release_once(s);
        }
        None => {
            cx.wait_free(s);
            let src = send.expect("MPI_IN_PLACE is the root's only");
            // Nobody reads our slot half (CHUNK >= blk bytes) before our flag.
            put(&src, cx.area().slot(me, s), blk);
            // We read nothing of this step: flag and `done` with one fence.
            cx.contribute(s, root);
            return;
        }
        Some(recv) => {
            if let Some(src) = &send {
                own_block(
                    src,
                    sendtype,
                    &mut recv.block_mut(me * recvcount, recvcount),
                    blk,
                );
            }
            if inline {
                cx.wait_release(s);
                // The other rank published its block there (Acquire above).
                take(
                    cx.area().inline_bbuf(s),
                    blk,
                    &mut recv.block_mut((1 - me) * recvcount, recvcount),
                );
                cx.set_done(s);
                return;
            }
            cx.wait_all(Counter::Flag, s);
            cx.learn(s - 1);
            for j in (0..n).filter(|&j| j != me) {
                // Rank j published `blk` bytes in its slot (Acquire in wait_all).
                take(
                    cx.area().slot(j, s),
                    blk,
                    &mut recv.block_mut(j * recvcount, recvcount),
                );
            }
        }
    }
    cx.set_done(s);
}

/// Where a scatter's step `s` carries rank `j`'s block of `blk` bytes: its place
/// among the other ranks' blocks in the inline half when all of them fit there
/// together, else its slot half (CHUNK >= blk bytes).
fn scatter_stage<'a>(cx: &'a Ctx<'_>, s: u64, j: usize, root: usize, blk: usize) -> Stage<'a> {
    if (cx.n - 1) * blk <= INLINE {
        cx.area()
            .inline_bbuf(s)
            .sub((j - usize::from(j > root)) * blk, blk)
    } else {
        cx.area().slot(j, s)
    }
}

/// As MPI_Scatter, arguments checked: `send` (the root's; ignored elsewhere) holds
/// `n` blocks of `sendcount` elements of `sendtype`, `recv` (`None`: in place, root
/// only) this rank's block; every block is `blk` packed bytes and `fits(blk)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter(
    mut sess: Session<'_>,
    send: Option<&SendBuf<'_, '_>>,
    sendcount: usize,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    root: usize,
    blk: usize,
) {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    assert!(fits(blk), "scatter blocks exceed a slot half");
    let send = send.filter(|_| me == root).map(|s| s.elems());
    let mut recv = recv.map(|r| r.elems_mut());
    assert_eq!(
        send.is_some(),
        me == root,
        "scatter: the root's send buffer"
    );
    let s = cx.next();
    match &send {
        Some(send) => {
            cx.wait_free(s);
            for j in (0..n).filter(|&j| j != me) {
                // Rank j's block is unread before release.
                put(
                    &send.block(j * sendcount, sendcount),
                    scatter_stage(&cx, s, j, root, blk),
                    blk,
                );
            }
            cx.publish_release(s);
            if let Some(dst) = &mut recv {
                own_block(&send.block(me * sendcount, sendcount), sendtype, dst, blk);
            }
        }
        None => {
            cx.wait_release(s);
            let dst = recv.as_mut().expect("MPI_IN_PLACE is the root's only");
            // The root published our block there (Acquire in wait_release).
            take(scatter_stage(&cx, s, me, root, blk), blk, dst);
        }
    }
    cx.set_done(s);
}
