//! Collective operations. Each algorithm lives in `coll/<operation>/<algorithm>.rs`
//! and is written against [`sched::Builder`] only: it adds sends, receives, local
//! steps and fences. The same schedule runs a blocking collective to completion or
//! becomes the request of a non-blocking one. Which algorithm runs is decided in
//! one place per operation (`<operation>/mod.rs`), from data (communicator size,
//! message bytes, commutativity) in the operation's algorithm table (see
//! [`select`]), and `OXMPI_<OPERATION>_ALGORITHM=name` overrides it.

pub mod api;
pub mod api_move;
pub mod persistent;
pub mod sched;
pub(crate) mod select;
pub mod util;

pub mod barrier;
pub(crate) mod check;
// Operations added by their own modules (keep one line each):
// COLL-MODULES-BEGIN
pub mod allgather;
pub mod allreduce;
pub mod alltoall;
pub mod bcast;
pub mod gather;
pub mod inter;
pub mod neighbor;
pub mod reduce;
pub mod reduce_scatter;
pub mod scan;
pub mod scatter;
pub mod shm;
// COLL-MODULES-END

use crate::comm::Comm;
use crate::error::{ErrorClass, MpiError, Result};
use crate::request::Request;
use crate::runtime::engine;
use sched::Builder;

thread_local! {
    /// A tag reserved by a persistent collective at its `_init`, for the
    /// schedule its MPI_Start builds on this thread (see [`with_reserved_tag`]).
    static RESERVED: std::cell::Cell<Option<(usize, i32)>> = const { std::cell::Cell::new(None) };
}

/// Reserves the collective tag of a persistent collective at its `_init`
/// call: persistent collectives are matched in the order they were
/// initialized (the same on every rank), not the order they are started.
pub fn reserve_tag(comm: &Comm) -> i32 {
    comm.next_coll_tag()
}

/// Runs `f` (which starts one non-blocking collective on `comm`) so that the
/// collective uses `tag`, reserved by [`reserve_tag`], instead of the next one.
pub fn with_reserved_tag<R>(comm: &Comm, tag: i32, f: impl FnOnce() -> R) -> R {
    let key = std::sync::Arc::as_ptr(&comm.0) as usize;
    RESERVED.with(|c| c.set(Some((key, tag))));
    let r = f();
    RESERVED.with(|c| c.set(None));
    r
}

fn reserved_or_next_tag(comm: &Comm) -> i32 {
    let key = std::sync::Arc::as_ptr(&comm.0) as usize;
    match RESERVED.with(|c| c.get()) {
        Some((k, tag)) if k == key => {
            RESERVED.with(|c| c.set(None));
            tag
        }
        _ => comm.next_coll_tag(),
    }
}

/// Starts a built schedule as a request (non-blocking collectives).
pub fn start(b: Builder) -> Result<Request> {
    let tag = reserved_or_next_tag(b.comm());
    start_tagged(b, tag)
}

fn start_tagged(b: Builder, tag: i32) -> Result<Request> {
    let e = engine()?;
    if b.is_empty() {
        // Nothing to send, receive or compute here (a zero-count collective, or
        // one rank): a request complete from the start, with no task for the
        // engine to advance (the tag is taken all the same, so later
        // collectives still line up).
        b.discard();
        return Ok(e.with_state(|st| st.done_request(crate::request::Status::EMPTY)));
    }
    let mut s = b.build()?;
    s.set_tag(tag);
    Ok(e.with_progress(|st| st.start_task(Box::new(s))))
}

/// Runs a built schedule to completion (blocking collectives, which count
/// apart from the non-blocking ones: [`Comm::next_blocking_coll_tag`]); errors name `call`.
pub fn run(b: Builder, call: &str) -> Result<()> {
    // The tag first, so that the sequence stays in step on every rank.
    let tag = b.comm().next_blocking_coll_tag();
    if b.is_empty() {
        // Nothing to send, receive or compute here (a zero-byte collective, or
        // one rank): done, without a request or a trip through the engine.
        b.discard();
        return Ok(());
    }
    let mut r = start_tagged(b, tag)?;
    crate::pt2pt::wait(&mut r).map(|_| ()).map_err(|mut err| {
        if let Some(rest) = err.message.strip_prefix("MPI_Wait:") {
            err.message = format!("{call}:{rest}");
        }
        err
    })
}

pub(crate) use select::FORCEABLE;

/// The algorithms `OXMPI_<OP>_ALGORITHM` may name for collective `op` of
/// [`FORCEABLE`] (the MPI_T enumeration of that control variable).
pub(crate) fn algorithm_choices(op: &str) -> Vec<&'static str> {
    select::choices(op)
}

/// `OXMPI_<OP>_ALGORITHM` as the environment sets it (`None`: unset or "auto").
pub(crate) fn env_algorithm(op: &str) -> Option<String> {
    std::env::var(format!("OXMPI_{}_ALGORITHM", op.to_ascii_uppercase()))
        .ok()
        .filter(|v| !v.is_empty() && v != "auto")
}

/// Checks a root argument of a rooted collective on an intracommunicator.
pub fn check_root(call: &str, comm: &Comm, root: i32) -> Result<()> {
    if root < 0 || root >= comm.size() {
        return Err(MpiError::arg(
            ErrorClass::Root,
            call,
            "root",
            format!(
                "{root} is not a rank of this communicator (0..{})",
                comm.size()
            ),
        ));
    }
    Ok(())
}

/// Rejects intercommunicators where only intracommunicator algorithms exist yet.
pub fn require_intra(call: &str, comm: &Comm) -> Result<()> {
    if comm.is_inter() {
        return Err(MpiError::unsupported(
            call,
            "this collective on an intercommunicator",
        ));
    }
    Ok(())
}
