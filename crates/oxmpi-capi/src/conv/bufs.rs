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

use oxmpi_core::buf::{RecvBuf, SendBuf};
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
