//! Blocking and immediate sends and receives, sendrecv and its replace forms.

use super::*;

// ----- blocking and immediate sends and receives -------------------------------------

// The sends and receives here are abi.txt's `hot` lines: their generated `PMPI_x`
// (`conv::errors::hot`) runs `x_fast` and, when that gives `None` (not the hot case,
// nothing done), `x`, the call's whole body, each given the C arguments as one tuple;
// the send modes share `send`/`isend`.

/// MPI_Send's C arguments (and its modes'): buf, count, datatype, dest, tag, comm.
pub type SendArgs<C> = (*const c_void, C, MPI_Datatype, c_int, c_int, MPI_Comm);
/// MPI_Isend's C arguments (and its modes'): MPI_Send's, then request.
#[rustfmt::skip]
pub type IsendArgs<C> = (*const c_void, C, MPI_Datatype, c_int, c_int, MPI_Comm, *mut MPI_Request);
/// MPI_Recv's C arguments: buf, count, datatype, source, tag, comm, status.
#[rustfmt::skip]
pub type RecvArgs<C> = (*mut c_void, C, MPI_Datatype, c_int, c_int, MPI_Comm, *mut MPI_Status);
/// MPI_Irecv's C arguments: MPI_Recv's with request for status.
#[rustfmt::skip]
pub type IrecvArgs<C> = (*mut c_void, C, MPI_Datatype, c_int, c_int, MPI_Comm, *mut MPI_Request);

/// A blocking send's fast path: standard mode, contiguous predefined data on a
/// predefined communicator, else on the user communicator this thread looked up
/// last (out of line, so the predefined case's code is as it was).
#[inline(always)]
pub unsafe fn send_fast<C: Count>(a: SendArgs<C>, mode: SendMode) -> Option<R<()>> {
    if mode != SendMode::Standard {
        return None;
    }
    let (buf, count, h, dest, tag, c) = a;
    let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) else {
        // SAFETY: the C caller's arguments, passed on.
        return unsafe { send_user(a) };
    };
    // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
    let data = unsafe { c_bytes(buf, len) };
    Some(pt2pt::send_contig(cm, data, dt, dest, tag).map_err(Into::into))
}

/// [`send_fast`] on the user communicator this thread looked up last (capi31).
#[inline(never)]
unsafe fn send_user<C: Count>((buf, count, h, dest, tag, c): SendArgs<C>) -> Option<R<()>> {
    let (cm, dt, len) = fast_p2p_user(c, h, buf, count.wide())?;
    // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
    let data = unsafe { c_bytes(buf, len) };
    Some(pt2pt::send_contig(&cm, data, dt, dest, tag).map_err(Into::into))
}

/// The whole body of MPI_Send, MPI_Ssend, MPI_Bsend and MPI_Rsend.
pub unsafe fn send<C: Count>(
    call: &'static str,
    (buf, count, h, dest, tag, c): SendArgs<C>,
    mode: SendMode,
) -> R<()> {
    let a = args(call, c, buf, count, h)?;
    // SAFETY: the C caller's buffer holds `count` elements of the datatype for the call.
    let b = unsafe { c_send(buf, a.count, &a.dt) };
    pt2pt::send_typed(&a.comm, b.send(a.count), dest, tag, mode)?;
    Ok(())
}

/// An immediate send's fast path: standard mode, contiguous predefined data on a
/// predefined communicator.
#[inline(always)]
pub unsafe fn isend_fast<C: Count>(a: IsendArgs<C>, mode: SendMode) -> Option<R<()>> {
    let (buf, count, h, dest, tag, c, request) = a;
    if mode != SendMode::Standard || request.is_null() {
        return None;
    }
    let Some((e, cm, dt, len)) = fast_p2p_with_engine(c, h, buf, count.wide()) else {
        // SAFETY: the C caller's arguments, passed on.
        return unsafe { isend_user(a) };
    };
    // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
    let data = unsafe { c_bytes(buf, len) };
    let res = pt2pt::isend_contig_on(e, cm, data, dt, dest, tag);
    // SAFETY: `request` is the C caller's non-NULL OUT argument: writable and unaliased (MPI contract).
    Some(unsafe { put_request(res, request, c) })
}

