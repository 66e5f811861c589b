//! MPI_Sendrecv's immediate forms: a send and a receive as one request.

use super::*;

// ----- MPI_Isendrecv ------------------------------------------------------------------

/// A send and a receive reported as one request: complete when both are,
/// with the receive's status; the first error fails it.
#[derive(Debug)]
pub(super) struct SendRecv {
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
        if let Some(err) = recv
            .as_ref()
            .and_then(|e| e.error.as_deref().cloned())
            .or_else(|| send.as_ref().and_then(|e| e.error.as_deref().cloned()))
        {
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
pub(super) fn pair(
    call: &str,
    recv: Request,
    send: Result<Request>,
    packed: Option<Box<[u8]>>,
) -> Result<Request> {
    let send = match send {
        Ok(s) => s,
        Err(err) => {
            let mut rr = recv;
            let _ = cancel(&rr);
            let _ = wait(&mut rr);
            return Err(rename(err, call));
        }
    };
    let task = SendRecv {
        recv,
        send,
        _packed: packed,
        status: Status::EMPTY,
    };
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
pub(crate) unsafe fn isendrecv_raw(
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
    let recv =
        // SAFETY: forwarded contract.
        unsafe { irecv_typed_named(comm, CALL, recvbuf, recvcount, recvtype, source, recvtag)? };
    // SAFETY: forwarded contract.
    let send = unsafe {
        send_typed_then(
            comm,
            CALL,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            SendMode::Standard,
            |_, r| r,
        )
    };
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
pub(crate) unsafe fn isendrecv_replace_raw(
    comm: &Comm,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    dest: i32,
    sendtag: i32,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    const CALL: &str = "MPI_Isendrecv_replace";
    check_datatype(CALL, "datatype", dt)?;
    let len = packed_len(CALL, count, dt)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    // SAFETY: the caller's buffer holds `count` elements of `dt`.
    unsafe { dt.pack(buf, count, &mut packed) };
    // SAFETY: forwarded contract.
    let recv = unsafe { irecv_typed_named(comm, CALL, buf, count, dt, source, recvtag)? };
    // SAFETY: `packed` moves into the task below, which keeps it until the send is done (a boxed slice's bytes do not move with the box).
    let send = unsafe {
        start_send_then(
            comm,
            comm.context(),
            CALL,
            packed.as_ptr(),
            packed.len(),
            dest,
            sendtag,
            SendMode::Standard,
            None,
            |_, r| r,
        )
    };
    pair(CALL, recv, send, Some(packed))
}
