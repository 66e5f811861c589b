//! Persistent collectives (MPI-4 `MPI_<Op>_init`): the schedule is planned once, at
//! `_init`, and run again by every MPI_Start.
//!
//! [`plan`] runs a collective's immediate form once, at `_init`, with
//! [`super::start`] keeping the schedule it builds instead of starting it: the
//! argument checks, the reading of the count/displacement/datatype arrays and the
//! algorithm choice happen there, once, and the schedule (steps over the caller's
//! buffers, its temporaries, its tag) is what the persistent request keeps. Each
//! MPI_Start ([`Plan::start`]) rewinds that schedule and hands it to the engine as a
//! task; the wait/test family completes the start and leaves the request inactive,
//! ready to be started again. The tag is the communicator's next collective tag at
//! `_init`, so persistent collectives match in the order they were initialized (the
//! same on every rank), whatever order they are started in; the count arrays may be
//! reused by the caller as soon as `_init` returns. The C layer (`pcoll.rs`) plans
//! its raw immediate forms the same way.
//!
//! Below, the safe `*_init` functions over typed buffer descriptors make the engine's
//! inactive persistent request around a plan. The buffers are borrowed for `'a`,
//! which the [`BufScope`] the init call takes keeps from ending before the request
//! is freed.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use super::api::{iallreduce, ibcast, iexscan, ireduce, iscan};
use super::api_move::{
    iallgather, iallgatherv, ialltoall, ialltoallv, ialltoallw, ialltoallw_blocks, igather,
    igatherv, ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall, ineighbor_alltoallv,
    ineighbor_alltoallw, ireduce_scatter, ireduce_scatter_block, iscatter, iscatterv, Blocks,
    WBlocks,
};
use super::sched::{Builder, Schedule};
use crate::buf::{BufScope, RecvBlocks, RecvBuf, SendBlocks, SendBuf};
use crate::comm::Comm;
use crate::engine::{PersistentSpec, ReqKind, State, Task};
use crate::error::{MpiError, Result};
use crate::op::Op;
use crate::request::{Request, Status};
use crate::runtime::engine;

/// What [`super::start`] kept while a `_init` planned.
pub(crate) enum Planned {
    Waiting,
    /// The schedule (`None`: nothing to move on this rank, each start completes at once).
    Kept(Option<Schedule>),
    /// The immediate form started more than one schedule (never, for a collective).
    Twice,
}

impl Planned {
    pub(crate) fn keep(&mut self, b: Builder, tag: i32) -> Result<()> {
        if !matches!(self, Planned::Waiting) {
            b.discard();
            *self = Planned::Twice;
            return Ok(());
        }
        *self = Planned::Kept(if b.is_empty() {
            b.discard();
            None
        } else {
            let mut s = b.build()?;
            s.set_tag(tag);
            Some(s)
        });
        Ok(())
    }
}

/// A persistent collective's schedule, planned at `_init`, shared by the request
/// and the task of its current start.
pub struct Plan {
    sched: Option<Arc<Mutex<Schedule>>>,
    /// The algorithm counters (MPI_T) each start adds to, as the immediate call would.
    counts: Vec<(usize, usize)>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `try_lock`: a diagnosis may print the plan while its own run is being advanced.
        match self.sched.as_ref().map(|s| s.try_lock()) {
            Some(Ok(s)) => write!(f, "Plan({:?})", *s),
            Some(Err(_)) => f.write_str("Plan(being advanced)"),
            None => f.write_str("Plan(nothing to move)"),
        }
    }
}

fn lock(s: &Mutex<Schedule>) -> MutexGuard<'_, Schedule> {
    // A panic inside a step leaves nothing half-written that a rewind does not reset.
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Plans a persistent collective named `call` (`MPI_<Op>_init`): runs `immediate`,
/// the collective's non-blocking form over the `_init` call's arguments, keeping the
/// schedule it builds. Its errors are the `_init` call's.
pub fn plan(call: &str, immediate: impl FnOnce() -> Result<Request>) -> Result<Plan> {
    let outer = super::PLANNING.with(|p| p.replace(Some(Planned::Waiting)));
    let (r, counts) = super::select::deferring_counts(immediate);
    let planned = super::PLANNING.with(|p| p.replace(outer));
    let r = r.map_err(|e| renamed(e, call))?;
    match planned {
        Some(Planned::Kept(s)) if r == Request::NULL => Ok(Plan {
            sched: s.map(|s| Arc::new(Mutex::new(s))),
            counts,
        }),
        _ => Err(MpiError::intern(
            call,
            "the collective's immediate form did not build exactly one schedule",
        )),
    }
}

