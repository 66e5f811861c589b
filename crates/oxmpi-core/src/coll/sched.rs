//! Collective schedules: every collective algorithm is written as a list of
//! steps (sends, receives, local work, fences) over buffers, and the same
//! schedule serves the blocking call (run to completion) and the non-blocking one
//! (a request the progress engine advances), as in MPICH's `sched` design.
//!
//! Semantics: steps run in order. Sends and receives are started when reached and
//! complete in the background; a [`Step::Fence`] waits until everything started
//! before it has completed. Local steps run when reached, so an algorithm puts a
//! fence between a receive and the local step that reads its data.
//!
//! Every message of a schedule travels on the communicator's collective context
//! with the schedule's tag (the communicator's collective sequence number), so
//! concurrent non-blocking collectives on one communicator never mix.
//!
//! Fixed cost. A small collective is a handful of steps, so the bookkeeping
//! around them matters: copies and reductions are steps of their own (no boxed
//! closure), all temporaries of a schedule share one zeroed arena, and the
//! step list, the in-flight list and small arenas are recycled through a
//! per-thread pool when a schedule is dropped, so a blocking small collective
//! allocates (almost) nothing in this module. Finished operations are reaped
//! at fences and at the end, not before every step.

use std::cell::RefCell;

use crate::buf::schedmem::Memory;
pub use crate::buf::schedmem::{Base, Elems, Slice};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::engine::{SendMode, State};
use crate::error::{ErrorClass, MpiError, Result};
use crate::matching::{Envelope, Pattern};
use crate::op::Op;
use crate::request::Request;

/// Bits of a schedule's tag taken by the communicator's collective sequence
/// number; the bits above (up to the 30 a collective tag has) are sub-tags.
pub const SEQ_BITS: u32 = 24;
/// Sub-tags a schedule may use.
pub const MAX_SUBTAGS: u8 = 64;

pub enum Step {
    Send {
        buf: Slice,
        peer: i32,
        sub: u8,
    },
    Recv {
        buf: Slice,
        peer: i32,
        sub: u8,
    },
    /// Packs the caller's typed elements `src` into `dst` (their packed length).
    Pack {
        src: Elems,
        dst: Slice,
    },
    /// Unpacks `src` (the packed length of `dst`) into the caller's typed elements.
    Unpack {
        src: Slice,
        dst: Elems,
    },
    /// `dst = src` (same length; may overlap).
    Copy {
        src: Slice,
        dst: Slice,
    },
    /// The bytes of `count` elements of `dt` (only those, not the gaps between
    /// blocks) from the span `src` to the span `dst` (distinct buffers, both
    /// starting at the type's `true_lb`, as `util::span` gives them).
    CopyElems {
        src: Slice,
        dst: Slice,
        count: usize,
        dt: Datatype,
    },
    /// `dst = src op dst` over `count` elements of `dt`, both spans starting at
    /// the type's `true_lb` (as `util::span` gives them).
    Reduce {
        src: Slice,
        dst: Slice,
        count: usize,
        dt: Datatype,
        op: Op,
    },
    /// `dst = lower op higher` over `count` elements of `dt` (spans as for
    /// `Reduce`; `dst` apart from `lower`): a fold that also moves the data
    /// where a copy of `higher` into `dst` and a `Reduce` would pass over
    /// `dst` twice.
    ReduceInto {
        lower: Slice,
        higher: Slice,
        dst: Slice,
        count: usize,
        dt: Datatype,
        op: Op,
    },
    Fence,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Send { buf, peer, sub } => {
                write!(f, "Send({} bytes to {peer}, sub-tag {sub})", buf.len)
            }
            Step::Recv { buf, peer, sub } => {
                write!(f, "Recv({} bytes from {peer}, sub-tag {sub})", buf.len)
            }
            Step::Pack { dst, .. } => write!(f, "Pack({} bytes)", dst.len),
            Step::Unpack { src, .. } => write!(f, "Unpack({} bytes)", src.len),
            Step::Copy { src, .. } => write!(f, "Copy({} bytes)", src.len),
            Step::CopyElems { count, .. } => write!(f, "CopyElems({count} elements)"),
            Step::Reduce { count, .. } => write!(f, "Reduce({count} elements)"),
            Step::ReduceInto { count, .. } => write!(f, "ReduceInto({count} elements)"),
            Step::Fence => f.write_str("Fence"),
        }
    }
}

