//! MPI_Cancel, MPI_Request_free, MPI_Request_get_status, MPI_Test_cancelled.

use super::*;

/// MPI_Cancel (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn cancel(call: &'static str, h: &mut MPI_Request) -> R<()> {
    let (r, c, _) = one_request(call, *h)?;
    route_to(c);
    if let Some(g) = greq_of(*h) {
        // A generalized request: the user's cancel_fn decides, told whether
        // MPI_Grequest_complete was called already.
        if let Some(f) = g.cancel {
            // SAFETY: a C function the user registered with MPI_Grequest_start with this signature.
            let code = unsafe { f(g.extra_state as *mut c_void, g.completed as c_int) };
            if code != MPI_SUCCESS {
                return Err(Fail {
                    code,
                    message: format!(
                        "{call}: the generalized request's cancel_fn returned error code {code}"
                    ),
                });
            }
        }
        return Ok(());
    }
    if !r.is_null() {
        pt2pt::cancel(&r).map_err(|e| rename_call(e, call))?;
    }
    Ok(())
}

/// MPI_Request_free (abi.txt `out(request)`: the generated `PMPI_x` checks `request` first).
pub fn request_free(call: &'static str, h: &mut MPI_Request) -> R<()> {
    let (mut r, c, _) = one_request(call, *h)?;
    route_to(c);
    if let Some(g) = greq_of(*h) {
        if g.freed {
            return Err(bad(
                ErrorClass::Request,
                call,
                "request",
                "the generalized request was freed already",
            ));
        }
        pt2pt::request_free(&mut r).map_err(|e| rename_call(e, call))?;
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
                    "{call}: the generalized request's free_fn returned error code {code}"
                ),
            });
        }
        return Ok(());
    }
    if !r.is_null() {
        pt2pt::request_free(&mut r).map_err(|e| rename_call(e, call))?;
    }
    state().requests.remove(*h);
    *h = MPI_REQUEST_NULL;
    Ok(())
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

/// MPI_Test_cancelled (abi.txt `query`: the generated `PMPI_x` checks and stores the OUT).
///
/// # Safety
/// `status` is NULL or points to a readable `MPI_Status` (the C caller's IN argument).
pub unsafe fn test_cancelled(call: &'static str, status: *const MPI_Status) -> R<c_int> {
    // SAFETY: `status` is MPI_Test_cancelled's IN status: NULL (rejected) or readable.
    let s = unsafe { status_ref(call, status)? };
    Ok((s.MPI_internal[2] != 0) as c_int)
}
