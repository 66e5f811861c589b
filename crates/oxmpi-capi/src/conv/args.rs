//! Argument conversions: C strings in and out, request arrays, info arguments.
//! (Buffer arguments: `buffer`; pointer OUT arguments and arrays:
//! `errors::{out, array, array_mut}`; counts of either width: `large`.)

use std::ffi::{c_char, c_int, CStr};

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::bad_code;
use crate::conv::errors::{bad, R};
use crate::conv::handles::state;
use crate::types::*;

/// Copies `s` into a C buffer of `cap` bytes (including the NUL); returns the length written.
pub unsafe fn put_str(dst: *mut c_char, s: &str, cap: usize) -> c_int {
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: the C caller provides `cap` writable bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
        *dst.add(n) = 0;
    }
    n as c_int
}

/// A C string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid and
/// unchanged for `'a`.
pub unsafe fn get_str<'a>(call: &str, arg: &str, p: *const c_char) -> R<&'a str> {
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, arg, "is NULL"));
    }
    // SAFETY: non-null, NUL-terminated by the C contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| bad(ErrorClass::Arg, call, arg, "is not UTF-8"))
}

/// The C caller's array of `count` request handles.
///
/// # Safety
/// When `count > 0`, `p` is NULL or points to `count` handles, valid for
/// reads and writes and unaliased for `'a`.
pub unsafe fn req_slice<'a>(
    call: &str,
    count: c_int,
    p: *mut MPI_Request,
) -> R<&'a mut [MPI_Request]> {
    if count < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} is negative"),
        ));
    }
    if count == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, "array_of_requests", "is NULL"));
    }
    // SAFETY: non-null with `count > 0` (checked above): `count` handles by this function's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, count as usize) })
}

pub fn nonneg(call: &str, arg: &str, n: c_int, class: ErrorClass) -> R<usize> {
    if n < 0 {
        return Err(bad(class, call, arg, format!("{n} is negative")));
    }
    Ok(n as usize)
}

/// An info argument: MPI_INFO_NULL or a live info object (its hints are ignored).
pub fn info_arg(call: &str, info: MPI_Info) -> R<()> {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV || state().infos.get(info).is_some() {
        Ok(())
    } else {
        Err(bad_code(
            MPI_ERR_INFO,
            call,
            "info",
            format!("{info:#x} is not a valid info object"),
        ))
    }
}
