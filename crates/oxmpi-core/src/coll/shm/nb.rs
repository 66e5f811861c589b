//! Non-blocking collectives over the shared-memory area (MPI_Iallreduce,
//! MPI_Ibarrier): the
//! blocking kernels' protocol (see the parent module) cut into phases that
//! never wait, so a post and every progress step only look at the area and
//! go on.
//!
//! They run on a second area of the communicator (`CommShm`'s second half,
//! made with the blocking collectives' one), with steps of their own: MPI asks
//! that collectives start in the same order on every rank, but programs
//! (mpi4py's Iagree test, `tests/c/nb_then_blocking.c`) start a non-blocking
//! one before a blocking one on some ranks and after it on others, as MPICH
//! and Open MPI allow (their tags keep the two apart); one sequence of steps
//! would deadlock there. Apart, a blocking collective never waits for a
//! non-blocking one, and the progress its waits make advances them.
//!
//! A post takes the second area's lock (held only for a look at the area,
//! never across a wait), queues the operation in [`Ready::nb`](super::Ready)
//! and advances the queue: an allreduce whose step is free writes its
//! contribution and raises its flag there (on an oversubscribed host, the last
//! rank to arrive also folds and releases everyone, finishing in its post).
//! The request is an engine task ([`NbTask`]) whose every advance (any
//! progress: MPI_Test, MPI_Wait, other waits, a blocking collective's) tries
//! the lock (never waits for it: the engine lock is held then), advances the
//! queue, and completes once its operation has.
//!
//! Order: operations of one communicator run one after another from the
//! queue's front, taking their steps when they start, so every rank numbers
//! them alike (non-blocking collectives start in the same order everywhere).
//! One operation at a time keeps the counted arrivals (`arrive`) of two steps
//! apart, as a blocking call's do, and keeps `flag[i] = s` meaning "rank i
//! finished step s - 1".
//!
//! The shared-memory path is taken only where the area exists already (made
//! by an earlier blocking collective: making it is collective and waits), the
//! same answer on every rank (both are made, or dropped, by collective calls); otherwise, and while a persistent collective's
//! `_init` plans, the point-to-point schedule runs.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use super::{Counter, Ctx, Want};
use crate::buf::schedmem::RedBufs;
use crate::coll::util::span_len;
use crate::comm::Comm;
use crate::engine::State;
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::Op;
use crate::request::Request;
use crate::runtime::engine;
use crate::transport::shm::arena::{fold_with, Acc, Operand};

/// Where a queued operation leaves its outcome for its request.
#[derive(Debug, Default)]
struct Outcome(OnceLock<Result<()>>);

/// A queued non-blocking operation of a communicator.
pub(crate) enum NbOp {
    Allreduce(Box<NbAllreduce>),
    Barrier(Box<NbBarrier>),
}

impl NbOp {
    /// Advances without waiting: whether it finished.
    fn advance(&mut self, cx: &mut Ctx<'_>) -> bool {
        match self {
            NbOp::Allreduce(a) => a.advance(cx),
            NbOp::Barrier(b) => b.advance(cx),
        }
    }

    fn finish(self) {
        match self {
            NbOp::Allreduce(a) => {
                let _ = a.outcome.0.set(a.result);
            }
            NbOp::Barrier(b) => {
                let _ = b.outcome.0.set(Ok(()));
            }
        }
    }
}

/// Advances the queue from its front, as far as it goes without waiting.
pub(super) fn drive(cx: &mut Ctx<'_>, q: &mut VecDeque<NbOp>) {
    while let Some(op) = q.front_mut() {
        if !op.advance(cx) {
            return;
        }
        if let Some(op) = q.pop_front() {
            op.finish();
        }
    }
}

/// The request of a queued operation: an engine task.
pub(crate) struct NbTask {
    comm: Comm,
    outcome: Arc<Outcome>,
}

impl std::fmt::Debug for NbTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NbTask(done: {})", self.outcome.0.get().is_some())
    }
}

