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

use oxmpi_core::buf::{Forever, RecvBuf, SendBuf};
use oxmpi_core::datatype::Datatype;
use oxmpi_core::error::{ErrorClass, MpiError};
use oxmpi_core::pt2pt::{self, Message};
use oxmpi_core::{Request, SendMode, Status};

use crate::abi::*;
use crate::dtype::{committed, committed_ref, datatype};
use crate::env::{comm, comm_ref};
use crate::errors::{NO_COMM, bad, ffi, out, route_to, Fail, R};
use crate::handles::{state, Greq, Hook, MessageEntry, PersistentOp, RequestEntry};
use crate::large::{name, to_usize, undefined_or, Count};
use crate::types::*;

// ----- statuses -------------------------------------------------------------------

fn status_bytes(s: &MPI_Status) -> usize {
    (s.MPI_internal[0] as u32 as u64 | ((s.MPI_internal[1] as u32 as u64) << 32)) as usize
}

fn fill(c: &mut MPI_Status, s: &Status) {
    c.MPI_SOURCE = s.source;
    c.MPI_TAG = s.tag;
    let b = s.count_bytes as u64;
    c.MPI_internal[0] = b as u32 as c_int;
    c.MPI_internal[1] = (b >> 32) as u32 as c_int;
    c.MPI_internal[2] = s.cancelled as c_int;
}

/// Writes a status unless the caller passed MPI_STATUS_IGNORE.
///
/// # Safety
/// `p` is NULL or valid to write one `MPI_Status`, unaliased.
unsafe fn put_status(p: *mut MPI_Status, s: &Status) {
    if !p.is_null() {
        // SAFETY: non-null (checked), so writable and unaliased by this function's contract.
        let c = unsafe { &mut *p };
        fill(c, s);
        if *s == Status::NULL {
            // The empty status (MPI_REQUEST_NULL, inactive requests) is all of it
            // defined, MPI_ERROR = MPI_SUCCESS included.
            c.MPI_ERROR = MPI_SUCCESS;
        }
    }
}

/// As [`put_status`], also setting `MPI_ERROR`.
///
/// # Safety
/// As [`put_status`].
unsafe fn put_status_err(p: *mut MPI_Status, s: &Status, err: c_int) {
    if !p.is_null() {
        // SAFETY: non-null (checked), so writable and unaliased by this function's contract.
        let c = unsafe { &mut *p };
        fill(c, s);
        c.MPI_ERROR = err;
    }
}

// ----- argument checks ----------------------------------------------------------------

fn count_arg<C: Count>(call: &str, n: C) -> R<usize> {
    to_usize(call, "count", n)
}

/// A NULL buffer is MPI_BOTTOM: fine for derived datatypes with absolute
/// addresses, an error for data of a predefined type.
pub fn check_buf(call: &str, arg: &str, buf: *const c_void, count: usize, dt: &Datatype) -> R<()> {
    if buf.is_null() && count > 0 && dt.size() > 0 && dt.as_primitive().is_some() {
        return Err(bad(ErrorClass::Buffer, call, arg, format!("is NULL with count {count}")));
    }
    // A derived type's data starting in the null page: NULL with relative
    // displacements (MPI_BOTTOM with absolute addresses lands elsewhere).
    if count > 0 && dt.size() > 0 && (buf as usize).wrapping_add(dt.true_lb() as usize) < 4096 {
        return Err(bad(ErrorClass::Buffer, call, arg, format!("is NULL (or near it) with count {count} of a datatype whose data start at {}", dt.true_lb())));
    }
    Ok(())
}

/// A call's communicator and datatype, borrowed when predefined (no
/// reference counts taken on the hot path).
struct Args {
    comm: std::borrow::Cow<'static, oxmpi_core::Comm>,
    dt: std::borrow::Cow<'static, Datatype>,
    count: usize,
}

fn args<C: Count>(call: &str, c: MPI_Comm, buf: *const c_void, count: C, h: MPI_Datatype) -> R<Args> {
    let cm = comm_ref(c, call)?;
    let n = count_arg(call, count)?;
    // An empty message ignores its datatype: MPI_DATATYPE_NULL with count 0 is
    // accepted (as MPICH does; programs send zero-byte notices so).
    if n == 0 && h == MPI_DATATYPE_NULL {
        return Ok(Args { comm: cm, dt: std::borrow::Cow::Borrowed(Datatype::predefined_ref(oxmpi_core::datatype::Primitive::Byte)), count: 0 });
    }
    let dt = committed_ref(h, call, "datatype")?;
    check_buf(call, "buf", buf, n, &dt)?;
    Ok(Args { comm: cm, dt, count: n })
}

// ----- request handles ---------------------------------------------------------------

pub fn new_request(r: Request, c: MPI_Comm, persistent: Option<PersistentOp>) -> MPI_Request {
    state().requests.insert(RequestEntry { inner: r, comm: c, persistent, hook: Hook::None })
}

/// A request handle with work for this layer at completion.
pub fn new_hooked_request(r: Request, c: MPI_Comm, hook: Hook) -> MPI_Request {
    state().requests.insert(RequestEntry { inner: r, comm: c, persistent: None, hook })
}

/// The engine's view of a status the user wrote (a generalized request's query_fn).
fn from_c(c: &MPI_Status) -> Status {
    Status { source: c.MPI_SOURCE, tag: c.MPI_TAG, error: c.MPI_ERROR, count_bytes: status_bytes(c), cancelled: c.MPI_internal[2] != 0 }
}

