//! Typed point-to-point: `count` elements of a datatype; contiguous types go
//! straight from the user's memory, others are packed or unpacked through a copy.

use super::*;
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

/// Starts a send of `count` elements of `dt` laid out at `buf`. Contiguous
/// types go straight from the user's memory; others are packed first.
///
/// # Safety
/// The memory `dt`'s type map covers for `count` elements at `buf` stays valid
/// and unmodified until the request completes.
pub(crate) unsafe fn isend_typed_raw(
    comm: &Comm,
    buf: *const u8,
    count: usize,
    dt: &Datatype,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<Request> {
    let call = send_call_name(mode, true);
    // SAFETY: forwarded contract.
    unsafe { send_typed_then(comm, call, buf, count, dt, dest, tag, mode, |_, r| r) }
}

/// # Safety
/// As [`isend_typed_raw`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn send_typed_then<T>(
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
        return unsafe {
            start_send_then(
                comm,
                comm.context(),
                call,
                start,
                len,
                dest,
                tag,
                mode,
                Some(dt),
                then,
            )
        };
    }
    let e = engine()?;
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let mut packed = vec![0u8; len].into_boxed_slice();
    // SAFETY: the caller promised the type map's memory at `buf` is readable.
    unsafe { dt.pack(buf, count, &mut packed) };
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
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` is readable.
pub(crate) unsafe fn send_typed_raw(
    comm: &Comm,
    buf: *const u8,
    count: usize,
    dt: &Datatype,
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<()> {
    let call = send_call_name(mode, false);
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, count, dt)?;
    if dt.is_contiguous() || len == 0 {
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len, readable by the caller's contract.
        let data = unsafe { RawBuf::from_ptr(buf.wrapping_offset(dt.true_lb()), len).as_slice() };
        return send_blocking(comm, call, data, dest, tag, mode, Some(dt));
    }
    // SAFETY: forwarded contract; we wait for completion before returning.
    let started = unsafe {
        send_typed_then(
            comm,
            call,
            buf,
            count,
            dt,
            dest,
            tag,
            mode,
            |st, mut r| match st.req(r) {
                Some(x) if x.done => Err(finish(st, &mut r)),
                _ => Ok(r),
            },
        )?
    };
    match started {
        Err(done) => done.map(|_| ()),
        Ok(mut r) => wait_described(&mut r, call, &|| {
            crate::diag::p2p(call, true, comm, dest, tag, count, Some(dt), len)
        })
        .map(|_| ()),
    }
}

/// Posts a receive of up to `count` elements of `dt` into `buf`. The status's
/// `count_bytes` is in packed bytes (`dt.get_count` turns it into elements).
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` stays valid for writes,
/// and untouched otherwise, until the request completes.
pub(crate) unsafe fn irecv_typed_raw(
    comm: &Comm,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    source: i32,
    tag: i32,
) -> Result<Request> {
    // SAFETY: forwarded contract.
    unsafe { irecv_typed_named(comm, "MPI_Irecv", buf, count, dt, source, tag) }
}

/// # Safety
/// As [`irecv_typed_raw`].
pub(super) unsafe fn irecv_typed_named(
    comm: &Comm,
    call: &str,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    source: i32,
    tag: i32,
) -> Result<Request> {
    check_datatype(call, "datatype", dt)?;
    let len = packed_len(call, count, dt)?;
    if dt.is_contiguous() || len == 0 {
        let start = buf.wrapping_offset(dt.true_lb());
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len.
        return unsafe {
            irecv_sig(
                comm,
                comm.context(),
                call,
                start,
                len,
                source,
                tag,
                Some(dt),
            )
        };
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
        dt: dt.clone(),
        dst: buf as usize,
        count,
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
///
/// # Safety
/// The memory `dt` covers for `count` elements at `buf` is writable and unaliased.
pub(crate) unsafe fn recv_typed_raw(
    comm: &Comm,
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    source: i32,
    tag: i32,
) -> Result<Status> {
    check_datatype("MPI_Recv", "datatype", dt)?;
    let len = packed_len("MPI_Recv", count, dt)?;
    if dt.is_contiguous() || len == 0 {
        // A message already here completes the receive as it is posted: finish it
        // under the same lock instead of a second trip through the wait loop.
        let start = buf.wrapping_offset(dt.true_lb());
        // SAFETY: for a contiguous type the covered memory is exactly start..start+len, writable by the caller's contract; we wait for completion before returning.
        let started = unsafe {
            irecv_sig_then(
                comm,
                comm.context(),
                "MPI_Recv",
                start,
                len,
                source,
                tag,
                Some(dt),
                |st, mut r| match st.req(r) {
                    Some(x) if x.done => Err(finish(st, &mut r)),
                    _ => Ok(r),
                },
            )?
        };
        return match started {
            Err(done) => done,
            Ok(mut r) => wait_described(&mut r, "MPI_Recv", &|| {
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
            }),
        };
    }
    // SAFETY: forwarded contract; we wait for completion before returning.
    let mut r = unsafe { irecv_typed_named(comm, "MPI_Recv", buf, count, dt, source, tag)? };
    wait_described(&mut r, "MPI_Recv", &|| {
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
    })
}

/// Receives a message taken by [`mprobe`] into `count` elements of `dt`.
///
/// # Safety
/// As [`irecv_typed_raw`].
pub(crate) unsafe fn imrecv_typed_raw(
    buf: *mut u8,
    count: usize,
    dt: &Datatype,
    msg: &mut Message,
) -> Result<Request> {
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
        dt: dt.clone(),
        dst: buf as usize,
        count,
        temp,
    });
    let sig = st.sig_of(dt);
    Ok(st.recv_message_unpacking(raw, m.0, Some(unpack), sig))
}
