//! `MPI_Request_get_status_{any,all,some}` (MPI-4.1).
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::c_int;

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, ffi, out, Fail, NO_COMM, R};
use crate::types::*;

// ----- MPI_Request_get_status_{any,all,some} (MPI-4.1) ------------------------------------

/// The status of an inactive or null request: source MPI_ANY_SOURCE, tag
/// MPI_ANY_TAG, error MPI_SUCCESS, count 0.
fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        MPI_internal: [0; 5],
    }
}

/// MPI_Request_get_status on one non-null request: whether it is complete,
/// and its status then (the request is neither freed nor deactivated).
fn peek(call: &str, h: MPI_Request) -> R<Option<MPI_Status>> {
    let mut flag: c_int = 0;
    let mut s = empty_status();
    // SAFETY: `flag` and `s` are this frame's locals, writable and unaliased.
    let code = unsafe { crate::request::PMPI_Request_get_status(h, &mut flag, &mut s) };
    if code != MPI_SUCCESS {
        return Err(Fail {
            code,
            message: format!(
                "{call}: MPI_Request_get_status failed on request {h:#x} (error code {code})"
            ),
        });
    }
    Ok((flag != 0).then_some(s))
}

/// # Safety
/// `requests` is NULL or holds `count` request handles.
unsafe fn request_array<'a>(
    call: &str,
    count: c_int,
    requests: *mut MPI_Request,
) -> R<&'a [MPI_Request]> {
    if count < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} is negative"),
        ));
    }
    // SAFETY: the C caller's array of `count` handles (NULL rejected when count > 0).
    unsafe {
        crate::conv::errors::array(
            call,
            "array_of_requests",
            requests as *const MPI_Request,
            count as usize,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_any(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_any";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_any defines them.
        let reqs = unsafe { request_array(CALL, count, requests)? };
        // SAFETY: OUT arguments: NULL (rejected) or writable and unaliased.
        let i = unsafe { out(CALL, "index", index)? };
        // SAFETY: as above.
        let f = unsafe { out(CALL, "flag", flag)? };
        *i = MPI_UNDEFINED;
        *f = 0;
        let mut any_active = false;
        for (k, &h) in reqs.iter().enumerate() {
            if h == MPI_REQUEST_NULL {
                continue;
            }
            any_active = true;
            if let Some(s) = peek(CALL, h)? {
                *i = k as c_int;
                *f = 1;
                if !status.is_null() {
                    // SAFETY: non-null OUT status of the C caller.
                    unsafe { *status = s };
                }
                return Ok(());
            }
        }
        if !any_active {
            // No active request: flag true, index MPI_UNDEFINED, the empty status.
            *f = 1;
            if !status.is_null() {
                // SAFETY: non-null OUT status of the C caller.
                unsafe { *status = empty_status() };
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_all(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_all";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_all defines them.
        let reqs = unsafe { request_array(CALL, count, requests)? };
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let f = unsafe { out(CALL, "flag", flag)? };
        let mut got = Vec::with_capacity(reqs.len());
        for &h in reqs {
            if h == MPI_REQUEST_NULL {
                got.push(empty_status());
                continue;
            }
            match peek(CALL, h)? {
                Some(s) => got.push(s),
                None => {
                    *f = 0;
                    return Ok(());
                }
            }
        }
        *f = 1;
        if !statuses.is_null() {
            // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise the C caller's array of `count` statuses.
            let out = unsafe { std::slice::from_raw_parts_mut(statuses, got.len()) };
            out.copy_from_slice(&got);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_some(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status_some";
    ffi(CALL, NO_COMM, || {
        // SAFETY: the C caller's arguments, as MPI_Request_get_status_some defines them.
        let reqs = unsafe { request_array(CALL, incount, requests)? };
        // SAFETY: OUT argument: NULL (rejected) or writable and unaliased.
        let o = unsafe { out(CALL, "outcount", outcount)? };
        let mut done = Vec::new();
        let mut any_active = false;
        for (k, &h) in reqs.iter().enumerate() {
            if h == MPI_REQUEST_NULL {
                continue;
            }
            any_active = true;
            if let Some(s) = peek(CALL, h)? {
                done.push((k as c_int, s));
            }
        }
        if !any_active {
            *o = MPI_UNDEFINED;
            return Ok(());
        }
        if !done.is_empty() {
            // SAFETY: the C caller's array of `incount` >= done.len() indices.
            let idx = unsafe {
                crate::conv::errors::array_mut(CALL, "array_of_indices", indices, done.len())?
            };
            for (slot, (k, _)) in idx.iter_mut().zip(&done) {
                *slot = *k;
            }
            if !statuses.is_null() {
                // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise an array of `incount` >= done.len() statuses.
                let st = unsafe { std::slice::from_raw_parts_mut(statuses, done.len()) };
                for (slot, (_, s)) in st.iter_mut().zip(&done) {
                    *slot = *s;
                }
            }
        }
        *o = done.len() as c_int;
        Ok(())
    })
}