impl crate::engine::Task for NbTask {
    fn advance(&mut self, _st: &mut State) -> Result<bool> {
        if let Some(r) = self.outcome.0.get() {
            return r.clone().map(|()| true);
        }
        let mut g = match self.comm.0.coll_shm.1.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            // Another thread's post or progress holds it: we look again at
            // the next step.
            Err(std::sync::TryLockError::WouldBlock) => return Ok(false),
        };
        let Some(r) = &mut *g else {
            return Err(MpiError::new(
                ErrorClass::Intern,
                "non-blocking collective: the communicator's shared-memory area was released while it was pending".to_string(),
            ));
        };
        if !r.nb.is_empty() {
            let mut q = std::mem::take(&mut r.nb);
            let e = engine()?;
            let mut cx = Ctx {
                r,
                me: self.comm.rank() as usize,
                n: self.comm.size() as usize,
                e,
            };
            drive(&mut cx, &mut q);
            cx.r.nb = q;
        }
        drop(g);
        match self.outcome.0.get() {
            Some(r) => r.clone().map(|()| true),
            None => Ok(false),
        }
    }

    fn pending(&self) -> Option<crate::diag::Pending> {
        Some(crate::diag::Pending {
            what: "non-blocking collective on the shared-memory area".to_string(),
            peer_world: None,
            ctx: Some(self.comm.context()),
        })
    }
}

/// Queues `op` on `comm`'s area if it exists (`None`: use a schedule, the
/// same answer on every rank), advances the queue, and returns its request.
fn post(
    comm: &Comm,
    want: Want,
    make: impl FnOnce(Arc<Outcome>) -> Result<NbOp>,
) -> Result<Option<Request>> {
    if want == Want::No || comm.is_inter() || comm.size() < 2 || super::super::planning() {
        return Ok(None);
    }
    let e = engine()?;
    let mut g = comm.0.coll_shm.1.lock().unwrap_or_else(|p| p.into_inner());
    let Some(r) = &mut *g else {
        return Ok(None);
    };
    // This collective's number in the non-blocking sequence (taken below, as
    // the schedule's start would): the area serves it only from the number
    // agreed when the area was made, the same answer on every rank.
    let seq = comm.0.coll_seq.load(std::sync::atomic::Ordering::Relaxed);
    if seq.wrapping_sub(r.nb_from) >= 1 << 31 {
        return Ok(None);
    }
    let outcome = Arc::new(Outcome::default());
    let op = make(outcome.clone())?;
    comm.next_coll_tag();
    let mut q = std::mem::take(&mut r.nb);
    q.push_back(op);
    let mut cx = Ctx {
        r,
        me: comm.rank() as usize,
        n: comm.size() as usize,
        e,
    };
    drive(&mut cx, &mut q);
    cx.r.nb = q;
    drop(g);
    if let Some(res) = outcome.0.get() {
        // Finished in the post (the last rank to arrive on a crowded host):
        // no task.
        res.clone()?;
        return Ok(Some(Request::DONE));
    }
    let task = NbTask {
        comm: comm.clone(),
        outcome,
    };
    Ok(Some(e.with_state(|st| st.start_task(Box::new(task)))))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    Full,
    Gather,
    Blocks,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// The chunk's contribution is not in our slot yet.
    Start,
    /// Our flag is up (and, gathering, we were not the last to arrive).
    Flagged,
    /// Our block of the result is out (`res`).
    Folded,
}

/// MPI_Iallreduce on the area: `parent::allreduce`'s variants, phase by phase.
pub(crate) struct NbAllreduce {
    outcome: Arc<Outcome>,
    bufs: RedBufs,
    op: Op,
    /// Elements a chunk.
    k: usize,
    variant: Variant,
    /// The chunk under way: its first element and its step (0: none yet).
    e0: usize,
    s: u64,
    phase: Phase,
    /// Registered in the area's `wants` (see `Ctx::try_free`).
    wanting: bool,
    /// The fold's output for a non-contiguous type (full variant).
    temp: Vec<u8>,
    result: Result<()>,
}

