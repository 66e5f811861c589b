//! The C caller's buffers as the engine's safe descriptors: a [`Region`] (count
//! elements of a datatype) or a byte slice, made here once at the boundary so that
//! the engine's entry points over them are safe functions. Each constructor passes
//! MPI's contract for a buffer argument on (what the caller vouches for by calling).

use std::ffi::c_void;

use oxmpi_core::buf::Region;
use oxmpi_core::datatype::Datatype;

/// An IN buffer: `count` elements of `dt` at `buf`, read during the call.
///
/// # Safety
/// MPI's contract for an input buffer: the bytes those elements cover are readable
/// (not written by anyone else) for `'a`.
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
