//! The point-to-point entry points over typed buffer descriptors: safe functions.
//!
//! A [`SendBuf`] or [`RecvBuf`] carries the proof that its memory is valid for `'a`
//! (see [`crate::buf`]); a non-blocking call also takes the [`BufScope`] that keeps
//! `'a` alive until the request completes. A descriptor without a datatype is raw
//! bytes (no type-signature check); with one, `count` elements of it.

use super::*;
use crate::buf::{BufScope, RecvBuf, SendBuf};

/// Starts a send (MPI_Isend / Issend / Irsend / Ibsend).
pub fn isend<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: SendBuf<'a, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    // `scope.enter` below keeps 'a from ending before the request completes.
    let buf = buf.lend(scope);
    let r = match (buf.datatype(), buf.span()) {
        (None, Some(raw)) => isend_raw(comm, raw, dest, tag, mode),
        _ => isend_typed_raw(comm, buf, dest, tag, mode),
    }?;
    scope.enter(r);
    Ok(r)
}

/// Posts a receive (MPI_Irecv). With a datatype, the status's `count_bytes` is in
/// packed bytes (`dt.get_count` turns it into elements).
pub fn irecv<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: RecvBuf<'a, '_>,
    source: i32,
    tag: i32,
) -> Result<Request> {
    // `scope.enter` below keeps 'a from ending before the request completes.
    let buf = buf.lend(scope);
    let r = match (buf.datatype(), buf.span()) {
        (None, Some(raw)) => irecv_raw(comm, raw, source, tag),
        _ => irecv_typed_raw(comm, buf, source, tag),
    }?;
    scope.enter(r);
    Ok(r)
}

/// A blocking send (MPI_Send / Ssend / Rsend / Bsend) of a descriptor.
pub fn send_typed(
    comm: &Comm,
    buf: SendBuf<'_, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<()> {
    match buf.datatype() {
        None => send_blocking(
            comm,
            send_call_name(mode, false),
            buf.raw_bytes().unwrap_or_default(),
            dest,
            tag,
            mode,
            None,
        ),
        Some(_) => send_typed_raw(comm, buf, dest, tag, mode),
    }
}

/// A blocking receive (MPI_Recv) into a descriptor.
pub fn recv_typed(comm: &Comm, buf: RecvBuf<'_, '_>, source: i32, tag: i32) -> Result<Status> {
    match (buf.datatype(), buf.span()) {
        (None, Some(raw)) => {
            let len = buf.count();
            // The descriptor is borrowed until the wait below completes.
            let mut r = irecv_on(comm, comm.context(), "MPI_Recv", raw, source, tag)?;
            wait_described(&mut r, "MPI_Recv", &|| {
                crate::diag::p2p("MPI_Recv", false, comm, source, tag, len, None, len)
            })
        }
        _ => recv_typed_raw(comm, buf, source, tag),
    }
}

/// MPI_Imrecv: receives a message taken by [`mprobe`]; `msg` becomes NULL.
pub fn imrecv<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    msg: &mut Message,
) -> Result<Request> {
    // As in `irecv`.
    let buf = buf.lend(scope);
    let r = match (buf.datatype(), buf.span()) {
        (None, Some(raw)) => imrecv_raw(raw, msg),
        _ => imrecv_typed_raw(buf, msg),
    }?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Isendrecv: a send to `dest` and a receive from `source` as one request whose
/// status is the receive's. A descriptor without a datatype goes as MPI_BYTE.
#[allow(clippy::too_many_arguments)]
pub fn isendrecv<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    send: SendBuf<'a, '_>,
    dest: i32,
    sendtag: i32,
    recv: RecvBuf<'a, '_>,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    // As in `isend` and `irecv`, for both descriptors.
    let (send, recv) = (send.lend(scope), recv.lend(scope));
    let r = isendrecv_raw(comm, send, dest, sendtag, recv, source, recvtag)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Isendrecv_replace: sends the buffer's contents and receives as many elements
/// into it, as one request. A descriptor without a datatype goes as MPI_BYTE.
pub fn isendrecv_replace<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: RecvBuf<'a, '_>,
    dest: i32,
    sendtag: i32,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    // As in `irecv`; the outgoing copy is packed before the call returns.
    let r = isendrecv_replace_raw(comm, buf.lend(scope), dest, sendtag, source, recvtag)?;
    scope.enter(r);
    Ok(r)
}

/// The contiguous bytes (`span`) of a persistent request's descriptor of `count`
/// elements of `dt` (raw bytes, or a contiguous datatype's span).
fn contiguous_span(
    call: &str,
    count: usize,
    dt: Option<&Datatype>,
    span: Option<RawBuf>,
) -> Result<RawBuf> {
    let not_contiguous = || {
        MpiError::arg(
            ErrorClass::Type,
            call,
            "datatype",
            "a persistent request of the engine takes a contiguous datatype",
        )
    };
    if let Some(dt) = dt {
        check_datatype(call, "datatype", dt)?;
        if !dt.is_contiguous() {
            return Err(not_contiguous());
        }
        count.checked_mul(dt.size()).ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Count,
                call,
                "count",
                format!("{count} elements of {} bytes overflow", dt.size()),
            )
        })?;
    }
    span.ok_or_else(not_contiguous)
}

/// MPI_Send_init and friends: an inactive persistent send (raw bytes or a contiguous
/// datatype).
pub fn send_init<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: SendBuf<'a, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    // `scope.enter` below keeps 'a from ending before the request is freed.
    let buf = buf.lend(scope);
    let call = send_call_name(mode, true);
    let raw = contiguous_span(call, buf.count(), buf.datatype(), buf.span())?;
    let r = send_init_raw(comm, raw, dest, tag, mode)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Recv_init: an inactive persistent receive (raw bytes or a contiguous datatype).
pub fn recv_init<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: RecvBuf<'a, '_>,
    source: i32,
    tag: i32,
) -> Result<Request> {
    // `scope.enter` below keeps 'a from ending before the request is freed.
    let buf = buf.lend(scope);
    let raw = contiguous_span("MPI_Recv_init", buf.count(), buf.datatype(), buf.span())?;
    let r = recv_init_raw(comm, raw, source, tag)?;
    scope.enter(r);
    Ok(r)
}

/// Whether `r` names a request the engine still holds (active, or an inactive persistent one).
pub fn is_live(r: Request) -> bool {
    engine().is_ok_and(|e| e.lock().req(r).is_some())
}