/// [`isend_fast`] on the user communicator this thread looked up last (capi31).
#[inline(never)]
unsafe fn isend_user<C: Count>(
    (buf, count, h, dest, tag, c, request): IsendArgs<C>,
) -> Option<R<()>> {
    let (cm, dt, len) = fast_p2p_user(c, h, buf, count.wide())?;
    // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
    let data = unsafe { c_bytes(buf, len) };
    let res = pt2pt::isend_contig(&cm, data, dt, dest, tag);
    // SAFETY: `request` is the C caller's non-NULL OUT argument (checked by isend_fast): writable and unaliased.
    Some(unsafe { put_request(res, request, c) })
}

/// The whole body of MPI_Isend, MPI_Issend, MPI_Ibsend and MPI_Irsend.
pub unsafe fn isend<C: Count>(
    call: &'static str,
    (buf, count, h, dest, tag, c, request): IsendArgs<C>,
    mode: SendMode,
) -> R<()> {
    let a = args(call, c, buf, count, h)?;
    // SAFETY: `request` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let o = unsafe { out(call, "request", request)? };
    // SAFETY: the C caller keeps the buffer until the request completes.
    let b = unsafe { c_send(buf, a.count, &a.dt) };
    let r = pt2pt::isend(
        &Forever,
        &a.comm,
        b.lend_send(&Forever, a.count),
        dest,
        tag,
        mode,
    )?;
    *o = new_request(r, c, None);
    Ok(())
}

/// MPI_Recv's fast path: contiguous predefined data on a predefined communicator.
#[inline(always)]
pub unsafe fn recv_fast<C: Count>(a: RecvArgs<C>) -> Option<R<()>> {
    let (buf, count, h, source, tag, c, status) = a;
    let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) else {
        // SAFETY: the C caller's arguments, passed on.
        return unsafe { recv_user(a) };
    };
    // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
    let data = unsafe { c_bytes_mut(buf, len) };
    let res = pt2pt::recv_contig(cm, data, dt, source, tag);
    // SAFETY: `status` is MPI_Recv's OUT status: MPI_STATUS_IGNORE (NULL) or writable and unaliased.
    Some(unsafe { recv_outcome(res, status) })
}

/// [`recv_fast`] on the user communicator this thread looked up last (capi31).
#[inline(never)]
unsafe fn recv_user<C: Count>(
    (buf, count, h, source, tag, c, status): RecvArgs<C>,
) -> Option<R<()>> {
    let (cm, dt, len) = fast_p2p_user(c, h, buf, count.wide())?;
    // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
    let data = unsafe { c_bytes_mut(buf, len) };
    let res = pt2pt::recv_contig(&cm, data, dt, source, tag);
    // SAFETY: `status` is MPI_Recv's OUT status: MPI_STATUS_IGNORE (NULL) or writable and unaliased.
    Some(unsafe { recv_outcome(res, status) })
}

/// MPI_Recv's whole body.
pub unsafe fn recv<C: Count>(
    call: &'static str,
    (buf, count, h, source, tag, c, status): RecvArgs<C>,
) -> R<()> {
    let a = args(call, c, buf, count, h)?;
    // SAFETY: the C caller's buffer holds `count` elements of the datatype for the call.
    let mut b = unsafe { c_recv(buf, a.count, &a.dt) };
    let res = pt2pt::recv_typed(&a.comm, b.recv(a.count), source, tag);
    // SAFETY: `status` is MPI_Recv's OUT status: MPI_STATUS_IGNORE (NULL) or writable and unaliased.
    unsafe { recv_outcome(res, status) }
}

/// A fast immediate call's outcome: its request handed out through `request`.
///
/// Safety: `request` is non-NULL, writable and unaliased.
#[inline(always)]
unsafe fn put_request(
    res: Result<oxmpi_core::Request, MpiError>,
    request: *mut MPI_Request,
    c: MPI_Comm,
) -> R<()> {
    let r = res?;
    // SAFETY: the caller's promise on `request` (this function's contract).
    unsafe { *request = new_p2p_request(r, c) };
    Ok(())
}

