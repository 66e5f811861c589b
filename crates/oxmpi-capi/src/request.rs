//! Requests: handles and their completion (the wait/test families, cancel,
//! request_free, request_get_status), generalized requests, and the status
//! queries (MPI_Get_count, MPI_Get_elements, MPI_Status_set_*).
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: arrays of the length the standard gives, OUT
//! arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::pt2pt::{self};
use oxmpi_core::{Request, Status};

use crate::abi::*;
use crate::conv::args::req_slice;
use crate::conv::errors::rename_call;
use crate::conv::errors::{bad, ffi, out, route_to, Fail, NO_COMM, R};
use crate::conv::handles::{state, Greq, Hook};
use crate::conv::large::{undefined_or, Count};
use crate::conv::status::*;
use crate::conv::{datatype, new_hooked_request};
use crate::types::*;

// ----- request handles ---------------------------------------------------------------

/// Calls a generalized request's query_fn: the status it reports, and the
/// error code the callback returned. Called without any lock held (the
/// callback may call MPI).
fn greq_query(g: &Greq) -> (Status, c_int) {
    let mut c = MPI_Status::default();
    fill(&mut c, &Status::EMPTY);
    let code = match g.query {
        // SAFETY: a C function the user registered with MPI_Grequest_start with
        // this signature; it gets its extra_state back and a status of ours.
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

// ----- completion ------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    const CALL: &str = "MPI_Wait";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Wait's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        if let Some((r, c)) = crate::conv::handles::direct_of(*h) {
            // SAFETY: `status` is MPI_Wait's OUT status, passed on.
            return unsafe { wait_direct(h, r, c, status) };
        }
        let hs = std::slice::from_mut(h);
        let before = engine_requests(CALL, hs)?;
        let mut after = before.clone();
        let res = pt2pt::wait(&mut after[0]);
        let after = if res.is_err() {
            vec![Request::NULL]
        } else {
            after
        };
        let failed_status = res.as_ref().err().and_then(|e| e.status);
        let res = res.map_err(|e| rename_call(e, CALL));
        let res = if completed_at(&before, &after, 0) {
            run_hook(CALL, hs[0], res)
        } else {
            res
        };
        settle(hs, &before, &after);
        if let (Err(_), Some(s)) = (&res, failed_status) {
            // A failed receive that matched a message (truncation) still reports it.
            // SAFETY: `status` is MPI_Wait's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &s) };
        }
        let s = res?;
        // SAFETY: `status` is MPI_Wait's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

/// MPI_Wait of a direct handle (`handles::direct_of`: the engine's own
/// request, with no table entry and nothing owed at completion): one engine
/// call, no arrays, no look at this layer's state (bench/PROFILE.md, p2p19).
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE (NULL) or writable and unaliased.
unsafe fn wait_direct(
    h: &mut MPI_Request,
    r: Request,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> R<()> {
    route_to(c);
    let mut r = r;
    let res = pt2pt::wait_direct(&mut r);
    // Completed (or failed, which consumes it too): the handle is spent.
    if r.is_null() {
        *h = MPI_REQUEST_NULL;
    }
    // A failed receive that matched a message (truncation) still reports it.
    let s = res.as_ref().map_or_else(|e| e.status, |s| Some(*s));
    if let Some(s) = s {
        // SAFETY: this function's contract.
        unsafe { put_status(status, &s) };
    }
    res.map(|_| ()).map_err(|e| rename_call(e, "MPI_Wait"))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Test";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Test's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        // SAFETY: `flag` is MPI_Test's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        if let Some((r, c)) = crate::conv::handles::direct_of(*h) {
            // SAFETY: `status` is MPI_Test's OUT status, passed on.
            return unsafe { test_direct(h, f, r, c, status) };
        }
        let hs = std::slice::from_mut(h);
        let before = engine_requests(CALL, hs)?;
        let mut after = before.clone();
        let res = pt2pt::test(&mut after[0]);
        let after = if res.is_err() {
            vec![Request::NULL]
        } else {
            after
        };
        let failed_status = res.as_ref().err().and_then(|e| e.status);
        let res = res.map_err(|e| rename_call(e, CALL));
        let res = match res {
            Ok(Some(s)) if completed_at(&before, &after, 0) => {
                run_hook(CALL, hs[0], Ok(s)).map(Some)
            }
            Err(e) if completed_at(&before, &after, 0) => run_hook(CALL, hs[0], Err(e)).map(Some),
            other => other,
        };
        settle(hs, &before, &after);
        if let (Err(_), Some(s)) = (&res, failed_status) {
            *f = 1;
            // SAFETY: `status` is MPI_Test's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &s) };
        }
        match res? {
            Some(s) => {
                *f = 1;
                // SAFETY: `status` is MPI_Test's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
            }
            None => *f = 0,
        }
        Ok(())
    })
}

