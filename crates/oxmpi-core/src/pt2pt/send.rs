//! Sends and receives of contiguous bytes: the immediate forms the engine starts,
//! and the blocking ones with their latency fast paths.

use super::*;

/// Starts a send of `len` bytes at `buf` on the communicator's point-to-point
/// context.
///
/// `buf` is valid until the request completes (see [`RawBuf::from_ptr`]).
pub(crate) fn isend_raw(
    comm: &Comm,
    buf: RawBuf,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    isend_on(
        comm,
        comm.context(),
        send_call_name(mode, true),
        buf,
        dest,
        tag,
        mode,
    )
}

/// [`isend_raw`] on an explicit context (collectives use `comm.coll_context()`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn isend_on(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    start_send_then(comm, context, call, buf, dest, tag, mode, None, |_, r| r)
}

/// Starts a send and runs `then` on the new request under the same lock;
/// `dt`, when the bytes are elements of a datatype, gives their type signature.
#[allow(clippy::too_many_arguments)]
pub(super) fn start_send_then<T>(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    dest: i32,
    tag: i32,
    mode: SendMode,
    dt: Option<&Datatype>,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    let e = engine()?;
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let env = Envelope {
        context,
        source: comm.rank(),
        tag,
    };
    e.with_state(|st| {
        let r = match peer {
            None => st.done_request(Status::EMPTY),
            Some(peer) => {
                let sig = dt.map_or(0, |dt| st.sig_of(dt));
                st.start_send_sig(peer, env, buf, mode, sig)?
            }
        };
        Ok(then(st, r))
    })
    .map_err(|err| rename(err, call))
}

/// Errors raised deep in the engine name a generic call; give them the caller's.
pub(super) fn rename(mut err: MpiError, call: &str) -> MpiError {
    for generic in ["MPI_Send:", "MPI_Bsend:", "MPI_Recv:"] {
        if let Some(rest) = err.message.strip_prefix(generic) {
            err.message = format!("{call}:{rest}");
        }
    }
    err
}

/// Posts a receive of at most `len` bytes into `buf`.
/// `buf` is valid, and ours alone, until the request completes (see [`RawBuf::from_ptr`]).
pub(crate) fn irecv_raw(comm: &Comm, buf: RawBuf, source: i32, tag: i32) -> Result<Request> {
    irecv_on(comm, comm.context(), "MPI_Irecv", buf, source, tag)
}

/// [`irecv_raw`] on an explicit context.
pub(crate) fn irecv_on(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    source: i32,
    tag: i32,
) -> Result<Request> {
    irecv_sig(comm, context, call, buf, source, tag, None)
}

/// [`irecv_on`] of elements of `dt` (for the type-signature check).
#[allow(clippy::too_many_arguments)]
pub(super) fn irecv_sig(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    source: i32,
    tag: i32,
    dt: Option<&Datatype>,
) -> Result<Request> {
    // No progress step after posting: an immediate receive only posts (the
    // wait or test that follows polls, and a window of receives is drained in
    // one step by MPI_Waitall). Polling here cost every MPI_Irecv a look at
    // every ring, mostly in vain when the receives are posted ahead of the
    // messages (bench/PROFILE.md, p2p19).
    irecv_post(comm, context, call, buf, source, tag, dt, false, |_, r| r)
}

/// [`irecv_sig`], running `then` on the new request under the same lock.
#[allow(clippy::too_many_arguments)]
pub(super) fn irecv_sig_then<T>(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    source: i32,
    tag: i32,
    dt: Option<&Datatype>,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    irecv_post(comm, context, call, buf, source, tag, dt, true, then)
}

