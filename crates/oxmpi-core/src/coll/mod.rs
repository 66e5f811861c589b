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
    /// Set while a persistent collective's `_init` runs the immediate form to
    /// plan its schedule (see [`persistent::plan`]): [`start`] keeps the
    /// schedule here instead of starting it.
    static PLANNING: std::cell::RefCell<Option<persistent::Planned>> =
        const { std::cell::RefCell::new(None) };
}

/// Whether a persistent collective's `_init` plans now (its immediate form
/// must build a schedule: non-blocking paths that are no schedule step aside).
pub(crate) fn planning() -> bool {
    PLANNING.with(|p| p.borrow().is_some())
}

/// Starts a built schedule as a request (non-blocking collectives); while a
/// persistent collective's `_init` plans, keeps it for that collective instead
/// (its tag taken now: persistent collectives match in the order they were
/// initialized) and returns `Request::NULL`.
pub fn start(b: Builder) -> Result<Request> {
    let tag = b.comm().next_coll_tag();
    if PLANNING.with(|p| p.borrow().is_some()) {
        return PLANNING.with(|p| match p.borrow_mut().as_mut() {
            Some(planned) => planned.keep(b, tag).map(|()| Request::NULL),
            None => unreachable!("planning checked above"),
        });
    }
    start_tagged(b, tag)
}

fn start_tagged(b: Builder, tag: i32) -> Result<Request> {
    if b.is_empty() {
        // Nothing to send, receive or compute here (a zero-count collective, or
        // one rank): the engine's one complete request, with no entry, no task
        // and no lock of the engine (the tag is taken all the same, so later
        // collectives still line up); MPI_Wait on it returns at once.
        b.discard();
        return Ok(Request::DONE);
    }
    let e = engine()?;
    let mut s = b.build()?;
    s.set_tag(tag);
    // No progress step first (a third of a small schedule's start): starting
    // the task runs its steps as far as they go, and the wait or test that
    // follows makes progress.
    Ok(e.with_state(|st| st.start_task(Box::new(s))))
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

/// The one rule for a collective with nothing to move. `empty`: the call's type
/// signature is empty on every rank, decided from its checked arguments alone
/// (signatures that match, or arrays that are the same on every rank: a count of
/// 0, a 0-byte type, `recvcounts` all 0), never from one rank's own blocks (a v
/// form's). Then the call returns right after its argument checks, on every rank
/// alike: no hang-report record (`diag::coll`; the per-communicator sequence
/// numbers stay in step because every rank skips the same calls, and a call
/// that returns at once never blocks), no selection, no schedule, no tag.
/// Checked or synchronized collectives (`OXMPI_CHECK`, `OXMPI_SYNC_COLLECTIVES`)
/// still meet in `diag::coll` first. The blocking entries' early returns ask
/// this, and so does the C layer's 0-count entry (`oxmpi-capi` `coll/empty.rs`),
/// which answers before the general path only where this says so.
#[inline]
pub fn nothing_to_move(empty: bool) -> bool {
    empty && !crate::diag::coll_checked()
}

/// An immediate collective with nothing to move on any rank ([`nothing_to_move`]),
/// started: what [`start`] makes of the empty schedule its general path builds, the
/// non-blocking tag taken all the same (so later collectives line up on ranks that
/// went either way) and the engine's one complete request. For the C layer's 0-count
/// exit (`oxmpi-capi` `coll/empty.rs`), not while a persistent collective plans.
#[inline]
pub fn started_empty(comm: &Comm) -> Request {
    comm.next_coll_tag();
    Request::DONE
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
/// Inlined (every rooted call checks its root; the error is made out of line).
#[inline]
pub fn check_root(call: &str, comm: &Comm, root: i32) -> Result<()> {
    if root < 0 || root >= comm.size() {
        return Err(bad_root(call, comm, root));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn bad_root(call: &str, comm: &Comm, root: i32) -> MpiError {
    MpiError::arg(
        ErrorClass::Root,
        call,
        "root",
        format!(
            "{root} is not a rank of this communicator (0..{})",
            comm.size()
        ),
    )
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
