//! Gather and scatter of blocks that fit one slot half (up to [`CHUNK`] bytes
//! per rank), one synchronization each:
//! * gather: every other rank packs its block into its own slot and raises its
//!   flag (the last to do so rings the root); the root unpacks every slot into
//!   its receive buffer;
//! * scatter: the root packs block j into rank j's slot and publishes
//!   `release`; every other rank unpacks its slot.
//!
//! The root's own block goes straight from its send to its receive buffer
//! (nothing to do in place). Where a schedule pays a message per rank (the
//! schedule machinery's fixed cost dominated small gathers and scatters), this
//! costs two copies per block.
use super::{copy, Counter, Session, CHUNK};
use crate::coll::util;
use crate::datatype::Datatype;

/// Packs `count` elements of `dt` at `buf` (`blk` bytes) to `to`.
///
/// # Safety
/// `buf` holds `count` elements of `dt` whose packed size is `blk`; `to` is
/// writable for `blk` bytes and overlaps none of them.
pub(super) unsafe fn put(buf: *const u8, count: usize, dt: &Datatype, to: *mut u8, blk: usize) {
    if dt.is_contiguous() {
        // SAFETY: a contiguous type's packed bytes are at `buf + true_lb` (caller contract).
        unsafe { copy(buf.wrapping_offset(dt.true_lb()), to, blk) };
    } else {
        // SAFETY: forwarded caller contract.
        unsafe { dt.pack_range(buf, count, 0, std::slice::from_raw_parts_mut(to, blk)) };
    }
}

/// Unpacks `blk` bytes at `from` into `count` elements of `dt` at `buf`.
///
/// # Safety
/// `from` is readable for `blk` bytes, `buf` holds `count` elements of `dt`
/// whose packed size is `blk`, and they do not overlap.
pub(super) unsafe fn take(from: *const u8, blk: usize, buf: *mut u8, count: usize, dt: &Datatype) {
    if dt.is_contiguous() {
        // SAFETY: a contiguous type's packed bytes are at `buf + true_lb` (caller contract).
        unsafe { copy(from, buf.wrapping_offset(dt.true_lb()), blk) };
    } else {
        // SAFETY: forwarded caller contract.
        unsafe { dt.unpack_range(std::slice::from_raw_parts(from, blk), buf, count, 0) };
    }
}

/// Copies the root's own block from its send to its receive buffer (through a
/// temporary when either type is not contiguous).
///
/// # Safety
/// `src` holds `scount` elements of `stype`, `dst` `rcount` of `rtype`, both
/// of `blk` packed bytes; distinct buffers.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn own_block(
    src: *const u8,
    scount: usize,
    stype: &Datatype,
    dst: *mut u8,
    rcount: usize,
    rtype: &Datatype,
    blk: usize,
) {
    if stype.is_contiguous() {
        // SAFETY: the packed bytes are at `src + true_lb`; forwarded caller contract.
        unsafe {
            take(
                src.wrapping_offset(stype.true_lb()),
                blk,
                dst,
                rcount,
                rtype,
            )
        };
    } else {
        let mut tmp = vec![0u8; blk];
        // SAFETY: `tmp` holds `blk` bytes; forwarded caller contract.
        unsafe { put(src, scount, stype, tmp.as_mut_ptr(), blk) };
        // SAFETY: as above.
        unsafe { take(tmp.as_ptr(), blk, dst, rcount, rtype) };
    }
}

/// Whether blocks of `blk` bytes take this path.
pub(crate) fn fits(blk: usize) -> bool {
    blk <= CHUNK
}

/// # Safety
/// As MPI_Gather, arguments checked: `sendbuf` (`None`: in place, root only)
/// holds `sendcount` elements of `sendtype`, the root's `recvbuf` `n *
/// recvcount` of `recvtype`; every block is `blk` packed bytes and `fits(blk)`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    mut sess: Session<'_>,
    sendbuf: Option<*const u8>,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    root: usize,
    blk: usize,
) {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    assert!(fits(blk), "gather blocks exceed a slot half");
    let s = cx.next();
    if me != root {
        cx.wait_free(s);
        let src = sendbuf.expect("MPI_IN_PLACE is the root's only");
        // SAFETY: our send buffer holds `sendcount` elements (`blk` bytes); the slot half holds CHUNK >= blk bytes and nobody reads it before our flag.
        unsafe { put(src, sendcount, sendtype, cx.area().slot(me, s), blk) };
        cx.set(Counter::Flag, s);
        cx.ring_when_complete(Counter::Flag, s, Some(root));
    } else {
        if let Some(src) = sendbuf {
            let dst = util::elem_ptr_mut(recvbuf, (me * recvcount) as isize, recvtype);
            // SAFETY: the send buffer and block `me` of the receive buffer hold `blk` bytes of their types (caller contract); distinct buffers.
            unsafe { own_block(src, sendcount, sendtype, dst, recvcount, recvtype, blk) };
        }
        cx.wait_all(Counter::Flag, s);
        cx.learn(s - 1);
        for j in (0..n).filter(|&j| j != me) {
            let dst = util::elem_ptr_mut(recvbuf, (j * recvcount) as isize, recvtype);
            // SAFETY: rank j published `blk` bytes in its slot (Acquire in wait_all); block j of the receive buffer holds `recvcount` elements.
            unsafe { take(cx.area().slot(j, s), blk, dst, recvcount, recvtype) };
        }
    }
    cx.set_done(s);
}

/// # Safety
/// As MPI_Scatter, arguments checked: the root's `sendbuf` holds `n *
/// sendcount` elements of `sendtype`, `recvbuf` (`None`: in place, root only)
/// `recvcount` of `recvtype`; every block is `blk` packed bytes and `fits(blk)`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    mut sess: Session<'_>,
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    recvbuf: Option<*mut u8>,
    recvcount: usize,
    recvtype: &Datatype,
    root: usize,
    blk: usize,
) {
    let mut cx = sess.ctx();
    let (n, me) = (cx.n, cx.me);
    assert!(fits(blk), "scatter blocks exceed a slot half");
    let s = cx.next();
    if me == root {
        cx.wait_free(s);
        for j in (0..n).filter(|&j| j != me) {
            let src = util::elem_ptr(sendbuf, (j * sendcount) as isize, sendtype);
            // SAFETY: block j of the send buffer holds `sendcount` elements (`blk` bytes); rank j's slot half holds CHUNK >= blk bytes, unread before release.
            unsafe { put(src, sendcount, sendtype, cx.area().slot(j, s), blk) };
        }
        cx.publish_release(s);
        if let Some(dst) = recvbuf {
            let src = util::elem_ptr(sendbuf, (me * sendcount) as isize, sendtype);
            // SAFETY: block `me` of the send buffer and the receive buffer hold `blk` bytes of their types (caller contract); distinct buffers.
            unsafe { own_block(src, sendcount, sendtype, dst, recvcount, recvtype, blk) };
        }
    } else {
        cx.wait_release(s);
        let dst = recvbuf.expect("MPI_IN_PLACE is the root's only");
        // SAFETY: the root published our block in our slot (Acquire in wait_release); the receive buffer holds `recvcount` elements (`blk` bytes).
        unsafe { take(cx.area().slot(me, s), blk, dst, recvcount, recvtype) };
    }
    cx.set_done(s);
}