/// A blocking receive's outcome into its OUT status: a failed receive that
/// matched a message (truncation) still reports it.
///
/// Safety: `status` is MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
#[inline(always)]
unsafe fn recv_outcome(
    res: Result<oxmpi_core::Status, MpiError>,
    status: *mut MPI_Status,
) -> R<()> {
    let s = res.as_ref().map_or_else(|e| e.status, |s| Some(*s));
    if let Some(s) = s {
        // SAFETY: the caller's promise on `status` (this function's contract).
        unsafe { put_status(status, &s) };
    }
    res?;
    Ok(())
}

/// MPI_Irecv's fast path: contiguous predefined data on a predefined communicator.
#[inline(always)]
pub unsafe fn irecv_fast<C: Count>(a: IrecvArgs<C>) -> Option<R<()>> {
    let (buf, count, h, source, tag, c, request) = a;
    if request.is_null() {
        return None;
    }
    let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) else {
        // SAFETY: the C caller's arguments, passed on.
        return unsafe { irecv_user(a) };
    };
    // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
    let data = unsafe { c_bytes_mut(buf, len) };
    let res = pt2pt::irecv_contig(cm, data, dt, source, tag);
    // SAFETY: `request` is the C caller's non-NULL OUT argument: writable and unaliased (MPI contract).
    Some(unsafe { put_request(res, request, c) })
}

/// [`irecv_fast`] on the user communicator this thread looked up last (capi31).
#[inline(never)]
unsafe fn irecv_user<C: Count>(
    (buf, count, h, source, tag, c, request): IrecvArgs<C>,
) -> Option<R<()>> {
    let (cm, dt, len) = fast_p2p_user(c, h, buf, count.wide())?;
    // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
    let data = unsafe { c_bytes_mut(buf, len) };
    let res = pt2pt::irecv_contig(&cm, data, dt, source, tag);
    // SAFETY: `request` is the C caller's non-NULL OUT argument (checked by irecv_fast): writable and unaliased.
    Some(unsafe { put_request(res, request, c) })
}

/// MPI_Irecv's whole body.
pub unsafe fn irecv<C: Count>(
    call: &'static str,
    (buf, count, h, source, tag, c, request): IrecvArgs<C>,
) -> R<()> {
    let a = args(call, c, buf, count, h)?;
    // SAFETY: `request` is MPI_Irecv's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let o = unsafe { out(call, "request", request)? };
    // SAFETY: the C caller keeps the buffer until the request completes.
    let mut b = unsafe { c_recv(buf, a.count, &a.dt) };
    let r = pt2pt::irecv(
        &Forever,
        &a.comm,
        b.lend_recv(&Forever, a.count),
        source,
        tag,
    )?;
    *o = new_request(r, c, None);
    Ok(())
}

fn rename(e: MpiError, from: &str, to: &str) -> MpiError {
    MpiError::new(e.class, e.message.replacen(from, to, 1))
}

