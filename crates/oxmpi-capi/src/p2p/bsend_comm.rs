//! Buffered-send buffers (MPI-4.1): flushes and per-communicator buffers.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::{c_int, c_void};

use oxmpi_core::error::ErrorClass;
use oxmpi_core::pt2pt;

use crate::abi::*;
use crate::conv::comm;
use crate::conv::errors::{bad, ffi, out, NO_COMM, R};
use crate::types::*;

// ----- buffered-send buffers: flushes and per-communicator buffers (MPI-4.1) ----------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_flush() -> c_int {
    ffi("MPI_Buffer_flush", NO_COMM, || {
        Ok(pt2pt::buffer_flush(None)?)
    })
}

/// MPI_Buffer_iflush (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the new handle).
pub fn buffer_iflush(_call: &'static str) -> R<MPI_Request> {
    let r = pt2pt::buffer_iflush(None)?;
    Ok(crate::conv::new_request(r, NO_COMM, None))
}

fn comm_attach(call: &'static str, c: MPI_Comm, buffer: *mut c_void, size: i64) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        let size = if buffer as usize == MPI_BUFFER_AUTOMATIC {
            isize::MAX as usize
        } else {
            if size < 0 {
                return Err(bad(
                    ErrorClass::Arg,
                    call,
                    "size",
                    format!("{size} is negative"),
                ));
            }
            if buffer.is_null() && size > 0 {
                return Err(bad(ErrorClass::Buffer, call, "buffer", "is NULL"));
            }
            size as usize
        };
        // The C caller hands over `size` bytes at `buffer` (or MPI_BUFFER_AUTOMATIC); oxmpi only accounts them.
        pt2pt::comm_buffer_attach(&cm, buffer as *mut u8, size)?;
        Ok(())
    })
}

/// # Safety
/// `buffer_addr` and `size` are NULL or writable and unaliased.
unsafe fn comm_detach(
    call: &'static str,
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: &mut dyn FnMut(usize) -> R<()>,
) -> c_int {
    ffi(call, c, || {
        let cm = comm(c, call)?;
        // SAFETY: `buffer_addr` is the C caller's `void *` pointing at a `void *` to fill.
        let a = unsafe { out(call, "buffer_addr", buffer_addr as *mut *mut c_void)? };
        let (p, n) = pt2pt::comm_buffer_detach(&cm)?;
        *a = p as *mut c_void;
        size(n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer(
    c: MPI_Comm,
    buffer: *mut c_void,
    size: c_int,
) -> c_int {
    comm_attach("MPI_Comm_attach_buffer", c, buffer, size as i64)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer_c(
    c: MPI_Comm,
    buffer: *mut c_void,
    size: MPI_Count,
) -> c_int {
    comm_attach("MPI_Comm_attach_buffer_c", c, buffer, size)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer(
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> c_int {
    const CALL: &str = "MPI_Comm_detach_buffer";
    let mut put = |n: usize| {
        // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
        *unsafe { out(CALL, "size", size)? } = n.min(c_int::MAX as usize) as c_int;
        Ok(())
    };
    // SAFETY: the C caller's arguments, as MPI_Comm_detach_buffer defines them.
    unsafe { comm_detach(CALL, c, buffer_addr, &mut put) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer_c(
    c: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    const CALL: &str = "MPI_Comm_detach_buffer_c";
    let mut put = |n: usize| {
        // SAFETY: the C caller's OUT argument: NULL (rejected) or writable and unaliased.
        *unsafe { out(CALL, "size", size)? } = n.min(i64::MAX as usize) as MPI_Count;
        Ok(())
    };
    // SAFETY: the C caller's arguments, as MPI_Comm_detach_buffer_c defines them.
    unsafe { comm_detach(CALL, c, buffer_addr, &mut put) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_flush_buffer(c: MPI_Comm) -> c_int {
    const CALL: &str = "MPI_Comm_flush_buffer";
    ffi(CALL, c, || {
        let cm = comm(c, CALL)?;
        Ok(pt2pt::buffer_flush(Some(&cm))?)
    })
}

/// MPI_Comm_iflush_buffer (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn comm_iflush_buffer(call: &'static str, c: MPI_Comm, o: &mut MPI_Request) -> R<()> {
    let cm = comm(c, call)?;
    let r = pt2pt::buffer_iflush(Some(&cm))?;
    *o = crate::conv::new_request(r, c, None);
    Ok(())
}
