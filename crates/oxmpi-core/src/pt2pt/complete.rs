//! Completion: wait, test and their families, request status, free and cancel.

use super::*;

// ----- completion ---------------------------------------------------------------

/// What a finished request reports, consuming it unless it is persistent.
pub(super) fn finish(st: &mut crate::engine::State, r: &mut Request) -> Result<Status> {
    let entry = st.req_mut(*r).unwrap();
    if let ReqKind::Persistent { active, .. } = &mut entry.kind {
        // Inactive after completion; the operation's own request is dropped.
        let inner = active.take();
        return match inner {
            Some(mut i) => finish(st, &mut i),
            None => Ok(Status::NULL),
        };
    }
    let (status, error) = st.take_outcome(*r).unwrap();
    *r = Request::NULL;
    match error {
        // A receive that matched a message keeps reporting it (source, tag, count).
        Some(err) if status.source >= 0 && err.status.is_none() => Err(err.with_status(status)),
        Some(err) => Err(err),
        None => Ok(status),
    }
}

/// Whether request `r` has completed; errors on a stale or foreign handle.
pub(super) fn is_done(st: &crate::engine::State, r: Request, call: &str) -> Result<bool> {
    match st.req(r) {
        None => Err(MpiError::arg(
            ErrorClass::Request,
            call,
            "request",
            "not a live request (already completed or freed?)",
        )),
        Some(e) => match &e.kind {
            ReqKind::Persistent { active: None, .. } => Ok(true),
            ReqKind::Persistent {
                active: Some(i), ..
            } => Ok(st.req(*i).is_none_or(|x| x.done)),
            _ => Ok(e.done),
        },
    }
}

pub(super) fn wait_named(r: &mut Request, call: &str) -> Result<Status> {
    wait_described(r, call, &|| None)
}

/// [`wait_named`] for a blocking call that can say what it is, should it
/// block for long (`desc` runs only then: nothing is recorded on the way).
pub(super) fn wait_described(
    r: &mut Request,
    call: &str,
    desc: &dyn Fn() -> Option<crate::diag::Call>,
) -> Result<Status> {
    if r.is_null() {
        return Ok(Status::NULL);
    }
    // Complete from the start: no progress step to wait for.
    if *r == Request::DONE {
        *r = Request::NULL;
        return Ok(Status::EMPTY);
    }
    let e = engine()?;
    e.wait_until_described(desc, |st| match is_done(st, *r, call) {
        Err(err) => Some(Err(err)),
        Ok(false) => None,
        // The common end of a blocking call (a receive that landed, without an
        // error, not persistent) frees the slot without `finish`'s error move and
        // persistent-request test (the latency path, bench/PROFILE.md rrate28);
        // anything else is finished as before.
        Ok(true) => Some(match st.take_done_ok(*r) {
            Some(s) => {
                *r = Request::NULL;
                Ok(s)
            }
            None => finish(st, r),
        }),
    })
}

/// MPI_Wait. A non-persistent request becomes [`Request::NULL`].
pub fn wait(r: &mut Request) -> Result<Status> {
    wait_named(r, "MPI_Wait")
}

/// MPI_Test: `Some(status)` once complete.
pub fn test(r: &mut Request) -> Result<Option<Status>> {
    if r.is_null() {
        return Ok(Some(Status::NULL));
    }
    if *r == Request::DONE {
        *r = Request::NULL;
        return Ok(Some(Status::EMPTY));
    }
    let e = engine()?;
    e.with_progress_test(
        |v| !matches!(v, Ok(None)),
        |st| match is_done(st, *r, "MPI_Test")? {
            false => Ok(None),
            true => finish(st, r).map(Some),
        },
    )
}

/// Stores the outcome of request `i` into `statuses[i]`, remembering the first error.
pub(super) fn record(res: Result<Status>, status: &mut Status, first_err: &mut Option<MpiError>) {
    match res {
        Ok(s) => *status = s,
        Err(err) => {
            if let Some(s) = err.status {
                *status = s;
            }
            status.error = err.class.code();
            if first_err.is_none() {
                *first_err = Some(err);
            }
        }
    }
}

pub(super) fn in_status_error(call: &str, first: MpiError) -> MpiError {
    MpiError::new(
        ErrorClass::InStatus,
        format!(
            "{call}: a request failed, see its status: {}",
            first.message
        ),
    )
}

/// MPI_Waitall. On failure the error class is MPI_ERR_IN_STATUS and each
/// status's `error` tells which requests failed.
pub fn waitall(reqs: &mut [Request], statuses: &mut [Status]) -> Result<()> {
    assert!(
        statuses.len() >= reqs.len(),
        "waitall: statuses shorter than requests"
    );
    for s in statuses.iter_mut().take(reqs.len()) {
        *s = Status::NULL;
    }
    waitall_each(reqs, |i, s| statuses[i] = s)
}