/// Posts a receive, then (`poll`) makes one progress step before `then` runs
/// under the same lock: a blocking receive whose message is already in the
/// ring then finds it complete at once.
#[allow(clippy::too_many_arguments)]
fn irecv_post<T>(
    comm: &Comm,
    context: u32,
    call: &str,
    buf: RawBuf,
    source: i32,
    tag: i32,
    dt: Option<&Datatype>,
    poll: bool,
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
    let pat = Pattern {
        context,
        source,
        tag,
    };
    // Post first, then poll: a message already in the ring then lands straight in
    // the receive buffer instead of taking the unexpected-queue detour.
    Ok(e.with_state(|st| {
        let sig = dt.map_or(0, |dt| st.sig_of(dt));
        let r = st.post_recv_unpacking(buf, pat, None, sig);
        if poll {
            st.progress();
        }
        then(st, r)
    }))
}

/// A blocking send (MPI_Send / Ssend / Rsend / Bsend).
pub fn send(comm: &Comm, buf: &[u8], dest: i32, tag: i32, mode: SendMode) -> Result<()> {
    send_blocking(
        comm,
        send_call_name(mode, false),
        buf,
        dest,
        tag,
        mode,
        None,
    )
}

/// A blocking send of the contiguous bytes `data` (elements of `dt`, if given,
/// for the signature check).
pub(super) fn send_blocking(
    comm: &Comm,
    call: &'static str,
    data: &[u8],
    dest: i32,
    tag: i32,
    mode: SendMode,
    dt: Option<&Datatype>,
) -> Result<()> {
    let len = data.len();
    // Small standard sends go straight into the peer's ring when nothing is queued
    // before them: no request to create, wait on and free (the latency path).
    if matches!(mode, SendMode::Standard | SendMode::Ready)
        && len <= crate::transport::shm::CELL_PAYLOAD
    {
        let e = engine()?;
        check_send_tag(call, tag)?;
        let Some(peer) = check_dest(call, comm, dest)? else {
            return Ok(());
        };
        let env = Envelope {
            context: comm.context(),
            source: comm.rank(),
            tag,
        };
        if e.with_state(|st| {
            let sig = dt.map_or(0, |dt| st.sig_of(dt));
            st.try_send_now(peer, env, data, sig)
        }) {
            return Ok(());
        }
    }
    let desc = || {
        crate::diag::p2p(
            call,
            true,
            comm,
            dest,
            tag,
            dt.map_or(len, |d| len.checked_div(d.size()).unwrap_or(0)),
            dt,
            len,
        )
    };
    // An eager send that fit in the ring is complete at once: finish it under the
    // same lock instead of a second trip through the wait loop.
    // `data` is borrowed for the call, and we wait for completion before returning.
    let started = start_send_then(
        comm,
        comm.context(),
        call,
        RawBuf::from_slice(data),
        dest,
        tag,
        mode,
        dt,
        |st, mut r| match st.req(r) {
            Some(x) if x.done => Err(finish(st, &mut r)),
            _ => Ok(r),
        },
    )?;
    match started {
        Err(done) => done.map(|_| ()),
        Ok(mut r) => wait_described(&mut r, call, &desc).map(|_| ()),
    }
}

/// A blocking receive (MPI_Recv): the C ABI's `MPI_Recv` path (one engine lock for
/// a message already here, none of a request's for one already queued).
pub fn recv(comm: &Comm, buf: &mut [u8], source: i32, tag: i32) -> Result<Status> {
    super::fast::recv_blocking(comm, buf, source, tag, None)
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
    // Both buffers are borrowed until both requests completed below.
    let raw = RawBuf::from_mut_slice(recvbuf);
    let mut rr = irecv_on(comm, comm.context(), "MPI_Sendrecv", raw, source, recvtag)?;
    // `sendbuf` is a shared borrow of `sendbuf.len()` bytes that
    // outlives the send request: it is waited for (or, if starting it failed,
    // never started) before this function returns.
    let sent = isend_on(
        comm,
        comm.context(),
        "MPI_Sendrecv",
        RawBuf::from_slice(sendbuf),
        dest,
        sendtag,
        SendMode::Standard,
    );
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
pub fn sendrecv_replace(
    comm: &Comm,
    buf: &mut [u8],
    dest: i32,
    sendtag: i32,
    source: i32,
    recvtag: i32,
) -> Result<Status> {
    let out = buf.to_vec();
    sendrecv(comm, &out, dest, sendtag, buf, source, recvtag)
}
