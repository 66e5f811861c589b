//! Typed point-to-point: `count` elements of a datatype; contiguous types go
//! straight from the user's memory, others are packed or unpacked through a copy.

use super::*;
use crate::buf::{RecvBuf, SendBuf};
use crate::engine::Unpack;

// ----- typed point-to-point ------------------------------------------------------------

/// Checks that a datatype may be used for communication.
pub fn check_datatype(call: &str, arg: &str, dt: &Datatype) -> Result<()> {
    if !dt.is_committed() {
        return Err(MpiError::arg(
            ErrorClass::Type,
            call,
            arg,
            format!(
                "the datatype {} is not committed (call MPI_Type_commit)",
                describe(dt)
            ),
        ));
    }
    Ok(())
}

pub(super) fn describe(dt: &Datatype) -> String {
    let n = dt.name();
    if n.is_empty() {
        "(a derived datatype)".to_string()
    } else {
        n
    }
}

/// Bytes of `count` elements of `dt`, or an MPI_ERR_COUNT error on overflow.
pub(super) fn packed_len(call: &str, count: usize, dt: &Datatype) -> Result<usize> {
    count.checked_mul(dt.size()).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Count,
            call,
            "count",
            format!("{count} elements of {} bytes overflow", dt.size()),
        )
    })
}

/// The datatype of a descriptor for calls that always need one (raw bytes: MPI_BYTE).
pub(super) fn dt_or_byte(dt: Option<&Datatype>) -> &Datatype {
    dt.unwrap_or_else(|| Datatype::predefined_ref(crate::datatype::Primitive::Byte))
}

/// Starts a send of the elements `buf` describes (raw bytes as MPI_BYTE), lent for
/// `'static`: valid until the request completes. Contiguous types go straight from
/// the user's memory; others are packed first.
pub(crate) fn isend_typed_raw(
    comm: &Comm,
    buf: SendBuf<'static, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    let call = send_call_name(mode, true);
    send_typed_then(comm, call, buf, dest, tag, mode, |_, r| r)
}