/// [`waitall`] handing each request's status to `put` (index, status) as it
/// completes, under the engine's lock (`put` must not call MPI); null
/// requests get none. The C layer writes them straight into the caller's
/// array, or nowhere for MPI_STATUSES_IGNORE.
pub fn waitall_each(reqs: &mut [Request], mut put: impl FnMut(usize, Status)) -> Result<()> {
    waitall_each_left(reqs, |i, s, _| put(i, s))
}

/// [`waitall_each`], also telling `put` whether the request left the engine (its
/// handle now null: completed and freed, never in flight again; a persistent
/// request stays): the Rust API's collection hands a receive's buffer back from
/// there (`buf::Left`, bench/PROFILE.md rrate31).
#[inline(always)]
pub(crate) fn waitall_each_left(
    reqs: &mut [Request],
    mut put: impl FnMut(usize, Status, bool),
) -> Result<()> {
    let e = engine()?;
    let mut first_err = None;
    // Requests before `first_open` are all finished: each look starts at the first
    // open one and stops at the first still running (requests mostly complete in
    // order, so a wait over a window of n requests costs O(n), not O(n) per poll).
    let mut first_open = 0;
    // Requests finished already (a window of eager sends) are taken under one
    // lock with no progress step, as MPICH's MPI_Waitall does; the wait below
    // starts at the first one still running.
    {
        let mut st = e.lock();
        while let Some(r) = reqs.get_mut(first_open) {
            if !r.is_null() {
                let Some(s) = st.take_done_ok(*r) else { break };
                *r = Request::NULL;
                put(first_open, s, true);
            }
            first_open += 1;
        }
    }
    if first_open == reqs.len() {
        return Ok(());
    }
    e.wait_until_draining(|st| {
        while first_open < reqs.len() {
            let i = first_open;
            let r = &mut reqs[i];
            if !r.is_null() {
                if let Some(s) = st.take_done_ok(*r) {
                    *r = Request::NULL;
                    put(i, s, true);
                    first_open += 1;
                    continue;
                }
                let mut s = Status::NULL;
                match is_done(st, *r, "MPI_Waitall") {
                    Err(err) => record(Err(err), &mut s, &mut first_err),
                    Ok(false) => return None,
                    Ok(true) => {
                        // (A persistent request stays non-null, inactive: never looked at again.)
                        let res = finish(st, r);
                        record(res, &mut s, &mut first_err);
                    }
                }
                put(i, s, r.is_null());
            }
            first_open += 1;
        }
        Some(())
    });
    match first_err {
        Some(err) => Err(in_status_error("MPI_Waitall", err)),
        None => Ok(()),
    }
}

/// MPI_Testall over the engine's own requests (the C layer's direct handles),
/// each completed request's status handed to `put` with its index. When every
/// one is complete already (a window of eager sends, receives a wait drained)
/// they are all finished under one lock with no progress step; otherwise one
/// progress step and the same look. `Ok(false)`: not all complete, nothing
/// changed. On failure the class is MPI_ERR_IN_STATUS (every request finished,
/// each status's `error` saying which failed), as [`testall`] reports it.
pub fn testall_each(reqs: &mut [Request], mut put: impl FnMut(usize, Status)) -> Result<bool> {
    let e = engine()?;
    let quick = take_all_if_done(&mut e.lock(), reqs, &mut put);
    if !matches!(quick, Ok(false)) {
        return quick;
    }
    e.with_progress_test(
        |v| !matches!(v, Ok(false)),
        |st| take_all_if_done(st, reqs, &mut put),
    )
}

/// Finishes every request of `reqs` under the caller's lock if all are
/// complete (NULL ones skipped); `Ok(false)`, nothing changed, if one is not.
fn take_all_if_done(
    st: &mut crate::engine::State,
    reqs: &mut [Request],
    put: &mut impl FnMut(usize, Status),
) -> Result<bool> {
    for r in reqs.iter() {
        if !r.is_null() && !is_done(st, *r, "MPI_Testall")? {
            return Ok(false);
        }
    }
    let mut first_err = None;
    for (i, r) in reqs.iter_mut().enumerate() {
        if r.is_null() {
            continue;
        }
        if let Some(s) = st.take_done_ok(*r) {
            *r = Request::NULL;
            put(i, s);
            continue;
        }
        let mut s = Status::NULL;
        record(finish(st, r), &mut s, &mut first_err);
        put(i, s);
    }
    match first_err {
        Some(err) => Err(in_status_error("MPI_Testall", err)),
        None => Ok(true),
    }
}

