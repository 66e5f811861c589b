//! Point-to-point communication: send modes, receives, probes, the wait/test
//! families, cancel, persistent requests and the bsend buffer.
//!
//! Buffers are byte ranges here; datatypes are layered on top. The immediate
//! (`i*`) and persistent entry points are `unsafe fn`s: the caller promises that
//! the buffer stays valid, and a receive buffer untouched, until the request
//! completes — the same promise an MPI C program makes. Blocking calls take
//! slices and are safe.

pub mod partitioned;
pub mod wire;

use crate::buf::RawBuf;
use crate::comm::Comm;
use crate::engine::{PersistentSpec, ReqKind};
pub use crate::engine::{SendMode, BSEND_OVERHEAD};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Pattern, ANY_SOURCE, ANY_TAG};
use crate::request::{Request, Status, PROC_NULL};
use crate::runtime::{engine, TAG_UB};

impl Request {
    /// `MPI_REQUEST_NULL`: never names a live request (generations start at 1).
    pub const NULL: Request = Request(0);

    pub fn is_null(self) -> bool {
        self == Request::NULL
    }
}

/// The MPI call a send of `mode` is (`immediate`: its non-blocking form), for
/// error messages; the one table of these names (the C layer and the safe API use it).
pub fn send_call_name(mode: SendMode, immediate: bool) -> &'static str {
    match (mode, immediate) {
        (SendMode::Standard, false) => "MPI_Send",
        (SendMode::Synchronous, false) => "MPI_Ssend",
        (SendMode::Ready, false) => "MPI_Rsend",
        (SendMode::Buffered, false) => "MPI_Bsend",
        (SendMode::Standard, true) => "MPI_Isend",
        (SendMode::Synchronous, true) => "MPI_Issend",
        (SendMode::Ready, true) => "MPI_Irsend",
        (SendMode::Buffered, true) => "MPI_Ibsend",
    }
}

/// Checks a destination rank; `None` means MPI_PROC_NULL.
fn check_dest(call: &str, comm: &Comm, dest: i32) -> Result<Option<u32>> {
    if dest == PROC_NULL {
        return Ok(None);
    }
    let n = comm.peer_group_size();
    if dest < 0 || dest >= n {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            "dest",
            format!("{dest} is not a rank of this communicator (0..{n}) nor MPI_PROC_NULL"),
        ));
    }
    Ok(Some(comm.peer_group()[dest as usize]))
}

fn check_send_tag(call: &str, tag: i32) -> Result<()> {
    if !(0..=TAG_UB).contains(&tag) {
        return Err(MpiError::arg(ErrorClass::Tag, call, "tag", format!("{tag} is outside 0..=MPI_TAG_UB ({TAG_UB})")));
    }
    Ok(())
}

fn check_source(call: &str, comm: &Comm, source: i32) -> Result<()> {
    let n = comm.peer_group_size();
    if source == ANY_SOURCE || source == PROC_NULL || (0..n).contains(&source) {
        return Ok(());
    }
    Err(MpiError::arg(
        ErrorClass::Rank,
        call,
        "source",
        format!("{source} is not a rank of this communicator (0..{n}), MPI_ANY_SOURCE nor MPI_PROC_NULL"),
    ))
}

fn check_recv_tag(call: &str, tag: i32) -> Result<()> {
    if tag == ANY_TAG || (0..=TAG_UB).contains(&tag) {
        return Ok(());
    }
    Err(MpiError::arg(ErrorClass::Tag, call, "tag", format!("{tag} is neither MPI_ANY_TAG nor in 0..=MPI_TAG_UB")))
}

fn pattern(comm: &Comm, source: i32, tag: i32) -> Pattern {
    Pattern { context: comm.context(), source, tag }
}

/// Starts a send of `len` bytes at `buf` on the communicator's point-to-point
/// context.
///
/// # Safety
/// `buf..buf+len` must stay valid for reads until the request completes.
pub unsafe fn isend(comm: &Comm, buf: *const u8, len: usize, dest: i32, tag: i32, mode: SendMode) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { isend_on(comm, comm.context(), send_call_name(mode, true), buf, len, dest, tag, mode) }
}

/// [`isend`] on an explicit context (collectives use `comm.coll_context()`).
///
/// # Safety
/// As [`isend`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn isend_on(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: *const u8,
    len: usize,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { start_send_then(comm, context, call, buf, len, dest, tag, mode, None, |_, r| r) }
}

/// Starts a send and runs `then` on the new request under the same lock;
/// `dt`, when the bytes are elements of a datatype, gives their type signature.
///
/// # Safety
/// As [`isend`].
#[allow(clippy::too_many_arguments)]
unsafe fn start_send_then<T>(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: *const u8,
    len: usize,
    dest: i32,
    tag: i32,
    mode: SendMode,
    dt: Option<&Datatype>,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    let e = engine()?;
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let env = Envelope { context, source: comm.rank(), tag };
    e.with_state(|st| {
        let r = match peer {
            None => st.done_request(Status::EMPTY),
            Some(peer) => {
                let sig = dt.map_or(0, |dt| st.sig_of(dt));
                st.start_send_sig(peer, env, RawBuf::from_ptr(buf, len), mode, sig)?
            }
        };
        Ok(then(st, r))
    })
    .map_err(|err| rename(err, call))
}

/// Errors raised deep in the engine name a generic call; give them the caller's.
fn rename(mut err: MpiError, call: &str) -> MpiError {
    for generic in ["MPI_Send:", "MPI_Bsend:", "MPI_Recv:"] {
        if let Some(rest) = err.message.strip_prefix(generic) {
            err.message = format!("{call}:{rest}");
        }
    }
    err
}

/// Posts a receive of at most `len` bytes into `buf`.
///
/// # Safety
/// `buf..buf+len` must stay valid for writes, and not be accessed otherwise,
/// until the request completes.
pub unsafe fn irecv(comm: &Comm, buf: *mut u8, len: usize, source: i32, tag: i32) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { irecv_on(comm, comm.context(), "MPI_Irecv", buf, len, source, tag) }
}

/// [`irecv`] on an explicit context.
///
/// # Safety
/// As [`irecv`].
pub unsafe fn irecv_on(comm: &Comm, context: u32, call: &str, buf: *mut u8, len: usize, source: i32, tag: i32) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { irecv_sig(comm, context, call, buf, len, source, tag, None) }
}