/// An error of the immediate form run by [`plan`], named after the `_init` call.
fn renamed(mut e: MpiError, call: &str) -> MpiError {
    if let Some(i) = e.message.find(':') {
        if e.message.starts_with("MPI_") && !e.message[..i].contains(' ') {
            e.message = format!("{call}{}", &e.message[i..]);
        }
    }
    e
}

impl Plan {
    /// MPI_Start: runs the schedule again from its first step (the previous start
    /// has completed: the request was inactive).
    pub fn start(&self) -> Result<Request> {
        let e = engine()?;
        super::select::count_again(&self.counts);
        match &self.sched {
            None => Ok(e.with_state(|st| st.done_request(Status::EMPTY))),
            Some(s) => {
                lock(s).restart();
                let task = Box::new(Rerun(s.clone()));
                Ok(e.with_progress(|st| st.start_task(task)))
            }
        }
    }
}

/// One start of a persistent collective: its plan's schedule, advanced by progress.
struct Rerun(Arc<Mutex<Schedule>>);

impl std::fmt::Debug for Rerun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.try_lock() {
            Ok(s) => write!(f, "persistent {:?}", *s),
            Err(_) => f.write_str("persistent collective schedule (being advanced)"),
        }
    }
}

impl Task for Rerun {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        lock(&self.0).advance(st)
    }
    fn pending(&self) -> Option<crate::diag::Pending> {
        lock(&self.0).pending()
    }
}

/// The start of a persistent collective, kept by its engine request.
#[derive(Clone, Debug)]
pub(crate) struct Starter(Arc<Plan>);

impl Starter {
    pub(crate) fn start(&self) -> Result<Request> {
        self.0.start()
    }
}

/// The engine scope of a `_init`'s planning run: the immediate form enters no
/// request (its schedule is kept, not started).
struct Planning<'a>(PhantomData<Cell<&'a ()>>);

// SAFETY: a `Planning<'a>` only lends the descriptors to the planning run of `init`
// below, whose schedule (over those descriptors' memory) runs only in starts of the
// persistent request `init` enters into the caller's `BufScope<'a>`, which keeps 'a
// from ending before that request is freed.
unsafe impl<'a> BufScope<'a> for Planning<'a> {
    fn enter(&self, _planned: Request) {}
}

/// A persistent collective named `call` whose schedule `immediate` (the immediate
/// form, given the planning scope) builds once: the engine's inactive persistent
/// request, entered into `scope`.
fn init<'a>(
    scope: &impl BufScope<'a>,
    call: &str,
    immediate: impl FnOnce(&Planning<'a>) -> Result<Request>,
) -> Result<Request> {
    let e = engine()?;
    let p = plan(call, || immediate(&Planning(PhantomData)))?;
    let r = e.lock().new_request(ReqKind::Persistent {
        spec: PersistentSpec::Coll(Starter(Arc::new(p))),
        active: None,
    });
    scope.enter(r);
    Ok(r)
}

/// MPI_Barrier_init.
pub fn barrier_init<'a>(scope: &impl BufScope<'a>, comm: &Comm) -> Result<Request> {
    init(scope, "MPI_Barrier_init", |_| {
        super::barrier::ibarrier(comm)
    })
}

/// MPI_Bcast_init (as [`ibcast`]).
pub fn bcast_init<'a>(
    scope: &impl BufScope<'a>,
    buf: RecvBuf<'a, '_>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Bcast_init", |p| ibcast(p, buf, root, comm))
}

/// MPI_Allreduce_init (as [`iallreduce`]).
pub fn allreduce_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Allreduce_init", |p| {
        iallreduce(p, send, recv, op, comm)
    })
}

/// MPI_Reduce_init (as [`ireduce`]).
pub fn reduce_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    op: &Op,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Reduce_init", |p| {
        ireduce(p, send, recv, op, root, comm)
    })
}

/// MPI_Scan_init (as [`iscan`]).
pub fn scan_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Scan_init", |p| iscan(p, send, recv, op, comm))
}

/// MPI_Exscan_init (as [`iexscan`]).
pub fn exscan_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Exscan_init", |p| {
        iexscan(p, send, recv, op, comm)
    })
}

/// MPI_Gather_init (as [`igather`]).
pub fn gather_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcount: usize,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Gather_init", |p| {
        igather(p, send, recv, recvcount, root, comm)
    })
}

/// MPI_Gatherv_init (as [`igatherv`]; the arrays are read here, once).
pub fn gatherv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: Option<RecvBuf<'a, '_>>,
    recvcounts: &[usize],
    displs: &[isize],
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Gatherv_init", |p| {
        igatherv(p, send, recv, recvcounts, displs, root, comm)
    })
}

