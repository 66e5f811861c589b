//! Persistent requests (kept in this layer, started as typed immediate operations).

use super::*;

// ----- persistent requests ---------------------------------------------------------

#[allow(clippy::too_many_arguments)]
unsafe fn send_init<C: Count>(
    call: &'static str,
    mode: SendMode,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>(call);
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        let n = a.comm.size();
        if dest != MPI_PROC_NULL && !(0..n).contains(&dest) {
            return Err(bad(
                ErrorClass::Rank,
                call,
                "dest",
                format!("{dest} is not a rank of this communicator (0..{n}) nor MPI_PROC_NULL"),
            ));
        }
        if !(0..=oxmpi_core::TAG_UB).contains(&tag) {
            return Err(bad(
                ErrorClass::Tag,
                call,
                "tag",
                format!("{tag} is outside 0..=MPI_TAG_UB"),
            ));
        }
        let spec = PersistentOp::Send {
            buf: buf as usize,
            count: a.count,
            dt: a.dt.into_owned(),
            dest,
            tag,
            mode,
        };
        *o = new_request(Request::NULL, c, Some(spec));
        Ok(())
    })
}

unsafe fn recv_init<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>("MPI_Recv_init");
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is MPI_Recv_init's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        let n = a.comm.size();
        if source != MPI_PROC_NULL && source != MPI_ANY_SOURCE && !(0..n).contains(&source) {
            return Err(bad(ErrorClass::Rank, call, "source", format!("{source} is not a rank of this communicator (0..{n}), MPI_ANY_SOURCE nor MPI_PROC_NULL")));
        }
        if tag != MPI_ANY_TAG && !(0..=oxmpi_core::TAG_UB).contains(&tag) {
            return Err(bad(
                ErrorClass::Tag,
                call,
                "tag",
                format!("{tag} is neither MPI_ANY_TAG nor in 0..=MPI_TAG_UB"),
            ));
        }
        let spec = PersistentOp::Recv {
            buf: buf as usize,
            count: a.count,
            dt: a.dt.into_owned(),
            source,
            tag,
        };
        *o = new_request(Request::NULL, c, Some(spec));
        Ok(())
    })
}

fn start_one(call: &str, h: MPI_Request, what: &str) -> R<()> {
    if h == MPI_REQUEST_NULL {
        return Err(bad(ErrorClass::Request, call, what, "MPI_REQUEST_NULL"));
    }
    if crate::conv::handles::direct_of(h).is_some() {
        return Err(bad(
            ErrorClass::Request,
            call,
            what,
            "not a persistent request",
        ));
    }
    let (spec, c, active) = {
        let st = state();
        let e = st.requests.get(h).ok_or_else(|| {
            bad(
                ErrorClass::Request,
                call,
                what,
                format!("{h:#x} is not a valid request"),
            )
        })?;
        (e.persistent.clone(), e.comm, !e.inner.is_null())
    };
    route_to(c);
    let spec =
        spec.ok_or_else(|| bad(ErrorClass::Request, call, what, "not a persistent request"))?;
    if active {
        return Err(bad(
            ErrorClass::Request,
            call,
            what,
            "the persistent request is already active",
        ));
    }
    if let PersistentOp::Plan(plan) = &spec {
        // A persistent collective: its schedule, planned at init, runs again
        // (the plan holds its communicator).
        let r = plan.start().map_err(|e| rename_call(e, call))?;
        if let Some(e) = state().requests.get_mut(h) {
            e.inner = r;
        }
        return Ok(());
    }
    let cm = comm(c, call)?;
    if let PersistentOp::Part(start) = &spec {
        let mut tmp = MPI_REQUEST_NULL;
        let code = start(&mut tmp);
        route_to(c);
        if code != MPI_SUCCESS {
            return Err(Fail {
                code,
                message: format!("{call}: starting the partitioned request failed"),
            });
        }
        let r = crate::conv::engine_request_of(tmp);
        if let Some(e) = state().requests.get_mut(h) {
            e.inner = r;
        }
        return Ok(());
    }
    let r = match spec {
        PersistentOp::Send {
            buf,
            count,
            dt,
            dest,
            tag,
            mode,
        } => {
            // SAFETY: the persistent request's creator keeps the buffer valid while it exists.
            let b = unsafe { c_send(buf as *const c_void, count, &dt) };
            pt2pt::isend(&Forever, &cm, b.lend_send(&Forever, count), dest, tag, mode)
        }
        PersistentOp::Recv {
            buf,
            count,
            dt,
            source,
            tag,
        } => {
            // SAFETY: as above.
            let mut b = unsafe { c_recv(buf as *mut c_void, count, &dt) };
            pt2pt::irecv(&Forever, &cm, b.lend_recv(&Forever, count), source, tag)
        }
        PersistentOp::Part(_) | PersistentOp::Plan(_) => unreachable!("started above"),
    }
    .map_err(|e| rename_call(e, call))?;
    if let Some(e) = state().requests.get_mut(h) {
        e.inner = r;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Start(request: *mut MPI_Request) -> c_int {
    ffi("MPI_Start", NO_COMM, || {
        // SAFETY: `request` is MPI_Start's INOUT argument: NULL (rejected) or a readable handle.
        let h = unsafe { out("MPI_Start", "request", request)? };
        start_one("MPI_Start", *h, "request")
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Startall(count: c_int, requests: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Startall";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `requests` is MPI_Startall's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(CALL, count, requests)? };
        for (i, h) in hs.iter().enumerate() {
            start_one(CALL, *h, &format!("array_of_requests[{i}]"))?;
        }
        Ok(())
    })
}

entry!(PMPI_Send_init, PMPI_Send_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Send_init", SendMode::Standard, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Ssend_init, PMPI_Ssend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Ssend_init", SendMode::Synchronous, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Bsend_init, PMPI_Bsend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Bsend_init", SendMode::Buffered, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Rsend_init, PMPI_Rsend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Rsend_init", SendMode::Ready, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Recv_init, PMPI_Recv_init_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => recv_init(buf, count, datatype, source, tag, comm, request));