/// MPI_Iallreduce on `comm`'s shared-memory area (`None`: use the schedule):
/// the caller checked the arguments (a count above zero, `k` its
/// `chunk_elems`) and lent the descriptors to the request it returns.
pub(crate) fn iallreduce(
    comm: &Comm,
    want: Want,
    bufs: impl FnOnce() -> Result<RedBufs>,
    k: usize,
    op: &Op,
) -> Result<Option<Request>> {
    post(comm, want, |outcome| {
        let bufs = bufs()?;
        let (count, dt) = (bufs.count(), bufs.datatype());
        // The caller checked the op against the datatype: this cannot fail.
        op.reducer(dt, "MPI_Iallreduce")?;
        Ok(NbOp::Allreduce(Box::new(NbAllreduce {
            outcome,
            variant: Variant::Blocks,
            temp: if dt.is_contiguous() {
                Vec::new()
            } else {
                vec![0u8; span_len(k.min(count), dt)]
            },
            bufs,
            op: op.clone(),
            k,
            e0: 0,
            s: 0,
            phase: Phase::Start,
            wanting: false,
            result: Ok(()),
        })))
    })
}

impl NbAllreduce {
    fn fail(&mut self, r: Result<()>) {
        if r.is_err() && self.result.is_ok() {
            self.result = r;
        }
    }

    /// The chunk under way is over: on to the next.
    fn next_chunk(&mut self, c: usize) {
        self.e0 += c;
        self.s = 0;
        self.phase = Phase::Start;
    }