/// [`irecv_on`] of elements of `dt` (for the type-signature check).
///
/// # Safety
/// As [`irecv`].
#[allow(clippy::too_many_arguments)]
unsafe fn irecv_sig(comm: &Comm, context: u32, call: &str, buf: *mut u8, len: usize, source: i32, tag: i32, dt: Option<&Datatype>) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { irecv_sig_then(comm, context, call, buf, len, source, tag, dt, |_, r| r) }
}

/// [`irecv_sig`], running `then` on the new request under the same lock.
///
/// # Safety
/// As [`irecv`].
#[allow(clippy::too_many_arguments)]
unsafe fn irecv_sig_then<T>(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: *mut u8,
    len: usize,
    source: i32,
    tag: i32,
    dt: Option<&Datatype>,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    let e = engine()?;
    check_source(call, comm, source)?;
    check_recv_tag(call, tag)?;
    if source == PROC_NULL {
        let mut st = e.lock();
        let r = st.done_request(Status::EMPTY);
        return Ok(then(&mut st, r));
    }
    let pat = Pattern { context, source, tag };
    // Post first, then poll: a message already in the ring then lands straight in
    // the receive buffer instead of taking the unexpected-queue detour.
    Ok(e.with_state(|st| {
        let sig = dt.map_or(0, |dt| st.sig_of(dt));
        let r = st.post_recv_unpacking(RawBuf::from_ptr(buf, len), pat, None, sig);
        st.progress();
        then(st, r)
    }))
}

/// A blocking send (MPI_Send / Ssend / Rsend / Bsend).
pub fn send(comm: &Comm, buf: &[u8], dest: i32, tag: i32, mode: SendMode) -> Result<()> {
    // SAFETY: `buf` is borrowed for the whole (blocking) call.
    unsafe { send_blocking(comm, send_call_name(mode, false), buf.as_ptr(), buf.len(), dest, tag, mode, None) }
}

/// A blocking send of `len` contiguous bytes at `buf` (elements of `dt`, if
/// given, for the signature check).
///
/// # Safety
/// `buf..buf+len` is readable for the duration of the call.
#[allow(clippy::too_many_arguments)]
unsafe fn send_blocking(comm: &Comm, call: &'static str, buf: *const u8, len: usize, dest: i32, tag: i32, mode: SendMode, dt: Option<&Datatype>) -> Result<()> {
    // Small standard sends go straight into the peer's ring when nothing is queued
    // before them: no request to create, wait on and free (the latency path).
    if matches!(mode, SendMode::Standard | SendMode::Ready) && len <= crate::transport::shm::CELL_PAYLOAD {
        let e = engine()?;
        check_send_tag(call, tag)?;
        let Some(peer) = check_dest(call, comm, dest)? else { return Ok(()) };
        let env = Envelope { context: comm.context(), source: comm.rank(), tag };
        // SAFETY: the caller guarantees `buf..buf+len` is readable during the call.
        let data = unsafe { RawBuf::from_ptr(buf, len).as_slice() };
        if e.with_state(|st| {
            let sig = dt.map_or(0, |dt| st.sig_of(dt));
            st.try_send_now(peer, env, data, sig)
        }) {
            return Ok(());
        }
    }
    let desc = || crate::diag::p2p(call, true, comm, dest, tag, dt.map_or(len, |d| len.checked_div(d.size()).unwrap_or(0)), dt, len);
    // An eager send that fit in the ring is complete at once: finish it under the
    // same lock instead of a second trip through the wait loop.
    // SAFETY: the caller keeps `buf` readable, and we wait for completion before returning.
    let started = unsafe {
        start_send_then(comm, comm.context(), call, buf, len, dest, tag, mode, dt, |st, mut r| {
            match st.req(r) {
                Some(x) if x.done => Err(finish(st, &mut r)),
                _ => Ok(r),
            }
        })?
    };
    match started {
        Err(done) => done.map(|_| ()),
        Ok(mut r) => wait_described(&mut r, call, &desc).map(|_| ()),
    }
}

/// A blocking receive (MPI_Recv).
pub fn recv(comm: &Comm, buf: &mut [u8], source: i32, tag: i32) -> Result<Status> {
    // SAFETY: `buf` is exclusively borrowed until we have waited for completion.
    let mut r = unsafe { irecv_on(comm, comm.context(), "MPI_Recv", buf.as_mut_ptr(), buf.len(), source, tag)? };
    let len = buf.len();
    wait_described(&mut r, "MPI_Recv", &|| crate::diag::p2p("MPI_Recv", false, comm, source, tag, len, None, len))
}

/// MPI_Sendrecv.
#[allow(clippy::too_many_arguments)]
pub fn sendrecv(
    comm: &Comm,
    sendbuf: &[u8],
    dest: i32,
    sendtag: i32,
    recvbuf: &mut [u8],
    source: i32,
    recvtag: i32,
) -> Result<Status> {
    // SAFETY: both buffers are borrowed until both requests completed below.
    let mut rr = unsafe { irecv_on(comm, comm.context(), "MPI_Sendrecv", recvbuf.as_mut_ptr(), recvbuf.len(), source, recvtag)? };
    // SAFETY: `sendbuf` is a shared borrow of `sendbuf.len()` bytes that
    // outlives the send request: it is waited for (or, if starting it failed,
    // never started) before this function returns.
    let sent = unsafe { isend_on(comm, comm.context(), "MPI_Sendrecv", sendbuf.as_ptr(), sendbuf.len(), dest, sendtag, SendMode::Standard) };
    let mut sr = match sent {
        Ok(r) => r,
        Err(err) => {
            let _ = cancel(&rr);
            let _ = wait(&mut rr);
            return Err(err);
        }
    };
    let st = wait_named(&mut rr, "MPI_Sendrecv");
    wait_named(&mut sr, "MPI_Sendrecv")?;
    st
}

/// MPI_Sendrecv_replace: sends `buf`, then receives into the same buffer.
pub fn sendrecv_replace(comm: &Comm, buf: &mut [u8], dest: i32, sendtag: i32, source: i32, recvtag: i32) -> Result<Status> {
    let out = buf.to_vec();
    sendrecv(comm, &out, dest, sendtag, buf, source, recvtag)
}

// ----- MPI_Isendrecv ------------------------------------------------------------------

/// A send and a receive reported as one request: complete when both are,
/// with the receive's status; the first error fails it.
#[derive(Debug)]
struct SendRecv {
    recv: Request,
    send: Request,
    /// The packed copy an MPI_Isendrecv_replace sends from.
    _packed: Option<Box<[u8]>>,
    status: Status,
}