/// The allocations of a schedule, recycled through a per-thread pool.
struct Parts {
    steps: Vec<Step>,
    in_flight: Vec<Request>,
    arena: Vec<u128>,
}

/// Schedules kept for reuse per thread, and the largest lists and arena kept.
const POOL_SCHEDULES: usize = 8;
const POOL_MAX_STEPS: usize = 1024;
const POOL_MAX_ARENA: usize = 64 * 1024 / 16;

thread_local! {
    static POOL: RefCell<Vec<Parts>> = const { RefCell::new(Vec::new()) };
}

fn take_parts() -> Parts {
    POOL.try_with(|p| p.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| Parts {
            steps: Vec::with_capacity(16),
            in_flight: Vec::with_capacity(8),
            arena: Vec::new(),
        })
}

fn give_parts(mut parts: Parts) {
    if parts.steps.capacity() > POOL_MAX_STEPS || parts.in_flight.capacity() > POOL_MAX_STEPS {
        return;
    }
    parts.steps.clear();
    parts.in_flight.clear();
    if parts.arena.capacity() > POOL_MAX_ARENA {
        parts.arena = Vec::new();
    }
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SCHEDULES {
            p.push(parts);
        }
    });
}

/// Builds a schedule. Algorithms only see this.
pub struct Builder {
    comm: Comm,
    /// Bytes of the arena of temporaries so far.
    temp_bytes: usize,
    parts: Parts,
}

impl Builder {
    pub fn new(comm: &Comm) -> Builder {
        Builder {
            comm: comm.clone(),
            temp_bytes: 0,
            parts: take_parts(),
        }
    }

    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Whether no step was added (a collective with nothing to move).
    pub fn is_empty(&self) -> bool {
        self.parts.steps.is_empty()
    }

    /// Drops a builder that will not run, its vectors going back to the pool.
    pub fn discard(self) {
        give_parts(self.parts);
    }

    /// A zeroed temporary buffer of `len` bytes, freed with the schedule.
    pub fn temp(&mut self, len: usize) -> Slice {
        // 16-byte aligned, as a buffer of its own would be.
        let at = self.temp_bytes.next_multiple_of(16);
        self.temp_bytes = at + len;
        Slice::temp(at, len)
    }

    fn push(&mut self, step: Step) {
        self.parts.steps.push(step);
    }

    pub fn send(&mut self, buf: Slice, peer: i32) {
        self.push(Step::Send { buf, peer, sub: 0 });
    }

    pub fn recv(&mut self, buf: Slice, peer: i32) {
        self.push(Step::Recv { buf, peer, sub: 0 });
    }

    /// A send on sub-tag `sub` (< [`MAX_SUBTAGS`]): messages between the same two
    /// ranks in one schedule match by sub-tag, then in order.
    pub fn send_tagged(&mut self, buf: Slice, peer: i32, sub: u8) {
        assert!(sub < MAX_SUBTAGS, "sub-tag {sub} out of range");
        self.push(Step::Send { buf, peer, sub });
    }

    pub fn recv_tagged(&mut self, buf: Slice, peer: i32, sub: u8) {
        assert!(sub < MAX_SUBTAGS, "sub-tag {sub} out of range");
        self.push(Step::Recv { buf, peer, sub });
    }

    /// Waits for every send and receive started so far.
    pub fn fence(&mut self) {
        if !matches!(self.parts.steps.last(), Some(Step::Fence) | None) {
            self.push(Step::Fence);
        }
    }

    /// Packs the caller's elements `src` into `dst`, which holds exactly their
    /// packed bytes.
    pub fn pack(&mut self, src: Elems, dst: Slice) {
        assert_eq!(
            src.packed_len(),
            dst.len,
            "pack into a slice of the wrong length"
        );
        if dst.len > 0 {
            self.push(Step::Pack { src, dst });
        }
    }