/// MPI_Test of a direct handle: [`wait_direct`]'s shortcut (one progress step
/// and one look at the engine, no arrays, no look at this layer's state).
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE (NULL) or writable and unaliased.
unsafe fn test_direct(
    h: &mut MPI_Request,
    flag: &mut c_int,
    r: Request,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> R<()> {
    route_to(c);
    let mut r = r;
    let res = pt2pt::test(&mut r);
    // Completed (or failed, which consumes it too): the handle is spent.
    if r.is_null() {
        *h = MPI_REQUEST_NULL;
    }
    match res {
        Ok(Some(s)) => {
            *flag = 1;
            // SAFETY: this function's contract.
            unsafe { put_status(status, &s) };
        }
        Ok(None) => *flag = 0,
        Err(e) => {
            // A failed receive that matched a message (truncation) still reports it.
            if let Some(s) = e.status {
                *flag = 1;
                // SAFETY: this function's contract.
                unsafe { put_status(status, &s) };
            }
            return Err(rename_call(e, "MPI_Test"));
        }
    }
    Ok(())
}

/// The `i`-th status of an array (NULL for MPI_STATUSES_IGNORE).
///
/// # Safety
/// `p` is NULL or points to an array of more than `i` statuses.
unsafe fn status_at(p: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if p.is_null() {
        p
    } else {
        // SAFETY: non-null, so an array of more than `i` statuses by this function's contract.
        unsafe { p.add(i) }
    }
}

unsafe fn all(
    call: &'static str,
    count: c_int,
    requests: *mut MPI_Request,
    flag: Option<*mut c_int>,
    statuses: *mut MPI_Status,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitall/Testall's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        if flag.is_none() {
            // SAFETY: `statuses` is MPI_Waitall's, passed on.
            if let Some(res) = unsafe { waitall_direct(call, hs, statuses) } {
                return res;
            }
        }
        let mut hooked = false;
        let before = engine_requests_hooked(call, hs, &mut hooked)?;
        let mut after = before.clone();
        let mut stats = vec![Status::NULL; hs.len()];
        let res = match flag {
            None => pt2pt::waitall(&mut after, &mut stats).map(|()| true),
            Some(_) => pt2pt::testall(&mut after, &mut stats),
        };
        // The engine's statuses carry its own class numbers: the C caller sees the
        // standard ABI's.
        for s in stats.iter_mut().filter(|s| s.error != 0) {
            s.error = crate::abi::error_class_value(
                ErrorClass::from_code(s.error).unwrap_or(ErrorClass::Other),
            );
        }
        // Failed requests are consumed by the engine too.
        for (i, s) in stats.iter().enumerate() {
            if s.error != 0 {
                after[i] = Request::NULL;
            }
        }
        let mut res = res;
        for i in 0..hs.len() {
            if completed_at(&before, &after, i) && (hooked || stats[i].error != 0) {
                let r = if stats[i].error != 0 {
                    Err(Fail {
                        code: stats[i].error,
                        message: String::new(),
                    })
                } else {
                    Ok(stats[i])
                };
                match run_hook(call, hs[i], r) {
                    Ok(s) => stats[i] = s,
                    Err(f) => {
                        stats[i].error = f.code;
                        if res.is_ok() {
                            res = Err(MpiError::new(
                                ErrorClass::InStatus,
                                format!("{call}: a request failed, see its status: {}", f.message),
                            ));
                        }
                    }
                }
            }
        }
        settle(hs, &before, &after);
        let done = match &res {
            Ok(d) => *d,
            Err(_) => true,
        };
        if let Some(fl) = flag {
            // SAFETY: `flag` (`fl`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
            *unsafe { out(call, "flag", fl)? } = done as c_int;
        }
        if done {
            for (i, s) in stats.iter().enumerate() {
                // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitall/Testall).
                unsafe { put_status_err(status_at(statuses, i), s, s.error) };
            }
        }
        res.map(|_| ()).map_err(|e| rename_call(e, call))
    })
}

