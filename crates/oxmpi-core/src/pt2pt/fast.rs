//! Lean entry points for the C ABI's hottest point-to-point calls (MPI_Isend,
//! MPI_Irecv, MPI_Send, MPI_Recv in standard mode) with a predefined contiguous
//! datatype, which the C layer recognizes from its handles without a lookup.
//!
//! They run the same checks (same errors, same messages) and the same engine
//! calls as the typed paths of `typed.rs` and `send.rs`, minus the layers a
//! predefined type does not need: the descriptor, the commit and overflow
//! checks, the contiguity test, the generic `then` closures. Per small message
//! those layers cost more than the ring push itself (bench/PROFILE.md, p2p18).

use super::*;
use crate::engine::Posted;
use crate::runtime::Engine;

/// MPI_Isend (standard mode) of the bytes `data`, elements of the predefined
/// contiguous datatype `dt`. Borrowed for `'static` (C memory, lent until the
/// request completes: see `buf::Region`), so no scope need keep it.
pub fn isend_contig(
    comm: &Comm,
    data: &'static [u8],
    dt: &Datatype,
    dest: i32,
    tag: i32,
) -> Result<Request> {
    isend_contig_on(engine()?, comm, data, dt, dest, tag)
}

/// [`isend_contig`] on the running engine `e` that the caller looked up
/// already (the C layer's `fast_p2p` does, to find MPI_COMM_WORLD): one engine
/// look-up a message instead of two (bench/PROFILE.md, rrate37). Not
/// `#[inline]`: instantiated in the C layer's crate, the engine's lock and
/// `sig_of` stayed calls there (no LTO), +13 Ir a message.
pub fn isend_contig_on(
    e: &Engine,
    comm: &Comm,
    data: &'static [u8],
    dt: &Datatype,
    dest: i32,
    tag: i32,
) -> Result<Request> {
    // `data` is borrowed for 'static: it outlives the request.
    start_send_contig(
        e,
        "MPI_Isend",
        comm,
        RawBuf::from_slice(data),
        dest,
        tag,
        SendMode::Standard,
        Some(dt),
    )
    .map(|(r, _)| r)
}

/// The immediate send of the contiguous bytes `data` ([`isend_contig`] and
/// [`isend_bytes`]): the tag and destination checks, then the engine's start, with
/// the signature of `dt` (none for the Rust API's bytes); errors name `call`.
/// Also whether the engine let go of `data` already
/// ([`State::start_send_let_go`](crate::engine::State::start_send_let_go)); a
/// standard-mode one written whole into a ring is [`Request::DONE`]
/// ([`State::start_send_entryless`](crate::engine::State::start_send_entryless)).
/// Inlined into both: they are the message-rate path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn start_send_contig(
    e: &Engine,
    call: &'static str,
    comm: &Comm,
    data: RawBuf,
    dest: i32,
    tag: i32,
    mode: SendMode,
    dt: Option<&Datatype>,
) -> Result<(Request, bool)> {
    check_send_tag(call, tag)?;
    let peer = check_dest(call, comm, dest)?;
    let env = Envelope {
        context: comm.context(),
        source: comm.rank(),
        tag,
    };
    e.with_state_inlined(|st| match peer {
        // Nothing to send: no memory held.
        None => Ok((st.done_request(Status::EMPTY), true)),
        Some(peer) => {
            let sig = dt.map_or(0, |dt| st.sig_of(dt));
            st.start_send_entryless(peer, env, data, mode, sig)
        }
    })
    .map_err(|err| rename(err, call))
}

/// The safe Rust API's immediate send (`mode`) of the contiguous bytes `data`,
/// borrowed for `'a`: the request is handed to `keeper` (which keeps `'a` from ending
/// before it completes, as [`crate::buf::start_kept`] hands it) and comes back as the
/// [`Handle`](crate::buf::Handle) for `'a`. The same checks, errors and engine call
/// as [`isend`] of a [`SendBuf`](crate::buf::SendBuf) of bytes (`isend_raw`), without
/// the descriptor, the scope of the start closure and the generic `then` layers:
/// [`isend_contig`]'s path for the Rust API (bench/PROFILE.md, rrate28). A send the
/// engine completed at once and holds none of `data` for (a whole message written
/// into a ring) is not handed to `keeper`: nothing of `'a` is left to keep, and a
/// scope's end has nothing to wait for (rrate29; forgotten, such a request stays the
/// engine's, as a forgotten `MPI_Request` does in C).
#[inline]
pub fn isend_bytes<'a>(
    keeper: &impl crate::buf::BufScope<'a>,
    comm: &Comm,
    data: &'a [u8],
    dest: i32,
    tag: i32,
    mode: SendMode,
) -> Result<crate::buf::Handle<'a>> {
    // `data` is borrowed for 'a, which `keeper` keeps from ending before the
    // request completes, unless the engine already let go of it.
    let (r, let_go) = start_send_contig(
        engine()?,
        send_call_name(mode, true),
        comm,
        RawBuf::from_slice(data),
        dest,
        tag,
        mode,
        None,
    )?;
    if !let_go {
        keeper.enter(r);
    }
    Ok(crate::buf::Handle::adopt(r))
}