impl crate::engine::Task for SendRecv {
    fn advance(&mut self, st: &mut crate::engine::State) -> Result<bool> {
        let done = |r: Request| st.req(r).is_none_or(|e| e.done);
        if !(done(self.recv) && done(self.send)) {
            return Ok(false);
        }
        let recv = st.remove_request(self.recv);
        let send = st.remove_request(self.send);
        self.recv = Request::NULL;
        self.send = Request::NULL;
        if let Some(err) = recv.as_ref().and_then(|e| e.error.clone()).or_else(|| send.as_ref().and_then(|e| e.error.clone())) {
            return Err(err);
        }
        self.status = recv.map_or(Status::EMPTY, |e| e.status);
        Ok(true)
    }

    fn status(&self) -> Status {
        self.status
    }
}

/// Posts the receive, then starts the send; on a failed send the receive is
/// withdrawn. Returns the one request of both.
fn pair(call: &str, recv: Request, send: Result<Request>, packed: Option<Box<[u8]>>) -> Result<Request> {
    let send = match send {
        Ok(s) => s,
        Err(err) => {
            let mut rr = recv;
            let _ = cancel(&rr);
            let _ = wait(&mut rr);
            return Err(rename(err, call));
        }
    };
    let task = SendRecv { recv, send, _packed: packed, status: Status::EMPTY };
    Ok(engine()?.with_progress(|st| st.start_task(Box::new(task))))
}

/// MPI_Isendrecv: `sendcount` elements of `sendtype` to `dest` and up to
/// `recvcount` of `recvtype` from `source`, as one request whose status is the
/// receive's.
///
/// # Safety
/// Both buffers hold their counts of their datatypes and stay valid (the
/// receive buffer untouched otherwise) until the request completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv_typed(
    comm: &Comm,
    sendbuf: *const u8,
    sendcount: usize,
    sendtype: &Datatype,
    dest: i32,
    sendtag: i32,
    recvbuf: *mut u8,
    recvcount: usize,
    recvtype: &Datatype,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    const CALL: &str = "MPI_Isendrecv";
    // SAFETY: forwarded contract.
    let recv = unsafe { irecv_typed_named(comm, CALL, recvbuf, recvcount, recvtype, source, recvtag)? };
    // SAFETY: forwarded contract.
    let send = unsafe { send_typed_then(comm, CALL, sendbuf, sendcount, sendtype, dest, sendtag, SendMode::Standard, |_, r| r) };
    pair(CALL, recv, send, None)
}

/// MPI_Isendrecv_replace: sends `count` elements of `dt` from `buf` and
/// receives as many into it, as one request. The outgoing data is packed at
/// the call, so the receive may land at once.
///
/// # Safety
/// `buf` holds `count` elements of `dt` and stays valid, and untouched
/// otherwise, until the request completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv_replace_typed(comm: &Comm, buf: *mut u8, count: usize, dt: &Datatype, dest: i32, sendtag: i32, source: i32, recvtag: i32) -> Result<Request> {
    const CALL: &str = "MPI_Isendrecv_replace";
    check_datatype(CALL, "datatype", dt)?;
    let len = packed_len(CALL, count, dt)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    // SAFETY: the caller's buffer holds `count` elements of `dt`.
    unsafe { dt.pack(buf, count, &mut packed) };
    // SAFETY: forwarded contract.
    let recv = unsafe { irecv_typed_named(comm, CALL, buf, count, dt, source, recvtag)? };
    // SAFETY: `packed` moves into the task below, which keeps it until the send is done
    // (a boxed slice's bytes do not move with the box).
    let send = unsafe { start_send_then(comm, comm.context(), CALL, packed.as_ptr(), packed.len(), dest, sendtag, SendMode::Standard, None, |_, r| r) };
    pair(CALL, recv, send, Some(packed))
}

// ----- completion ---------------------------------------------------------------

/// What a finished request reports, consuming it unless it is persistent.
fn finish(st: &mut crate::engine::State, r: &mut Request) -> Result<Status> {
    let entry = st.req_mut(*r).unwrap();
    if let ReqKind::Persistent { active, .. } = &mut entry.kind {
        // Inactive after completion; the operation's own request is dropped.
        let inner = active.take();
        return match inner {
            Some(mut i) => finish(st, &mut i),
            None => Ok(Status::NULL),
        };
    }
    let e = st.remove_request(*r).unwrap();
    *r = Request::NULL;
    match e.error {
        // A receive that matched a message keeps reporting it (source, tag, count).
        Some(err) if e.status.source >= 0 && err.status.is_none() => Err(err.with_status(e.status)),
        Some(err) => Err(err),
        None => Ok(e.status),
    }
}

/// Whether request `r` has completed; errors on a stale or foreign handle.
fn is_done(st: &crate::engine::State, r: Request, call: &str) -> Result<bool> {
    match st.req(r) {
        None => Err(MpiError::arg(ErrorClass::Request, call, "request", "not a live request (already completed or freed?)")),
        Some(e) => match &e.kind {
            ReqKind::Persistent { active: None, .. } => Ok(true),
            ReqKind::Persistent { active: Some(i), .. } => Ok(st.req(*i).is_none_or(|x| x.done)),
            _ => Ok(e.done),
        },
    }
}

fn wait_named(r: &mut Request, call: &str) -> Result<Status> {
    wait_described(r, call, &|| None)
}

/// [`wait_named`] for a blocking call that can say what it is, should it
/// block for long (`desc` runs only then: nothing is recorded on the way).
fn wait_described(r: &mut Request, call: &str, desc: &dyn Fn() -> Option<crate::diag::Call>) -> Result<Status> {
    if r.is_null() {
        return Ok(Status::NULL);
    }
    let e = engine()?;
    e.wait_until_described(desc, |st| match is_done(st, *r, call) {
        Err(err) => Some(Err(err)),
        Ok(false) => None,
        Ok(true) => Some(finish(st, r)),
    })
}

/// MPI_Wait. A non-persistent request becomes [`Request::NULL`].
pub fn wait(r: &mut Request) -> Result<Status> {
    wait_named(r, "MPI_Wait")
}

/// MPI_Test: `Some(status)` once complete.
pub fn test(r: &mut Request) -> Result<Option<Status>> {
    if r.is_null() {
        return Ok(Some(Status::NULL));
    }
    let e = engine()?;
    e.with_progress(|st| match is_done(st, *r, "MPI_Test")? {
        false => Ok(None),
        true => finish(st, r).map(Some),
    })
}

