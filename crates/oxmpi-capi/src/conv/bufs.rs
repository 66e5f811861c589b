//! The C caller's buffers as core's typed descriptors ([`SendBuf`], [`RecvBuf`]),
//! made once per call at the boundary, so that the core entry points they go to are
//! safe functions. This is where the C layer's collectives state the contract their
//! buffer arguments carry; an area file calls these once per call, passing the C
//! function's own contract (the MPI standard's rules for its arguments) on.
//!
//! The descriptors are `'static`: MPI's rule for C memory is that a blocking call may
//! use it until it returns and an immediate or persistent one until its request
//! completes (is freed), which core's `Forever` scope stands for.

use std::ffi::c_void;

use oxmpi_core::buf::{RecvBlocks, RecvBuf, SendBlocks, SendBuf};
use oxmpi_core::datatype::Datatype;

use crate::abi::MPI_IN_PLACE;

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
/// displacement `displs[i]`, extent `ext`) so that every non-empty block starts at
/// a displacement of 0 or more: returns the byte offset the base moves by (the
/// displacements are lowered by as much, so every block stays where it was) and the
/// elements the descriptor must cover (the end of the highest non-empty block).
fn v_span(counts: &[usize], displs: &mut [isize], ext: isize) -> (isize, usize) {
    let blocks = || counts.iter().zip(displs.iter()).filter(|(&c, _)| c > 0);
    let lo = blocks().map(|(_, &d)| d).min().unwrap_or(0).min(0);
    if lo < 0 {
        for d in displs.iter_mut() {
            *d = d.saturating_sub(lo);
        }
    }
    let cap = counts
        .iter()
        .zip(displs.iter())
        .filter(|(&c, _)| c > 0)
        .map(|(&c, &d)| (d.max(0) as usize).saturating_add(c))
        .max()
        .unwrap_or(0);
    (lo.wrapping_mul(ext), cap)
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
    let (shift, cap) = v_span(counts, displs, dt.extent());
    let base = (p as *const u8).wrapping_offset(shift);
    // SAFETY: this function's contract; the blocks are where the caller's displacements put them.
    Some(unsafe { SendBuf::from_raw(base, cap, Some(dt)) })
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
    let (shift, cap) = v_span(counts, displs, dt.extent());
    let base = (p as *mut u8).wrapping_offset(shift);
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
    use super::v_span;

    #[test]
    fn v_blocks_are_rebased_at_the_lowest_nonempty_block() {
        // Non-negative displacements: nothing moves; the count reaches the highest block's end.
        let mut d = [0, 5, 2];
        assert_eq!(v_span(&[2, 3, 1], &mut d, 4), (0, 8));
        assert_eq!(d, [0, 5, 2]);
        // A negative displacement moves the base down by as many extents, and every
        // displacement up by as many elements: each block stays at the same address.
        let mut d = [-3, 4, -9];
        assert_eq!(v_span(&[2, 1, 0], &mut d, 8), (-24, 8));
        assert_eq!(d, [0, 7, -6]);
        // Empty blocks reach nothing, wherever they point.
        let mut d = [-100, 100];
        assert_eq!(v_span(&[0, 0], &mut d, 4), (0, 0));
    }
}
