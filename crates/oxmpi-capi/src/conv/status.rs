//! Status conversions: the engine's `Status` into the C `MPI_Status` and back
//! (bytes received in `MPI_internal[0..2]`, the cancelled flag in `[2]`).

use std::ffi::c_int;

use oxmpi_core::error::ErrorClass;
use oxmpi_core::Status;

use crate::abi::MPI_SUCCESS;
use crate::conv::errors::{bad, R};
use crate::types::*;

// ----- statuses -------------------------------------------------------------------

pub fn status_bytes(s: &MPI_Status) -> usize {
    (s.MPI_internal[0] as u32 as u64 | ((s.MPI_internal[1] as u32 as u64) << 32)) as usize
}

pub fn fill(c: &mut MPI_Status, s: &Status) {
    c.MPI_SOURCE = s.source;
    c.MPI_TAG = s.tag;
    let b = s.count_bytes as u64;
    c.MPI_internal[0] = b as u32 as c_int;
    c.MPI_internal[1] = (b >> 32) as u32 as c_int;
    c.MPI_internal[2] = s.cancelled as c_int;
}

/// Writes a status unless the caller passed MPI_STATUS_IGNORE.
///
/// # Safety
/// `p` is NULL or valid to write one `MPI_Status`, unaliased.
pub unsafe fn put_status(p: *mut MPI_Status, s: &Status) {
    if !p.is_null() {
        // SAFETY: non-null (checked), so writable and unaliased by this function's contract.
        let c = unsafe { &mut *p };
        fill(c, s);
        if *s == Status::NULL {
            // The empty status (MPI_REQUEST_NULL, inactive requests) is all of it
            // defined, MPI_ERROR = MPI_SUCCESS included.
            c.MPI_ERROR = MPI_SUCCESS;
        }
    }
}

/// As [`put_status`], also setting `MPI_ERROR`.
///
/// # Safety
/// As [`put_status`].
pub unsafe fn put_status_err(p: *mut MPI_Status, s: &Status, err: c_int) {
    if !p.is_null() {
        // SAFETY: non-null (checked), so writable and unaliased by this function's contract.
        let c = unsafe { &mut *p };
        fill(c, s);
        c.MPI_ERROR = err;
    }
}

/// The engine's view of a status the user wrote (a generalized request's query_fn).
pub fn from_c(c: &MPI_Status) -> Status {
    Status {
        source: c.MPI_SOURCE,
        tag: c.MPI_TAG,
        error: c.MPI_ERROR,
        count_bytes: status_bytes(c),
        cancelled: c.MPI_internal[2] != 0,
    }
}

/// # Safety
/// `p` is NULL or points to an `MPI_Status` that stays valid and unwritten for `'a`.
pub unsafe fn status_ref<'a>(call: &str, p: *const MPI_Status) -> R<&'a MPI_Status> {
    if p.is_null() {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "status",
            "is NULL (MPI_STATUS_IGNORE)",
        ));
    }
    // SAFETY: non-null (checked), so readable for `'a` by this function's contract.
    Ok(unsafe { &*p })
}
