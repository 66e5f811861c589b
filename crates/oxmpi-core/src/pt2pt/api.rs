//! The point-to-point entry points over typed buffer descriptors: safe functions.
//!
//! A [`SendBuf`] or [`RecvBuf`] carries the proof that its memory is valid for `'a`
//! (see [`crate::buf`]); a non-blocking call also takes the [`BufScope`] that keeps
//! `'a` alive until the request completes. A descriptor without a datatype is raw
//! bytes (no type-signature check); with one, `count` elements of it.

use super::*;
use crate::buf::{BufScope, RecvBuf, SendBuf};
use crate::datatype::Primitive;

/// The datatype of a descriptor for calls that always need one (raw bytes: MPI_BYTE).
fn dt_or_byte<'a>(dt: Option<&'a Datatype>) -> &'a Datatype {
    dt.unwrap_or_else(|| Datatype::predefined_ref(Primitive::Byte))
}

/// Starts a send (MPI_Isend / Issend / Irsend / Ibsend).
pub fn isend<'a>(
    scope: &impl BufScope<'a>,
    comm: &Comm,
    buf: SendBuf<'a, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    // SAFETY: the descriptor's memory is readable for 'a, and `scope.enter` below keeps 'a from ending before the request completes.
    let r = unsafe {
        match buf.datatype() {
            None => isend_raw(comm, buf.ptr(), buf.count(), dest, tag, mode),
            Some(dt) => isend_typed_raw(comm, buf.ptr(), buf.count(), dt, dest, tag, mode),
        }
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
    // SAFETY: the descriptor's memory is writable and ours alone for 'a, and `scope.enter` below keeps 'a from ending before the request completes.
    let r = unsafe {
        match buf.datatype() {
            None => irecv_raw(comm, buf.ptr(), buf.count(), source, tag),
            Some(dt) => irecv_typed_raw(comm, buf.ptr(), buf.count(), dt, source, tag),
        }
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
        // SAFETY: the descriptor is readable for the whole (blocking) call.
        Some(dt) => unsafe { send_typed_raw(comm, buf.ptr(), buf.count(), dt, dest, tag, mode) },
    }
}

/// A blocking receive (MPI_Recv) into a descriptor.
pub fn recv_typed(comm: &Comm, buf: RecvBuf<'_, '_>, source: i32, tag: i32) -> Result<Status> {
    match buf.datatype() {
        None => {
            let len = buf.count();
            // SAFETY: the descriptor is writable and ours alone until the wait below completes.
            let mut r = unsafe {
                irecv_on(
                    comm,
                    comm.context(),
                    "MPI_Recv",
                    buf.ptr(),
                    len,
                    source,
                    tag,
                )?
            };
            wait_described(&mut r, "MPI_Recv", &|| {
                crate::diag::p2p("MPI_Recv", false, comm, source, tag, len, None, len)
            })
        }
        // SAFETY: the descriptor is writable and ours alone for the whole (blocking) call.
        Some(dt) => unsafe { recv_typed_raw(comm, buf.ptr(), buf.count(), dt, source, tag) },
    }
}

/// MPI_Imrecv: receives a message taken by [`mprobe`]; `msg` becomes NULL.
pub fn imrecv<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    msg: &mut Message,
) -> Result<Request> {
    // SAFETY: as in `irecv`.
    let r = unsafe {
        match buf.datatype() {
            None => imrecv_raw(buf.ptr(), buf.count(), msg),
            Some(dt) => imrecv_typed_raw(buf.ptr(), buf.count(), dt, msg),
        }
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
    let (sdt, rdt) = (dt_or_byte(send.datatype()), dt_or_byte(recv.datatype()));
    // SAFETY: as in `isend` and `irecv`, for both descriptors.
    let r = unsafe {
        isendrecv_raw(
            comm,
            send.ptr(),
            send.count(),
            sdt,
            dest,
            sendtag,
            recv.ptr(),
            recv.count(),
            rdt,
            source,
            recvtag,
        )
    }?;
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
    let dt = dt_or_byte(buf.datatype());
    // SAFETY: as in `irecv`; the outgoing copy is packed before the call returns.
    let r = unsafe {
        isendrecv_replace_raw(
            comm,
            buf.ptr(),
            buf.count(),
            dt,
            dest,
            sendtag,
            source,
            recvtag,
        )
    }?;
    scope.enter(r);
    Ok(r)
}

/// The contiguous bytes of a persistent request's descriptor (raw bytes, or a
/// contiguous datatype's span).
fn contiguous_span(
    call: &str,
    ptr: *const u8,
    count: usize,
    dt: Option<&Datatype>,
) -> Result<(*const u8, usize)> {
    match dt {
        None => Ok((ptr, count)),
        Some(dt) => {
            check_datatype(call, "datatype", dt)?;
            if !dt.is_contiguous() {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    call,
                    "datatype",
                    "a persistent request of the engine takes a contiguous datatype",
                ));
            }
            let len = count.checked_mul(dt.size()).ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Count,
                    call,
                    "count",
                    format!("{count} elements of {} bytes overflow", dt.size()),
                )
            })?;
            Ok((ptr.wrapping_offset(dt.true_lb()), len))
        }
    }
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
    let (p, len) = contiguous_span(
        send_call_name(mode, true),
        buf.ptr(),
        buf.count(),
        buf.datatype(),
    )?;
    // SAFETY: the descriptor's memory is readable for 'a, and `scope.enter` below keeps 'a from ending before the request is freed.
    let r = unsafe { send_init_raw(comm, p, len, dest, tag, mode) }?;
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
    let (p, len) = contiguous_span("MPI_Recv_init", buf.ptr(), buf.count(), buf.datatype())?;
    // SAFETY: the descriptor's memory is writable and ours alone for 'a, and `scope.enter` below keeps 'a from ending before the request is freed.
    let r = unsafe { recv_init_raw(comm, p as *mut u8, len, source, tag) }?;
    scope.enter(r);
    Ok(r)
}

/// Whether `r` names a request the engine still holds (active, or an inactive persistent one).
pub fn is_live(r: Request) -> bool {
    engine().is_ok_and(|e| e.lock().req(r).is_some())
}
