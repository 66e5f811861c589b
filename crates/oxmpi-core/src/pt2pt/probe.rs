//! Probes and matched probes (MPI_Mprobe / MPI_Imrecv).

use super::*;

// ----- probes ---------------------------------------------------------------------

/// A message taken out of matching by [`mprobe`], to be received by [`mrecv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message(pub(super) u64);

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

pub(super) fn probe_status(st: &crate::engine::State, id: u64) -> Status {
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
    let pat = Pattern {
        context,
        source,
        tag,
    };
    Ok(e.with_progress_test(Option::is_some, |st| {
        st.matcher
            .peek(&pat)
            .map(|(_, id)| *id)
            .map(|id| probe_status(st, id))
    }))
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
    Ok(e.wait_until_described(
        &|| crate::diag::probe("MPI_Probe", comm, source, tag),
        |st| {
            st.matcher
                .peek(&pat)
                .map(|(_, id)| *id)
                .map(|id| probe_status(st, id))
        },
    ))
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
    Ok(e.with_progress_test(Option::is_some, |st| {
        st.matcher
            .match_posted(&pat)
            .map(|(_, id)| (Message(id), probe_status(st, id)))
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
    Ok(e.wait_until_described(
        &|| crate::diag::probe("MPI_Mprobe", comm, source, tag),
        |st| {
            st.matcher
                .match_posted(&pat)
                .map(|(_, id)| (Message(id), probe_status(st, id)))
        },
    ))
}

/// MPI_Imrecv: receives a message from [`mprobe`] into `buf` (valid, and ours
/// alone, until the request completes); `msg` becomes NULL.
pub(crate) fn imrecv_raw(buf: RawBuf, msg: &mut Message) -> Result<Request> {
    imrecv_sig(buf, msg, None)
}

/// [`imrecv`] of elements of `dt` (for the type-signature check).
pub(super) fn imrecv_sig(buf: RawBuf, msg: &mut Message, dt: Option<&Datatype>) -> Result<Request> {
    let e = engine()?;
    let m = *msg;
    if m == Message::NO_PROC {
        *msg = Message::NULL;
        return Ok(e.lock().done_request(Status::EMPTY));
    }
    let mut st = e.lock();
    if m == Message::NULL || !st.unexp.contains_key(&m.0) {
        return Err(MpiError::arg(
            ErrorClass::Request,
            "MPI_Mrecv",
            "message",
            "not a message returned by MPI_Mprobe/MPI_Improbe",
        ));
    }
    *msg = Message::NULL;
    let sig = dt.map_or(0, |dt| st.sig_of(dt));
    Ok(st.recv_message_unpacking(buf, m.0, None, sig))
}

/// MPI_Mrecv.
pub fn mrecv(buf: &mut [u8], msg: &mut Message) -> Result<Status> {
    // `buf` is exclusively borrowed until the wait below completes.
    let mut r = imrecv_raw(RawBuf::from_mut_slice(buf), msg)?;
    wait_named(&mut r, "MPI_Mrecv")
}
