//! Persistent requests (MPI_Send_init / MPI_Start) and generalized requests.

use super::*;

// ----- persistent requests -----------------------------------------------------------

/// MPI_Send_init and friends: an inactive persistent send of `buf` (valid while
/// the request exists, see [`RawBuf::from_ptr`]).
pub(crate) fn send_init_raw(
    comm: &Comm,
    buf: RawBuf,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    let e = engine()?;
    let call = match mode {
        SendMode::Standard => "MPI_Send_init",
        SendMode::Synchronous => "MPI_Ssend_init",
        SendMode::Ready => "MPI_Rsend_init",
        SendMode::Buffered => "MPI_Bsend_init",
    };
    check_send_tag(call, tag)?;
    check_dest(call, comm, dest)?;
    let spec = PersistentSpec::Send {
        comm: comm.clone(),
        buf,
        dest,
        tag,
        mode,
    };
    Ok(e.lock()
        .new_request(ReqKind::Persistent { spec, active: None }))
}

/// MPI_Recv_init: an inactive persistent receive into `buf` (valid, and ours alone
/// whenever the request is active, while it exists).
pub(crate) fn recv_init_raw(comm: &Comm, buf: RawBuf, source: i32, tag: i32) -> Result<Request> {
    let e = engine()?;
    check_source("MPI_Recv_init", comm, source)?;
    check_recv_tag("MPI_Recv_init", tag)?;
    let spec = PersistentSpec::Recv {
        comm: comm.clone(),
        buf,
        source,
        tag,
    };
    Ok(e.lock()
        .new_request(ReqKind::Persistent { spec, active: None }))
}

/// MPI_Start.
pub fn start(r: &mut Request) -> Result<()> {
    let e = engine()?;
    let spec = {
        let st = e.lock();
        match st.req(*r).map(|x| &x.kind) {
            Some(ReqKind::Persistent { spec, active: None }) => spec.clone(),
            Some(ReqKind::Persistent {
                active: Some(_), ..
            }) => {
                return Err(MpiError::arg(
                    ErrorClass::Request,
                    "MPI_Start",
                    "request",
                    "the persistent request is already active",
                ))
            }
            _ => {
                return Err(MpiError::arg(
                    ErrorClass::Request,
                    "MPI_Start",
                    "request",
                    "not a persistent request",
                ))
            }
        }
    };
    // The persistent request's descriptor is valid for as long as the request exists.
    let inner = match spec {
        PersistentSpec::Send {
            comm,
            buf,
            dest,
            tag,
            mode,
        } => isend_on(&comm, comm.context(), "MPI_Start", buf, dest, tag, mode)?,
        PersistentSpec::Recv {
            comm,
            buf,
            source,
            tag,
        } => irecv_on(&comm, comm.context(), "MPI_Start", buf, source, tag)?,
        PersistentSpec::Coll(s) => s.start()?,
    };
    let mut st = e.lock();
    if let Some(ReqKind::Persistent { active, .. }) = st.req_mut(*r).map(|x| &mut x.kind) {
        *active = Some(inner);
    }
    Ok(())
}

/// MPI_Startall.
pub fn startall(reqs: &mut [Request]) -> Result<()> {
    reqs.iter_mut().try_for_each(start)
}

// ----- generalized requests ---------------------------------------------------------

/// MPI_Grequest_start: a request that completes only when [`grequest_complete`]
/// is called. Its callbacks (query, free, cancel) belong to the layer above,
/// which runs them outside the engine's lock; the engine only knows whether it
/// is done. Its status, as the engine reports it, is empty.
pub fn grequest_start() -> Result<Request> {
    Ok(engine()?.with_state(|st| st.new_request(ReqKind::Generalized)))
}

/// MPI_Grequest_complete: marks a generalized request complete, waking any
/// thread waiting on it; a request freed already (MPI_Request_free) is dropped.
pub fn grequest_complete(r: Request) -> Result<()> {
    if r.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Request,
            "MPI_Grequest_complete",
            "request",
            "MPI_REQUEST_NULL",
        ));
    }
    engine()?.with_state(|st| st.complete_generalized(r))
}

/// Whether a live request is complete (without finishing it): for the layer
/// above, e.g. the `complete` argument of a generalized request's cancel callback.
pub fn is_complete(r: Request) -> Result<bool> {
    let e = engine()?;
    let st = e.lock();
    is_done(&st, r, "MPI_Cancel")
}