/// Stores the outcome of request `i` into `statuses[i]`, remembering the first error.
fn record(res: Result<Status>, status: &mut Status, first_err: &mut Option<MpiError>) {
    match res {
        Ok(s) => *status = s,
        Err(err) => {
            if let Some(s) = err.status {
                *status = s;
            }
            status.error = err.class.code();
            if first_err.is_none() {
                *first_err = Some(err);
            }
        }
    }
}

fn in_status_error(call: &str, first: MpiError) -> MpiError {
    MpiError::new(ErrorClass::InStatus, format!("{call}: a request failed, see its status: {}", first.message))
}

/// MPI_Waitall. On failure the error class is MPI_ERR_IN_STATUS and each
/// status's `error` tells which requests failed.
pub fn waitall(reqs: &mut [Request], statuses: &mut [Status]) -> Result<()> {
    assert!(statuses.len() >= reqs.len(), "waitall: statuses shorter than requests");
    let e = engine()?;
    let mut first_err = None;
    for s in statuses.iter_mut().take(reqs.len()) {
        *s = Status::NULL;
    }
    // Requests before `first_open` are all finished: each look starts at the first
    // open one and stops at the first still running (requests mostly complete in
    // order, so a wait over a window of n requests costs O(n), not O(n) per poll).
    let mut first_open = 0;
    e.wait_until_draining(|st| {
        while first_open < reqs.len() {
            let i = first_open;
            let r = &mut reqs[i];
            if !r.is_null() {
                match is_done(st, *r, "MPI_Waitall") {
                    Err(err) => record(Err(err), &mut statuses[i], &mut first_err),
                    Ok(false) => return None,
                    Ok(true) => {
                        // (A persistent request stays non-null, inactive: never looked at again.)
                        let res = finish(st, r);
                        record(res, &mut statuses[i], &mut first_err);
                    }
                }
            }
            first_open += 1;
        }
        Some(())
    });
    match first_err {
        Some(err) => Err(in_status_error("MPI_Waitall", err)),
        None => Ok(()),
    }
}

/// MPI_Testall: `true` (and statuses filled) only when all are complete.
pub fn testall(reqs: &mut [Request], statuses: &mut [Status]) -> Result<bool> {
    let e = engine()?;
    let ready = e.with_progress(|st| -> Result<bool> {
        for r in reqs.iter() {
            if !r.is_null() && !is_done(st, *r, "MPI_Testall")? {
                return Ok(false);
            }
        }
        Ok(true)
    })?;
    if !ready {
        return Ok(false);
    }
    waitall(reqs, statuses)?;
    Ok(true)
}

/// Finds one complete request among `reqs` (first in order), finishing it.
fn take_one(st: &mut crate::engine::State, reqs: &mut [Request], call: &str) -> Result<Option<Option<(usize, Status)>>> {
    let mut any_active = false;
    for (i, r) in reqs.iter_mut().enumerate() {
        if r.is_null() {
            continue;
        }
        if matches!(st.req(*r).map(|x| &x.kind), Some(ReqKind::Persistent { active: None, .. })) {
            continue;
        }
        any_active = true;
        if is_done(st, *r, call)? {
            return finish(st, r).map(|s| Some(Some((i, s))));
        }
    }
    Ok(if any_active { None } else { Some(None) })
}

/// MPI_Waitany: `None` when no request is active (MPI_UNDEFINED).
pub fn waitany(reqs: &mut [Request]) -> Result<Option<(usize, Status)>> {
    let e = engine()?;
    e.wait_until(|st| match take_one(st, reqs, "MPI_Waitany") {
        Err(err) => Some(Err(err)),
        Ok(None) => None,
        Ok(Some(found)) => Some(Ok(found)),
    })
}

/// MPI_Testany: `Ok(None)` if nothing completed, `Ok(Some(None))` if no request is active.
pub fn testany(reqs: &mut [Request]) -> Result<Option<Option<(usize, Status)>>> {
    let e = engine()?;
    e.with_progress(|st| take_one(st, reqs, "MPI_Testany"))
}

/// Finishes every complete request; `None` when no request is active.
fn take_some(st: &mut crate::engine::State, reqs: &mut [Request], call: &str, out: &mut Vec<(usize, Result<Status>)>) -> Result<bool> {
    let mut any_active = false;
    for (i, r) in reqs.iter_mut().enumerate() {
        if r.is_null() || matches!(st.req(*r).map(|x| &x.kind), Some(ReqKind::Persistent { active: None, .. })) {
            continue;
        }
        any_active = true;
        if is_done(st, *r, call)? {
            out.push((i, finish(st, r)));
        }
    }
    Ok(any_active)
}

/// MPI_Waitsome: the indices and statuses of the requests that completed
/// (at least one), or `None` when no request is active.
pub fn waitsome(reqs: &mut [Request]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
    let e = engine()?;
    e.wait_until_draining(|st| {
        let mut out = Vec::new();
        match take_some(st, reqs, "MPI_Waitsome", &mut out) {
            Err(err) => Some(Err(err)),
            Ok(false) => Some(Ok(None)),
            Ok(true) if out.is_empty() => None,
            Ok(true) => Some(Ok(Some(out))),
        }
    })
}

/// MPI_Testsome: like [`waitsome`] but returns an empty list at once if none completed.
pub fn testsome(reqs: &mut [Request]) -> Result<Option<Vec<(usize, Result<Status>)>>> {
    let e = engine()?;
    e.with_progress(|st| {
        let mut out = Vec::new();
        Ok(take_some(st, reqs, "MPI_Testsome", &mut out)?.then_some(out))
    })
}

/// MPI_Request_get_status: completion without freeing the request.
pub fn request_get_status(r: Request) -> Result<Option<Status>> {
    if r.is_null() {
        return Ok(Some(Status::NULL));
    }
    let e = engine()?;
    e.with_progress(|st| {
        if !is_done(st, r, "MPI_Request_get_status")? {
            return Ok(None);
        }
        let entry = st.req(r).unwrap();
        Ok(Some(match &entry.kind {
            ReqKind::Persistent { active: Some(i), .. } => st.req(*i).map(|x| x.status).unwrap_or(Status::EMPTY),
            ReqKind::Persistent { active: None, .. } => Status::NULL,
            _ => entry.status,
        }))
    })
}

