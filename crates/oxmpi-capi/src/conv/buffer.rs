//! The descriptor builder: every C buffer argument becomes one of core's safe
//! descriptors here, and only here, so that the engine's entry points over them are
//! safe functions and the C caller's buffer promise is stated once. Each constructor
//! passes MPI's contract for a buffer argument on (what the caller vouches for by
//! calling); the area files call them once per call.
//!
//! - point-to-point, pack, one-sided and I/O: a [`Region`] (`count` elements of a
//!   datatype: [`region_in`], [`region_out`]) or the contiguous bytes the fast path found
//!   ([`bytes_in`], [`bytes_out`]); the names `c_send`, `c_recv`, `c_bytes` and
//!   `c_bytes_mut` (point-to-point's) are the same functions;
//! - collectives: a [`SendBuf`] (`None` for MPI_IN_PLACE) or [`RecvBuf`], for a plain
//!   or a v-form (per-rank counts and displacements) argument ([`coll_send`],
//!   [`coll_recv`], [`coll_send_v`], [`coll_recv_v`]);
//! - [`check_buf`]: the NULL / MPI_BOTTOM check a buffer argument gets first (for a
//!   collective's descriptors, [`CollBufs`], in `coll::go_with`).
//!
//! The lifetime `'a` of a `Region` is the caller's pick (the call, or `'static` for an
//! immediate or persistent operation, whose buffer MPI keeps valid until the request
//! completes or is freed). The collective descriptors are `'static`: MPI's rule for C
//! memory is that a blocking call may use it until it returns and an immediate or
//! persistent one until its request completes (is freed), which core's `Forever` scope
//! stands for.

use std::ffi::c_void;

use oxmpi_core::buf::{RecvBlocks, RecvBuf, Region, SendBlocks, SendBuf};
use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::ErrorClass;

use crate::abi::MPI_IN_PLACE;
use crate::conv::errors::{bad, R};

/// A NULL buffer is MPI_BOTTOM: fine for derived datatypes with absolute
/// addresses, an error for data of a predefined type.
pub fn check_buf(call: &str, arg: &str, buf: *const c_void, count: usize, dt: &Datatype) -> R<()> {
    if buf.is_null() && count > 0 && dt.size() > 0 && dt.as_primitive().is_some() {
        return Err(bad(
            ErrorClass::Buffer,
            call,
            arg,
            format!("is NULL with count {count}"),
        ));
    }
    // A derived type's data starting in the null page: NULL with relative
    // displacements (MPI_BOTTOM with absolute addresses lands elsewhere).
    if count > 0 && dt.size() > 0 && (buf as usize).wrapping_add(dt.true_lb() as usize) < 4096 {
        return Err(bad(
            ErrorClass::Buffer,
            call,
            arg,
            format!(
                "is NULL (or near it) with count {count} of a datatype whose data start at {}",
                dt.true_lb()
            ),
        ));
    }
    Ok(())
}

/// The buffers a collective's body hands `coll::go_with`: [`check_buf`]'s rules,
/// applied once there to every descriptor it built (a v form's from its lowest
/// block, a w form's block by block), before any of them is reached. A NULL (or
/// null-page) buffer of a non-contiguous type with relative displacements is then
/// MPI_ERR_BUFFER naming the call and the argument, not a fault in the copy.
pub trait CollBufs {
    fn check(&self, call: &str) -> R<()>;
}

/// One buffer argument of a collective (see [`CollBufs`]).
pub trait CollBuf {
    fn check_as(&self, call: &str, arg: &str) -> R<()>;
}

impl CollBuf for SendBuf<'_, '_> {
    fn check_as(&self, call: &str, arg: &str) -> R<()> {
        match self.datatype() {
            Some(dt) => check_buf(call, arg, self.ptr().cast(), self.count(), dt),
            None => Ok(()),
        }
    }
}

impl CollBuf for RecvBuf<'_, '_> {
    fn check_as(&self, call: &str, arg: &str) -> R<()> {
        match self.datatype() {
            Some(dt) => check_buf(call, arg, self.ptr().cast_const().cast(), self.count(), dt),
            None => Ok(()),
        }
    }
}