/// MPI_Waitall of handles that are all direct (or NULL): the engine's own
/// requests, with no table entry and nothing owed at completion, so no copy
/// of the array before and after, no status array of our own, no settling
/// pass; each status goes straight into the caller's array as its request
/// completes (bench/PROFILE.md, p2p19). `None` when any handle is another kind.
///
/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE (NULL) or has one writable entry per handle.
unsafe fn waitall_direct(
    call: &str,
    hs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
) -> Option<R<()>> {
    let mut rs = Vec::with_capacity(hs.len());
    let mut routed = false;
    for &h in hs.iter() {
        if h == MPI_REQUEST_NULL {
            rs.push(Request::NULL);
            continue;
        }
        let (r, c) = crate::conv::handles::direct_of(h)?;
        if !routed {
            route_to(c);
            routed = true;
        }
        rs.push(r);
    }
    if let Some(i) = pt2pt::first_dead(&rs) {
        let h = hs[i];
        return Some(Err(bad(
            ErrorClass::Request,
            call,
            &format!("array_of_requests[{i}]"),
            format!("{h:#x} is not a valid request (freed, completed, or never created)"),
        )));
    }
    if !statuses.is_null() {
        for (i, r) in rs.iter().enumerate() {
            if r.is_null() {
                // SAFETY: one entry per handle (this function's contract).
                unsafe { put_status_err(statuses.add(i), &Status::NULL, MPI_SUCCESS) };
            }
        }
    }
    let res = pt2pt::waitall_each(&mut rs, |i, mut s| {
        if statuses.is_null() {
            return;
        }
        // The engine's statuses carry its own class numbers: the C caller sees the ABI's.
        if s.error != 0 {
            s.error = crate::abi::error_class_value(
                ErrorClass::from_code(s.error).unwrap_or(ErrorClass::Other),
            );
        }
        // SAFETY: one entry per handle (this function's contract).
        unsafe { put_status_err(statuses.add(i), &s, s.error) };
    });
    // Completed or failed, every request was consumed: its handle is spent.
    for (h, r) in hs.iter_mut().zip(&rs) {
        if r.is_null() {
            *h = MPI_REQUEST_NULL;
        }
    }
    Some(res.map_err(|e| rename_call(e, call)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `all` needs what MPI_Waitall demands of them.
    unsafe { all("MPI_Waitall", count, requests, None, statuses) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `all` needs what MPI_Testall demands of them.
    unsafe { all("MPI_Testall", count, requests, Some(flag), statuses) }
}

unsafe fn any(
    call: &'static str,
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut MPI_Status,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitany/Testany's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        // SAFETY: `index` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let idx = unsafe { out(call, "index", index)? };
        let before = engine_requests(call, hs)?;
        let mut after = before.clone();
        let res = match flag {
            None => pt2pt::waitany(&mut after).map(Some),
            Some(_) => pt2pt::testany(&mut after),
        };
        if let Err(e) = &res {
            // The failed request was consumed: it is the one that became NULL.
            if let Some(i) = (0..hs.len()).find(|&i| !before[i].is_null() && after[i].is_null()) {
                *idx = i as c_int;
                if let Some(s) = e.status {
                    // A failed receive that matched a message (truncation) still reports it.
                    // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                    unsafe { put_status(status, &s) };
                }
                let e = crate::conv::request_comm(hs[i]);
                if let Some(c) = e {
                    route_to(c);
                }
            }
        }
        let res = match res.map_err(|e| rename_call(e, call)) {
            Ok(Some(Some((i, s)))) if completed_at(&before, &after, i) => {
                *idx = i as c_int;
                let e = crate::conv::request_comm(hs[i]);
                if let Some(c) = e {
                    route_to(c);
                }
                run_hook(call, hs[i], Ok(s)).map(|s| Some(Some((i, s))))
            }
            Err(f) => match (0..hs.len()).find(|&i| completed_at(&before, &after, i)) {
                Some(i) => run_hook(call, hs[i], Err(f)).map(|s| Some(Some((i, s)))),
                None => Err(f),
            },
            other => other,
        };
        settle(hs, &before, &after);
        match res? {
            None => {
                *idx = MPI_UNDEFINED;
                if let Some(f) = flag {
                    // SAFETY: `flag` (`f`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
                    *unsafe { out(call, "flag", f)? } = 0;
                }
            }
            Some(found) => {
                if let Some(f) = flag {
                    // SAFETY: `flag` (`f`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
                    *unsafe { out(call, "flag", f)? } = 1;
                }
                match found {
                    None => {
                        *idx = MPI_UNDEFINED;
                        // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                        unsafe { put_status(status, &Status::NULL) };
                    }
                    Some((i, s)) => {
                        *idx = i as c_int;
                        // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                        unsafe { put_status(status, &s) };
                    }
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `any` needs what MPI_Waitany demands of them.
    unsafe { any("MPI_Waitany", count, requests, index, None, status) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `any` needs what MPI_Testany demands of them.
    unsafe { any("MPI_Testany", count, requests, index, Some(flag), status) }
}

unsafe fn some(
    call: &'static str,
    wait: bool,
    count: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitsome/Testsome's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        // SAFETY: `outcount` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let oc = unsafe { out(call, "outcount", outcount)? };
        let before = engine_requests(call, hs)?;
        let mut after = before.clone();
        let res = if wait {
            pt2pt::waitsome(&mut after)
        } else {
            pt2pt::testsome(&mut after)
        };
        let list = match res {
            Err(e) => {
                settle(hs, &before, &after);
                return Err(rename_call(e, call));
            }
            Ok(l) => l,
        };
        for (i, r) in list.iter().flatten() {
            if r.is_err() {
                after[*i] = Request::NULL;
            }
        }
        // Per completed request: its outcome, and for a failed receive that matched a
        // message (truncation) that message's status.
        let list: Option<Vec<(usize, Result<Status, Fail>, Option<Status>)>> = list.map(|l| {
            l.into_iter()
                .map(|(i, r)| {
                    let failed_status = r.as_ref().err().and_then(|e| e.status);
                    let r = r.map_err(|e| Fail {
                        code: crate::abi::error_class_value(e.class),
                        message: e.message,
                    });
                    (
                        i,
                        if completed_at(&before, &after, i) {
                            run_hook(call, hs[i], r)
                        } else {
                            r
                        },
                        failed_status,
                    )
                })
                .collect()
        });
        settle(hs, &before, &after);
        let Some(list) = list else {
            *oc = MPI_UNDEFINED;
            return Ok(());
        };
        *oc = list.len() as c_int;
        if !list.is_empty() && indices.is_null() {
            return Err(bad(ErrorClass::Arg, call, "array_of_indices", "is NULL"));
        }
        let mut first_err = None;
        for (k, (i, r, failed_status)) in list.iter().enumerate() {
            // SAFETY: `incount` entries by the C contract.
            unsafe { *indices.add(k) = *i as c_int };
            match r {
                // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitsome/Testsome).
                Ok(s) => unsafe { put_status_err(status_at(statuses, k), s, MPI_SUCCESS) },
                Err(e) => {
                    // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitsome/Testsome).
                    unsafe {
                        put_status_err(
                            status_at(statuses, k),
                            &failed_status.unwrap_or(Status::EMPTY),
                            e.code,
                        )
                    };
                    first_err.get_or_insert(e.message.clone());
                }
            }
        }
        match first_err {
            Some(m) => Err(Fail {
                code: MPI_ERR_IN_STATUS,
                message: format!("{call}: a request failed, see its status: {m}"),
            }),
            None => Ok(()),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `some` needs what MPI_Waitsome demands of them.
    unsafe {
        some(
            "MPI_Waitsome",
            true,
            incount,
            requests,
            outcount,
            indices,
            statuses,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `some` needs what MPI_Testsome demands of them.
    unsafe {
        some(
            "MPI_Testsome",
            false,
            incount,
            requests,
            outcount,
            indices,
            statuses,
        )
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

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cancel(request: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Cancel";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Cancel's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        let (r, c, _) = one_request(CALL, *h)?;
        route_to(c);
        if let Some(g) = greq_of(*h) {
            // A generalized request: the user's cancel_fn decides, told whether
            // MPI_Grequest_complete was called already.
            if let Some(f) = g.cancel {
                // SAFETY: a C function the user registered with MPI_Grequest_start with this signature.
                let code = unsafe { f(g.extra_state as *mut c_void, g.completed as c_int) };
                if code != MPI_SUCCESS {
                    return Err(Fail { code, message: format!("{CALL}: the generalized request's cancel_fn returned error code {code}") });
                }
            }
            return Ok(());
        }
        if !r.is_null() {
            pt2pt::cancel(&r).map_err(|e| rename_call(e, CALL))?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_free(request: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Request_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Request_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        let (mut r, c, _) = one_request(CALL, *h)?;
        route_to(c);
        if let Some(g) = greq_of(*h) {
            if g.freed {
                return Err(bad(
                    ErrorClass::Request,
                    CALL,
                    "request",
                    "the generalized request was freed already",
                ));
            }
            pt2pt::request_free(&mut r).map_err(|e| rename_call(e, CALL))?;
            if !g.completed {
                // free_fn runs at MPI_Grequest_complete, which still needs the handle.
                if let Some(Hook::Greq(x)) = state().requests.get_mut(*h).map(|e| &mut e.hook) {
                    x.freed = true;
                }
                *h = MPI_REQUEST_NULL;
                return Ok(());
            }
            state().requests.remove(*h);
            *h = MPI_REQUEST_NULL;
            let code = greq_free(&g);
            if code != MPI_SUCCESS {
                return Err(Fail {
                    code,
                    message: format!(
                        "{CALL}: the generalized request's free_fn returned error code {code}"
                    ),
                });
            }
            return Ok(());
        }
        if !r.is_null() {
            pt2pt::request_free(&mut r).map_err(|e| rename_call(e, CALL))?;
        }
        state().requests.remove(*h);
        *h = MPI_REQUEST_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    const CALL: &str = "MPI_Request_get_status";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `flag` is MPI_Request_get_status's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        if request == MPI_REQUEST_NULL {
            *f = 1;
            // SAFETY: `status` is MPI_Request_get_status's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &Status::NULL) };
            return Ok(());
        }
        let (r, c, _) = one_request(CALL, request)?;
        route_to(c);
        match pt2pt::request_get_status(r).map_err(|e| rename_call(e, CALL))? {
            Some(_) if greq_of(request).is_some() => {
                // The status of a complete generalized request is query_fn's.
                let (s, code) = greq_query(&greq_of(request).unwrap());
                *f = 1;
                // SAFETY: `status` is MPI_Request_get_status's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
                if code != MPI_SUCCESS {
                    return Err(Fail {
                        code,
                        message: format!(
                            "{CALL}: the generalized request's query_fn returned error code {code}"
                        ),
                    });
                }
            }
            Some(s) => {
                *f = 1;
                // An idup's communicator is valid once its request is complete.
                let idup = matches!(
                    state().requests.get(request).map(|e| &e.hook),
                    Some(Hook::Idup(_))
                );
                if idup {
                    run_hook(CALL, request, Ok(s))?;
                }
                // SAFETY: `status` is MPI_Request_get_status's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
            }
            None => *f = 0,
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Test_cancelled";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `status` is MPI_Test_cancelled's IN status: NULL (rejected) or readable.
        let s = unsafe { status_ref(CALL, status)? };
        // SAFETY: `flag` is MPI_Test_cancelled's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "flag", flag)? } = (s.MPI_internal[2] != 0) as c_int;
        Ok(())
    })
}

// ----- generalized requests ----------------------------------------------------------

/// The callbacks of a generalized request's handle (`None` for other requests).
fn greq_of(h: MPI_Request) -> Option<Greq> {
    match state().requests.get(h).map(|e| &e.hook) {
        Some(Hook::Greq(g)) => Some(*g),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_start(
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    const CALL: &str = "MPI_Grequest_start";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Grequest_start's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "request", request)? };
        let r = pt2pt::grequest_start()?;
        let g = Greq {
            query: query_fn,
            free: free_fn,
            cancel: cancel_fn,
            extra_state: extra_state as usize,
            completed: false,
            freed: false,
        };
        *o = new_hooked_request(r, MPI_COMM_SELF, Hook::Greq(g));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_complete(request: MPI_Request) -> c_int {
    const CALL: &str = "MPI_Grequest_complete";
    ffi(CALL, NO_COMM, || {
        let (r, c, _) = one_request(CALL, request)?;
        route_to(c);
        let g = greq_of(request).ok_or_else(|| {
            bad(
                ErrorClass::Request,
                CALL,
                "request",
                "not a generalized request (MPI_Grequest_start)",
            )
        })?;
        if g.completed {
            return Err(bad(
                ErrorClass::Request,
                CALL,
                "request",
                "the generalized request is complete already",
            ));
        }
        pt2pt::grequest_complete(r).map_err(|e| rename_call(e, CALL))?;
        if g.freed {
            // Freed before completion: the engine dropped its request just now;
            // the handle goes too, and free_fn runs (MPI: at the later of the two calls).
            state().requests.remove(request);
            let code = greq_free(&g);
            if code != MPI_SUCCESS {
                return Err(Fail {
                    code,
                    message: format!(
                        "{CALL}: the generalized request's free_fn returned error code {code}"
                    ),
                });
            }
        } else if let Some(Hook::Greq(x)) = state().requests.get_mut(request).map(|e| &mut e.hook) {
            x.completed = true;
        }
        Ok(())
    })
}

// ----- status queries ---------------------------------------------------------------

// The answers of abi.txt's status `query` lines: the generated `PMPI_x` checks the
// OUT pointer and stores them.

/// # Safety
/// `status` is NULL or points to a readable `MPI_Status` (the C caller's IN argument).
unsafe fn count_of<C: Count>(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
    elements: bool,
) -> R<C> {
    // SAFETY: `status` is the call's IN status: NULL (rejected) or readable.
    let s = unsafe { status_ref(call, status)? };
    let dt = datatype(h, call, "datatype")?;
    let b = status_bytes(s);
    Ok(undefined_or(if elements {
        dt.get_elements(b)
    } else {
        dt.get_count(b)
    }))
}

/// MPI_Get_count.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_count(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<c_int> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, false) }
}
/// MPI_Get_count_c.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_count_c(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, false) }
}
/// MPI_Get_elements.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<c_int> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}
/// MPI_Get_elements_c.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements_c(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}
/// MPI_Get_elements_x.
///
/// # Safety
/// As `count_of`.
pub unsafe fn get_elements_x(
    call: &'static str,
    status: *const MPI_Status,
    h: MPI_Datatype,
) -> R<MPI_Count> {
    // SAFETY: forwarded contract.
    unsafe { count_of(call, status, h, true) }
}

/// # Safety
/// `status` is NULL or valid to read and write one `MPI_Status`, unaliased (the C caller's argument).
unsafe fn set_elements(call: &str, status: *mut MPI_Status, h: MPI_Datatype, count: i64) -> R<()> {
    // SAFETY: `status` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let s = unsafe { out(call, "status", status)? };
    let dt = datatype(h, call, "datatype")?;
    if count < 0 {
        return Err(bad(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} is negative"),
        ));
    }
    // Bytes of `count` basic elements: whole elements of the type, then the
    // leading basic elements of one more.
    let basic_per = dt.get_elements(dt.size()).unwrap_or(1).max(1) as i64;
    let whole = count / basic_per;
    let mut rem = count % basic_per;
    let mut bytes = whole * dt.size() as i64;
    for (p, k) in dt.signature_runs(1) {
        if rem == 0 {
            break;
        }
        let per = if p.size() > 0 {
            dt.get_elements(p.size()).map(|_| 1).unwrap_or(1)
        } else {
            1
        };
        let take = (k as i64).min(rem / per.max(1));
        bytes += take * p.size() as i64;
        rem -= take;
    }
    let fake = Status {
        source: s.MPI_SOURCE,
        tag: s.MPI_TAG,
        error: s.MPI_ERROR,
        count_bytes: bytes as usize,
        cancelled: s.MPI_internal[2] != 0,
    };
    fill(s, &fake);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: c_int,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements", status, h, count as i64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_c(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_c's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_c", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements_c", status, h, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_x(
    status: *mut MPI_Status,
    h: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_x's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_x", NO_COMM, || unsafe {
        set_elements("MPI_Status_set_elements_x", status, h, count)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    ffi("MPI_Status_set_cancelled", NO_COMM, || {
        // SAFETY: `status` is MPI_Status_set_cancelled's INOUT argument: NULL (rejected) or writable and unaliased.
        let s = unsafe { out("MPI_Status_set_cancelled", "status", status)? };
        s.MPI_internal[2] = (flag != 0) as c_int;
        Ok(())
    })
}
