//! `MPI_Request_get_status_{any,all,some}` (MPI-4.1).
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement (arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument).

use std::ffi::c_int;

use oxmpi_core::error::ErrorClass;

use crate::abi::*;
use crate::conv::errors::{bad, Fail, R};
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

/// MPI_Request_get_status_any (abi.txt `out(index, flag) status(status)`: the generated `PMPI_x`
/// checks `index`, `flag` first; `status` is `None` for MPI_STATUS_IGNORE).
///
/// # Safety
/// The C caller's arguments of MPI_Request_get_status_any, as MPI defines them.
pub unsafe fn request_get_status_any(
    call: &'static str,
    count: c_int,
    requests: *mut MPI_Request,
    i: &mut c_int,
    f: &mut c_int,
    status: Option<&mut MPI_Status>,
) -> R<()> {
    // SAFETY: the C caller's arguments, as MPI_Request_get_status_any defines them.
    let reqs = unsafe { request_array(call, count, requests)? };
    *i = MPI_UNDEFINED;
    *f = 0;
    let mut any_active = false;
    for (k, &h) in reqs.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            continue;
        }
        any_active = true;
        if let Some(s) = peek(call, h)? {
            *i = k as c_int;
            *f = 1;
            if let Some(st) = status {
                *st = s;
            }
            return Ok(());
        }
    }
    if !any_active {
        // No active request: flag true, index MPI_UNDEFINED, the empty status.
        *f = 1;
        if let Some(st) = status {
            *st = empty_status();
        }
    }
    Ok(())
}

/// MPI_Request_get_status_all (abi.txt `out(flag)`: the generated `PMPI_x` checks `flag` first).
///
/// # Safety
/// The C caller's arguments of MPI_Request_get_status_all, as MPI defines them.
pub unsafe fn request_get_status_all(
    call: &'static str,
    count: c_int,
    requests: *mut MPI_Request,
    f: &mut c_int,
    statuses: *mut MPI_Status,
) -> R<()> {
    // SAFETY: the C caller's arguments, as MPI_Request_get_status_all defines them.
    let reqs = unsafe { request_array(call, count, requests)? };
    let mut got = Vec::with_capacity(reqs.len());
    for &h in reqs {
        if h == MPI_REQUEST_NULL {
            got.push(empty_status());
            continue;
        }
        match peek(call, h)? {
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
}

/// MPI_Request_get_status_some (abi.txt `out(outcount)`: the generated `PMPI_x` checks `outcount` first).
///
/// # Safety
/// The C caller's arguments of MPI_Request_get_status_some, as MPI defines them.
pub unsafe fn request_get_status_some(
    call: &'static str,
    incount: c_int,
    requests: *mut MPI_Request,
    o: &mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> R<()> {
    // SAFETY: the C caller's arguments, as MPI_Request_get_status_some defines them.
    let reqs = unsafe { request_array(call, incount, requests)? };
    let mut done = Vec::new();
    let mut any_active = false;
    for (k, &h) in reqs.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            continue;
        }
        any_active = true;
        if let Some(s) = peek(call, h)? {
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
            crate::conv::errors::array_mut(call, "array_of_indices", indices, done.len())?
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
}