impl CollBuf for SendBlocks<'_, '_> {
    fn check_as(&self, call: &str, arg: &str) -> R<()> {
        for (i, (&n, dt)) in self.counts().iter().zip(self.types()).enumerate() {
            check_buf(call, arg, self.addr(i).cast(), n, dt)?;
        }
        Ok(())
    }
}

impl CollBuf for RecvBlocks<'_, '_> {
    fn check_as(&self, call: &str, arg: &str) -> R<()> {
        for (i, (&n, dt)) in self.counts().iter().zip(self.types()).enumerate() {
            check_buf(call, arg, self.addr(i).cast_const().cast(), n, dt)?;
        }
        Ok(())
    }
}

impl<T: CollBuf> CollBuf for Option<T> {
    fn check_as(&self, call: &str, arg: &str) -> R<()> {
        self.as_ref().map_or(Ok(()), |b| b.check_as(call, arg))
    }
}

/// MPI_Bcast's one buffer.
impl CollBufs for RecvBuf<'_, '_> {
    fn check(&self, call: &str) -> R<()> {
        self.check_as(call, "buffer")
    }
}

/// A send and a receive buffer.
impl<S: CollBuf, T: CollBuf> CollBufs for (S, T) {
    fn check(&self, call: &str) -> R<()> {
        self.0.check_as(call, "sendbuf")?;
        self.1.check_as(call, "recvbuf")
    }
}

/// An IN buffer: `count` elements of `dt` at `buf`, read during the call.
///
/// # Safety
/// MPI's contract for an input buffer: the bytes those elements cover are readable
/// (not written by anyone else) for `'a`.
#[inline(always)]
pub unsafe fn region_in<'a, 'd>(
    buf: *const c_void,
    count: usize,
    dt: &'d Datatype,
) -> Region<'a, &'d Datatype> {
    // SAFETY: forwarded contract.
    unsafe { Region::shared(buf.cast(), count, dt) }
}

/// An OUT buffer: `count` elements of `dt` at `buf`, written during the call.
///
/// # Safety
/// MPI's contract for an output buffer: the bytes those elements cover are
/// writable, with any values, and not accessed otherwise, for `'a`.
#[inline(always)]
pub unsafe fn region_out<'a, 'd>(
    buf: *mut c_void,
    count: usize,
    dt: &'d Datatype,
) -> Region<'a, &'d Datatype> {
    // SAFETY: forwarded contract (C memory is initialized bytes to Rust).
    unsafe { Region::exclusive(buf.cast(), count, dt) }
}

/// `len` bytes at `buf` read during the call (empty when `len` is 0, whatever `buf`).
///
/// # Safety
/// When `len > 0`, `buf` is readable for `len` bytes, not written by anyone else, for `'a`.
#[inline(always)]
pub unsafe fn bytes_in<'a>(buf: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: forwarded contract; `len > 0`, so `buf` is a valid pointer.
    unsafe { std::slice::from_raw_parts(buf.cast(), len) }
}

/// `len` bytes at `buf` written during the call (empty when `len` is 0).
///
/// # Safety
/// When `len > 0`, `buf` is writable for `len` bytes, with any values, and not
/// accessed otherwise, for `'a`.
#[inline(always)]
pub unsafe fn bytes_out<'a>(buf: *mut c_void, len: usize) -> &'a mut [u8] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: forwarded contract; `len > 0`, so `buf` is a valid pointer.
    unsafe { std::slice::from_raw_parts_mut(buf.cast(), len) }
}

/// Point-to-point's names for [`region_in`] (a send buffer), [`region_out`] (a receive
/// buffer), [`bytes_in`] and [`bytes_out`] (the fast path's contiguous bytes): the same
/// functions.
pub use self::{
    bytes_in as c_bytes, bytes_out as c_bytes_mut, region_in as c_send, region_out as c_recv,
};