/// MPI_Testall: `true` (and statuses filled) only when all are complete.
pub fn testall(reqs: &mut [Request], statuses: &mut [Status]) -> Result<bool> {
    let e = engine()?;
    let ready = e.with_progress_test(
        |v| !matches!(v, Ok(false)),
        |st| -> Result<bool> {
            for r in reqs.iter() {
                if !r.is_null() && !is_done(st, *r, "MPI_Testall")? {
                    return Ok(false);
                }
            }
            Ok(true)
        },
    )?;
    if !ready {
        return Ok(false);
    }
    waitall(reqs, statuses)?;
    Ok(true)
}

/// Finds one complete request among `reqs` (first in order), finishing it.
pub(super) fn take_one(
    st: &mut crate::engine::State,
    reqs: &mut [Request],
    call: &str,
) -> Result<Option<Option<(usize, Status)>>> {
    let mut any_active = false;
    for (i, r) in reqs.iter_mut().enumerate() {
        if r.is_null() {
            continue;
        }
        if matches!(
            st.req(*r).map(|x| &x.kind),
            Some(ReqKind::Persistent { active: None, .. })
        ) {
            continue;
        }
        any_active = true;
        if is_done(st, *r, call)? {
            return finish(st, r).map(|s| Some(Some((i, s))));
        }
    }
    Ok(if any_active { None } else { Some(None) })
}

/// MPI_Waitany: `None` when no request is active (MPI_UNDEFINED).
pub fn waitany(reqs: &mut [Request]) -> Result<Option<(usize, Status)>> {
    let e = engine()?;
    // A request that was complete when the call began is returned before any
    // progress step, as MPICH does: otherwise a receive that this call's own
    // progress completes overtakes, by its lower index, a send that finished
    // earlier, and programs that wait on [recv, send] twice and read the
    // receive's status from the second call (MPICH's irsendf) see the send's.
    if let Some(found) = take_one(&mut e.lock(), reqs, "MPI_Waitany")? {
        return Ok(found);
    }
    e.wait_until(|st| match take_one(st, reqs, "MPI_Waitany") {
        Err(err) => Some(Err(err)),
        Ok(None) => None,
        Ok(Some(found)) => Some(Ok(found)),
    })
}

/// MPI_Testany: `Ok(None)` if nothing completed, `Ok(Some(None))` if no request is active.
pub fn testany(reqs: &mut [Request]) -> Result<Option<Option<(usize, Status)>>> {
    let e = engine()?;
    e.with_progress_test(
        |v| !matches!(v, Ok(None)),
        |st| take_one(st, reqs, "MPI_Testany"),
    )
}

/// Finishes every complete request; `None` when no request is active.
pub(super) fn take_some(
    st: &mut crate::engine::State,
    reqs: &mut [Request],
    call: &str,
    out: &mut Vec<(usize, Result<Status>)>,
) -> Result<bool> {
    let mut any_active = false;
    for (i, r) in reqs.iter_mut().enumerate() {
        if r.is_null()
            || matches!(
                st.req(*r).map(|x| &x.kind),
                Some(ReqKind::Persistent { active: None, .. })
            )
        {
            continue;
        }
        any_active = true;
        if is_done(st, *r, call)? {
            out.push((i, finish(st, r)));
        }
    }
    Ok(any_active)
}

/// MPI_Waitsome: the indices and statuses of the requests that completed
/// (at least one), or `None` when no request is active.
pub fn waitsome(reqs: &mut [Request]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
    let e = engine()?;
    e.wait_until_draining(|st| {
        let mut out = Vec::new();
        match take_some(st, reqs, "MPI_Waitsome", &mut out) {
            Err(err) => Some(Err(err)),
            Ok(false) => Some(Ok(None)),
            Ok(true) if out.is_empty() => None,
            Ok(true) => Some(Ok(Some(out))),
        }
    })
}

/// MPI_Testsome: like [`waitsome`] but returns an empty list at once if none completed.
pub fn testsome(reqs: &mut [Request]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
    let e = engine()?;
    e.with_progress_test(
        |v| !matches!(v, Ok(None)),
        |st| {
            let mut out = Vec::new();
            Ok(take_some(st, reqs, "MPI_Testsome", &mut out)?.then_some(out))
        },
    )
}

