//! Generalized requests: MPI_Grequest_start and MPI_Grequest_complete.

use super::*;

/// MPI_Grequest_start (abi.txt `query ... outfirst`: the generated `PMPI_x` checks the OUT first and
/// stores the answer).
///
/// # Safety
/// None beyond the call's: `extra_state` is kept, never read here (the callbacks get it).
pub unsafe fn grequest_start(
    _call: &'static str,
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    extra_state: *mut c_void,
) -> R<MPI_Request> {
    let r = pt2pt::grequest_start()?;
    let g = Greq {
        query: query_fn,
        free: free_fn,
        cancel: cancel_fn,
        extra_state: extra_state as usize,
        completed: false,
        freed: false,
    };
    Ok(new_hooked_request(r, MPI_COMM_SELF, Hook::Greq(g)))
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