#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv<C: Count>(
    sendbuf: *const c_void,
    sendcount: C,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: C,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let call = name::<C>("MPI_Sendrecv");
    ffi(call, c, || {
        let s = args(call, c, sendbuf, sendcount, sendtype)?;
        let r = args(call, c, recvbuf, recvcount, recvtype)?;
        // SAFETY: both buffers stay valid until both requests completed below.
        let mut rb = unsafe { c_recv(recvbuf, r.count, &r.dt) };
        let mut rr = pt2pt::irecv(
            &Forever,
            &r.comm,
            rb.lend_recv(&Forever, r.count),
            source,
            recvtag,
        )
        .map_err(|e| rename(e, "MPI_Irecv", call))?;
        // SAFETY: as above: `sendbuf` holds `sendcount` × `sendtype` and outlives the wait below.
        let sb = unsafe { c_send(sendbuf, s.count, &s.dt) };
        let sent = pt2pt::isend(
            &Forever,
            &s.comm,
            sb.lend_send(&Forever, s.count),
            dest,
            sendtag,
            SendMode::Standard,
        );
        let mut sr = match sent {
            Ok(x) => x,
            Err(e) => {
                let _ = pt2pt::cancel(&rr);
                let _ = pt2pt::wait(&mut rr);
                return Err(rename(e, "MPI_Isend", call).into());
            }
        };
        let got = pt2pt::wait(&mut rr).map_err(|e| rename(e, "MPI_Wait", call));
        pt2pt::wait(&mut sr).map_err(|e| rename(e, "MPI_Wait", call))?;
        // SAFETY: `status` is MPI_Sendrecv's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &got?) };
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv_replace<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let call = name::<C>("MPI_Sendrecv_replace");
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        let mut packed = vec![0u8; a.dt.size() * a.count];
        // SAFETY: the C buffer holds `count` elements of the datatype.
        unsafe { a.dt.pack(buf as *const u8, a.count, &mut packed) };
        // SAFETY: the C buffer holds `count` elements of the datatype and outlives the wait below.
        let mut rb = unsafe { c_recv(buf, a.count, &a.dt) };
        let mut rr = pt2pt::irecv(
            &Forever,
            &a.comm,
            rb.lend_recv(&Forever, a.count),
            source,
            recvtag,
        )
        .map_err(|e| rename(e, "MPI_Irecv", call))?;
        // SAFETY: `packed` is our own buffer, dropped only after the send's wait below.
        let sb = unsafe { SendBuf::from_raw(packed.as_ptr(), packed.len(), None) };
        let sent = pt2pt::isend(&Forever, &a.comm, sb, dest, sendtag, SendMode::Standard);
        let mut sr = match sent {
            Ok(x) => x,
            Err(e) => {
                let _ = pt2pt::cancel(&rr);
                let _ = pt2pt::wait(&mut rr);
                return Err(rename(e, "MPI_Isend", call).into());
            }
        };
        let got = pt2pt::wait(&mut rr).map_err(|e| rename(e, "MPI_Wait", call));
        pt2pt::wait(&mut sr).map_err(|e| rename(e, "MPI_Wait", call))?;
        drop(packed);
        // SAFETY: `status` is MPI_Sendrecv_replace's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &got?) };
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn isendrecv<C: Count>(
    sendbuf: *const c_void,
    sendcount: C,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: C,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>("MPI_Isendrecv");
    ffi(call, c, || {
        let s = args(call, c, sendbuf, sendcount, sendtype)?;
        let r = args(call, c, recvbuf, recvcount, recvtype)?;
        // SAFETY: `request` is MPI_Isendrecv's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        // SAFETY: the C caller's buffers hold their counts of their datatypes and stay valid until the request completes.
        let (sb, mut rb) = unsafe {
            (
                c_send(sendbuf, s.count, &s.dt),
                c_recv(recvbuf, r.count, &r.dt),
            )
        };
        let (sb, rb) = (
            sb.lend_send(&Forever, s.count),
            rb.lend_recv(&Forever, r.count),
        );
        let q = pt2pt::isendrecv(&Forever, &s.comm, sb, dest, sendtag, rb, source, recvtag)?;
        *o = new_request(q, c, None);
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn isendrecv_replace<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>("MPI_Isendrecv_replace");
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is MPI_Isendrecv_replace's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        // SAFETY: the C caller's buffer holds `count` elements and stays valid until the request completes.
        let mut b = unsafe { c_recv(buf, a.count, &a.dt) };
        let b = b.lend_recv(&Forever, a.count);
        let q = pt2pt::isendrecv_replace(&Forever, &a.comm, b, dest, sendtag, source, recvtag)?;
        *o = new_request(q, c, None);
        Ok(())
    })
}

entry!(PMPI_Sendrecv, PMPI_Sendrecv_c, (sendbuf: CVoid, sendcount: CNT, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: MVoid, recvcount: CNT, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: PStatus) => sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status));
entry!(PMPI_Sendrecv_replace, PMPI_Sendrecv_replace_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: PStatus) => sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status));
entry!(PMPI_Isendrecv, PMPI_Isendrecv_c, (sendbuf: CVoid, sendcount: CNT, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: MVoid, recvcount: CNT, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: PReq) => isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request));
entry!(PMPI_Isendrecv_replace, PMPI_Isendrecv_replace_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: PReq) => isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request));