/// MPI_Request_get_status: completion without freeing the request.
pub fn request_get_status(r: Request) -> Result<Option<Status>> {
    if r.is_null() {
        return Ok(Some(Status::NULL));
    }
    let e = engine()?;
    e.with_progress_test(
        |v| !matches!(v, Ok(None)),
        |st| {
            if !is_done(st, r, "MPI_Request_get_status")? {
                return Ok(None);
            }
            let entry = st.req(r).unwrap();
            Ok(Some(match &entry.kind {
                ReqKind::Persistent {
                    active: Some(i), ..
                } => st.req(*i).map(|x| x.status).unwrap_or(Status::EMPTY),
                ReqKind::Persistent { active: None, .. } => Status::NULL,
                _ => entry.status,
            }))
        },
    )
}

/// MPI_Request_free: the operation goes on, the handle becomes null.
pub fn request_free(r: &mut Request) -> Result<()> {
    if r.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Request,
            "MPI_Request_free",
            "request",
            "MPI_REQUEST_NULL",
        ));
    }
    let e = engine()?;
    let mut st = e.lock();
    let entry = st.req_mut(*r).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Request,
            "MPI_Request_free",
            "request",
            "not a live request",
        )
    })?;
    if let ReqKind::Persistent { active, .. } = &mut entry.kind {
        let inner = active.take();
        st.remove_request(*r);
        if let Some(i) = inner {
            // A run still going keeps using the buffers: remember it under the
            // persistent request's name, which buffer scopes hold (`settle`).
            if st.req(i).is_some_and(|x| !x.done) {
                st.freed_runs.push((*r, i));
            }
            st.detach(i);
        }
    } else {
        st.detach(*r);
    }
    *r = Request::NULL;
    Ok(())
}

/// MPI_Cancel: a pending receive is withdrawn; a send is withdrawn if the
/// receiver has not matched it yet. Completion still needs wait/test, whose
/// status then says whether it was cancelled.
pub fn cancel(r: &Request) -> Result<()> {
    if r.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Request,
            "MPI_Cancel",
            "request",
            "MPI_REQUEST_NULL",
        ));
    }
    let e = engine()?;
    e.with_progress(|st| {
        let target = match st.req(*r).map(|x| &x.kind) {
            Some(ReqKind::Persistent {
                active: Some(i), ..
            }) => *i,
            Some(ReqKind::Persistent { active: None, .. }) => return Ok(()),
            _ => *r,
        };
        st.cancel(target)
    })
}

/// Whether the engine may still use the memory of request `r`: it is live
/// (pending, or an inactive persistent request), or a persistent request freed
/// while its run was going and that run is not over.
pub fn in_flight(r: Request) -> bool {
    if r.is_null() || r == Request::DONE {
        return false;
    }
    engine().is_ok_and(|e| {
        let st = e.lock();
        st.req(r).is_some() || st.freed_runs.iter().any(|&(p, _)| p == r)
    })
}

/// Keeps in `reqs` only the requests still in flight ([`in_flight`]), all looked
/// at under one lock of the engine: a scope or a request collection checks a whole
/// window of requests this way, instead of locking the engine once per request
/// (bench/PROFILE.md, rate20).
pub fn retain_in_flight(reqs: &mut Vec<Request>) {
    // One pass, under the lock: the engine's `retain_in_flight` drops null and
    // `DONE` requests too (a first pass for them cost ~8 Ir per request, twice
    // at the end of a Rust API window: PROFILE.md rate18).
    if reqs.is_empty() {
        return;
    }
    let Ok(e) = engine() else {
        reqs.clear();
        return;
    };
    e.lock().retain_in_flight(reqs);
}

/// [`settle`] of every request of `reqs`, those no longer in flight found under
/// one lock of the engine (the common case at the end of a scope: all complete).
pub fn settle_all(mut reqs: Vec<Request>) {
    retain_in_flight(&mut reqs);
    for r in reqs {
        settle(r);
    }
}

/// What a buffer scope does at its end for a request it holds: completes it if
/// nobody did (waits; a persistent request is then freed), and if it was freed
/// (`MPI_Request_free`) with its operation, or a persistent request's run, still
/// going, waits until that is over. Afterwards the engine no longer touches the
/// request's buffers. Errors of the operation are dropped: its owner gave it up.
pub fn settle(mut r: Request) {
    if !in_flight(r) {
        return;
    }
    let Ok(e) = engine() else { return };
    let owned = e.lock().req(r).is_some_and(|x| !x.detached);
    if owned {
        let _ = wait(&mut r);
        if !r.is_null() && e.lock().req(r).is_some() {
            let _ = request_free(&mut r);
        }
    }
    if r.is_null() {
        return;
    }
    e.wait_until(|st| {
        let gone = st.req(r).is_none() && !st.freed_runs.iter().any(|&(p, _)| p == r);
        gone.then_some(())
    });
}
