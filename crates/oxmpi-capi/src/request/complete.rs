//! Completion: the wait and test families.

use super::*;

// ----- completion ------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    const CALL: &str = "MPI_Wait";
    // A direct handle (an MPI_Isend/MPI_Irecv on a predefined communicator): the lean
    // entry, errors routed to its communicator (bench/PROFILE.md, capi31).
    let direct = if request.is_null() {
        None
    } else {
        // SAFETY: `request` is MPI_Wait's INOUT argument, non-NULL (the general path rejects NULL): readable.
        crate::conv::handles::direct_of(unsafe { *request })
    };
    if let Some((r, c)) = direct {
        return hot_body(CALL, c, || {
            // SAFETY: `request` is non-NULL (above), writable and unaliased (MPI contract); `status` is MPI_Wait's OUT status, passed on.
            unsafe { wait_direct(&mut *request, r, status) }
        });
    }
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Wait's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        if take_done(h) {
            // SAFETY: `status` is MPI_Wait's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &Status::EMPTY) };
            return Ok(());
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

/// Frees the table handle `*h` (made `MPI_REQUEST_NULL`) when it names the
/// engine's one complete request, [`Request::DONE`], with nothing owed at
/// completion (no hook, not persistent): a zero-count non-blocking collective,
/// an RMA call done in the call. MPI_Wait on it is then one look-up, not the
/// arrays and passes of the general path (bench/PROFILE.md, nbc27).
fn take_done(h: &mut MPI_Request) -> bool {
    let mut st = state();
    let done = st.requests.get(*h).is_some_and(|e| {
        e.inner == Request::DONE && e.persistent.is_none() && matches!(e.hook, Hook::None)
    });
    if done {
        st.requests.remove(*h);
        *h = MPI_REQUEST_NULL;
    }
    done
}

/// MPI_Wait of a direct handle (`handles::direct_of`: the engine's own
/// request, with no table entry and nothing owed at completion): one engine
/// call, no arrays, no look at this layer's state (bench/PROFILE.md, p2p19).
/// Its errors belong to the request's communicator (the caller routes them).
///
/// # Safety
/// `status` is MPI_STATUS_IGNORE (NULL) or writable and unaliased.
#[inline(always)]
unsafe fn wait_direct(h: &mut MPI_Request, r: Request, status: *mut MPI_Status) -> R<()> {
    if r == Request::DONE {
        // The engine's one complete request (a 0-count immediate collective's): an
        // empty status, nothing to free, no engine lock (~180 Ir; PROFILE.md collB31).
        *h = MPI_REQUEST_NULL;
        // SAFETY: this function's contract.
        unsafe { put_status(status, &Status::EMPTY) };
        return Ok(());
    }
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
        // SAFETY: `statuses` is MPI_Waitall/Testall's, `flag` MPI_Testall's, passed on.
        if let Some(res) = unsafe { all_direct(call, hs, flag, statuses) } {
            return res;
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

/// MPI_Waitall or MPI_Testall (`flag`) of handles that are all direct (or
/// NULL): the engine's own requests, with no table entry and nothing owed at
/// completion, so no copy of the array before and after, no status array of
/// our own, no settling pass; each status goes straight into the caller's
/// array as its request completes (bench/PROFILE.md, p2p19; Testall rate18).
/// `None` when any handle is another kind, or `flag` is NULL (the general
/// path reports it).
///
/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE (NULL) or has one writable entry per
/// handle; `flag`, when not NULL, is writable.
unsafe fn all_direct(
    call: &str,
    hs: &mut [MPI_Request],
    flag: Option<*mut c_int>,
    statuses: *mut MPI_Status,
) -> Option<R<()>> {
    if flag.is_some_and(|f| f.is_null()) {
        return None;
    }
    if let Some(c) = all_done_sends(hs) {
        // A window of small sends that completed in their calls (rrate36): nothing
        // for the engine to check or take, so no lock of it and no decoded array.
        route_to(c);
        for (i, h) in hs.iter_mut().enumerate() {
            if !statuses.is_null() {
                let s = if *h == MPI_REQUEST_NULL {
                    Status::NULL
                } else {
                    Status::EMPTY
                };
                // SAFETY: one entry per handle (this function's contract).
                unsafe { put_status_err(statuses.add(i), &s, MPI_SUCCESS) };
            }
            *h = MPI_REQUEST_NULL;
        }
        if let Some(fl) = flag {
            // SAFETY: `fl` is MPI_Testall's non-NULL OUT flag (checked above): writable (this function's contract).
            unsafe { *fl = 1 };
        }
        return Some(Ok(()));
    }
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
    let put = |i: usize, mut s: Status| {
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
    };
    let res = match flag {
        None => pt2pt::waitall_each(&mut rs, put),
        Some(fl) => {
            // A failed Testall finished every request (MPI_ERR_IN_STATUS): flag true.
            let res = pt2pt::testall_each(&mut rs, put);
            // SAFETY: `fl` is MPI_Testall's non-NULL OUT flag (checked above): writable (this function's contract).
            unsafe { *fl = res.as_ref().map_or(1, |&d| d as c_int) };
            res.map(|_| ())
        }
    };
    // Completed or failed, every request was consumed: its handle is spent.
    for (h, r) in hs.iter_mut().zip(&rs) {
        if r.is_null() {
            *h = MPI_REQUEST_NULL;
        }
    }
    Some(res.map_err(|e| rename_call(e, call)))
}

/// Whether every handle of `hs` is null or a direct handle of [`Request::DONE`]
/// (at least one): then the communicator errors go to (world's when all are null).
/// One compare a handle, no decoding (bench/PROFILE.md, rrate36).
#[inline]
fn all_done_sends(hs: &[MPI_Request]) -> Option<MPI_Comm> {
    use crate::conv::handles::{DONE_SELF, DONE_WORLD};
    let mut c = None;
    for &h in hs {
        if h == DONE_WORLD {
            c = c.or(Some(crate::abi::MPI_COMM_WORLD));
        } else if h == DONE_SELF {
            c = c.or(Some(crate::abi::MPI_COMM_SELF));
        } else if h != MPI_REQUEST_NULL {
            return None;
        }
    }
    c
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