/// MPI_Scatter_init (as [`iscatter`]).
pub fn scatter_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Scatter_init", |p| {
        iscatter(p, send, sendcount, recv, root, comm)
    })
}

/// MPI_Scatterv_init (as [`iscatterv`]; the arrays are read here, once).
pub fn scatterv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcounts: &[usize],
    displs: &[isize],
    recv: Option<RecvBuf<'a, '_>>,
    root: i32,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Scatterv_init", |p| {
        iscatterv(p, send, sendcounts, displs, recv, root, comm)
    })
}

/// MPI_Allgather_init (as [`iallgather`]).
pub fn allgather_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Allgather_init", |p| {
        iallgather(p, send, recv, recvcount, comm)
    })
}

/// MPI_Allgatherv_init (as [`iallgatherv`]; the arrays are read here, once).
pub fn allgatherv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    displs: &[isize],
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Allgatherv_init", |p| {
        iallgatherv(p, send, recv, recvcounts, displs, comm)
    })
}

/// MPI_Alltoall_init (as [`ialltoall`]).
pub fn alltoall_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Alltoall_init", |p| {
        ialltoall(p, send, sendcount, recv, recvcount, comm)
    })
}

/// MPI_Alltoallv_init (as [`ialltoallv`]; the arrays are read here, once).
pub fn alltoallv_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Alltoallv_init", |p| {
        ialltoallv(p, send, sb, recv, rb, comm)
    })
}

/// MPI_Alltoallw_init (as [`ialltoallw`]; the arrays and datatypes are read here, once).
pub fn alltoallw_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    sb: WBlocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: WBlocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Alltoallw_init", |p| {
        ialltoallw(p, send, sb, recv, rb, comm)
    })
}

/// MPI_Reduce_scatter_init (as [`ireduce_scatter`]; the counts are read here, once).
pub fn reduce_scatter_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcounts: &[usize],
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Reduce_scatter_init", |p| {
        ireduce_scatter(p, send, recv, recvcounts, op, comm)
    })
}

/// MPI_Reduce_scatter_block_init (as [`ireduce_scatter_block`]).
pub fn reduce_scatter_block_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBuf<'a, '_>>,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    op: &Op,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Reduce_scatter_block_init", |p| {
        ireduce_scatter_block(p, send, recv, recvcount, op, comm)
    })
}

/// MPI_Neighbor_allgather_init (as [`ineighbor_allgather`]).
pub fn neighbor_allgather_init<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Neighbor_allgather_init", |p| {
        ineighbor_allgather(p, send, sendcount, recv, recvcount, comm)
    })
}

/// MPI_Neighbor_alltoall_init (as [`ineighbor_alltoall`]).
pub fn neighbor_alltoall_init<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    recvcount: usize,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Neighbor_alltoall_init", |p| {
        ineighbor_alltoall(p, send, sendcount, recv, recvcount, comm)
    })
}

/// MPI_Neighbor_allgatherv_init (as [`ineighbor_allgatherv`]; the arrays are read here, once).
pub fn neighbor_allgatherv_init<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sendcount: usize,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Neighbor_allgatherv_init", |p| {
        ineighbor_allgatherv(p, send, sendcount, recv, rb, comm)
    })
}

/// MPI_Neighbor_alltoallv_init (as [`ineighbor_alltoallv`]; the arrays are read here, once).
pub fn neighbor_alltoallv_init<'a>(
    scope: &impl BufScope<'a>,
    send: SendBuf<'a, '_>,
    sb: Blocks<'_>,
    recv: RecvBuf<'a, '_>,
    rb: Blocks<'_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Neighbor_alltoallv_init", |p| {
        ineighbor_alltoallv(p, send, sb, recv, rb, comm)
    })
}

/// MPI_Alltoallw_init over per-peer block lists (as [`ialltoallw_blocks`]; the
/// arrays and datatypes are read here, once).
pub fn alltoallw_blocks_init<'a>(
    scope: &impl BufScope<'a>,
    send: Option<SendBlocks<'a, '_>>,
    recv: RecvBlocks<'a, '_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Alltoallw_init", |p| {
        ialltoallw_blocks(p, send, recv, comm)
    })
}

/// MPI_Neighbor_alltoallw_init (as [`ineighbor_alltoallw`]; the arrays and
/// datatypes are read here, once).
pub fn neighbor_alltoallw_init<'a>(
    scope: &impl BufScope<'a>,
    send: SendBlocks<'a, '_>,
    recv: RecvBlocks<'a, '_>,
    comm: &Comm,
) -> Result<Request> {
    init(scope, "MPI_Neighbor_alltoallw_init", |p| {
        ineighbor_alltoallw(p, send, recv, comm)
    })
}