/// [`isend_typed_raw`], running `then` on the new request under the same lock. `buf`
/// must outlive the request: `'static`, or borrowed by a blocking caller that waits.
#[allow(clippy::too_many_arguments)]
pub(super) fn send_typed_then<T>(
    comm: &Comm,
    call: &str,
    buf: SendBuf<'_, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
    then: impl FnOnce(&mut crate::engine::State, Request) -> T,
) -> Result<T> {
    let dt = dt_or_byte(buf.datatype());
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, buf.count(), dt)?;
    if let Some(span) = buf.span() {
        return start_send_then(
            comm,
            comm.context(),
            call,
            span,
            dest,
            tag,
            mode,
            Some(dt),
            then,
        );
    }
    let e = engine()?;
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    crate::buf::pack(buf, &mut packed, &mut 0)?;
    let env = Envelope {
        context: comm.context(),
        source: comm.rank(),
        tag,
    };
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
pub(crate) fn send_typed_raw(
    comm: &Comm,
    buf: SendBuf<'_, '_>,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<()> {
    let call = send_call_name(mode, false);
    let dt = dt_or_byte(buf.datatype());
    check_datatype(call, "datatype", dt)?;
    let count = buf.count();
    let len = packed_len(call, count, dt)?;
    if let Some(data) = buf.span_bytes() {
        return send_blocking(comm, call, data, dest, tag, mode, Some(dt));
    }
    // `buf` is borrowed for the call, and we wait for completion before returning.
    let started = send_typed_then(comm, call, buf, dest, tag, mode, |st, mut r| {
        match st.req(r) {
            Some(x) if x.done => Err(finish(st, &mut r)),
            _ => Ok(r),
        }
    })?;
    match started {
        Err(done) => done.map(|_| ()),
        Ok(mut r) => wait_described(&mut r, call, &|| {
            crate::diag::p2p(call, true, comm, dest, tag, count, Some(dt), len)
        })
        .map(|_| ()),
    }
}

/// Posts a receive of up to the elements `buf` describes (raw bytes as MPI_BYTE),
/// lent for `'static`: ours alone until the request completes. The status's
/// `count_bytes` is in packed bytes (`dt.get_count` turns it into elements).
pub(crate) fn irecv_typed_raw(
    comm: &Comm,
    buf: RecvBuf<'static, '_>,
    source: i32,
    tag: i32,
) -> Result<Request> {
    irecv_typed_named(comm, "MPI_Irecv", buf, source, tag)
}

/// [`irecv_typed_raw`] named `call`. `buf` must outlive the request: `'static`, or
/// borrowed by a blocking caller that waits.
pub(super) fn irecv_typed_named(
    comm: &Comm,
    call: &str,
    buf: RecvBuf<'_, '_>,
    source: i32,
    tag: i32,
) -> Result<Request> {
    let dt = dt_or_byte(buf.datatype());
    check_datatype(call, "datatype", dt)?;
    let count = buf.count();
    let len = packed_len(call, count, dt)?;
    if let Some(span) = buf.span() {
        return irecv_sig(comm, comm.context(), call, span, source, tag, Some(dt));
    }
    let e = engine()?;
    check_source(call, comm, source)?;
    check_recv_tag(call, tag)?;
    if source == PROC_NULL {
        return Ok(e.lock().done_request(Status::EMPTY));
    }
    let temp = vec![0u8; len].into_boxed_slice();
    let raw = RawBuf::from_slice(&temp);
    let unpack = Box::new(Unpack {
        dst: buf.unpack_dst(),
        temp,
    });
    let pat = Pattern {
        context: comm.context(),
        source,
        tag,
    };
    Ok(e.with_state(|st| {
        let sig = st.sig_of(dt);
        let r = st.post_recv_unpacking(raw, pat, Some(unpack), sig);
        st.progress();
        r
    }))
}

/// A blocking typed receive.
pub(crate) fn recv_typed_raw(
    comm: &Comm,
    buf: RecvBuf<'_, '_>,
    source: i32,
    tag: i32,
) -> Result<Status> {
    let dt = dt_or_byte(buf.datatype());
    check_datatype("MPI_Recv", "datatype", dt)?;
    let count = buf.count();
    packed_len("MPI_Recv", count, dt)?;
    let desc = || {
        crate::diag::p2p(
            "MPI_Recv",
            false,
            comm,
            source,
            tag,
            count,
            Some(dt),
            count.saturating_mul(dt.size()),
        )
    };
    if let Some(span) = buf.span() {
        // A message already here completes the receive as it is posted: finish it
        // under the same lock instead of a second trip through the wait loop.
        // `buf` is borrowed for the call, and we wait for completion before returning.
        let started = irecv_sig_then(
            comm,
            comm.context(),
            "MPI_Recv",
            span,
            source,
            tag,
            Some(dt),
            |st, mut r| match st.req(r) {
                Some(x) if x.done => Err(finish(st, &mut r)),
                _ => Ok(r),
            },
        )?;
        return match started {
            Err(done) => done,
            Ok(mut r) => wait_described(&mut r, "MPI_Recv", &desc),
        };
    }
    // `buf` is borrowed for the call, and we wait for completion before returning.
    let mut r = irecv_typed_named(comm, "MPI_Recv", buf, source, tag)?;
    wait_described(&mut r, "MPI_Recv", &desc)
}

/// Receives a message taken by [`mprobe`] into the elements `buf` describes, lent
/// for `'static`.
pub(crate) fn imrecv_typed_raw(buf: RecvBuf<'static, '_>, msg: &mut Message) -> Result<Request> {
    let dt = dt_or_byte(buf.datatype());
    check_datatype("MPI_Imrecv", "datatype", dt)?;
    let count = buf.count();
    let len = packed_len("MPI_Imrecv", count, dt)?;
    if let Some(span) = buf.span() {
        return imrecv_sig(span, msg, Some(dt));
    }
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
    let temp = vec![0u8; len].into_boxed_slice();
    let raw = RawBuf::from_slice(&temp);
    let unpack = Box::new(Unpack {
        dst: buf.unpack_dst(),
        temp,
    });
    let sig = st.sig_of(dt);
    Ok(st.recv_message_unpacking(raw, m.0, Some(unpack), sig))
}