/// MPI_Request_free: the operation goes on, the handle becomes null.
pub fn request_free(r: &mut Request) -> Result<()> {
    if r.is_null() {
        return Err(MpiError::arg(ErrorClass::Request, "MPI_Request_free", "request", "MPI_REQUEST_NULL"));
    }
    let e = engine()?;
    let mut st = e.lock();
    let entry = st
        .req_mut(*r)
        .ok_or_else(|| MpiError::arg(ErrorClass::Request, "MPI_Request_free", "request", "not a live request"))?;
    if let ReqKind::Persistent { active, .. } = &mut entry.kind {
        let inner = active.take();
        st.remove_request(*r);
        if let Some(i) = inner {
            st.detach(i);
        }
    } else {
        st.detach(*r);
    }
    *r = Request::NULL;
    Ok(())
}

/// MPI_Cancel: a pending receive is withdrawn; a send is withdrawn if the
/// receiver has not matched it yet. Completion still needs wait/test, whose
/// status then says whether it was cancelled.
pub fn cancel(r: &Request) -> Result<()> {
    if r.is_null() {
        return Err(MpiError::arg(ErrorClass::Request, "MPI_Cancel", "request", "MPI_REQUEST_NULL"));
    }
    let e = engine()?;
    e.with_progress(|st| {
        let target = match st.req(*r).map(|x| &x.kind) {
            Some(ReqKind::Persistent { active: Some(i), .. }) => *i,
            Some(ReqKind::Persistent { active: None, .. }) => return Ok(()),
            _ => *r,
        };
        st.cancel(target)
    })
}

// ----- probes ---------------------------------------------------------------------

/// A message taken out of matching by [`mprobe`], to be received by [`mrecv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message(u64);

impl Message {
    /// `MPI_MESSAGE_NULL`.
    pub const NULL: Message = Message(0);
    /// `MPI_MESSAGE_NO_PROC`: the message "from" MPI_PROC_NULL.
    pub const NO_PROC: Message = Message(u64::MAX);
    pub fn to_raw(self) -> u64 {
        self.0
    }
    pub fn from_raw(v: u64) -> Message {
        Message(v)
    }
}

fn probe_status(st: &crate::engine::State, id: u64) -> Status {
    let m = &st.unexp[&id];
    Status::ok(m.env.source, m.env.tag, m.body.total())
}

/// MPI_Iprobe.
pub fn iprobe(comm: &Comm, source: i32, tag: i32) -> Result<Option<Status>> {
    iprobe_on(comm, comm.context(), source, tag)
}

/// [`iprobe`] on an explicit context.
pub fn iprobe_on(comm: &Comm, context: u32, source: i32, tag: i32) -> Result<Option<Status>> {
    let e = engine()?;
    check_source("MPI_Iprobe", comm, source)?;
    check_recv_tag("MPI_Iprobe", tag)?;
    if source == PROC_NULL {
        return Ok(Some(Status::EMPTY));
    }
    let pat = Pattern { context, source, tag };
    Ok(e.with_progress(|st| st.matcher.peek(&pat).map(|(_, id)| *id).map(|id| probe_status(st, id))))
}

/// MPI_Probe.
pub fn probe(comm: &Comm, source: i32, tag: i32) -> Result<Status> {
    let e = engine()?;
    check_source("MPI_Probe", comm, source)?;
    check_recv_tag("MPI_Probe", tag)?;
    if source == PROC_NULL {
        return Ok(Status::EMPTY);
    }
    let pat = pattern(comm, source, tag);
    Ok(e.wait_until_described(&|| crate::diag::probe("MPI_Probe", comm, source, tag), |st| st.matcher.peek(&pat).map(|(_, id)| *id).map(|id| probe_status(st, id))))
}

/// MPI_Improbe: takes a matching message out of matching.
pub fn improbe(comm: &Comm, source: i32, tag: i32) -> Result<Option<(Message, Status)>> {
    let e = engine()?;
    check_source("MPI_Improbe", comm, source)?;
    check_recv_tag("MPI_Improbe", tag)?;
    if source == PROC_NULL {
        return Ok(Some((Message::NO_PROC, Status::EMPTY)));
    }
    let pat = pattern(comm, source, tag);
    Ok(e.with_progress(|st| {
        st.matcher.match_posted(&pat).map(|(_, id)| (Message(id), probe_status(st, id)))
    }))
}

/// MPI_Mprobe.
pub fn mprobe(comm: &Comm, source: i32, tag: i32) -> Result<(Message, Status)> {
    let e = engine()?;
    check_source("MPI_Mprobe", comm, source)?;
    check_recv_tag("MPI_Mprobe", tag)?;
    if source == PROC_NULL {
        return Ok((Message::NO_PROC, Status::EMPTY));
    }
    let pat = pattern(comm, source, tag);
    Ok(e.wait_until_described(&|| crate::diag::probe("MPI_Mprobe", comm, source, tag), |st| st.matcher.match_posted(&pat).map(|(_, id)| (Message(id), probe_status(st, id)))))
}

/// MPI_Imrecv: receives a message from [`mprobe`]; `msg` becomes NULL.
///
/// # Safety
/// As [`irecv`].
pub unsafe fn imrecv(buf: *mut u8, len: usize, msg: &mut Message) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { imrecv_sig(buf, len, msg, None) }
}

/// [`imrecv`] of elements of `dt` (for the type-signature check).
///
/// # Safety
/// As [`irecv`].
unsafe fn imrecv_sig(buf: *mut u8, len: usize, msg: &mut Message, dt: Option<&Datatype>) -> Result<Request> {
    let e = engine()?;
    let m = *msg;
    if m == Message::NO_PROC {
        *msg = Message::NULL;
        return Ok(e.lock().done_request(Status::EMPTY));
    }
    let mut st = e.lock();
    if m == Message::NULL || !st.unexp.contains_key(&m.0) {
        return Err(MpiError::arg(ErrorClass::Request, "MPI_Mrecv", "message", "not a message returned by MPI_Mprobe/MPI_Improbe"));
    }
    *msg = Message::NULL;
    let sig = dt.map_or(0, |dt| st.sig_of(dt));
    Ok(st.recv_message_unpacking(RawBuf::from_ptr(buf, len), m.0, None, sig))
}

/// MPI_Mrecv.
pub fn mrecv(buf: &mut [u8], msg: &mut Message) -> Result<Status> {
    // SAFETY: `buf` is exclusively borrowed until the wait below completes.
    let mut r = unsafe { imrecv(buf.as_mut_ptr(), buf.len(), msg)? };
    wait_named(&mut r, "MPI_Mrecv")
}

// ----- persistent requests -----------------------------------------------------------

