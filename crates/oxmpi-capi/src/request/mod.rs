//! Requests: handles and their completion (the wait/test families, cancel,
//! request_free, request_get_status), generalized requests, and the status
//! queries (MPI_Get_count, MPI_Get_elements, MPI_Status_set_*).
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument.
//!
//! Files: `complete` (the wait/test families), `cancel` (cancel, request_free,
//! request_get_status, test_cancelled), `greq` (generalized requests), `status`
//! (status queries and setters); this module holds what they share.

use std::ffi::{c_int, c_void};

use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::pt2pt::{self};
use oxmpi_core::{Request, Status};

use crate::abi::*;
use crate::conv::args::req_slice;
use crate::conv::errors::rename_call;
use crate::conv::errors::{bad, ffi, hot_body, out, route_to, Fail, NO_COMM, R};
use crate::conv::handles::{state, Greq, Hook};
use crate::conv::large::{undefined_or, Count};
use crate::conv::status::*;
use crate::conv::{datatype, new_hooked_request};
use crate::types::*;

mod accessors;
mod cancel;
mod complete;
mod get_status;
mod greq;
mod status;

pub use accessors::*;
pub use cancel::*;
pub use complete::*;
pub use get_status::*;
pub use greq::*;
pub use status::*;

// ----- request handles ---------------------------------------------------------------

/// Calls a generalized request's query_fn: the status it reports, and the
/// error code the callback returned. Called without any lock held (the
/// callback may call MPI).
fn greq_query(g: &Greq) -> (Status, c_int) {
    let mut c = MPI_Status::default();
    fill(&mut c, &Status::EMPTY);
    let code = match g.query {
        // SAFETY: a C function the user registered with MPI_Grequest_start with this signature; it gets its extra_state back and a status of ours.
        Some(f) => unsafe { f(g.extra_state as *mut c_void, &mut c) },
        None => MPI_SUCCESS,
    };
    (from_c(&c), code)
}

/// Calls a generalized request's free_fn (once: its handle is gone after this).
fn greq_free(g: &Greq) -> c_int {
    match g.free {
        // SAFETY: a C function the user registered with MPI_Grequest_start with this signature.
        Some(f) => unsafe { f(g.extra_state as *mut c_void) },
        None => MPI_SUCCESS,
    }
}

/// What the C layer owes request `h`, which the engine reported complete
/// (`res`), before its handle is released: a generalized request's status
/// comes from query_fn, then free_fn runs, and the error code is the last
/// failing callback's; an idup hands out its communicator. Returns the result
/// to report. Runs callbacks with no lock held.
pub fn run_hook(call: &str, h: MPI_Request, res: Result<Status, Fail>) -> Result<Status, Fail> {
    let hook = {
        let mut st = state();
        match st.requests.get_mut(h) {
            Some(e) => std::mem::replace(&mut e.hook, Hook::None),
            None => Hook::None,
        }
    };
    match hook {
        Hook::None => res,
        Hook::Greq(g) => {
            let (status, qcode) = greq_query(&g);
            let fcode = greq_free(&g);
            let code = if fcode != MPI_SUCCESS { fcode } else { qcode };
            if code != MPI_SUCCESS {
                let which = if fcode != MPI_SUCCESS {
                    "free_fn"
                } else {
                    "query_fn"
                };
                return Err(Fail {
                    code,
                    message: format!(
                        "{call}: the generalized request's {which} returned error code {code}"
                    ),
                });
            }
            res.map(|_| status)
        }
        Hook::Idup(p) => {
            let r = res?;
            crate::conv::finish_idup(call, p)?;
            Ok(r)
        }
    }
}

/// Whether the handle at `i` was completed by a completion call (its engine
/// request went from live to NULL).
fn completed_at(before: &[Request], after: &[Request], i: usize) -> bool {
    !before[i].is_null() && after[i].is_null()
}

/// The engine requests of C handles (NULL for null and inactive ones), routing
/// errors to the first request's communicator.
fn engine_requests(call: &str, hs: &[MPI_Request]) -> R<Vec<Request>> {
    engine_requests_hooked(call, hs, &mut false)
}