    /// Unpacks `src`, exactly the packed bytes of the caller's elements `dst`, into them.
    pub fn unpack(&mut self, src: Slice, dst: Elems) {
        assert_eq!(
            dst.packed_len(),
            src.len,
            "unpack from a slice of the wrong length"
        );
        if src.len > 0 {
            self.push(Step::Unpack { src, dst });
        }
    }

    /// Copies `src` to `dst` (same length).
    pub fn copy(&mut self, src: Slice, dst: Slice) {
        assert_eq!(src.len, dst.len, "copy between slices of different lengths");
        if src == dst || src.len == 0 {
            return;
        }
        self.push(Step::Copy { src, dst });
    }

    /// Copies only the elements' bytes of `count` elements of `dt` from the span
    /// `src` to the span `dst` (distinct buffers, as from `util::span` /
    /// `util::temp_span`), leaving the gaps of `dst` untouched.
    pub fn copy_elems(&mut self, src: Slice, dst: Slice, count: usize, dt: &Datatype) {
        assert_eq!(src.len, dst.len, "copy between spans of different lengths");
        if src == dst || count == 0 {
            return;
        }
        self.push(Step::CopyElems {
            src,
            dst,
            count,
            dt: dt.clone(),
        });
    }

    /// `dst = src op dst` over `count` elements whose spans (as from
    /// `util::span` / `util::temp_span`) are given; see `util::reduce_step`.
    pub fn reduce(&mut self, src: Slice, dst: Slice, count: usize, dt: &Datatype, op: &Op) {
        if count == 0 {
            return;
        }
        self.push(Step::Reduce {
            src,
            dst,
            count,
            dt: dt.clone(),
            op: op.clone(),
        });
    }

    /// `dst = lower op higher` over `count` elements (spans as for
    /// [`reduce`](Self::reduce)); `dst` must be a buffer apart from `lower`
    /// (it may be `higher`, which makes this a plain `reduce`).
    pub fn reduce_into(
        &mut self,
        lower: Slice,
        higher: Slice,
        dst: Slice,
        count: usize,
        dt: &Datatype,
        op: &Op,
    ) {
        assert!(lower != dst, "three-operand fold into its lower operand");
        if count == 0 {
            return;
        }
        if higher == dst {
            self.reduce(lower, dst, count, dt, op);
            return;
        }
        self.push(Step::ReduceInto {
            lower,
            higher,
            dst,
            count,
            dt: dt.clone(),
            op: op.clone(),
        });
    }

    /// The schedule, with its arena of temporaries allocated; an allocation
    /// the system refuses (counts from garbage) is MPI_ERR_NO_MEM naming the
    /// size, never an abort.
    pub fn build(mut self) -> Result<Schedule> {
        self.fence();
        let words = self.temp_bytes.div_ceil(16);
        let mut parts = self.parts;
        if words > POOL_MAX_ARENA {
            // Large: a fresh zeroed allocation (calloc) rather than clearing a pooled one.
            parts.arena = crate::buf::try_zeroed_words(words).ok_or_else(|| {
                MpiError::new(ErrorClass::NoMem, format!("collective: the {} bytes of temporary buffers its counts need cannot be allocated", self.temp_bytes))
            })?;
        } else {
            parts.arena.clear();
            parts.arena.resize(words, 0);
        }
        Ok(Schedule {
            comm: self.comm,
            parts: Some(parts),
            pc: 0,
            tag: 0,
            owned: None,
            failed: None,
        })
    }
}

/// A built schedule, ready to run.
pub struct Schedule {
    comm: Comm,
    /// Always `Some` until dropped (then returned to the pool).
    parts: Option<Parts>,
    pc: usize,
    tag: i32,
    /// Memory the schedule's steps point into and that it owns (heap memory
    /// that stays put when moved): freed with it, or handed back by
    /// [`into_owned`](Self::into_owned) once it completed.
    owned: Option<Vec<u64>>,
    /// The error a run failed with while operations of it were still in
    /// flight: reported once they are over (see [`Schedule::advance`]).
    failed: Option<MpiError>,
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (steps, in_flight) = self
            .parts
            .as_ref()
            .map_or((0, 0), |p| (p.steps.len(), p.in_flight.len()));
        write!(
            f,
            "Schedule(step {} of {steps}, {in_flight} in flight, tag {})",
            self.pc, self.tag
        )
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        if let Some(parts) = self.parts.take() {
            if parts.in_flight.is_empty() {
                give_parts(parts);
            } else {
                // Operations of it still in flight (the engine torn down under
                // a running collective) may land in the temporaries or read
                // the owned buffer: keep both for good rather than free them
                // under the engine's feet, or hand them to the next schedule.
                std::mem::forget(parts);
                std::mem::forget(self.owned.take());
            }
        }
    }
}