    fn advance(&mut self, cx: &mut Ctx<'_>) -> bool {
        let count = self.bufs.count();
        loop {
            if self.e0 >= count {
                return true;
            }
            if self.s == 0 {
                self.s = cx.next();
                // The blocking kernel's choice (`allreduce.rs`), with the
                // gather's own limit on a crowded host (`NB_GATHER_MAX`).
                let len = span_len(count, self.bufs.datatype());
                self.variant = match cx.r.oversubscribed {
                    false if len <= super::allreduce::FULL_MAX => Variant::Full,
                    true if len <= super::allreduce::nb_gather_max() => Variant::Gather,
                    _ => Variant::Blocks,
                };
            }
            let (s, e0) = (self.s, self.e0);
            let c = self.k.min(count - e0);
            let (n, me) = (cx.n, cx.me);
            match self.phase {
                Phase::Start => {
                    if !cx.try_free(s, &mut self.wanting) {
                        return false;
                    }
                    // Nobody reads our slot half before our flag.
                    self.bufs.with(|out, inp| {
                        let chunk = out.chunk(inp, e0, c);
                        cx.area().slot(me, s).copy_in(chunk.input());
                    });
                    cx.set(Counter::Flag, s);
                    if self.variant != Variant::Gather {
                        cx.ring_others();
                        self.phase = Phase::Flagged;
                        continue;
                    }
                    if !cx.arrive() {
                        self.phase = Phase::Flagged;
                        continue;
                    }
                    // The last to arrive folds for everyone, in rank order.
                    let len = span_len(c, self.bufs.datatype());
                    let dt = self.bufs.datatype().clone();
                    let r = self.op.reducer(&dt, "MPI_Iallreduce").and_then(|red| {
                        let area = cx.area();
                        // Every slot holds its published span (Acquire in arrive's
                        // addition); the broadcast half is free (all done with s - 2).
                        let src = |j: usize| Operand::Stage(area.slot(j, s));
                        fold_with(n, src, Acc::Stage(area.bbuf_for(s, len)), c, &red)
                    });
                    self.fail(r);
                    cx.publish_release_each(s);
                    cx.learn(s - 1);
                    self.bufs
                        .with(|out, _| cx.area().bbuf_for(s, len).deliver(out, e0, c));
                    cx.set_done(s);
                    self.next_chunk(c);
                }
                Phase::Flagged if self.variant == Variant::Gather => {
                    if !cx.released(s) {
                        return false;
                    }
                    cx.learn(s - 1);
                    let len = span_len(c, self.bufs.datatype());
                    // The last arriver published the result span (Acquire in `released`).
                    self.bufs
                        .with(|out, _| cx.area().bbuf_for(s, len).deliver(out, e0, c));
                    cx.set_done(s);
                    self.next_chunk(c);
                }
                Phase::Flagged => {
                    if !cx.reached(Counter::Flag, s) {
                        return false;
                    }
                    cx.learn(s - 1);
                    let dt = self.bufs.datatype().clone();
                    let red = match self.op.reducer(&dt, "MPI_Iallreduce") {
                        Ok(red) => red,
                        Err(e) => {
                            self.fail(Err(e));
                            return true;
                        }
                    };
                    let area = cx.area();
                    if self.variant == Variant::Full {
                        // Slots hold published spans of `c` elements (Acquire in `reached`).
                        let src = |j: usize| Operand::Stage(area.slot(j, s));
                        let temp = &mut self.temp;
                        let r = self.bufs.with(|out, inp| {
                            if temp.is_empty() {
                                let mut chunk = out.chunk(inp, e0, c);
                                fold_with(n, src, Acc::Bytes(chunk.output()), c, &red)
                            } else {
                                let r = fold_with(n, src, Acc::Bytes(temp), c, &red);
                                out.deliver(e0, c, temp);
                                r
                            }
                        });
                        self.fail(r);
                        cx.set_done(s);
                        self.next_chunk(c);
                        continue;
                    }
                    // Our block of the chunk's elements.
                    let ext = dt.extent().max(0) as usize;
                    let (q, rem) = (c / n, c % n);
                    let b0 = me * q + me.min(rem);
                    let bc = q + usize::from(me < rem);
                    if bc > 0 {
                        let (at, len) = (b0 * ext, span_len(bc, &dt));
                        // Ranks' blocks do not overlap; the broadcast half is free
                        // after step s - 2.
                        let src = |j: usize| Operand::Stage(area.slot(j, s).sub(at, len));
                        let acc = Acc::Stage(area.bbuf(s).sub(at, len));
                        let r = fold_with(n, src, acc, bc, &red);
                        self.fail(r);
                    }
                    cx.set(Counter::Res, s);
                    cx.ring_others();
                    self.phase = Phase::Folded;
                }
                Phase::Folded => {
                    if !cx.reached(Counter::Res, s) {
                        return false;
                    }
                    // Every block of the result is published (Acquire in `reached`).
                    self.bufs
                        .with(|out, _| cx.area().bbuf(s).deliver(out, e0, c));
                    cx.set_done(s);
                    self.next_chunk(c);
                }
            }
        }
    }
}

/// MPI_Ibarrier on the area: the blocking barrier's counted arrival (the last
/// to arrive releases everyone, finishing in its post), then a look at
/// `release` from progress.
pub(crate) struct NbBarrier {
    outcome: Arc<Outcome>,
    /// Its step (0: not arrived yet).
    s: u64,
}

/// MPI_Ibarrier on `comm`'s shared-memory area (`None`: use the schedule).
pub(crate) fn ibarrier(comm: &Comm, want: Want) -> Result<Option<Request>> {
    post(comm, want, |outcome| {
        Ok(NbOp::Barrier(Box::new(NbBarrier { outcome, s: 0 })))
    })
}

impl NbBarrier {
    fn advance(&mut self, cx: &mut Ctx<'_>) -> bool {
        if self.s == 0 {
            self.s = cx.next();
            if cx.arrive() {
                cx.publish_release_each(self.s);
            } else {
                return false;
            }
        } else if !cx.released(self.s) {
            return false;
        }
        // Everyone arrived at s, so everyone completed s - 1.
        cx.learn(self.s - 1);
        cx.set_done(self.s);
        true
    }
}
