//! Status accessors (MPI-5.0) and the Fortran 2008 status conversions.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::c_int;

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, NO_COMM, R};
use crate::types::*;

// ----- status accessors (MPI-5.0) ------------------------------------------------------

/// # Safety
/// `status` is NULL or a readable `MPI_Status`.
unsafe fn status_in<'a>(call: &str, status: *const MPI_Status) -> R<&'a MPI_Status> {
    if status.is_null() {
        return Err(bad(
            ErrorClass::Arg,
            call,
            "status",
            "is NULL (MPI_STATUS_IGNORE)",
        ));
    }
    // SAFETY: non-null (checked); readable by this function's contract.
    Ok(unsafe { &*status })
}

macro_rules! status_field {
    ($get:ident, $set:ident, $gname:literal, $sname:literal, $field:ident, $arg:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(status: *const MPI_Status, v: *mut c_int) -> c_int {
            ffi($gname, NO_COMM, || {
                // SAFETY: the C caller's IN status: NULL (rejected) or readable.
                let s = unsafe { status_in($gname, status)? };
                // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
                *unsafe { out($gname, $arg, v)? } = s.$field;
                Ok(())
            })
        }
        #[no_mangle]
        pub unsafe extern "C" fn $set(status: *mut MPI_Status, v: c_int) -> c_int {
            ffi($sname, NO_COMM, || {
                // SAFETY: the C caller's INOUT status: NULL (rejected) or writable and unaliased.
                unsafe { out($sname, "status", status)? }.$field = v;
                Ok(())
            })
        }
    };
}

status_field!(
    PMPI_Status_get_source,
    PMPI_Status_set_source,
    "MPI_Status_get_source",
    "MPI_Status_set_source",
    MPI_SOURCE,
    "source"
);
status_field!(
    PMPI_Status_get_tag,
    PMPI_Status_set_tag,
    "MPI_Status_get_tag",
    "MPI_Status_set_tag",
    MPI_TAG,
    "tag"
);
status_field!(
    PMPI_Status_get_error,
    PMPI_Status_set_error,
    "MPI_Status_get_error",
    "MPI_Status_set_error",
    MPI_ERROR,
    "error"
);

// ----- Fortran 2008 status conversions ---------------------------------------------------------

/// # Safety
/// `src` is NULL or readable for 8 ints; `dst` NULL or writable for 8 ints, unaliased.
unsafe fn copy_status(call: &'static str, src: *const c_int, dst: *mut c_int) -> c_int {
    ffi(call, NO_COMM, || {
        if src.is_null() || dst.is_null() {
            return Err(bad(ErrorClass::Arg, call, "status", "is NULL"));
        }
        // SAFETY: the C status, the Fortran status and the Fortran 2008 status are all MPI_F_STATUS_SIZE ints in the same order (source, tag, error, internal).
        unsafe { std::ptr::copy_nonoverlapping(src, dst, MPI_F_STATUS_SIZE as usize) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_c2f08(c: *const MPI_Status, f: *mut MPI_F08_status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_c2f08 defines them.
    unsafe { copy_status("MPI_Status_c2f08", c as *const c_int, f as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082c(f: *const MPI_F08_status, c: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f082c defines them.
    unsafe { copy_status("MPI_Status_f082c", f as *const c_int, c as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f2f08(f: *const c_int, f08: *mut MPI_F08_status) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f2f08 defines them.
    unsafe { copy_status("MPI_Status_f2f08", f, f08 as *mut c_int) }
}
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082f(f08: *const MPI_F08_status, f: *mut c_int) -> c_int {
    // SAFETY: the C caller's statuses, as MPI_Status_f082f defines them.
    unsafe { copy_status("MPI_Status_f082f", f08 as *const c_int, f) }
}
