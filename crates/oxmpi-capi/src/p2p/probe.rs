//! Probes and matched receives.

use super::*;

// ----- probes and matched receives ---------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Probe(
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    ffi("MPI_Probe", c, || {
        let cm = comm(c, "MPI_Probe")?;
        let s = pt2pt::probe(&cm, source, tag)?;
        // SAFETY: `status` is MPI_Probe's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iprobe(
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    ffi("MPI_Iprobe", c, || {
        let cm = comm(c, "MPI_Iprobe")?;
        // SAFETY: `flag` is MPI_Iprobe's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out("MPI_Iprobe", "flag", flag)? };
        match pt2pt::iprobe(&cm, source, tag)? {
            Some(s) => {
                *f = 1;
                // SAFETY: `status` is MPI_Iprobe's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
            }
            None => *f = 0,
        }
        Ok(())
    })
}

fn message_handle(m: Message, c: MPI_Comm) -> MPI_Message {
    if m == Message::NO_PROC {
        MPI_MESSAGE_NO_PROC
    } else {
        state().messages.insert(MessageEntry { msg: m, comm: c })
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Mprobe(
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    ffi("MPI_Mprobe", c, || {
        let cm = comm(c, "MPI_Mprobe")?;
        // SAFETY: `message` is MPI_Mprobe's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out("MPI_Mprobe", "message", message)? };
        let (m, s) = pt2pt::mprobe(&cm, source, tag)?;
        *o = message_handle(m, c);
        // SAFETY: `status` is MPI_Mprobe's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Improbe(
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    ffi("MPI_Improbe", c, || {
        let cm = comm(c, "MPI_Improbe")?;
        // SAFETY: `flag` is MPI_Improbe's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out("MPI_Improbe", "flag", flag)? };
        // SAFETY: `message` is MPI_Improbe's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out("MPI_Improbe", "message", message)? };
        match pt2pt::improbe(&cm, source, tag)? {
            Some((m, s)) => {
                *f = 1;
                *o = message_handle(m, c);
                // SAFETY: `status` is MPI_Improbe's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
            }
            None => *f = 0,
        }
        Ok(())
    })
}

/// Starts the receive of a matched message; returns the request and its communicator.
///
/// # Safety
/// As MPI_Imrecv requires of its arguments: `buf` holds `count` elements of
/// `h` and stays valid until the request completes; `message` is NULL or a
/// writable, unaliased `MPI_Message`.
unsafe fn imrecv<C: Count>(
    call: &str,
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    message: *mut MPI_Message,
) -> R<(Request, MPI_Comm)> {
    // SAFETY: `message` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let mh = unsafe { out(call, "message", message)? };
    let n = count_arg(call, count)?;
    let dt = committed(h, call, "datatype")?;
    check_buf(call, "buf", buf, n, &dt)?;
    let (mut m, c) = if *mh == MPI_MESSAGE_NO_PROC {
        (Message::NO_PROC, MPI_COMM_SELF)
    } else {
        let e = state().messages.remove(*mh).ok_or_else(|| {
            bad(
                ErrorClass::Request,
                call,
                "message",
                format!(
                    "{:#x} is not a message from MPI_Mprobe/MPI_Improbe (or was received already)",
                    *mh
                ),
            )
        })?;
        (e.msg, e.comm)
    };
    route_to(c);
    *mh = MPI_MESSAGE_NULL;
    // SAFETY: the C caller's buffer holds `count` elements and stays valid until completion.
    let mut b = unsafe { c_recv(buf, n, &dt) };
    let r = pt2pt::imrecv(&Forever, b.lend_recv(&Forever, n), &mut m)
        .map_err(|e| rename_call(e, call))?;
    Ok((r, c))
}

unsafe fn mrecv<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    let call = name::<C>("MPI_Mrecv");
    ffi(call, NO_COMM, || {
        // SAFETY: the C caller's arguments, passed on: MPI_Mrecv's contract covers `imrecv`'s, as the buffer outlives the wait below.
        let (mut r, _) = unsafe { imrecv(call, buf, count, h, message)? };
        let s = pt2pt::wait(&mut r).map_err(|e| rename_call(e, call))?;
        // SAFETY: `status` is MPI_Mrecv's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

unsafe fn imrecv_entry<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>("MPI_Imrecv");
    ffi(call, NO_COMM, || {
        // SAFETY: `request` is MPI_Imrecv's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        // SAFETY: the C caller's arguments, passed on: MPI_Imrecv's contract is `imrecv`'s.
        let (r, c) = unsafe { imrecv(call, buf, count, h, message)? };
        *o = new_request(r, c, None);
        Ok(())
    })
}

entry!(PMPI_Mrecv, PMPI_Mrecv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, message: PMsg, status: PStatus) => mrecv(buf, count, datatype, message, status));
entry!(PMPI_Imrecv, PMPI_Imrecv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, message: PMsg, request: PReq) => imrecv_entry(buf, count, datatype, message, request));
