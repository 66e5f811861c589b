//! MPI_Sendrecv's immediate forms: a send and a receive as one request.

use super::*;
use crate::buf::{RecvBuf, SendBuf};

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

/// MPI_Isendrecv: the elements `sendbuf` describes to `dest` and up to those
/// `recvbuf` describes from `source` (raw bytes as MPI_BYTE), as one request whose
/// status is the receive's. Both are lent for `'static`: valid until it completes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn isendrecv_raw(
    comm: &Comm,
    sendbuf: SendBuf<'static, '_>,
    dest: i32,
    sendtag: i32,
    recvbuf: RecvBuf<'static, '_>,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    const CALL: &str = "MPI_Isendrecv";
    let recv = irecv_typed_named(comm, CALL, recvbuf, source, recvtag)?;
    let send = send_typed_then(
        comm,
        CALL,
        sendbuf,
        dest,
        sendtag,
        SendMode::Standard,
        |_, r| r,
    );
    pair(CALL, recv, send, None)
}

/// MPI_Isendrecv_replace: sends the elements `buf` describes (raw bytes as
/// MPI_BYTE) and receives as many into it, as one request; `buf` is lent for
/// `'static`. The outgoing data is packed at the call, so the receive may land
/// at once.
pub(crate) fn isendrecv_replace_raw(
    comm: &Comm,
    buf: RecvBuf<'static, '_>,
    dest: i32,
    sendtag: i32,
    source: i32,
    recvtag: i32,
) -> Result<Request> {
    const CALL: &str = "MPI_Isendrecv_replace";
    let dt = dt_or_byte(buf.datatype());
    check_datatype(CALL, "datatype", dt)?;
    let len = packed_len(CALL, buf.count(), dt)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    crate::buf::pack(buf.as_send(), &mut packed, &mut 0)?;
    let recv = irecv_typed_named(comm, CALL, buf, source, recvtag)?;
    // `packed` moves into the task below, which keeps it until the send is done (a
    // boxed slice's bytes do not move with the box).
    let send = start_send_then(
        comm,
        comm.context(),
        CALL,
        RawBuf::from_slice(&packed),
        dest,
        sendtag,
        SendMode::Standard,
        None,
        |_, r| r,
    );
    pair(CALL, recv, send, Some(packed))
}