/// [`engine_requests`], also telling (in `hooked`) whether any of them has
/// work for this layer at completion ([`run_hook`]); when none has, a
/// completion call skips the per-request look (one lock each).
fn engine_requests_hooked(call: &str, hs: &[MPI_Request], hooked: &mut bool) -> R<Vec<Request>> {
    let dead = |i: usize, h: MPI_Request| {
        bad(
            ErrorClass::Request,
            call,
            &format!("array_of_requests[{i}]"),
            format!("{h:#x} is not a valid request (freed, completed, or never created)"),
        )
    };
    // Errors go to the first live request's communicator.
    let mut routed = false;
    let mut route = |c: MPI_Comm| {
        if !routed {
            route_to(c);
            routed = true;
        }
    };
    // Direct handles (the engine's own requests, `handles::direct_of`) need no
    // table: this layer's lock is taken only at the first table handle, and the
    // engine checks all direct ones are live in one look.
    let mut st = None;
    let mut mixed = false;
    let mut out = Vec::with_capacity(hs.len());
    for (i, &h) in hs.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            out.push(Request::NULL);
        } else if let Some((r, c)) = crate::conv::handles::direct_of(h) {
            route(c);
            out.push(r);
        } else {
            mixed = true;
            let e = st
                .get_or_insert_with(state)
                .requests
                .get(h)
                .ok_or_else(|| dead(i, h))?;
            route(e.comm);
            if !matches!(e.hook, Hook::None) {
                *hooked = true;
            }
            out.push(e.inner);
        }
    }
    drop(st);
    let dead_direct = if mixed {
        // Only the direct handles' requests (a table handle's may be NULL, inactive).
        let idx: Vec<usize> = (0..hs.len())
            .filter(|&i| crate::conv::handles::direct_of(hs[i]).is_some())
            .collect();
        let rs: Vec<Request> = idx.iter().map(|&i| out[i]).collect();
        pt2pt::first_dead(&rs).map(|k| idx[k])
    } else {
        pt2pt::first_dead(&out)
    };
    match dead_direct {
        Some(i) => Err(dead(i, hs[i])),
        None => Ok(out),
    }
}

/// After completion calls: frees the C handles whose engine request completed.
fn settle(hs: &mut [MPI_Request], before: &[Request], after: &[Request]) {
    let mut st = None;
    for i in 0..hs.len() {
        if hs[i] == MPI_REQUEST_NULL || before[i].is_null() || !after[i].is_null() {
            continue;
        }
        if crate::conv::handles::direct_of(hs[i]).is_some() {
            hs[i] = MPI_REQUEST_NULL;
            continue;
        }
        let st = st.get_or_insert_with(state);
        let persistent = st
            .requests
            .get(hs[i])
            .is_some_and(|e| e.persistent.is_some());
        if persistent {
            if let Some(e) = st.requests.get_mut(hs[i]) {
                e.inner = Request::NULL;
            }
        } else {
            st.requests.remove(hs[i]);
            hs[i] = MPI_REQUEST_NULL;
        }
    }
}

fn one_request(call: &str, h: MPI_Request) -> R<(Request, MPI_Comm, bool)> {
    if h == MPI_REQUEST_NULL {
        return Err(bad(
            ErrorClass::Request,
            call,
            "request",
            "MPI_REQUEST_NULL",
        ));
    }
    if let Some((r, c)) = crate::conv::handles::direct_of(h) {
        if pt2pt::first_dead(&[r]).is_some() {
            return Err(bad(
                ErrorClass::Request,
                call,
                "request",
                format!("{h:#x} is not a valid request (freed, completed, or never created)"),
            ));
        }
        return Ok((r, c, false));
    }
    let st = state();
    let e = st.requests.get(h).ok_or_else(|| {
        bad(
            ErrorClass::Request,
            call,
            "request",
            format!("{h:#x} is not a valid request (freed, completed, or never created)"),
        )
    })?;
    Ok((e.inner, e.comm, e.persistent.is_some()))
}

/// The callbacks of a generalized request's handle (`None` for other requests).
fn greq_of(h: MPI_Request) -> Option<Greq> {
    match state().requests.get(h).map(|e| &e.hook) {
        Some(Hook::Greq(g)) => Some(*g),
        _ => None,
    }
}