/// A collective's send buffer: `None` for MPI_IN_PLACE.
///
/// # Safety
/// Unless `p` is MPI_IN_PLACE, the memory `n` elements of `dt` at `p` cover is
/// readable and unchanged for as long as MPI lets the call use it (see the module
/// doc), wherever the call reads it.
#[inline]
pub unsafe fn coll_send<'d>(
    p: *const c_void,
    n: usize,
    dt: &'d Datatype,
) -> Option<SendBuf<'static, 'd>> {
    if p as usize == MPI_IN_PLACE {
        return None;
    }
    // SAFETY: this function's contract.
    Some(unsafe { SendBuf::from_raw(p as *const u8, n, Some(dt)) })
}

/// A collective's receive buffer (or a buffer it both reads and writes).
///
/// # Safety
/// The memory `n` elements of `dt` at `p` cover is readable and writable, and
/// accessed by nothing else, for as long as MPI lets the call use it (see the module
/// doc), wherever the call writes it; any bytes are valid there.
#[inline]
pub unsafe fn coll_recv<'d>(p: *mut c_void, n: usize, dt: &'d Datatype) -> RecvBuf<'static, 'd> {
    // SAFETY: this function's contract.
    unsafe { RecvBuf::from_raw(p as *mut u8, n, Some(dt)) }
}

/// Moves the blocks of a v-form buffer (`counts[i]` elements at element
/// displacement `displs[i]`) so that every non-empty block starts at a
/// displacement of 0 or more: returns the element offset the base moves by (the
/// displacements are lowered by as much, so every block stays where it was; 0 or
/// less) and the elements the descriptor must cover (the end of the highest
/// non-empty block).
pub fn v_rebase(counts: &[usize], displs: &mut [isize]) -> (isize, usize) {
    let lo = v_blocks(counts, displs)
        .map(|(_, d)| d)
        .min()
        .unwrap_or(0)
        .min(0);
    if lo < 0 {
        for d in displs.iter_mut() {
            *d = d.saturating_sub(lo);
        }
    }
    let cap = v_blocks(counts, displs)
        .map(|(c, d)| v_block_end(c, d))
        .max()
        .unwrap_or(0);
    (lo, cap)
}

/// The non-empty blocks of a v form, as (count, displacement).
fn v_blocks<'a>(
    counts: &'a [usize],
    displs: &'a [isize],
) -> impl Iterator<Item = (usize, isize)> + 'a {
    let pairs = counts.iter().zip(displs.iter());
    pairs.filter(|(&c, _)| c > 0).map(|(&c, &d)| (c, d))
}

/// The element just past a non-empty block of `count` elements at displacement
/// `displ`, once the displacements are rebased (a block below 0 is counted from
/// 0): the most of these is the `cap` [`v_rebase`] returns. One definition for
/// `v_rebase` and the capi's one-pass `v_side`, so the two cannot drift apart.
#[inline(always)]
pub fn v_block_end(count: usize, displ: isize) -> usize {
    (displ.max(0) as usize).saturating_add(count)
}

/// A v-form collective's send buffer (`None` for MPI_IN_PLACE): block `i` is
/// `counts[i]` elements of `dt` at element displacement `displs[i]`, which may be
/// negative; `displs` is rebased so that the descriptor starts at the lowest block.
///
/// # Safety
/// As [`coll_send`], for every block the call reads.
pub unsafe fn coll_send_v<'d>(
    p: *const c_void,
    counts: &[usize],
    displs: &mut [isize],
    dt: &'d Datatype,
) -> Option<SendBuf<'static, 'd>> {
    if p as usize == MPI_IN_PLACE {
        return None;
    }
    let (lo, cap) = v_rebase(counts, displs);
    // SAFETY: this function's contract; `v_rebase` rebased the displacements by `lo`.
    unsafe { coll_send_rebased(p, lo, cap, dt) }
}

/// A v-form collective's receive buffer, described as [`coll_send_v`] describes a
/// send buffer.
///
/// # Safety
/// As [`coll_recv`], for every block the call writes (or reads, in place).
pub unsafe fn coll_recv_v<'d>(
    p: *mut c_void,
    counts: &[usize],
    displs: &mut [isize],
    dt: &'d Datatype,
) -> RecvBuf<'static, 'd> {
    let (lo, cap) = v_rebase(counts, displs);
    // SAFETY: this function's contract; `v_rebase` rebased the displacements by `lo`.
    unsafe { coll_recv_rebased(p, lo, cap, dt) }
}