/// MPI_Send_init and friends: an inactive persistent send.
///
/// # Safety
/// `buf..buf+len` must stay valid while the request exists, and be readable
/// whenever it is active.
pub unsafe fn send_init(comm: &Comm, buf: *const u8, len: usize, dest: i32, tag: i32, mode: SendMode) -> Result<Request> {
    let e = engine()?;
    let call = match mode {
        SendMode::Standard => "MPI_Send_init",
        SendMode::Synchronous => "MPI_Ssend_init",
        SendMode::Ready => "MPI_Rsend_init",
        SendMode::Buffered => "MPI_Bsend_init",
    };
    check_send_tag(call, tag)?;
    check_dest(call, comm, dest)?;
    let spec = PersistentSpec::Send { comm: comm.clone(), buf: RawBuf::from_ptr(buf, len), dest, tag, mode };
    Ok(e.lock().new_request(ReqKind::Persistent { spec, active: None }))
}

/// MPI_Recv_init: an inactive persistent receive.
///
/// # Safety
/// `buf..buf+len` must stay valid while the request exists, and untouched
/// whenever it is active.
pub unsafe fn recv_init(comm: &Comm, buf: *mut u8, len: usize, source: i32, tag: i32) -> Result<Request> {
    let e = engine()?;
    check_source("MPI_Recv_init", comm, source)?;
    check_recv_tag("MPI_Recv_init", tag)?;
    let spec = PersistentSpec::Recv { comm: comm.clone(), buf: RawBuf::from_ptr(buf as *const u8, len), source, tag };
    Ok(e.lock().new_request(ReqKind::Persistent { spec, active: None }))
}

/// MPI_Start.
pub fn start(r: &mut Request) -> Result<()> {
    let e = engine()?;
    let spec = {
        let st = e.lock();
        match st.req(*r).map(|x| &x.kind) {
            Some(ReqKind::Persistent { spec, active: None }) => spec.clone(),
            Some(ReqKind::Persistent { active: Some(_), .. }) => {
                return Err(MpiError::arg(ErrorClass::Request, "MPI_Start", "request", "the persistent request is already active"))
            }
            _ => return Err(MpiError::arg(ErrorClass::Request, "MPI_Start", "request", "not a persistent request")),
        }
    };
    // SAFETY: the persistent request's creator promised the buffer's validity
    // for as long as the request exists and is active.
    let inner = unsafe {
        match spec {
            PersistentSpec::Send { comm, buf, dest, tag, mode } => {
                isend_on(&comm, comm.context(), "MPI_Start", buf.addr as *const u8, buf.len, dest, tag, mode)?
            }
            PersistentSpec::Recv { comm, buf, source, tag } => {
                irecv_on(&comm, comm.context(), "MPI_Start", buf.addr as *mut u8, buf.len, source, tag)?
            }
        }
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
        return Err(MpiError::arg(ErrorClass::Request, "MPI_Grequest_complete", "request", "MPI_REQUEST_NULL"));
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

// ----- buffered-send space -------------------------------------------------------------

/// MPI_Buffer_attach. oxmpi copies buffered messages into memory of its own but
/// charges them against the attached size, so programs see MPI's limits.
///
/// # Safety
/// None needed by oxmpi (the memory is only accounted), but kept `unsafe` so
/// the C layer can hand the buffer over exactly as MPI defines it.
pub unsafe fn buffer_attach(buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    if st.bsend.attached.is_some() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Buffer_attach: a buffer is already attached"));
    }
    st.bsend.attached = Some((buf as usize, size));
    Ok(())
}

/// MPI_Buffer_detach: waits until buffered messages have left, then returns the
/// buffer's address and size.
pub fn buffer_detach() -> Result<(*mut u8, usize)> {
    let e = engine()?;
    if e.lock().bsend.attached.is_none() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Buffer_detach: no buffer is attached"));
    }
    e.wait_until(|st| (st.bsend.used == 0).then_some(()));
    let mut st = e.lock();
    let (addr, size) = st.bsend.attached.take().unwrap();
    Ok((addr as *mut u8, size))
}

/// MPI_Comm_attach_buffer (MPI-4.1): a buffer for the buffered sends on one
/// communicator (keyed by its point-to-point context), used before the
/// process's. Accounted like [`buffer_attach`]'s.
///
/// # Safety
/// As [`buffer_attach`]: oxmpi only accounts the memory.
pub unsafe fn comm_buffer_attach(comm: &Comm, buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    let pool = st.comm_bsend.entry(comm.context()).or_default();
    if pool.attached.is_some() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Comm_attach_buffer: a buffer is already attached to this communicator"));
    }
    pool.attached = Some((buf as usize, size));
    Ok(())
}

/// MPI_Comm_detach_buffer: waits until the communicator's buffered messages
/// have left, then returns its buffer's address and size.
pub fn comm_buffer_detach(comm: &Comm) -> Result<(*mut u8, usize)> {
    let e = engine()?;
    let ctx = comm.context();
    if e.lock().comm_bsend.get(&ctx).and_then(|p| p.attached).is_none() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Comm_detach_buffer: no buffer is attached to this communicator"));
    }
    e.wait_until(|st| (st.comm_bsend.get(&ctx).map_or(0, |p| p.used) == 0).then_some(()));
    let mut st = e.lock();
    let pool = st.comm_bsend.remove(&ctx).unwrap_or_default();
    let (addr, size) = pool.attached.unwrap_or((0, 0));
    Ok((addr as *mut u8, size))
}

/// The buffer key of session number `session` (`MPI_Session_attach_buffer`):
/// kept in the same table as communicators' buffers, at keys far above any
/// context id.
fn session_key(session: u32) -> u32 {
    u32::MAX - session
}

/// MPI_Session_attach_buffer (MPI-4.1): a buffer for the buffered sends on
/// every communicator made from session `session`'s groups that has none of
/// its own (see [`session_comm`]). Accounted like [`buffer_attach`]'s.
///
/// # Safety
/// As [`buffer_attach`]: oxmpi only accounts the memory.
pub unsafe fn session_buffer_attach(session: u32, buf: *mut u8, size: usize) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    let pool = st.comm_bsend.entry(session_key(session)).or_default();
    if pool.attached.is_some() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Session_attach_buffer: a buffer is already attached to this session"));
    }
    pool.attached = Some((buf as usize, size));
    Ok(())
}

/// MPI_Session_detach_buffer: waits until the session's buffered messages
/// have left, then returns its buffer's address and size.
pub fn session_buffer_detach(session: u32) -> Result<(*mut u8, usize)> {
    let e = engine()?;
    let key = session_key(session);
    if e.lock().comm_bsend.get(&key).and_then(|p| p.attached).is_none() {
        return Err(MpiError::new(ErrorClass::Buffer, "MPI_Session_detach_buffer: no buffer is attached to this session"));
    }
    e.wait_until(|st| (st.comm_bsend.get(&key).map_or(0, |p| p.used) == 0).then_some(()));
    let mut st = e.lock();
    let pool = st.comm_bsend.remove(&key).unwrap_or_default();
    let (addr, size) = pool.attached.unwrap_or((0, 0));
    Ok((addr as *mut u8, size))
}