/// Calls a generalized request's query_fn: the status it reports, and the
/// error code the callback returned. Called without any lock held (the
/// callback may call MPI).
fn greq_query(g: &Greq) -> (Status, c_int) {
    let mut c = MPI_Status::default();
    fill(&mut c, &Status::EMPTY);
    let code = match g.query {
        // SAFETY: a C function the user registered with MPI_Grequest_start with
        // this signature; it gets its extra_state back and a status of ours.
        Some(f) => unsafe { f(g.extra_state as *mut c_void, &mut c) },
        None => MPI_SUCCESS,
    };
    (from_c(&c), code)
}

/// Calls a generalized request's free_fn (once: its handle is gone after this).
fn greq_free(g: &Greq) -> c_int {
    match g.free {
        // SAFETY: a C function the user registered with MPI_Grequest_start with this signature.
        Some(f) => unsafe { f(g.extra_state as *mut c_void) },
        None => MPI_SUCCESS,
    }
}

/// What the C layer owes request `h`, which the engine reported complete
/// (`res`), before its handle is released: a generalized request's status
/// comes from query_fn, then free_fn runs, and the error code is the last
/// failing callback's; an idup hands out its communicator. Returns the result
/// to report. Runs callbacks with no lock held.
pub fn run_hook(call: &str, h: MPI_Request, res: Result<Status, Fail>) -> Result<Status, Fail> {
    let hook = {
        let mut st = state();
        match st.requests.get_mut(h) {
            Some(e) => std::mem::replace(&mut e.hook, Hook::None),
            None => Hook::None,
        }
    };
    match hook {
        Hook::None => res,
        Hook::Greq(g) => {
            let (status, qcode) = greq_query(&g);
            let fcode = greq_free(&g);
            let code = if fcode != MPI_SUCCESS { fcode } else { qcode };
            if code != MPI_SUCCESS {
                let which = if fcode != MPI_SUCCESS { "free_fn" } else { "query_fn" };
                return Err(Fail { code, message: format!("{call}: the generalized request's {which} returned error code {code}") });
            }
            res.map(|_| status)
        }
        Hook::Idup(p) => {
            let r = res?;
            crate::comm::finish_idup(call, p)?;
            Ok(r)
        }
    }
}

/// Whether the handle at `i` was completed by a completion call (its engine
/// request went from live to NULL).
fn completed_at(before: &[Request], after: &[Request], i: usize) -> bool {
    !before[i].is_null() && after[i].is_null()
}

/// The engine requests of C handles (NULL for null and inactive ones), routing
/// errors to the first request's communicator.
fn engine_requests(call: &str, hs: &[MPI_Request]) -> R<Vec<Request>> {
    engine_requests_hooked(call, hs, &mut false)
}

/// [`engine_requests`], also telling (in `hooked`) whether any of them has
/// work for this layer at completion ([`run_hook`]); when none has, a
/// completion call skips the per-request look (one lock each).
fn engine_requests_hooked(call: &str, hs: &[MPI_Request], hooked: &mut bool) -> R<Vec<Request>> {
    let st = state();
    let mut routed = false;
    hs.iter()
        .enumerate()
        .map(|(i, &h)| {
            if h == MPI_REQUEST_NULL {
                return Ok(Request::NULL);
            }
            match st.requests.get(h) {
                Some(e) => {
                    if !routed {
                        route_to(e.comm);
                        routed = true;
                    }
                    if !matches!(e.hook, Hook::None) {
                        *hooked = true;
                    }
                    Ok(e.inner)
                }
                None => Err(bad(ErrorClass::Request, call, &format!("array_of_requests[{i}]"), format!("{h:#x} is not a valid request (freed, completed, or never created)"))),
            }
        })
        .collect()
}

/// After completion calls: frees the C handles whose engine request completed.
fn settle(hs: &mut [MPI_Request], before: &[Request], after: &[Request]) {
    let mut st = state();
    for i in 0..hs.len() {
        if hs[i] == MPI_REQUEST_NULL || before[i].is_null() || !after[i].is_null() {
            continue;
        }
        let persistent = st.requests.get(hs[i]).is_some_and(|e| e.persistent.is_some());
        if persistent {
            if let Some(e) = st.requests.get_mut(hs[i]) {
                e.inner = Request::NULL;
            }
        } else {
            st.requests.remove(hs[i]);
            hs[i] = MPI_REQUEST_NULL;
        }
    }
}

/// The C caller's array of `count` request handles.
///
/// # Safety
/// When `count > 0`, `p` is NULL or points to `count` handles, valid for
/// reads and writes and unaliased for `'a`.
unsafe fn req_slice<'a>(call: &str, count: c_int, p: *mut MPI_Request) -> R<&'a mut [MPI_Request]> {
    if count < 0 {
        return Err(bad(ErrorClass::Count, call, "count", format!("{count} is negative")));
    }
    if count == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, "array_of_requests", "is NULL"));
    }
    // SAFETY: non-null with `count > 0` (checked above): `count` handles by this function's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, count as usize) })
}

// ----- blocking and immediate sends and receives -------------------------------------

unsafe fn send<C: Count>(mode: SendMode, buf: *const c_void, count: C, h: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm) -> c_int {
    let call = name::<C>(oxmpi_core::pt2pt::send_call_name(mode, false));
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: the C caller's buffer holds `count` elements of the datatype.
        let b = unsafe { SendBuf::from_raw(buf as *const u8, a.count, Some(&a.dt)) };
        pt2pt::send_typed(&a.comm, b, dest, tag, mode)?;
        Ok(())
    })
}