/// The safe Rust API's immediate receive of at most `data.len()` bytes into `data`,
/// exclusively borrowed for `'a`: the request is entered into `scope` (which keeps
/// `'a` from ending before it completes), as [`irecv`] of a
/// [`RecvBuf`](crate::buf::RecvBuf) of bytes does, with the same checks, errors and
/// engine call, without the descriptor (bench/PROFILE.md, rrate28).
pub fn irecv_bytes<'a>(
    scope: &impl crate::buf::BufScope<'a>,
    comm: &Comm,
    data: &'a mut [u8],
    source: i32,
    tag: i32,
) -> Result<Request> {
    // `data` is ours alone, writable, for 'a, which `scope` keeps from ending before
    // the request completes.
    let raw = RawBuf::from_mut_slice(data);
    let r = irecv_sig(comm, comm.context(), "MPI_Irecv", raw, source, tag, None)?;
    scope.enter(r);
    Ok(r)
}

/// MPI_Irecv of at most `data.len()` bytes into `data`, elements of the
/// predefined contiguous datatype `dt`. Borrowed exclusively for `'static` (C
/// memory, lent until the request completes), so no scope need keep it.
pub fn irecv_contig(
    comm: &Comm,
    data: &'static mut [u8],
    dt: &Datatype,
    source: i32,
    tag: i32,
) -> Result<Request> {
    // `data` is ours alone, writable, for 'static: it outlives the request.
    let raw = RawBuf::from_static_mut(data);
    irecv_sig(
        comm,
        comm.context(),
        "MPI_Irecv",
        raw,
        source,
        tag,
        Some(dt),
    )
}

/// MPI_Send (standard mode) of the bytes `data`, elements of the predefined
/// contiguous datatype `dt`. Inlined into the C layer's `MPI_Send`, which then
/// calls [`send_blocking`] itself: no frame that only passes seven arguments on
/// (bench/PROFILE.md, capi31).
#[inline]
pub fn send_contig(comm: &Comm, data: &[u8], dt: &Datatype, dest: i32, tag: i32) -> Result<()> {
    send_blocking(
        comm,
        "MPI_Send",
        data,
        dest,
        tag,
        SendMode::Standard,
        Some(dt),
    )
}

/// MPI_Recv of at most `data.len()` bytes into `data`, elements of the predefined
/// contiguous datatype `dt` (whose size gives the element count for diagnosis).
pub fn recv_contig(
    comm: &Comm,
    data: &mut [u8],
    dt: &Datatype,
    source: i32,
    tag: i32,
) -> Result<Status> {
    recv_blocking(comm, data, source, tag, Some(dt))
}