/// Whether session `session` has a buffer attached.
pub fn session_buffer_attached(session: u32) -> Result<bool> {
    Ok(engine()?.lock().comm_bsend.get(&session_key(session)).is_some_and(|p| p.attached.is_some()))
}

/// MPI_Session_flush_buffer: waits until the session's buffer is empty.
pub fn session_buffer_flush(session: u32) -> Result<()> {
    let e = engine()?;
    let key = Some(session_key(session));
    e.wait_until(|st| (pool_used(st, key) == 0).then_some(()));
    Ok(())
}

/// MPI_Session_iflush_buffer.
pub fn session_buffer_iflush(session: u32) -> Result<Request> {
    let e = engine()?;
    let key = Some(session_key(session));
    Ok(e.with_progress(|st| st.start_task(Box::new(FlushTask { key }))))
}

/// Records that `comm` belongs to session `session` (its buffered sends may
/// use the session's buffer), or, with `None`, that it is gone (a recycled
/// context id must not inherit the session's buffer).
pub fn session_comm(comm: &Comm, session: Option<u32>) -> Result<()> {
    let e = engine()?;
    let mut st = e.lock();
    match session {
        Some(s) => st.bsend_alias.insert(comm.context(), session_key(s)),
        None => st.bsend_alias.remove(&comm.context()),
    };
    Ok(())
}

/// Whether a communicator has a buffer of its own attached (so that freeing it
/// can detach it first, and a recycled context id never inherits it).
pub fn comm_buffer_attached(comm: &Comm) -> Result<bool> {
    Ok(engine()?.lock().comm_bsend.get(&comm.context()).is_some_and(|p| p.attached.is_some()))
}

/// MPI_Buffer_flush / MPI_Comm_flush_buffer: waits until every message buffered
/// in the process's buffer (`None`) or a communicator's has been sent. The
/// buffer stays attached.
pub fn buffer_flush(comm: Option<&Comm>) -> Result<()> {
    let e = engine()?;
    let key = comm.map(|c| c.context());
    {
        let st = e.lock();
        let attached = match key {
            Some(ctx) => st.comm_bsend.get(&ctx).and_then(|p| p.attached).is_some(),
            None => st.bsend.attached.is_some(),
        };
        if !attached {
            // Nothing attached: nothing buffered, so nothing to wait for (MPI
            // allows flushing with no buffer attached).
            return Ok(());
        }
    }
    e.wait_until(|st| (pool_used(st, key) == 0).then_some(()));
    Ok(())
}

fn pool_used(st: &crate::engine::State, key: Option<u32>) -> usize {
    match key {
        Some(ctx) => st.comm_bsend.get(&ctx).map_or(0, |p| p.used),
        None => st.bsend.used,
    }
}

/// The non-blocking flush: a request that completes once the buffer is empty.
#[derive(Debug)]
struct FlushTask {
    key: Option<u32>,
}

impl crate::engine::Task for FlushTask {
    fn advance(&mut self, st: &mut crate::engine::State) -> Result<bool> {
        Ok(pool_used(st, self.key) == 0)
    }
}

/// MPI_Buffer_iflush / MPI_Comm_iflush_buffer.
pub fn buffer_iflush(comm: Option<&Comm>) -> Result<Request> {
    let e = engine()?;
    let key = comm.map(|c| c.context());
    Ok(e.with_progress(|st| st.start_task(Box::new(FlushTask { key }))))
}

/// Live requests in the engine (diagnostics and leak tests).
pub fn live_requests() -> Result<usize> {
    Ok(engine()?.lock().live_requests())
}

/// Messages waiting in the unexpected queue and their eager bytes held in memory.
pub fn unexpected_footprint() -> Result<(usize, usize)> {
    let e = engine()?;
    let st = e.lock();
    let bytes = st
        .unexp
        .values()
        .map(|m| match &m.body {
            crate::engine::Body::Eager { data, .. } => data.capacity(),
            _ => 0,
        })
        .sum();
    Ok((st.unexp.len(), bytes))
}

// ----- typed point-to-point ------------------------------------------------------------

use crate::datatype::Datatype;
use crate::engine::Unpack;

/// Checks that a datatype may be used for communication.
pub fn check_datatype(call: &str, arg: &str, dt: &Datatype) -> Result<()> {
    if !dt.is_committed() {
        return Err(MpiError::arg(ErrorClass::Type, call, arg, format!("the datatype {} is not committed (call MPI_Type_commit)", describe(dt))));
    }
    Ok(())
}

fn describe(dt: &Datatype) -> String {
    let n = dt.name();
    if n.is_empty() {
        "(a derived datatype)".to_string()
    } else {
        n
    }
}

/// Bytes of `count` elements of `dt`, or an MPI_ERR_COUNT error on overflow.
fn packed_len(call: &str, count: usize, dt: &Datatype) -> Result<usize> {
    count
        .checked_mul(dt.size())
        .ok_or_else(|| MpiError::arg(ErrorClass::Count, call, "count", format!("{count} elements of {} bytes overflow", dt.size())))
}

/// Starts a send of `count` elements of `dt` laid out at `buf`. Contiguous
/// types go straight from the user's memory; others are packed first.
///
/// # Safety
/// The memory `dt`'s type map covers for `count` elements at `buf` stays valid
/// and unmodified until the request completes.
pub unsafe fn isend_typed(comm: &Comm, buf: *const u8, count: usize, dt: &Datatype, dest: i32, tag: i32, mode: SendMode) -> Result<Request> {
    let call = send_call_name(mode, true);
    // SAFETY: forwarded contract.
    unsafe { send_typed_then(comm, call, buf, count, dt, dest, tag, mode, |_, r| r) }
}