#[allow(clippy::too_many_arguments)]
unsafe fn isend<C: Count>(mode: SendMode, buf: *const c_void, count: C, h: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let call = name::<C>(oxmpi_core::pt2pt::send_call_name(mode, true));
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        // SAFETY: the C caller keeps the buffer until the request completes.
        let b = unsafe { SendBuf::from_raw(buf as *const u8, a.count, Some(&a.dt)) };
        let r = pt2pt::isend(&Forever, &a.comm, b, dest, tag, mode)?;
        *o = new_request(r, c, None);
        Ok(())
    })
}


unsafe fn recv<C: Count>(buf: *mut c_void, count: C, h: MPI_Datatype, source: c_int, tag: c_int, c: MPI_Comm, status: *mut MPI_Status) -> c_int {
    let call = name::<C>("MPI_Recv");
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: the C caller's buffer holds `count` elements of the datatype.
        let b = unsafe { RecvBuf::from_raw(buf as *mut u8, a.count, Some(&a.dt)) };
        let res = pt2pt::recv_typed(&a.comm, b, source, tag);
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

unsafe fn irecv<C: Count>(buf: *mut c_void, count: C, h: MPI_Datatype, source: c_int, tag: c_int, c: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let call = name::<C>("MPI_Irecv");
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is MPI_Irecv's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        // SAFETY: the C caller keeps the buffer until the request completes.
        let b = unsafe { RecvBuf::from_raw(buf as *mut u8, a.count, Some(&a.dt)) };
        let r = pt2pt::irecv(&Forever, &a.comm, b, source, tag)?;
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
        let rb = unsafe { RecvBuf::from_raw(recvbuf as *mut u8, r.count, Some(&r.dt)) };
        let mut rr = pt2pt::irecv(&Forever, &r.comm, rb, source, recvtag).map_err(|e| rename(e, "MPI_Irecv", call))?;
        // SAFETY: as above: `sendbuf` holds `sendcount` × `sendtype` and outlives the wait below.
        let sb = unsafe { SendBuf::from_raw(sendbuf as *const u8, s.count, Some(&s.dt)) };
        let sent = pt2pt::isend(&Forever, &s.comm, sb, dest, sendtag, SendMode::Standard);
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
        let rb = unsafe { RecvBuf::from_raw(buf as *mut u8, a.count, Some(&a.dt)) };
        let mut rr = pt2pt::irecv(&Forever, &a.comm, rb, source, recvtag).map_err(|e| rename(e, "MPI_Irecv", call))?;
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
        let (sb, rb) = unsafe {
            (SendBuf::from_raw(sendbuf as *const u8, s.count, Some(&s.dt)), RecvBuf::from_raw(recvbuf as *mut u8, r.count, Some(&r.dt)))
        };
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
        let b = unsafe { RecvBuf::from_raw(buf as *mut u8, a.count, Some(&a.dt)) };
        let q = pt2pt::isendrecv_replace(&Forever, &a.comm, b, dest, sendtag, source, recvtag)?;
        *o = new_request(q, c, None);
        Ok(())
    })
}

// ----- completion ------------------------------------------------------------------

fn rename_call(e: MpiError, call: &str) -> Fail {
    let generic = ["MPI_Wait:", "MPI_Test:", "MPI_Waitall:", "MPI_Testall:", "MPI_Waitany:", "MPI_Testany:", "MPI_Waitsome:", "MPI_Testsome:", "MPI_Recv:", "MPI_Mrecv:"];
    let mut m = e.message.clone();
    for g in generic {
        if let Some(rest) = m.strip_prefix(g) {
            m = format!("{call}:{rest}");
            break;
        }
    }
    if !m.starts_with(call) {
        m = format!("{call}: {m}");
    }
    Fail { code: crate::abi::error_class_value(e.class), message: m }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    const CALL: &str = "MPI_Wait";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Wait's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        let hs = std::slice::from_mut(h);
        let before = engine_requests(CALL, hs)?;
        let mut after = before.clone();
        let res = pt2pt::wait(&mut after[0]);
        let after = if res.is_err() { vec![Request::NULL] } else { after };
        let failed_status = res.as_ref().err().and_then(|e| e.status);
        let res = res.map_err(|e| rename_call(e, CALL));
        let res = if completed_at(&before, &after, 0) { run_hook(CALL, hs[0], res) } else { res };
        settle(hs, &before, &after);
        if let (Err(_), Some(s)) = (&res, failed_status) {
            // A failed receive that matched a message (truncation) still reports it.
            // SAFETY: `status` is MPI_Wait's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &s) };
        }
        let s = res?;
        // SAFETY: `status` is MPI_Wait's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    const CALL: &str = "MPI_Test";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Test's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        // SAFETY: `flag` is MPI_Test's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let f = unsafe { out(CALL, "flag", flag)? };
        let hs = std::slice::from_mut(h);
        let before = engine_requests(CALL, hs)?;
        let mut after = before.clone();
        let res = pt2pt::test(&mut after[0]);
        let after = if res.is_err() { vec![Request::NULL] } else { after };
        let failed_status = res.as_ref().err().and_then(|e| e.status);
        let res = res.map_err(|e| rename_call(e, CALL));
        let res = match res {
            Ok(Some(s)) if completed_at(&before, &after, 0) => run_hook(CALL, hs[0], Ok(s)).map(Some),
            Err(e) if completed_at(&before, &after, 0) => run_hook(CALL, hs[0], Err(e)).map(Some),
            other => other,
        };
        settle(hs, &before, &after);
        if let (Err(_), Some(s)) = (&res, failed_status) {
            *f = 1;
            // SAFETY: `status` is MPI_Test's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
            unsafe { put_status(status, &s) };
        }
        match res? {
            Some(s) => {
                *f = 1;
                // SAFETY: `status` is MPI_Test's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                unsafe { put_status(status, &s) };
            }
            None => *f = 0,
        }
        Ok(())
    })
}