/// [`coll_send_v`] past the rebasing: the descriptor of `cap` elements of `dt`
/// from element `lo` (0 or less) of `p`, whose blocks' displacements were
/// already lowered by `lo` (as [`v_rebase`] does and returns).
///
/// # Safety
/// As [`coll_send_v`], for the blocks the displacements held before rebasing.
#[inline]
pub unsafe fn coll_send_rebased<'d>(
    p: *const c_void,
    lo: isize,
    cap: usize,
    dt: &'d Datatype,
) -> Option<SendBuf<'static, 'd>> {
    if p as usize == MPI_IN_PLACE {
        return None;
    }
    let base = (p as *const u8).wrapping_offset(lo.wrapping_mul(dt.extent()));
    // SAFETY: this function's contract; the blocks are where the caller's displacements put them.
    Some(unsafe { SendBuf::from_raw(base, cap, Some(dt)) })
}

/// [`coll_recv_v`] past the rebasing, as [`coll_send_rebased`].
///
/// # Safety
/// As [`coll_recv_v`], for the blocks the displacements held before rebasing.
#[inline]
pub unsafe fn coll_recv_rebased<'d>(
    p: *mut c_void,
    lo: isize,
    cap: usize,
    dt: &'d Datatype,
) -> RecvBuf<'static, 'd> {
    let base = (p as *mut u8).wrapping_offset(lo.wrapping_mul(dt.extent()));
    // SAFETY: this function's contract; the blocks are where the caller's displacements put them.
    unsafe { RecvBuf::from_raw(base, cap, Some(dt)) }
}

/// An alltoallw-shaped collective's send blocks (`None` for MPI_IN_PLACE): block
/// `i` is `counts[i]` elements of `types[i]` at byte displacement `displs[i]` from
/// `p` (MPI_BOTTOM with absolute addresses included).
///
/// # Safety
/// As [`coll_send`], for every block the call reads.
pub unsafe fn coll_send_w<'c>(
    p: *const c_void,
    counts: &'c [usize],
    displs: &'c [isize],
    types: &'c [Datatype],
) -> Option<SendBlocks<'static, 'c>> {
    if p as usize == MPI_IN_PLACE {
        return None;
    }
    // SAFETY: this function's contract; the blocks are where the caller's displacements put them.
    Some(unsafe { SendBlocks::from_raw(p as *const u8, counts, displs, types) })
}

/// An alltoallw-shaped collective's receive blocks, described as [`coll_send_w`]
/// describes send blocks.
///
/// # Safety
/// As [`coll_recv`], for every block the call writes (or reads, in place).
pub unsafe fn coll_recv_w<'c>(
    p: *mut c_void,
    counts: &'c [usize],
    displs: &'c [isize],
    types: &'c [Datatype],
) -> RecvBlocks<'static, 'c> {
    // SAFETY: this function's contract; the blocks are where the caller's displacements put them.
    unsafe { RecvBlocks::from_raw(p as *mut u8, counts, displs, types) }
}

#[cfg(test)]
mod tests {
    use super::v_rebase;

    #[test]
    fn v_blocks_are_rebased_at_the_lowest_nonempty_block() {
        // Non-negative displacements: nothing moves; the count reaches the highest block's end.
        let mut d = [0, 5, 2];
        assert_eq!(v_rebase(&[2, 3, 1], &mut d), (0, 8));
        assert_eq!(d, [0, 5, 2]);
        // A negative displacement moves the base down by as many elements, and every
        // displacement up by as many elements: each block stays at the same address.
        let mut d = [-3, 4, -9];
        assert_eq!(v_rebase(&[2, 1, 0], &mut d), (-3, 8));
        assert_eq!(d, [0, 7, -6]);
        // Empty blocks reach nothing, wherever they point.
        let mut d = [-100, 100];
        assert_eq!(v_rebase(&[0, 0], &mut d), (0, 0));
    }
}