/// # Safety
/// As [`isend_typed`].
#[allow(clippy::too_many_arguments)]
unsafe fn send_typed_then<T>(
    comm: &Comm,
    call: &str,
    buf: *const u8,
    count: usize,
    dt: &Datatype,
    dest: i32,
    tag: i32,
    mode: SendMode,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, count, dt)?;
    if dt.is_contiguous() || len == 0 {
        let start = buf.wrapping_offset(dt.true_lb());
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len.
        return unsafe { start_send_then(comm, comm.context(), call, start, len, dest, tag, mode, Some(dt), then) };
    }
    let e = engine()?;
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    // SAFETY: the caller promised the type map's memory at `buf` is readable.
    unsafe { dt.pack(buf, count, &mut packed) };
    let env = Envelope { context: comm.context(), source: comm.rank(), tag };
    e.with_state(|st| {
        let r = match peer {
            None => st.done_request(Status::EMPTY),
            Some(peer) => {
                let sig = st.sig_of(dt);
                st.start_send_packed(peer, env, packed, mode, sig)?
            }
        };
        Ok(then(st, r))
    })
    .map_err(|err| rename(err, call))
}

/// A blocking typed send.
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` is readable.
pub unsafe fn send_typed(comm: &Comm, buf: *const u8, count: usize, dt: &Datatype, dest: i32, tag: i32, mode: SendMode) -> Result<()> {
    let call = send_call_name(mode, false);
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, count, dt)?;
    if dt.is_contiguous() || len == 0 {
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len,
        // readable by the caller's contract.
        return unsafe { send_blocking(comm, call, buf.wrapping_offset(dt.true_lb()), len, dest, tag, mode, Some(dt)) };
    }
    // SAFETY: forwarded contract; we wait for completion before returning.
    let started = unsafe {
        send_typed_then(comm, call, buf, count, dt, dest, tag, mode, |st, mut r| match st.req(r) {
            Some(x) if x.done => Err(finish(st, &mut r)),
            _ => Ok(r),
        })?
    };
    match started {
        Err(done) => done.map(|_| ()),
        Ok(mut r) => wait_described(&mut r, call, &|| crate::diag::p2p(call, true, comm, dest, tag, count, Some(dt), len)).map(|_| ()),
    }
}

/// Posts a receive of up to `count` elements of `dt` into `buf`. The status's
/// `count_bytes` is in packed bytes (`dt.get_count` turns it into elements).
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` stays valid for writes,
/// and untouched otherwise, until the request completes.
pub unsafe fn irecv_typed(comm: &Comm, buf: *mut u8, count: usize, dt: &Datatype, source: i32, tag: i32) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { irecv_typed_named(comm, "MPI_Irecv", buf, count, dt, source, tag) }
}

/// # Safety
/// As [`irecv_typed`].
unsafe fn irecv_typed_named(comm: &Comm, call: &str, buf: *mut u8, count: usize, dt: &Datatype, source: i32, tag: i32) -> Result<Request> {
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, count, dt)?;
    if dt.is_contiguous() || len == 0 {
        let start = buf.wrapping_offset(dt.true_lb());
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len.
        return unsafe { irecv_sig(comm, comm.context(), call, start, len, source, tag, Some(dt)) };
    }
    let e = engine()?;
    check_source(call, comm, source)?;
    check_recv_tag(call, tag)?;
    if source == PROC_NULL {
        return Ok(e.lock().done_request(Status::EMPTY));
    }
    let temp = vec![0u8; len].into_boxed_slice();
    let raw = RawBuf::from_slice(&temp);
    let unpack = Box::new(Unpack { dt: dt.clone(), dst: buf as usize, count, temp });
    let pat = Pattern { context: comm.context(), source, tag };
    Ok(e.with_state(|st| {
        let sig = st.sig_of(dt);
        let r = st.post_recv_unpacking(raw, pat, Some(unpack), sig);
        st.progress();
        r
    }))
}

/// A blocking typed receive.
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` is writable and unaliased.
pub unsafe fn recv_typed(comm: &Comm, buf: *mut u8, count: usize, dt: &Datatype, source: i32, tag: i32) -> Result<Status> {
    check_datatype("MPI_Recv", "datatype", dt)?;
    let len = packed_len("MPI_Recv", count, dt)?;
    if dt.is_contiguous() || len == 0 {
        // A message already here completes the receive as it is posted: finish it
        // under the same lock instead of a second trip through the wait loop.
        let start = buf.wrapping_offset(dt.true_lb());
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len,
        // writable by the caller's contract; we wait for completion before returning.
        let started = unsafe {
            irecv_sig_then(comm, comm.context(), "MPI_Recv", start, len, source, tag, Some(dt), |st, mut r| match st.req(r) {
                Some(x) if x.done => Err(finish(st, &mut r)),
                _ => Ok(r),
            })?
        };
        return match started {
            Err(done) => done,
            Ok(mut r) => wait_described(&mut r, "MPI_Recv", &|| {
                crate::diag::p2p("MPI_Recv", false, comm, source, tag, count, Some(dt), count.saturating_mul(dt.size()))
            }),
        };
    }
    // SAFETY: forwarded contract; we wait for completion before returning.
    let mut r = unsafe { irecv_typed_named(comm, "MPI_Recv", buf, count, dt, source, tag)? };
    wait_described(&mut r, "MPI_Recv", &|| crate::diag::p2p("MPI_Recv", false, comm, source, tag, count, Some(dt), count.saturating_mul(dt.size())))
}

/// Receives a message taken by [`mprobe`] into `count` elements of `dt`.
///
/// # Safety
/// As [`irecv_typed`].
pub unsafe fn imrecv_typed(buf: *mut u8, count: usize, dt: &Datatype, msg: &mut Message) -> Result<Request> {
    check_datatype("MPI_Imrecv", "datatype", dt)?;
    let len = packed_len("MPI_Imrecv", count, dt)?;
    if dt.is_contiguous() || len == 0 {
        // SAFETY: contiguous: the covered memory is exactly start..start+len.
        return unsafe { imrecv_sig(buf.wrapping_offset(dt.true_lb()), len, msg, Some(dt)) };
    }
    let e = engine()?;
    let m = *msg;
    if m == Message::NO_PROC {
        *msg = Message::NULL;
        return Ok(e.lock().done_request(Status::EMPTY));
    }
    let mut st = e.lock();
    if m == Message::NULL || !st.unexp.contains_key(&m.0) {
        return Err(MpiError::arg(ErrorClass::Request, "MPI_Mrecv", "message", "not a message returned by MPI_Mprobe/MPI_Improbe"));
    }
    *msg = Message::NULL;
    let temp = vec![0u8; len].into_boxed_slice();
    let raw = RawBuf::from_slice(&temp);
    let unpack = Box::new(Unpack { dt: dt.clone(), dst: buf as usize, count, temp });
    let sig = st.sig_of(dt);
    Ok(st.recv_message_unpacking(raw, m.0, Some(unpack), sig))
}