/// The blocking receive (`MPI_Recv`) of at most `data.len()` bytes into `data`:
/// [`recv_contig`]'s path, and the Rust API's for contiguous bytes (`dt` `None`:
/// no signature, the count in bytes), so both take one engine lock for a message
/// already here (bench/PROFILE.md, rrate29). Inlined into both: the latency path.
#[inline(always)]
pub(super) fn recv_blocking(
    comm: &Comm,
    data: &mut [u8],
    source: i32,
    tag: i32,
    dt: Option<&Datatype>,
) -> Result<Status> {
    const CALL: &str = "MPI_Recv";
    // `data` is borrowed exclusively for the call, and we wait for completion before returning.
    let (buf, len) = (RawBuf::from_mut_slice(data), data.len());
    let desc = || {
        let count = dt.map_or(len, |dt| len.checked_div(dt.size()).unwrap_or(0));
        crate::diag::p2p(CALL, false, comm, source, tag, count, dt, len)
    };
    if source != PROC_NULL {
        let e = engine()?;
        check_source(CALL, comm, source)?;
        check_recv_tag(CALL, tag)?;
        let pat = Pattern {
            context: comm.context(),
            source,
            tag,
        };
        // A whole message already in the unexpected queue is copied out with no
        // request made; otherwise the receive is posted, one progress step made
        // (a message already in the ring lands straight in the buffer), and a
        // receive complete by then finished under the same lock.
        // The slot's buffer is `data`: it must not stay lent past this call, also
        // when a panic unwinds through it (the guard empties the slot then).
        let mut slot_guard = SlotGuard {
            engine: e,
            holds_slot: false,
        };
        let started = e.with_state(|st| {
            let sig = dt.map_or(0, |dt| st.sig_of(dt));
            match st.recv_now_or_post(buf, pat, sig) {
                Ok(s) => Err(Ok(s)),
                Err(Posted::Slot) => {
                    slot_guard.holds_slot = true;
                    st.progress();
                    match st.slot_outcome() {
                        Some(Ok(s)) => Err(Ok(s)),
                        Some(Err(r)) => Ok(Posted::Request(r)),
                        None => Ok(Posted::Slot),
                    }
                }
                Err(Posted::Request(mut r)) => {
                    st.progress();
                    // The common end (the message was in the ring: landed, no
                    // error) frees the slot in one look-up; anything else as
                    // `finish` does it.
                    if let Some(s) = st.take_done_ok(r) {
                        return Err(Ok(s));
                    }
                    match st.req(r) {
                        Some(x) if x.done => Err(finish(st, &mut r)),
                        _ => Ok(Posted::Request(r)),
                    }
                }
            }
        });
        let mut r = match started {
            Err(done) => {
                std::mem::forget(slot_guard);
                return done;
            }
            Ok(Posted::Request(r)) => r,
            Ok(Posted::Slot) => match e.wait_until_described(&desc, |st| st.slot_outcome()) {
                Ok(s) => {
                    std::mem::forget(slot_guard);
                    return Ok(s);
                }
                Err(r) => r,
            },
        };
        // A request now (never the slot): the guard has nothing left to do.
        std::mem::forget(slot_guard);
        return wait_described(&mut r, CALL, &desc);
    }
    // MPI_PROC_NULL: the general path's empty completion.
    let started = irecv_sig_then(
        comm,
        comm.context(),
        CALL,
        buf,
        source,
        tag,
        dt,
        |st, mut r| match st.req(r) {
            Some(x) if x.done => Err(finish(st, &mut r)),
            _ => Ok(r),
        },
    )?;
    match started {
        Err(done) => done,
        Ok(mut r) => wait_described(&mut r, CALL, &desc),
    }
}

/// Empties the engine's blocking slot if dropped while it holds this call's
/// receive: only while a panic unwinds through [`recv_blocking`] between the
/// post and the slot's outcome (every normal exit forgets it), so that the receive's buffer, about to be given back
/// to the caller, is not written by a later arrival.
struct SlotGuard {
    engine: &'static crate::runtime::Engine,
    /// Whether this call's receive went into the slot (another thread's may be
    /// there otherwise).
    holds_slot: bool,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if self.holds_slot {
            self.engine.lock().abandon_slot();
        }
    }
}

/// MPI_Wait of a request the C layer handed out as itself (a direct handle):
/// one already complete (an eager send that went into the ring, a receive
/// whose message arrived) is finished under one lock with no progress step,
/// as MPICH's MPI_Wait does; otherwise the usual wait. A stale or made-up
/// request is MPI_ERR_REQUEST naming the call.
pub fn wait_direct(r: &mut Request) -> Result<Status> {
    if r.is_null() {
        return Ok(Status::NULL);
    }
    let e = engine()?;
    {
        let mut st = e.lock();
        if let Some(s) = st.take_done_ok(*r) {
            *r = Request::NULL;
            return Ok(s);
        }
        if is_done(&st, *r, "MPI_Wait")? {
            return finish(&mut st, r);
        }
    }
    wait(r)
}

/// The index of the first request of `reqs` (NULL ones skipped) that names no
/// live request, looked at under one lock: the C layer validates a whole array
/// of handles that are the engine's own requests this way.
pub fn first_dead(reqs: &[Request]) -> Option<usize> {
    let Ok(e) = engine() else {
        return reqs.iter().position(|r| !r.is_null());
    };
    let st = e.lock();
    reqs.iter()
        .position(|r| !r.is_null() && st.req(*r).is_none())
}

/// The live request in slot `slot` of the request table, whatever its
/// generation (the C layer's Fortran integers name slots, as MPI_Request_f2c
/// of a table handle does).
pub fn request_at_slot(slot: u32) -> Option<Request> {
    engine().ok()?.lock().request_at_slot(slot)
}

impl Request {
    /// The slot of the engine's request table this request occupies.
    pub fn slot_index(self) -> u32 {
        self.slot()
    }
}