/// The `i`-th status of an array (NULL for MPI_STATUSES_IGNORE).
///
/// # Safety
/// `p` is NULL or points to an array of more than `i` statuses.
unsafe fn status_at(p: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if p.is_null() {
        p
    } else {
        // SAFETY: non-null, so an array of more than `i` statuses by this function's contract.
        unsafe { p.add(i) }
    }
}

unsafe fn all(call: &'static str, count: c_int, requests: *mut MPI_Request, flag: Option<*mut c_int>, statuses: *mut MPI_Status) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitall/Testall's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        let mut hooked = false;
        let before = engine_requests_hooked(call, hs, &mut hooked)?;
        let mut after = before.clone();
        let mut stats = vec![Status::NULL; hs.len()];
        let res = match flag {
            None => pt2pt::waitall(&mut after, &mut stats).map(|()| true),
            Some(_) => pt2pt::testall(&mut after, &mut stats),
        };
        // The engine's statuses carry its own class numbers: the C caller sees the
        // standard ABI's.
        for s in stats.iter_mut().filter(|s| s.error != 0) {
            s.error = crate::abi::error_class_value(ErrorClass::from_code(s.error).unwrap_or(ErrorClass::Other));
        }
        // Failed requests are consumed by the engine too.
        for (i, s) in stats.iter().enumerate() {
            if s.error != 0 {
                after[i] = Request::NULL;
            }
        }
        let mut res = res;
        for i in 0..hs.len() {
            if completed_at(&before, &after, i) && (hooked || stats[i].error != 0) {
                let r = if stats[i].error != 0 { Err(Fail { code: stats[i].error, message: String::new() }) } else { Ok(stats[i]) };
                match run_hook(call, hs[i], r) {
                    Ok(s) => stats[i] = s,
                    Err(f) => {
                        stats[i].error = f.code;
                        if res.is_ok() {
                            res = Err(MpiError::new(ErrorClass::InStatus, format!("{call}: a request failed, see its status: {}", f.message)));
                        }
                    }
                }
            }
        }
        settle(hs, &before, &after);
        let done = match &res {
            Ok(d) => *d,
            Err(_) => true,
        };
        if let Some(fl) = flag {
            // SAFETY: `flag` (`fl`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
            *unsafe { out(call, "flag", fl)? } = done as c_int;
        }
        if done {
            for (i, s) in stats.iter().enumerate() {
                // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitall/Testall).
                unsafe { put_status_err(status_at(statuses, i), s, s.error) };
            }
        }
        res.map(|_| ()).map_err(|e| rename_call(e, call))
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitall(count: c_int, requests: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `all` needs what MPI_Waitall demands of them.
    unsafe { all("MPI_Waitall", count, requests, None, statuses) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testall(count: c_int, requests: *mut MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `all` needs what MPI_Testall demands of them.
    unsafe { all("MPI_Testall", count, requests, Some(flag), statuses) }
}

unsafe fn any(call: &'static str, count: c_int, requests: *mut MPI_Request, index: *mut c_int, flag: Option<*mut c_int>, status: *mut MPI_Status) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitany/Testany's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        // SAFETY: `index` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let idx = unsafe { out(call, "index", index)? };
        let before = engine_requests(call, hs)?;
        let mut after = before.clone();
        let res = match flag {
            None => pt2pt::waitany(&mut after).map(Some),
            Some(_) => pt2pt::testany(&mut after),
        };
        if let Err(e) = &res {
            // The failed request was consumed: it is the one that became NULL.
            if let Some(i) = (0..hs.len()).find(|&i| !before[i].is_null() && after[i].is_null()) {
                *idx = i as c_int;
                if let Some(s) = e.status {
                    // A failed receive that matched a message (truncation) still reports it.
                    // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                    unsafe { put_status(status, &s) };
                }
                let e = state().requests.get(hs[i]).map(|e| e.comm);
                if let Some(c) = e {
                    route_to(c);
                }
            }
        }
        let res = match res.map_err(|e| rename_call(e, call)) {
            Ok(Some(Some((i, s)))) if completed_at(&before, &after, i) => {
                *idx = i as c_int;
                let e = state().requests.get(hs[i]).map(|e| e.comm);
                if let Some(c) = e {
                    route_to(c);
                }
                run_hook(call, hs[i], Ok(s)).map(|s| Some(Some((i, s))))
            }
            Err(f) => match (0..hs.len()).find(|&i| completed_at(&before, &after, i)) {
                Some(i) => run_hook(call, hs[i], Err(f)).map(|s| Some(Some((i, s)))),
                None => Err(f),
            },
            other => other,
        };
        settle(hs, &before, &after);
        match res? {
            None => {
                *idx = MPI_UNDEFINED;
                if let Some(f) = flag {
                    // SAFETY: `flag` (`f`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
                    *unsafe { out(call, "flag", f)? } = 0;
                }
            }
            Some(found) => {
                if let Some(f) = flag {
                    // SAFETY: `flag` (`f`) is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
                    *unsafe { out(call, "flag", f)? } = 1;
                }
                match found {
                    None => {
                        *idx = MPI_UNDEFINED;
                        // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                        unsafe { put_status(status, &Status::NULL) };
                    }
                    Some((i, s)) => {
                        *idx = i as c_int;
                        // SAFETY: `status` is MPI_Waitany/Testany's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
                        unsafe { put_status(status, &s) };
                    }
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitany(count: c_int, requests: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `any` needs what MPI_Waitany demands of them.
    unsafe { any("MPI_Waitany", count, requests, index, None, status) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testany(count: c_int, requests: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `any` needs what MPI_Testany demands of them.
    unsafe { any("MPI_Testany", count, requests, index, Some(flag), status) }
}

unsafe fn some(call: &'static str, wait: bool, count: c_int, requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
    ffi(call, NO_COMM, || {
        // SAFETY: `requests` is MPI_Waitsome/Testsome's INOUT array of `count` handles, unaliased.
        let hs = unsafe { req_slice(call, count, requests)? };
        // SAFETY: `outcount` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let oc = unsafe { out(call, "outcount", outcount)? };
        let before = engine_requests(call, hs)?;
        let mut after = before.clone();
        let res = if wait { pt2pt::waitsome(&mut after) } else { pt2pt::testsome(&mut after) };
        let list = match res {
            Err(e) => {
                settle(hs, &before, &after);
                return Err(rename_call(e, call));
            }
            Ok(l) => l,
        };
        for (i, r) in list.iter().flatten() {
            if r.is_err() {
                after[*i] = Request::NULL;
            }
        }
        // Per completed request: its outcome, and for a failed receive that matched a
        // message (truncation) that message's status.
        let list: Option<Vec<(usize, Result<Status, Fail>, Option<Status>)>> = list.map(|l| {
            l.into_iter()
                .map(|(i, r)| {
                    let failed_status = r.as_ref().err().and_then(|e| e.status);
                    let r = r.map_err(|e| Fail { code: crate::abi::error_class_value(e.class), message: e.message });
                    (i, if completed_at(&before, &after, i) { run_hook(call, hs[i], r) } else { r }, failed_status)
                })
                .collect()
        });
        settle(hs, &before, &after);
        let Some(list) = list else {
            *oc = MPI_UNDEFINED;
            return Ok(());
        };
        *oc = list.len() as c_int;
        if !list.is_empty() && indices.is_null() {
            return Err(bad(ErrorClass::Arg, call, "array_of_indices", "is NULL"));
        }
        let mut first_err = None;
        for (k, (i, r, failed_status)) in list.iter().enumerate() {
            // SAFETY: `incount` entries by the C contract.
            unsafe { *indices.add(k) = *i as c_int };
            match r {
                // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitsome/Testsome).
                Ok(s) => unsafe { put_status_err(status_at(statuses, k), s, MPI_SUCCESS) },
                Err(e) => {
                    // SAFETY: `statuses` is MPI_STATUSES_IGNORE (NULL) or has one entry per request, more than the index, writable and unaliased (MPI_Waitsome/Testsome).
                    unsafe { put_status_err(status_at(statuses, k), &failed_status.unwrap_or(Status::EMPTY), e.code) };
                    first_err.get_or_insert(e.message.clone());
                }
            }
        }
        match first_err {
            Some(m) => Err(Fail { code: MPI_ERR_IN_STATUS, message: format!("{call}: a request failed, see its status: {m}") }),
            None => Ok(()),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitsome(incount: c_int, requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `some` needs what MPI_Waitsome demands of them.
    unsafe { some("MPI_Waitsome", true, incount, requests, outcount, indices, statuses) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testsome(incount: c_int, requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status) -> c_int {
    // SAFETY: the C caller's arguments, passed on: `some` needs what MPI_Testsome demands of them.
    unsafe { some("MPI_Testsome", false, incount, requests, outcount, indices, statuses) }
}

fn one_request(call: &str, h: MPI_Request) -> R<(Request, MPI_Comm, bool)> {
    if h == MPI_REQUEST_NULL {
        return Err(bad(ErrorClass::Request, call, "request", "MPI_REQUEST_NULL"));
    }
    let st = state();
    let e = st
        .requests
        .get(h)
        .ok_or_else(|| bad(ErrorClass::Request, call, "request", format!("{h:#x} is not a valid request (freed, completed, or never created)")))?;
    Ok((e.inner, e.comm, e.persistent.is_some()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cancel(request: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Cancel";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Cancel's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        let (r, c, _) = one_request(CALL, *h)?;
        route_to(c);
        if let Some(g) = greq_of(*h) {
            // A generalized request: the user's cancel_fn decides, told whether
            // MPI_Grequest_complete was called already.
            if let Some(f) = g.cancel {
                // SAFETY: a C function the user registered with MPI_Grequest_start with this signature.
                let code = unsafe { f(g.extra_state as *mut c_void, g.completed as c_int) };
                if code != MPI_SUCCESS {
                    return Err(Fail { code, message: format!("{CALL}: the generalized request's cancel_fn returned error code {code}") });
                }
            }
            return Ok(());
        }
        if !r.is_null() {
            pt2pt::cancel(&r).map_err(|e| rename_call(e, CALL))?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_free(request: *mut MPI_Request) -> c_int {
    const CALL: &str = "MPI_Request_free";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Request_free's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let h = unsafe { out(CALL, "request", request)? };
        let (mut r, c, _) = one_request(CALL, *h)?;
        route_to(c);
        if let Some(g) = greq_of(*h) {
            if g.freed {
                return Err(bad(ErrorClass::Request, CALL, "request", "the generalized request was freed already"));
            }
            pt2pt::request_free(&mut r).map_err(|e| rename_call(e, CALL))?;
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
                return Err(Fail { code, message: format!("{CALL}: the generalized request's free_fn returned error code {code}") });
            }
            return Ok(());
        }
        if !r.is_null() {
            pt2pt::request_free(&mut r).map_err(|e| rename_call(e, CALL))?;
        }
        state().requests.remove(*h);
        *h = MPI_REQUEST_NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status(request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
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
                    return Err(Fail { code, message: format!("{CALL}: the generalized request's query_fn returned error code {code}") });
                }
            }
            Some(s) => {
                *f = 1;
                // An idup's communicator is valid once its request is complete.
                let idup = matches!(state().requests.get(request).map(|e| &e.hook), Some(Hook::Idup(_)));
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

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
    const CALL: &str = "MPI_Test_cancelled";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `status` is MPI_Test_cancelled's IN status: NULL (rejected) or readable.
        let s = unsafe { status_ref(CALL, status)? };
        // SAFETY: `flag` is MPI_Test_cancelled's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "flag", flag)? } = (s.MPI_internal[2] != 0) as c_int;
        Ok(())
    })
}

// ----- probes and matched receives ---------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Probe(source: c_int, tag: c_int, c: MPI_Comm, status: *mut MPI_Status) -> c_int {
    ffi("MPI_Probe", c, || {
        let cm = comm(c, "MPI_Probe")?;
        let s = pt2pt::probe(&cm, source, tag)?;
        // SAFETY: `status` is MPI_Probe's OUT status: MPI_STATUS_IGNORE (NULL, skipped) or writable and unaliased.
        unsafe { put_status(status, &s) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iprobe(source: c_int, tag: c_int, c: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
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
pub unsafe extern "C" fn PMPI_Mprobe(source: c_int, tag: c_int, c: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
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
pub unsafe extern "C" fn PMPI_Improbe(source: c_int, tag: c_int, c: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
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
unsafe fn imrecv<C: Count>(call: &str, buf: *mut c_void, count: C, h: MPI_Datatype, message: *mut MPI_Message) -> R<(Request, MPI_Comm)> {
    // SAFETY: `message` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let mh = unsafe { out(call, "message", message)? };
    let n = count_arg(call, count)?;
    let dt = committed(h, call, "datatype")?;
    check_buf(call, "buf", buf, n, &dt)?;
    let (mut m, c) = if *mh == MPI_MESSAGE_NO_PROC {
        (Message::NO_PROC, MPI_COMM_SELF)
    } else {
        let e = state()
            .messages
            .remove(*mh)
            .ok_or_else(|| bad(ErrorClass::Request, call, "message", format!("{:#x} is not a message from MPI_Mprobe/MPI_Improbe (or was received already)", *mh)))?;
        (e.msg, e.comm)
    };
    route_to(c);
    *mh = MPI_MESSAGE_NULL;
    // SAFETY: the C caller's buffer holds `count` elements and stays valid until completion.
    let b = unsafe { RecvBuf::from_raw(buf as *mut u8, n, Some(&dt)) };
    let r = pt2pt::imrecv(&Forever, b, &mut m).map_err(|e| rename_call(e, call))?;
    Ok((r, c))
}

unsafe fn mrecv<C: Count>(buf: *mut c_void, count: C, h: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
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

unsafe fn imrecv_entry<C: Count>(buf: *mut c_void, count: C, h: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
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
unsafe fn send_init<C: Count>(call: &'static str, mode: SendMode, buf: *const c_void, count: C, h: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let call = name::<C>(call);
    ffi(call, c, || {
        let a = args(call, c, buf, count, h)?;
        // SAFETY: `request` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(call, "request", request)? };
        let n = a.comm.size();
        if dest != MPI_PROC_NULL && !(0..n).contains(&dest) {
            return Err(bad(ErrorClass::Rank, call, "dest", format!("{dest} is not a rank of this communicator (0..{n}) nor MPI_PROC_NULL")));
        }
        if !(0..=oxmpi_core::TAG_UB).contains(&tag) {
            return Err(bad(ErrorClass::Tag, call, "tag", format!("{tag} is outside 0..=MPI_TAG_UB")));
        }
        let spec = PersistentOp::Send { buf: buf as usize, count: a.count, dt: a.dt.into_owned(), dest, tag, mode };
        *o = new_request(Request::NULL, c, Some(spec));
        Ok(())
    })
}


unsafe fn recv_init<C: Count>(buf: *mut c_void, count: C, h: MPI_Datatype, source: c_int, tag: c_int, c: MPI_Comm, request: *mut MPI_Request) -> c_int {
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
            return Err(bad(ErrorClass::Tag, call, "tag", format!("{tag} is neither MPI_ANY_TAG nor in 0..=MPI_TAG_UB")));
        }
        let spec = PersistentOp::Recv { buf: buf as usize, count: a.count, dt: a.dt.into_owned(), source, tag };
        *o = new_request(Request::NULL, c, Some(spec));
        Ok(())
    })
}

fn start_one(call: &str, h: MPI_Request, what: &str) -> R<()> {
    if h == MPI_REQUEST_NULL {
        return Err(bad(ErrorClass::Request, call, what, "MPI_REQUEST_NULL"));
    }
    let (spec, c, active) = {
        let st = state();
        let e = st.requests.get(h).ok_or_else(|| bad(ErrorClass::Request, call, what, format!("{h:#x} is not a valid request")))?;
        (e.persistent.clone(), e.comm, !e.inner.is_null())
    };
    route_to(c);
    let spec = spec.ok_or_else(|| bad(ErrorClass::Request, call, what, "not a persistent request"))?;
    if active {
        return Err(bad(ErrorClass::Request, call, what, "the persistent request is already active"));
    }
    let cm = comm(c, call)?;
    if let PersistentOp::Coll(start) = &spec {
        let mut tmp = MPI_REQUEST_NULL;
        let code = start(&mut tmp);
        route_to(c);
        if code != MPI_SUCCESS {
            return Err(Fail { code, message: format!("{call}: starting the persistent collective failed") });
        }
        let r = crate::pcoll::engine_request_of(tmp);
        if let Some(e) = state().requests.get_mut(h) {
            e.inner = r;
        }
        return Ok(());
    }
    let r = match spec {
        PersistentOp::Send { buf, count, dt, dest, tag, mode } => {
            // SAFETY: the persistent request's creator keeps the buffer valid while it exists.
            let b = unsafe { SendBuf::from_raw(buf as *const u8, count, Some(&dt)) };
            pt2pt::isend(&Forever, &cm, b, dest, tag, mode)
        }
        PersistentOp::Recv { buf, count, dt, source, tag } => {
            // SAFETY: as above.
            let b = unsafe { RecvBuf::from_raw(buf as *mut u8, count, Some(&dt)) };
            pt2pt::irecv(&Forever, &cm, b, source, tag)
        }
        PersistentOp::Coll(_) => unreachable!("started above"),
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

// ----- generalized requests ----------------------------------------------------------

/// The callbacks of a generalized request's handle (`None` for other requests).
fn greq_of(h: MPI_Request) -> Option<Greq> {
    match state().requests.get(h).map(|e| &e.hook) {
        Some(Hook::Greq(g)) => Some(*g),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_start(
    query_fn: Option<MPI_Grequest_query_function>,
    free_fn: Option<MPI_Grequest_free_function>,
    cancel_fn: Option<MPI_Grequest_cancel_function>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    const CALL: &str = "MPI_Grequest_start";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `request` is MPI_Grequest_start's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        let o = unsafe { out(CALL, "request", request)? };
        let r = pt2pt::grequest_start()?;
        let g = Greq { query: query_fn, free: free_fn, cancel: cancel_fn, extra_state: extra_state as usize, completed: false, freed: false };
        *o = new_hooked_request(r, MPI_COMM_SELF, Hook::Greq(g));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_complete(request: MPI_Request) -> c_int {
    const CALL: &str = "MPI_Grequest_complete";
    ffi(CALL, NO_COMM, || {
        let (r, c, _) = one_request(CALL, request)?;
        route_to(c);
        let g = greq_of(request).ok_or_else(|| bad(ErrorClass::Request, CALL, "request", "not a generalized request (MPI_Grequest_start)"))?;
        if g.completed {
            return Err(bad(ErrorClass::Request, CALL, "request", "the generalized request is complete already"));
        }
        pt2pt::grequest_complete(r).map_err(|e| rename_call(e, CALL))?;
        if g.freed {
            // Freed before completion: the engine dropped its request just now;
            // the handle goes too, and free_fn runs (MPI: at the later of the two calls).
            state().requests.remove(request);
            let code = greq_free(&g);
            if code != MPI_SUCCESS {
                return Err(Fail { code, message: format!("{CALL}: the generalized request's free_fn returned error code {code}") });
            }
        } else if let Some(Hook::Greq(x)) = state().requests.get_mut(request).map(|e| &mut e.hook) {
            x.completed = true;
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
            // SAFETY: MPI_BUFFER_AUTOMATIC is no memory, and oxmpi only accounts attached space (see `buffer_attach`).
            unsafe { pt2pt::buffer_attach(buffer as *mut u8, isize::MAX as usize)? };
            return Ok(());
        }
        if size < 0 {
            return Err(bad(ErrorClass::Arg, call, "size", format!("{size} is negative")));
        }
        if buffer.is_null() && size > 0 {
            return Err(bad(ErrorClass::Buffer, call, "buffer", "is NULL"));
        }
        // SAFETY: the C caller hands over `size` bytes at `buffer` as MPI_Buffer_attach defines; oxmpi only accounts them.
        unsafe { pt2pt::buffer_attach(buffer as *mut u8, size as usize)? };
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
        // SAFETY: non-null (checked above) and, by the MPI contract, the address of
        // pointer-sized writable storage that nothing else of this call touches.
        unsafe { (buffer_addr as *mut *mut c_void).write_unaligned(p as *mut c_void) };
        *s = C::saturating(n.min(i64::MAX as usize) as i64);
        Ok(())
    })
}

// ----- status queries ---------------------------------------------------------------

/// # Safety
/// `p` is NULL or points to an `MPI_Status` that stays valid and unwritten for `'a`.
unsafe fn status_ref<'a>(call: &str, p: *const MPI_Status) -> R<&'a MPI_Status> {
    if p.is_null() {
        return Err(bad(ErrorClass::Arg, call, "status", "is NULL (MPI_STATUS_IGNORE)"));
    }
    // SAFETY: non-null (checked), so readable for `'a` by this function's contract.
    Ok(unsafe { &*p })
}

unsafe fn get_count<C: Count>(status: *const MPI_Status, h: MPI_Datatype, count: *mut C) -> c_int {
    let call = name::<C>("MPI_Get_count");
    ffi(call, NO_COMM, || {
        // SAFETY: `status` is MPI_Get_count's IN status: NULL (rejected) or readable.
        let s = unsafe { status_ref(call, status)? };
        let dt = datatype(h, call, "datatype")?;
        // SAFETY: `count` is MPI_Get_count's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(call, "count", count)? } = undefined_or(dt.get_count(status_bytes(s)));
        Ok(())
    })
}

unsafe fn get_elements<C: Count>(status: *const MPI_Status, h: MPI_Datatype, count: *mut C) -> c_int {
    let call = name::<C>("MPI_Get_elements");
    ffi(call, NO_COMM, || {
        // SAFETY: `status` is MPI_Get_elements's IN status: NULL (rejected) or readable.
        let s = unsafe { status_ref(call, status)? };
        let dt = datatype(h, call, "datatype")?;
        // SAFETY: `count` is MPI_Get_elements's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(call, "count", count)? } = undefined_or(dt.get_elements(status_bytes(s)));
        Ok(())
    })
}

/// # Safety
/// `status` is NULL or valid to read and write one `MPI_Status`, unaliased (the C caller's argument).
unsafe fn set_elements(call: &str, status: *mut MPI_Status, h: MPI_Datatype, count: i64) -> R<()> {
    // SAFETY: `status` is the C caller's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
    let s = unsafe { out(call, "status", status)? };
    let dt = datatype(h, call, "datatype")?;
    if count < 0 {
        return Err(bad(ErrorClass::Count, call, "count", format!("{count} is negative")));
    }
    // Bytes of `count` basic elements: whole elements of the type, then the
    // leading basic elements of one more.
    let basic_per = dt.get_elements(dt.size()).unwrap_or(1).max(1) as i64;
    let whole = count / basic_per;
    let mut rem = count % basic_per;
    let mut bytes = whole * dt.size() as i64;
    for (p, k) in dt.signature_runs(1) {
        if rem == 0 {
            break;
        }
        let per = if p.size() > 0 { dt.get_elements(p.size()).map(|_| 1).unwrap_or(1) } else { 1 };
        let take = (k as i64).min(rem / per.max(1));
        bytes += take * p.size() as i64;
        rem -= take;
    }
    let fake = Status { source: s.MPI_SOURCE, tag: s.MPI_TAG, error: s.MPI_ERROR, count_bytes: bytes as usize, cancelled: s.MPI_internal[2] != 0 };
    fill(s, &fake);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements(status: *mut MPI_Status, h: MPI_Datatype, count: c_int) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements", NO_COMM, || unsafe { set_elements("MPI_Status_set_elements", status, h, count as i64) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_c(status: *mut MPI_Status, h: MPI_Datatype, count: MPI_Count) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_c's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_c", NO_COMM, || unsafe { set_elements("MPI_Status_set_elements_c", status, h, count) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_x(status: *mut MPI_Status, h: MPI_Datatype, count: MPI_Count) -> c_int {
    // SAFETY: `status` is MPI_Status_set_elements_x's INOUT argument, as `set_elements` requires.
    ffi("MPI_Status_set_elements_x", NO_COMM, || unsafe { set_elements("MPI_Status_set_elements_x", status, h, count) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    ffi("MPI_Status_set_cancelled", NO_COMM, || {
        // SAFETY: `status` is MPI_Status_set_cancelled's INOUT argument: NULL (rejected) or writable and unaliased.
        let s = unsafe { out("MPI_Status_set_cancelled", "status", status)? };
        s.MPI_internal[2] = (flag != 0) as c_int;
        Ok(())
    })
}

// ----- entry points of the int and large-count (`_c`) forms --------------------------


// ----- entry points: the int forms and their large-count (`_c`) twins ---------------

use crate::large::{entry, ptr::*};

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
entry!(PMPI_Get_count, PMPI_Get_count_c, (status: CStatus, datatype: MPI_Datatype, count: PCNT) => get_count(status, datatype, count));
entry!(PMPI_Get_elements, PMPI_Get_elements_c, (status: CStatus, datatype: MPI_Datatype, count: PCNT) => get_elements(status, datatype, count));

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_elements_x(status: *const MPI_Status, h: MPI_Datatype, count: *mut MPI_Count) -> c_int {
    const CALL: &str = "MPI_Get_elements_x";
    ffi(CALL, NO_COMM, || {
        // SAFETY: `status` is MPI_Get_elements_x's IN status: NULL (rejected) or readable.
        let s = unsafe { status_ref(CALL, status)? };
        let dt = datatype(h, CALL, "datatype")?;
        // SAFETY: `count` is MPI_Get_elements_x's pointer argument: NULL (rejected) or writable and unaliased (MPI contract).
        *unsafe { out(CALL, "count", count)? } = undefined_or(dt.get_elements(status_bytes(s)));
        Ok(())
    })
}
