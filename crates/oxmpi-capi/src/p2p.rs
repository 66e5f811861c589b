//! Point-to-point: sends, receives, probes, requests and their completion,
//! persistent requests (kept in this layer, started as typed immediate
//! operations, so every datatype works), statuses.
//!
//! Safety: the private `unsafe fn`s here take the C caller's arguments as given
//! and require of them what the MPI standard requires of the C arguments of the
//! function they implement: buffers holding their counts of their datatypes
//! (for immediate forms, until the request completes), arrays of the length the
//! standard gives, OUT arguments writable and aliasing no other argument.

use std::ffi::{c_int, c_void};

use oxmpi_core::buf::{Forever, SendBuf};
use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::pt2pt::{self, Message};
use oxmpi_core::{Request, SendMode};

use crate::abi::*;
use crate::conv::args::req_slice;
use crate::conv::errors::rename_call;
use crate::conv::errors::{bad, ffi, out, route_to, Fail, NO_COMM, R};
use crate::conv::handles::{state, MessageEntry, PersistentOp};
use crate::conv::large::{name, to_usize, Count};
use crate::conv::status::*;
use crate::conv::{
    c_bytes, c_bytes_mut, c_recv, c_send, check_buf, comm, comm_ref, committed, committed_ref,
    fast_p2p, new_p2p_request, new_request,
};
use crate::types::*;

// ----- argument checks ----------------------------------------------------------------

fn count_arg<C: Count>(call: &str, n: C) -> R<usize> {
    to_usize(call, "count", n)
}

/// A call's communicator and datatype, borrowed when predefined (no
/// reference counts taken on the hot path).
struct Args {
    comm: std::borrow::Cow<'static, oxmpi_core::Comm>,
    dt: std::borrow::Cow<'static, Datatype>,
    count: usize,
}

fn args<C: Count>(
    call: &str,
    c: MPI_Comm,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
) -> R<Args> {
    let cm = comm_ref(c, call)?;
    let n = count_arg(call, count)?;
    // An empty message ignores its datatype: MPI_DATATYPE_NULL with count 0 is
    // accepted (as MPICH does; programs send zero-byte notices so).
    if n == 0 && h == MPI_DATATYPE_NULL {
        return Ok(Args {
            comm: cm,
            dt: std::borrow::Cow::Borrowed(Datatype::predefined_ref(
                oxmpi_core::datatype::Primitive::Byte,
            )),
            count: 0,
        });
    }
    let dt = committed_ref(h, call, "datatype")?;
    check_buf(call, "buf", buf, n, &dt)?;
    Ok(Args {
        comm: cm,
        dt,
        count: n,
    })
}

// ----- blocking and immediate sends and receives -------------------------------------

unsafe fn send<C: Count>(
    mode: SendMode,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
) -> c_int {
    let call = name::<C>(oxmpi_core::pt2pt::send_call_name(mode, false));
    ffi(call, c, || {
        if mode == SendMode::Standard {
            if let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) {
                // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
                let data = unsafe { c_bytes(buf, len) };
                pt2pt::send_contig(cm, data, dt, dest, tag)?;
                return Ok(());
            }
        }
        let a = args(call, c, buf, count, h)?;
        // SAFETY: the C caller's buffer holds `count` elements of the datatype for the call.
        let b = unsafe { c_send(buf, a.count, &a.dt) };
        pt2pt::send_typed(&a.comm, b.send(a.count), dest, tag, mode)?;
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn isend<C: Count>(
    mode: SendMode,
    buf: *const c_void,
    count: C,
    h: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>(oxmpi_core::pt2pt::send_call_name(mode, true));
    ffi(call, c, || {
        if mode == SendMode::Standard && !request.is_null() {
            if let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) {
                // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
                let data = unsafe { c_bytes(buf, len) };
                let r = pt2pt::isend_contig(cm, data, dt, dest, tag)?;
                // SAFETY: `request` is the C caller's non-NULL OUT argument: writable and unaliased (MPI contract).
                unsafe { *request = new_p2p_request(r, c) };
                return Ok(());
            }
        }
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
    })
}

unsafe fn recv<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let call = name::<C>("MPI_Recv");
    ffi(call, c, || {
        let res = match fast_p2p(c, h, buf, count.wide()) {
            Some((cm, dt, len)) => {
                // SAFETY: the C caller's buffer holds `count` elements of the datatype (`len` bytes, contiguous) for the call.
                let data = unsafe { c_bytes_mut(buf, len) };
                pt2pt::recv_contig(cm, data, dt, source, tag)
            }
            None => {
                let a = args(call, c, buf, count, h)?;
                // SAFETY: the C caller's buffer holds `count` elements of the datatype for the call.
                let mut b = unsafe { c_recv(buf, a.count, &a.dt) };
                pt2pt::recv_typed(&a.comm, b.recv(a.count), source, tag)
            }
        };
        // A failed receive that matched a message (truncation) still reports it.
        let s = res.as_ref().map_or_else(|e| e.status, |s| Some(*s));
        if let Some(s) = s {
            // SAFETY: `status` is MPI_Recv's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &s) };
        }
        res?;
        Ok(())
    })
}

