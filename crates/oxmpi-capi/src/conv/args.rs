//! Argument conversions: C strings in and out, buffer arguments. (Pointer OUT
//! arguments and arrays: `errors::{out, array, array_mut}`; counts of either
//! width: `large`.)

use std::ffi::{c_char, c_int, c_void, CStr};

use oxmpi_core::buf::Region;
use oxmpi_core::datatype::Datatype;
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

/// The C caller's send buffer (`count` elements of `dt` at `buf`) as a region borrowed
/// shared for `'a`, the one descriptor core's entry points take: the caller picks `'a`
/// (the call, or `'static` for an immediate or persistent operation, whose buffer MPI
/// keeps valid until the request completes or is freed).
///
/// # Safety
/// MPI's rule for a C send buffer: the memory those elements cover stays readable,
/// and unmodified, for `'a`.
#[inline(always)]
pub unsafe fn c_send<'a, 'd>(
    buf: *const c_void,
    count: usize,
    dt: &'d Datatype,
) -> Region<'a, &'d Datatype> {
    // SAFETY: the caller's contract is `Region::shared`'s.
    unsafe { Region::shared(buf as *const u8, count, dt) }
}

/// The C caller's receive buffer (`count` elements of `dt` at `buf`) as a region
/// borrowed exclusively for `'a` (chosen as in [`c_send`]).
///
/// # Safety
/// MPI's rule for a C receive buffer: the memory those elements cover stays writable,
/// and is accessed by nothing else, for `'a` (C memory: initialized bytes as far as
/// Rust can tell, and any bytes written are valid for the C program).
#[inline(always)]
pub unsafe fn c_recv<'a, 'd>(
    buf: *mut c_void,
    count: usize,
    dt: &'d Datatype,
) -> Region<'a, &'d Datatype> {
    // SAFETY: the caller's contract is `Region::exclusive`'s.
    unsafe { Region::exclusive(buf as *mut u8, count, dt) }
}

/// The `len` contiguous bytes at `buf` that `fast_p2p` found a fast-path call's buffer
/// to be, borrowed for `'a` (NULL only with `len` 0).
///
/// # Safety
/// As [`c_send`], for those bytes.
#[inline(always)]
pub unsafe fn c_bytes<'a>(buf: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: non-NULL (`fast_p2p` refuses the null page with data), readable and unmodified for 'a by the caller's contract.
    unsafe { std::slice::from_raw_parts(buf as *const u8, len) }
}

/// As [`c_bytes`], writable and exclusive.
///
/// # Safety
/// As [`c_recv`], for those bytes.
#[inline(always)]
pub unsafe fn c_bytes_mut<'a>(buf: *mut c_void, len: usize) -> &'a mut [u8] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: non-NULL as in `c_bytes`, writable and ours alone for 'a by the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) }
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