/// A schedule is an ordinary engine task: progress advances it like any other,
/// and the engine knows nothing of collectives.
impl crate::engine::Task for Schedule {
    fn advance(&mut self, st: &mut State) -> Result<bool> {
        Schedule::advance(self, st)
    }
    fn pending(&self) -> Option<crate::diag::Pending> {
        Some(crate::diag::Pending {
            what: format!("collective schedule (tag {})", self.seq()),
            peer_world: None,
            ctx: Some(self.comm().context()),
        })
    }
}

impl Schedule {
    /// The collective's sequence number on its communicator (diagnosis).
    pub(crate) fn seq(&self) -> u32 {
        (self.tag & ((1 << SEQ_BITS) - 1)) as u32
    }

    pub(crate) fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Takes ownership of the memory the steps point into (see `owned`).
    pub(super) fn own(&mut self, words: Vec<u64>) {
        self.owned = Some(words);
    }

    /// The memory the schedule owned, back after it completed (nothing in
    /// flight points into it any more, and the schedule cannot run again).
    pub(crate) fn into_owned(mut self) -> Result<Vec<u64>> {
        let parts = self.parts.as_ref().expect("schedule without its parts");
        if self.pc != parts.steps.len() || !parts.in_flight.is_empty() {
            return Err(MpiError::new(
                ErrorClass::Intern,
                "collective schedule: its buffer taken back before it completed".to_string(),
            ));
        }
        self.owned.take().ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                "collective schedule: no buffer of its own to hand back".to_string(),
            )
        })
    }

    pub(crate) fn set_tag(&mut self, tag: i32) {
        self.tag = tag;
    }

    /// Makes a schedule that ran (to completion or to an error) ready to run
    /// again from its first step, with the same tag: a persistent collective's
    /// MPI_Start. A run ends only once none of its operations is in flight (a
    /// failed one too, see [`advance`](Self::advance)), so nothing the engine
    /// still uses is zeroed here; the temporaries are zeroed again
    /// (algorithms may count on fresh ones).
    pub(crate) fn restart(&mut self) {
        let parts = self.parts.as_mut().expect("schedule without its parts");
        if !parts.in_flight.is_empty() {
            // A run cut short before it settled: start afresh in fresh memory,
            // leaving the old arena to what may still land in it.
            let words = parts.arena.len();
            std::mem::forget(std::mem::take(&mut parts.arena));
            parts.arena = vec![0; words];
            parts.in_flight.clear();
        }
        parts.arena.fill(0);
        self.pc = 0;
        self.failed = None;
    }

    /// Removes finished operations; the first error among them fails the schedule.
    fn reap(in_flight: &mut Vec<Request>, st: &mut State) -> Result<()> {
        let mut failed = None;
        in_flight.retain(|&r| {
            // The common case, finished without an error: its slot freed in
            // place (no copy of the entry out, as `remove_request` makes).
            st.take_done_ok(r).is_none() && Self::keep_or_take(r, st, &mut failed)
        });
        match failed {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Whether `r`, which did not finish cleanly, is still in flight; if it
    /// finished with an error, removes it and records the first such error.
    fn keep_or_take(r: Request, st: &mut State, failed: &mut Option<MpiError>) -> bool {
        match st.req(r) {
            Some(e) if e.done => {
                if let Some(err) = &e.error {
                    failed.get_or_insert_with(|| MpiError::clone(err));
                }
                st.remove_request(r);
                false
            }
            Some(_) => true,
            None => false,
        }
    }

    /// Runs as far as possible; `Ok(true)` once every step has completed.
    ///
    /// A run that fails (a step's error, or a finished operation's) with
    /// operations still in flight does not report the error at once: its
    /// receives and unfinished sends are cancelled and the error comes once
    /// every one of them is over. Until then they may still write the
    /// temporaries and read or write the caller's buffers, which the caller
    /// may reuse or free as soon as the request completes (MPI_Wait, or at
    /// once after MPI_Request_free), and the schedule is dropped then.
    pub(crate) fn advance(&mut self, st: &mut State) -> Result<bool> {
        if self.failed.is_none() {
            match self.run_steps(st) {
                Err(err) => self.failed = Some(err),
                done => return done,
            }
            let parts = self.parts.as_mut().expect("schedule without its parts");
            for &r in &parts.in_flight {
                if st.req(r).is_some_and(|e| !e.done) {
                    // Not cancellable (a matched transfer): it finishes on its own.
                    let _ = st.cancel(r);
                }
            }
        }
        let parts = self.parts.as_mut().expect("schedule without its parts");
        parts.in_flight.retain(|&r| match st.req(r) {
            Some(e) if e.done => {
                st.remove_request(r);
                false
            }
            Some(_) => true,
            None => false,
        });
        if !parts.in_flight.is_empty() {
            return Ok(false);
        }
        Err(self.failed.take().expect("a failed run keeps its error"))
    }

    /// The steps from `pc` on, as far as they go (see [`advance`](Self::advance)).
    fn run_steps(&mut self, st: &mut State) -> Result<bool> {
        let parts = self.parts.as_mut().expect("schedule without its parts");
        let Parts {
            steps,
            in_flight,
            arena,
        } = parts;
        loop {
            if self.pc == steps.len() {
                Self::reap(in_flight, st)?;
                return Ok(in_flight.is_empty());
            }
            if let Step::Fence = steps[self.pc] {
                if !in_flight.is_empty() {
                    Self::reap(in_flight, st)?;
                    if !in_flight.is_empty() {
                        return Ok(false);
                    }
                }
                self.pc += 1;
                continue;
            }
            // Read in place, not taken: a persistent collective runs the steps again.
            let step = &steps[self.pc];
            self.pc += 1;
            let mut m = Memory::new(arena.as_mut_slice());
            match step {
                &Step::Send { buf, peer, sub } => {
                    let world = peer_world(&self.comm, peer, "send")?;
                    let raw = m.raw(buf)?;
                    let tag = self.tag | ((sub as i32) << SEQ_BITS);
                    let env = Envelope {
                        context: self.comm.coll_context(),
                        source: self.comm.wire_rank(self.comm.rank()),
                        tag,
                    };
                    let r = st.start_send(world, env, raw, SendMode::Standard)?;
                    in_flight.push(r);
                }
                &Step::Recv { buf, peer, sub } => {
                    peer_world(&self.comm, peer, "receive")?;
                    let raw = m.raw(buf)?;
                    let tag = self.tag | ((sub as i32) << SEQ_BITS);
                    let pat = Pattern {
                        context: self.comm.coll_context(),
                        source: self.comm.wire_rank(peer),
                        tag,
                    };
                    let r = st.post_recv(raw, pat);
                    in_flight.push(r);
                }
                Step::Pack { src, dst } => m.pack(src, *dst)?,
                Step::Unpack { src, dst } => m.unpack(*src, dst)?,
                &Step::Copy { src, dst } => m.copy(src, dst)?,
                Step::CopyElems {
                    src,
                    dst,
                    count,
                    dt,
                } => m.copy_elems(*src, *dst, *count, dt)?,
                Step::Reduce {
                    src,
                    dst,
                    count,
                    dt,
                    op,
                } => m.reduce(*src, *dst, *count, dt, op)?,
                Step::ReduceInto {
                    lower,
                    higher,
                    dst,
                    count,
                    dt,
                    op,
                } => m.reduce_into(*lower, *higher, *dst, *count, dt, op)?,
                Step::Fence => unreachable!("fences are handled above"),
            }
        }
    }
}

fn peer_world(comm: &Comm, peer: i32, what: &str) -> Result<u32> {
    comm.peer_group()
        .get(peer as usize)
        .copied()
        .filter(|_| peer >= 0)
        .ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("collective schedule: {what} with rank {peer} outside the communicator"),
            )
        })
}