unsafe fn irecv<C: Count>(
    buf: *mut c_void,
    count: C,
    h: MPI_Datatype,
    source: c_int,
    tag: c_int,
    c: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = name::<C>("MPI_Irecv");
    ffi(call, c, || {
        if !request.is_null() {
            if let Some((cm, dt, len)) = fast_p2p(c, h, buf, count.wide()) {
                // SAFETY: the C caller keeps the buffer (`len` contiguous bytes) until the request completes.
                let data = unsafe { c_bytes_mut(buf, len) };
                let r = pt2pt::irecv_contig(cm, data, dt, source, tag)?;
                // SAFETY: `request` is the C caller's non-NULL OUT argument: writable and unaliased (MPI contract).
                unsafe { *request = new_p2p_request(r, c) };
                return Ok(());
            }
        }
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
    })
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

// ----- buffered-send space ---------------------------------------------------------

unsafe fn buffer_attach<C: Count>(buffer: *mut c_void, size: C) -> c_int {
    let call = name::<C>("MPI_Buffer_attach");
    let size = size.wide();
    ffi(call, NO_COMM, || {
        if buffer as usize == MPI_BUFFER_AUTOMATIC {
            // MPI_BUFFER_AUTOMATIC is no memory: oxmpi only accounts attached space (see `buffer_attach`).
            pt2pt::buffer_attach(buffer as *mut u8, isize::MAX as usize)?;
            return Ok(());
        }
        if size < 0 {
            return Err(bad(
                ErrorClass::Arg,
                call,
                "size",
                format!("{size} is negative"),
            ));
        }
        if buffer.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, call, "buffer", "is NULL"));
        }
        // The C caller hands over `size` bytes at `buffer` as MPI_Buffer_attach defines; oxmpi only accounts them.
        pt2pt::buffer_attach(buffer as *mut u8, size as usize)?;
        Ok(())
    })
}

unsafe fn buffer_detach<C: Count>(buffer_addr: *mut c_void, size: *mut C) -> c_int {
    let call = name::<C>("MPI_Buffer_detach");
    ffi(call, NO_COMM, || {
        if buffer_addr.is_null() {
            return Err(bad(ErrorClass::Arg, call, "buffer_addr", "is NULL"));
        }
        // SAFETY: `size` is MPI_Buffer_detach's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let s = unsafe { out(call, "size", size)? };
        let (p, n) = pt2pt::buffer_detach()?;
        // `buffer_addr` is a `void *` in C, so programs pass the address of whatever
        // variable they keep the buffer in, not always an aligned `void *` (MPICH's
        // own pt2pt tests pass an `int`'s): write the pointer unaligned.
        // SAFETY: non-null (checked above) and, by the MPI contract, the address of pointer-sized writable storage that nothing else of this call touches.
        unsafe { (buffer_addr as *mut *mut c_void).write_unaligned(p as *mut c_void) };
        *s = C::saturating(n.min(i64::MAX as usize) as i64);
        Ok(())
    })
}

// ----- entry points of the int and large-count (`_c`) forms --------------------------

// ----- entry points: the int forms and their large-count (`_c`) twins ---------------

use crate::conv::large::{entry, ptr::*};

entry!(PMPI_Send, PMPI_Send_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) => send(SendMode::Standard, buf, count, datatype, dest, tag, comm));
entry!(PMPI_Ssend, PMPI_Ssend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) => send(SendMode::Synchronous, buf, count, datatype, dest, tag, comm));
entry!(PMPI_Bsend, PMPI_Bsend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) => send(SendMode::Buffered, buf, count, datatype, dest, tag, comm));
entry!(PMPI_Rsend, PMPI_Rsend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) => send(SendMode::Ready, buf, count, datatype, dest, tag, comm));
entry!(PMPI_Isend, PMPI_Isend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => isend(SendMode::Standard, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Issend, PMPI_Issend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => isend(SendMode::Synchronous, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Ibsend, PMPI_Ibsend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => isend(SendMode::Buffered, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Irsend, PMPI_Irsend_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => isend(SendMode::Ready, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Recv, PMPI_Recv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: PStatus) => recv(buf, count, datatype, source, tag, comm, status));
entry!(PMPI_Irecv, PMPI_Irecv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => irecv(buf, count, datatype, source, tag, comm, request));
entry!(PMPI_Sendrecv, PMPI_Sendrecv_c, (sendbuf: CVoid, sendcount: CNT, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: MVoid, recvcount: CNT, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: PStatus) => sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status));
entry!(PMPI_Sendrecv_replace, PMPI_Sendrecv_replace_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: PStatus) => sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status));
entry!(PMPI_Isendrecv, PMPI_Isendrecv_c, (sendbuf: CVoid, sendcount: CNT, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: MVoid, recvcount: CNT, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: PReq) => isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request));
entry!(PMPI_Isendrecv_replace, PMPI_Isendrecv_replace_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: PReq) => isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request));
entry!(PMPI_Mrecv, PMPI_Mrecv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, message: PMsg, status: PStatus) => mrecv(buf, count, datatype, message, status));
entry!(PMPI_Imrecv, PMPI_Imrecv_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, message: PMsg, request: PReq) => imrecv_entry(buf, count, datatype, message, request));
entry!(PMPI_Send_init, PMPI_Send_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Send_init", SendMode::Standard, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Ssend_init, PMPI_Ssend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Ssend_init", SendMode::Synchronous, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Bsend_init, PMPI_Bsend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Bsend_init", SendMode::Buffered, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Rsend_init, PMPI_Rsend_init_c, (buf: CVoid, count: CNT, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => send_init("MPI_Rsend_init", SendMode::Ready, buf, count, datatype, dest, tag, comm, request));
entry!(PMPI_Recv_init, PMPI_Recv_init_c, (buf: MVoid, count: CNT, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: PReq) => recv_init(buf, count, datatype, source, tag, comm, request));
entry!(PMPI_Buffer_attach, PMPI_Buffer_attach_c, (buffer: MVoid, size: CNT) => buffer_attach(buffer, size));
entry!(PMPI_Buffer_detach, PMPI_Buffer_detach_c, (buffer_addr: MVoid, size: PCNT) => buffer_detach(buffer_addr, size));
