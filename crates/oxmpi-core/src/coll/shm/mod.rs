//! Shared-memory collectives for intracommunicators whose members all share one
//! host (after MPICH's ch4 "release/gather" and Open MPI's coll/sm): blocking
//! barrier, bcast, reduce, allreduce, reduce_scatter(_block), allgather,
//! alltoall (blocks that fit a slot half together), gather and scatter (blocks
//! that fit a slot half each; gatherv and scatterv, whose larger blocks go
//! point-to-point; alltoallv, blocks up to a slot half over n each, the larger
//! ones point-to-point) move data through one memory
//! area per communicator instead of point-to-point messages. MPI_Iallreduce
//! runs the allreduce's protocol phase by phase from progress where the area
//! exists already ([`nb`]); other non-blocking collectives use schedules.
//!
//! # Life cycle
//!
//! The area is made lazily, collectively, on a communicator's
//! [`LAZY_CALLS`]-th blocking collective that would use it (the first when
//! `OXMPI_<OP>_ALGORITHM=shm` forces it), so the many communicators that
//! programs create and never use collectively cost nothing. Rank 0 makes an
//! anonymous `memfd` (nothing ever appears in `/dev/shm`, and the kernel frees it
//! whatever way the job ends), tells the others its pid and descriptor over
//! point-to-point on the communicator's collective context, every rank maps
//! `/proc/<pid>/fd/<fd>`, and all agree on success: if any rank failed (or has
//! [`MAX_AREAS`] areas already), every rank falls back to schedules for good on
//! this communicator. Rank 0 then closes its descriptor; only mappings remain,
//! unmapped when the communicator is dropped (MPI_Comm_free of the last handle)
//! or at MPI_Finalize for the predefined ones.
//!
//! # Layout (offsets from the page-aligned start; the typed view of it, with
//! every `unsafe` block, is `transport::shm::arena`)
//!
//! | offset | contents |
//! |---|---|
//! | 0 | the release line: `release` (step of the last root publication), `arrive`, 2 × [`INLINE`] bytes of inline broadcast buffer (by step parity; also small scatter blocks and a 2-rank gather's block, `rooted.rs`) |
//! | 64 | the release doorbell (a futex word that wakes every waiter of `release`) |
//! | 128 | one 128-byte control line per rank: `flag`, `res`, `done`, `wants`, 2 × [`INLINE_SLOT`] bytes of inline slot (by step parity; a small allgather block) |
//! | after them | the near broadcast buffer: 2 × [`NEAR`] bytes (by step parity; bcast messages too large for the release line, `bcast.rs`) |
//! | next page | the broadcast buffer: 2 × [`CHUNK`] (by step parity) |
//! | then | one data slot per rank: 2 × [`CHUNK`] each (by step parity) |
//!
//! # Protocol
//!
//! Every rank counts *steps* (one per chunk of a collective, the same sequence
//! on every rank since collectives are called in the same order). All counters
//! only grow and are compared with `>=`:
//! * `flag[i] = s` (Release): rank i arrived at step s and its slot holds its
//!   data for s; it also means rank i completed step s - 1;
//! * `res[i] = s`: rank i wrote its block of the step-s result (allreduce);
//! * `release = s`: the root of step s published (bcast data or barrier release);
//! * `done[i] = s`: rank i finished reading everything of step s;
//! * `arrive` counts arrivals at *counted* steps (barrier; allreduce and allgather on an
//!   oversubscribed host): after the c-th counted step every rank has added one,
//!   so it reaches `c * n`, and the rank whose addition makes it so is the last
//!   to arrive: it does the step's work (the fold) and publishes `release`
//!   (an oversubscribed barrier that follows other collectives: rank 0
//!   publishes it once `arrive` reaches `c * n`, rung by the last arrival;
//!   see `barrier.rs`).
//!   No rank passes a counted step before its release, so arrivals at the next
//!   one cannot mix with this one's;
//! * `wants[i] != 0`: rank i waits for the others' `done` (a buffer to reuse):
//!   only then do they ring it when they set theirs; `wanting` (offset 64 of
//!   rank 0's control line) counts such ranks, so that setting `done` reads one
//!   word, not every rank's line, when nobody waits (n lines a rank a step, most
//!   of them last written on the other core: the part of a 16-rank barrier's
//!   cost that grew with the ranks).
//!
//! Buffers alternate by step parity, so a writer at step s only has to know that
//! every rank is done with step s - 2 ([`Ctx::wait_free`]); most of the time it
//! knows that already from the flags it saw ([`Ready::known`]).
//!
//! Waits spin, yield, then sleep on the rank's doorbell of the host segment,
//! driving the point-to-point engine all along (other ranks may need our
//! progress); publishers ring the doorbells of the ranks that wait for them.
//! A wait for `release` also sleeps on the area's release doorbell where the
//! kernel can wait on two futex words at once (`futex_waitv`, the same answer
//! on every rank: rank 0's probe decides), so the publisher wakes all waiters
//! with one call instead of one per rank (on a crowded host each wake-up call
//! is a system call on the critical path).
//!
//! Reductions fold in rank order, `a0 op (a1 op (... op a(n-1)))`, with the
//! same operands on every rank, so results are bit-identical everywhere and
//! non-commutative (user) ops see their operands in rank order.
//!
//! # Trust
//!
//! Nothing read from the area is used as a length, offset or pointer: other
//! ranks can only make us wait or read wrong data bytes.

mod allgather;
mod allreduce;
mod alltoall;
mod alltoallv;
mod barrier;
mod bcast;
mod direct;
pub(crate) mod nb;
mod reduce;
mod reduce_scatter;
mod rooted;
mod rooted_v;

pub(crate) use allgather::allgather;
pub(crate) use allreduce::allreduce;
pub(crate) use alltoall::alltoall;
pub(crate) use alltoallv::{alltoallv, alltoallv_nothing_here};
pub(crate) use barrier::barrier;
pub(crate) use bcast::bcast;
pub(crate) use direct::bcast as bcast_direct;
pub(crate) use reduce::chunk_elems;
pub(crate) use reduce::reduce;
pub(crate) use reduce_scatter::reduce_scatter;
pub(crate) use rooted::fits as rooted_fits;
pub(crate) use rooted_v::{gatherv, scatterv};

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::sched::{Builder, Slice};
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::Datatype;
use crate::error::Result;
use crate::runtime::{engine, Engine};
use crate::transport::doorbell::{full_fence, waitv_supported, Doorbell};
use crate::transport::shm::arena::CollArena as Area;
pub use crate::transport::shm::arena::{CHUNK, INLINE, INLINE_SLOT, NEAR};

/// Largest communicator served (the gathers are flat).
pub const MAX_RANKS: usize = 64;
/// Most areas a process keeps mapped; communicators beyond use schedules.
pub const MAX_AREAS: usize = 128;
/// A communicator gets its area on this many-th blocking collective that wants it.
pub const LAZY_CALLS: u32 = 3;
/// Longest sleep in a wait (a publication that rings nobody is seen by then).
const MAX_SLEEP: Duration = Duration::from_millis(1);

/// Whether an operation wants the shared-memory path for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// Another algorithm is forced, or the message is out of the path's range.
    No,
    /// Chosen by the selection: used once the area exists (made lazily).
    Auto,
    /// `OXMPI_<OP>_ALGORITHM=shm`: made at once.
    Forced,
}

/// The choice for one call from the forced algorithm (if any) and whether the
/// automatic selection would take the shared-memory path.
pub(crate) fn want(forced: Option<&str>, auto: bool) -> Want {
    match forced {
        Some("shm") => Want::Forced,
        Some(_) => Want::No,
        None if auto => Want::Auto,
        None => Want::No,
    }
}

/// A mapped area and this rank's view of the protocol.
pub(crate) struct Ready {
    area: Area,
    /// Doorbell of every member (by communicator rank).
    bells: Vec<&'static Doorbell>,
    /// The last step this rank started.
    step: u64,
    /// A step every rank is known to have completed.
    known: u64,
    /// More ranks than processors on the host (rank 0's view, the same everywhere):
    /// then fewer wake-ups beat parallel work.
    oversubscribed: bool,
    /// Counted steps started (see `arrive` in the module docs).
    counted: u64,
    /// The step of the last barrier (see `barrier.rs`: who releases it).
    last_barrier: u64,
    /// Waits for `release` also sleep on the release doorbell (rank 0's view).
    waitv: bool,
    /// Non-blocking operations posted and not finished, in posting order
    /// (see [`nb`]; only in the area of non-blocking collectives).
    nb: std::collections::VecDeque<nb::NbOp>,
    /// The first non-blocking collective sequence number (`coll_seq`) that
    /// uses this area (the non-blocking area only; see `setup`).
    nb_from: u32,
    /// Every member's pid (by communicator rank) when cross-memory copies
    /// between every pair of members work (agreed at set-up; empty otherwise):
    /// large rooted calls then copy once, straight between user buffers
    /// ([`direct`]).
    pids: Vec<i32>,
}

enum Status {
    /// No area yet: blocking collectives that wanted one so far.
    Unset {
        calls: u32,
    },
    Ready(Box<Ready>),
    /// Schedules only (ineligible communicator, failed set-up, or freed).
    Off,
}

/// A communicator's shared-memory collective state ([`crate::comm::CommInner`]):
/// the blocking collectives' area, and the second area of the non-blocking
/// ones ([`nb`]: its own steps, since a program may start a non-blocking
/// collective and a blocking one in different orders on different ranks, as
/// MPICH and Open MPI allow; made with the first, under a lock of its own so
/// that progress in a blocking collective's waits advances it).
pub struct CommShm(Mutex<Status>, Mutex<Option<Box<Ready>>>);

impl Default for CommShm {
    fn default() -> Self {
        CommShm(Mutex::new(Status::Unset { calls: 0 }), Mutex::new(None))
    }
}

impl std::fmt::Debug for CommShm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.0.try_lock().as_deref() {
            Ok(Status::Unset { calls }) => format!("unset ({calls} calls)"),
            Ok(Status::Ready(r)) => format!("ready (step {})", r.step),
            Ok(Status::Off) => "off".into(),
            Err(_) => "busy".into(),
        };
        write!(f, "CommShm({what})")
    }
}

/// Unmaps `comm`'s area (MPI_Finalize for the predefined communicators); its
/// collectives use schedules from then on.
pub(crate) fn release(comm: &Comm) {
    let mut g = comm.0.coll_shm.0.lock().unwrap_or_else(|p| p.into_inner());
    *g = Status::Off;
    *comm.0.coll_shm.1.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// Whether every member of `comm` shares this rank's host segment.
fn eligible(comm: &Comm, e: &Engine) -> bool {
    let n = comm.size() as usize;
    !comm.is_inter()
        && (2..=MAX_RANKS).contains(&n)
        && comm.0.tag_base == 0
        && comm.group().iter().all(|&w| e.local_bell(w).is_some())
}

/// An area locked for one collective.
pub(crate) struct Session<'a> {
    guard: MutexGuard<'a, Status>,
    me: usize,
    n: usize,
    e: &'static Engine,
}

/// The shared-memory path for one blocking collective on `comm`, if it takes
/// it: `None` means "use a schedule" (the same answer on every rank).
pub(crate) fn acquire(comm: &Comm, want: Want) -> Result<Option<Session<'_>>> {
    if want == Want::No || comm.is_inter() || comm.size() < 2 {
        return Ok(None);
    }
    let e = engine()?;
    let mut g = comm.0.coll_shm.0.lock().unwrap_or_else(|p| p.into_inner());
    match &mut *g {
        Status::Ready(_) => {}
        Status::Off => return Ok(None),
        Status::Unset { calls } => {
            if !eligible(comm, e) {
                *g = Status::Off;
                return Ok(None);
            }
            *calls += 1;
            if want != Want::Forced && *calls < LAZY_CALLS {
                return Ok(None);
            }
            match setup(comm, e)? {
                Some((r, nb)) => {
                    *g = Status::Ready(Box::new(r));
                    *comm.0.coll_shm.1.lock().unwrap_or_else(|p| p.into_inner()) = nb.map(Box::new);
                }
                None => {
                    *g = Status::Off;
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some(Session {
        guard: g,
        me: comm.rank() as usize,
        n: comm.size() as usize,
        e,
    }))
}

/// [`acquire`] for calls where a rank may have nothing to move while others do
/// (gatherv, scatterv): unless forced, only an area that exists already is used
/// (made by an earlier collective that wanted one), and no call is counted
/// towards making it. Making the area is collective; a rank with an empty block
/// must not synchronize (a zero-count v-collective may not wait for the
/// others), and it cannot know whether the others have data.
pub(crate) fn acquire_made(comm: &Comm, want: Want) -> Result<Option<Session<'_>>> {
    if want != Want::Auto {
        return acquire(comm, want);
    }
    if comm.is_inter() || comm.size() < 2 {
        return Ok(None);
    }
    let e = engine()?;
    let g = comm.0.coll_shm.0.lock().unwrap_or_else(|p| p.into_inner());
    if !matches!(&*g, Status::Ready(_)) {
        return Ok(None);
    }
    Ok(Some(Session {
        guard: g,
        me: comm.rank() as usize,
        n: comm.size() as usize,
        e,
    }))
}

/// Whether `comm` has a shared area and its host has more ranks than cores
/// (rank 0's view at set-up): the same answer on every rank, since the area
/// is made by the same blocking call everywhere, so schedules that do not mix
/// may be chosen from it. `false` where no area was made (yet).
pub(crate) fn crowded(comm: &Comm) -> bool {
    let g = comm.0.coll_shm.0.lock().unwrap_or_else(|p| p.into_inner());
    matches!(&*g, Status::Ready(r) if r.oversubscribed)
}

impl Session<'_> {
    /// Whether the host has more ranks than cores (rank 0's view at set-up,
    /// the same on every rank: choices made from it agree).
    pub(crate) fn oversubscribed(&self) -> bool {
        matches!(&*self.guard, Status::Ready(r) if r.oversubscribed)
    }

    pub(crate) fn ctx(&mut self) -> Ctx<'_> {
        let Status::Ready(r) = &mut *self.guard else {
            unreachable!("a session holds a ready area")
        };
        Ctx {
            r,
            me: self.me,
            n: self.n,
            e: self.e,
        }
    }
}

/// Rank 0 sends `words` to every other rank (set-up only).
fn send_words(comm: &Comm, words: &mut [u64]) -> Result<()> {
    let mut b = Builder::new(comm);
    let len = words.len() * 8;
    if comm.rank() == 0 {
        for j in 1..comm.size() {
            b.send(Slice::user(words.as_ptr() as *const u8, len), j);
        }
    } else {
        b.recv(Slice::user_mut(words.as_mut_ptr() as *mut u8, len), 0);
    }
    super::run(b, "shared-memory collective set-up")
}

/// Whether `ok` holds on every rank, and the largest `val` (set-up only).
fn agree_max(comm: &Comm, ok: bool, val: u64) -> Result<(bool, u64)> {
    let n = comm.size() as usize;
    let mut v = vec![0u64; 2 * n];
    let me = comm.rank() as usize;
    v[2 * me..2 * me + 2].copy_from_slice(&[ok as u64, val]);
    let mut b = Builder::new(comm);
    if me == 0 {
        for (j, w) in v.chunks_exact_mut(2).enumerate().skip(1) {
            b.recv(Slice::user_mut(w.as_mut_ptr() as *mut u8, 16), j as i32);
        }
    } else {
        b.send(Slice::user(v[2 * me..].as_ptr() as *const u8, 16), 0);
    }
    super::run(b, "shared-memory collective set-up")?;
    let all_ok = v.chunks_exact(2).all(|w| w[0] == 1);
    let max = v.chunks_exact(2).map(|w| w[1]).max().unwrap_or(0);
    let mut out = [all_ok as u64, max];
    send_words(comm, &mut out)?;
    Ok((out[0] == 1, out[1]))
}

/// The bits of `ok` set on every rank (set-up only).
fn all_agree(comm: &Comm, ok: u64) -> Result<u64> {
    let n = comm.size() as usize;
    let mut v = vec![0u64; n];
    v[comm.rank() as usize] = ok;
    let mut b = Builder::new(comm);
    if comm.rank() == 0 {
        for (j, w) in v.iter_mut().enumerate().skip(1) {
            b.recv(Slice::user_mut(w as *mut u64 as *mut u8, 8), j as i32);
        }
    } else {
        b.send(
            Slice::user(&v[comm.rank() as usize] as *const u64 as *const u8, 8),
            0,
        );
    }
    super::run(b, "shared-memory collective set-up")?;
    let mut all = [v.iter().fold(!0, |a, &x| a & x)];
    send_words(comm, &mut all)?;
    Ok(all[0])
}

/// Makes and maps the area collectively, and the non-blocking collectives'
/// second one where it fits; `None` (on every rank) if the first failed
/// anywhere, the second `None` everywhere if it failed anywhere.
fn setup(comm: &Comm, e: &'static Engine) -> Result<Option<(Ready, Option<Ready>)>> {
    let n = comm.size() as usize;
    let me = comm.rank() as usize;
    // pid, fd, success, and rank 0's view of oversubscription (so that every
    // rank picks the same algorithm variants), then the second area's
    // success and fd.
    let mut info = [
        0u64,
        0,
        0,
        e.oversubscribed as u64,
        waitv_supported() as u64,
        0,
        0,
    ];
    let mut mine: Option<OwnedFd> = None;
    let mut mine_nb: Option<OwnedFd> = None;
    if me == 0 && Area::live() < MAX_AREAS {
        if let Ok(fd) = Area::create_fd(n) {
            info[..3].copy_from_slice(&[std::process::id() as u64, fd.as_raw_fd() as u64, 1]);
            mine = Some(fd);
            if Area::live() + 2 <= MAX_AREAS {
                if let Ok(fd) = Area::create_fd(n) {
                    info[5..].copy_from_slice(&[1, fd.as_raw_fd() as u64]);
                    mine_nb = Some(fd);
                }
            }
        }
    }
    send_words(comm, &mut info)?;
    let area = match (&mine, info[2] == 1 && Area::live() < MAX_AREAS) {
        (Some(fd), _) => Area::map(fd, n).ok(),
        (None, true) => Area::open_fd(info[0], info[1], n)
            .and_then(|fd| Area::map(&fd, n))
            .ok(),
        (None, false) => None,
    };
    // Bit 0: the area is mapped; bit 1: cross-memory copies with every member
    // work (`OXMPI_SHM_DIRECT=0` turns the single copies off).
    let pids: Option<Vec<i32>> = e.with_state(|st| {
        comm.group()
            .iter()
            .enumerate()
            .map(|(j, &w)| match j == me {
                true => Some(std::process::id() as i32),
                false => st.cma_pid(w),
            })
            .collect()
    });
    let direct_ok = pids.is_some() && std::env::var("OXMPI_SHM_DIRECT").map_or(true, |v| v != "0");
    let agreed = all_agree(comm, area.is_some() as u64 | (direct_ok as u64) << 1)?;
    let (ok, direct) = (agreed & 1 == 1, agreed & 2 == 2);
    let pids = pids.filter(|_| direct).unwrap_or_default();
    drop(mine);
    let nb_area = match (&mine_nb, info[5] == 1 && ok) {
        (_, false) => None,
        (Some(fd), true) => Area::map(fd, n).ok(),
        (None, true) if Area::live() < MAX_AREAS => Area::open_fd(info[0], info[6], n)
            .and_then(|fd| Area::map(&fd, n))
            .ok(),
        (None, true) => None,
    };
    // The non-blocking collectives' sequence number from which they use the
    // second area: the highest any rank has reached now (a rank may have
    // started non-blocking collectives that the others start only after this
    // blocking one; those keep their schedules everywhere).
    let (nb_ok, nb_from) = if info[5] == 1 && ok {
        let seq = comm.0.coll_seq.load(Ordering::Relaxed) as u64;
        agree_max(comm, nb_area.is_some(), seq)?
    } else {
        (false, 0)
    };
    drop(mine_nb);
    let bells: Option<Vec<_>> = comm.group().iter().map(|&w| e.local_bell(w)).collect();
    let ready = |area, bells| Ready {
        area,
        bells,
        step: 0,
        known: 0,
        oversubscribed: info[3] == 1,
        counted: 0,
        last_barrier: 0,
        waitv: info[4] == 1,
        nb: Default::default(),
        nb_from: nb_from as u32,
        pids: pids.clone(),
    };
    match (area, bells) {
        (Some(area), Some(bells)) if ok => {
            let nb = match nb_area {
                Some(a) if nb_ok => Some(ready(a, bells.clone())),
                _ => None,
            };
            Ok(Some((ready(area, bells), nb)))
        }
        _ => Ok(None),
    }
}

/// MPI_Gather on the shared path, arguments checked (see [`rooted::gather`]):
/// by single copies into the root's receive buffer (`direct`, where
/// [`Session::direct`] holds; [`direct::gather`]) or through the area (blocks
/// that [`rooted_fits`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather(
    sess: Session<'_>,
    direct: bool,
    send: Option<&SendBuf<'_, '_>>,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    recvcount: usize,
    root: usize,
    blk: usize,
) -> Result<()> {
    if direct {
        return direct::gather(sess, send, sendtype, recv, recvcount, root, blk);
    }
    rooted::gather(sess, send, sendtype, recv, recvcount, root, blk);
    Ok(())
}

/// MPI_Scatter on the shared path, arguments checked (see [`rooted::scatter`]):
/// by single copies from the root's send buffer (`direct`, where
/// [`Session::direct`] holds; [`direct::scatter`]) or through the area.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter(
    sess: Session<'_>,
    direct: bool,
    send: Option<&SendBuf<'_, '_>>,
    sendcount: usize,
    sendtype: &Datatype,
    recv: Option<&mut RecvBuf<'_, '_>>,
    root: usize,
    blk: usize,
) -> Result<()> {
    if direct {
        return direct::scatter(sess, send, sendcount, sendtype, recv, root, blk);
    }
    rooted::scatter(sess, send, sendcount, sendtype, recv, root, blk);
    Ok(())
}

/// Which per-rank counter a wait looks at.
#[derive(Clone, Copy)]
enum Counter {
    Flag,
    Res,
    Done,
}

/// One collective's view of the area.
pub(crate) struct Ctx<'a> {
    r: &'a mut Ready,
    me: usize,
    n: usize,
    e: &'static Engine,
}

impl Ctx<'_> {
    fn area(&self) -> &Area {
        &self.r.area
    }

    /// Starts the next step.
    fn next(&mut self) -> u64 {
        self.r.step += 1;
        self.r.step
    }

    /// Every rank is known to have completed step `s`.
    fn learn(&mut self, s: u64) {
        self.r.known = self.r.known.max(s);
    }

    fn counter(&self, c: Counter, j: usize) -> &AtomicU64 {
        match c {
            Counter::Flag => self.area().flag(j),
            Counter::Res => self.area().res(j),
            Counter::Done => self.area().done(j),
        }
    }

    fn set(&self, c: Counter, s: u64) {
        self.counter(c, self.me).store(s, Ordering::Release);
    }

    fn ring(&self, j: usize) {
        self.r.bells[j].ring();
    }

    fn ring_others(&self) {
        for j in (0..self.n).filter(|&j| j != self.me) {
            self.r.bells[j].ring();
        }
    }

    /// After `set(c, s)`: wakes the ranks waiting for every rank's counter `c`
    /// to reach `s` (`root` alone, which waits for all others; or, with `None`,
    /// every other rank, each waiting for all the rest), but only if this
    /// arrival completes that set. Earlier arrivals ring nobody: a sleeping
    /// waiter woken by each of n - 1 arrivals only to sleep again costs n - 1
    /// context switches per step, the bulk of a collective's cost when ranks
    /// outnumber cores. The arrivals' SeqCst fences are totally ordered, and
    /// the one ordered last sees every other arrival's store, so at least one
    /// arrival (the last) rings; the waiter's doorbell protocol does the rest.
    fn ring_when_complete(&self, c: Counter, s: u64, root: Option<usize>) {
        std::sync::atomic::fence(Ordering::SeqCst);
        let complete = (0..self.n)
            .filter(|&j| Some(j) != root && j != self.me)
            .all(|j| self.counter(c, j).load(Ordering::Acquire) >= s);
        if !complete {
            return;
        }
        match root {
            Some(r) => self.ring(r),
            None => self.ring_others(),
        }
    }

    /// Waits until `cond` holds (driving progress, see [`Engine::wait_flag`]).
    fn wait(&self, cond: impl FnMut() -> bool) {
        self.e.wait_flag(cond, MAX_SLEEP);
    }

    /// Waits until `release >= s`.
    fn wait_release(&self, s: u64) {
        let rel = self.area().release();
        if rel.load(Ordering::Acquire) < s {
            let bell = self.r.waitv.then(|| self.area().release_bell());
            self.e
                .wait_flag_on(|| rel.load(Ordering::Acquire) >= s, MAX_SLEEP, bell);
        }
    }

    /// Waits until `release >= s` or `other()` holds (woken like
    /// [`Ctx::wait_release`], and by a ring of this rank's doorbell).
    fn wait_release_or(&self, s: u64, mut other: impl FnMut() -> bool) {
        let rel = self.area().release();
        let bell = self.r.waitv.then(|| self.area().release_bell());
        self.e.wait_flag_on(
            || rel.load(Ordering::Acquire) >= s || other(),
            MAX_SLEEP,
            bell,
        );
    }

    /// [`Ctx::publish_release`] where two ranks may both publish step `s`:
    /// raises `release` to `s` (never lowers it: the waiters of the first
    /// publication may have gone on and published a later step), and wakes
    /// the waiters only if it was below.
    fn publish_release_once(&self, s: u64) {
        if self.area().release().fetch_max(s, Ordering::AcqRel) >= s {
            return;
        }
        if self.r.waitv {
            self.area().release_bell().ring();
        } else {
            self.ring_others();
        }
    }

    /// Publishes `release = s` and wakes its waiters.
    fn publish_release(&self, s: u64) {
        self.area().release().store(s, Ordering::Release);
        if self.r.waitv {
            self.area().release_bell().ring();
        } else {
            self.ring_others();
        }
    }

    /// A counted step `s` with no work for the last arrival: it publishes the
    /// release (one wake-up for everyone), the others wait for it.
    fn counted_step(&mut self, s: u64) {
        if self.arrive() {
            self.publish_release(s);
        } else {
            self.wait_release(s);
        }
    }

    /// Arrives at the next counted step: whether this rank is the last to.
    fn arrive(&mut self) -> bool {
        self.r.counted += 1;
        let prev = self.area().arrive().fetch_add(1, Ordering::AcqRel);
        prev + 1 == self.r.counted * self.n as u64
    }

    /// Sets `done = s`, ringing the ranks that wait for the others' `done`.
    fn set_done(&self, s: u64) {
        self.set(Counter::Done, s);
        // Dekker with `wait_free`: our store, fence, load of `wanting` against
        // its increment of `wanting` (after its store of `wants`), fence, load of
        // `done`: one of the two sees the other. A waiter whose increment we see
        // (Acquire: its `wants` store is visible too) is found by the scan; one
        // whose increment we miss sees our `done`.
        full_fence();
        self.ring_wanting();
    }

    /// A rank that only hands its data to `root` at step `s` and reads
    /// nothing of it (reduce's other ranks): raises its flag and `done`
    /// together, and one fence serves both wake-up checks that
    /// [`ring_when_complete`](Self::ring_when_complete) and
    /// [`set_done`](Self::set_done) would each fence for (the fences stall
    /// until the slot's and the flag's stores leave the store buffer: on the
    /// 2-rank reduce's sender, three of them were most of the call after the
    /// copy). Same arguments as theirs, with both stores before the one fence.
    fn contribute(&self, s: u64, root: usize) {
        self.set(Counter::Flag, s);
        self.set(Counter::Done, s);
        full_fence();
        let complete = (0..self.n)
            .filter(|&j| j != root && j != self.me)
            .all(|j| self.counter(Counter::Flag, j).load(Ordering::Acquire) >= s);
        if complete {
            self.ring(root);
        }
        self.ring_wanting();
    }

    /// A rank with nothing to write or read at step `s` (a zero-count
    /// alltoallv's): raises its flag and `done` together and rings as
    /// [`ring_when_complete`](Self::ring_when_complete) with no root and
    /// [`set_done`](Self::set_done) would, after one fence instead of theirs
    /// (the same Dekker pairs as [`contribute`](Self::contribute)'s).
    fn pass(&self, s: u64) {
        self.set(Counter::Flag, s);
        self.set(Counter::Done, s);
        full_fence();
        if self.reached(Counter::Flag, s) {
            self.ring_others();
        }
        self.ring_wanting();
    }

    /// After `done` was set and fenced: rings the ranks registered in `wants`.
    fn ring_wanting(&self) {
        if self.area().wanting().load(Ordering::Acquire) == 0 {
            return;
        }
        for j in (0..self.n).filter(|&j| j != self.me) {
            if self.area().wants(j).load(Ordering::Relaxed) != 0 {
                self.ring(j);
            }
        }
    }

    /// Whether counter `c` of every other rank is `>= s` (a look, no wait).
    fn reached(&self, c: Counter, s: u64) -> bool {
        (0..self.n).all(|j| j == self.me || self.counter(c, j).load(Ordering::Acquire) >= s)
    }

    /// Whether `release >= s` (a look, no wait).
    fn released(&self, s: u64) -> bool {
        self.area().release().load(Ordering::Acquire) >= s
    }

    /// Publishes `release = s` for waiters that sleep on their own doorbells
    /// (non-blocking collectives' requests, whose waits know nothing of the
    /// area's release doorbell): rings each.
    fn publish_release_each(&self, s: u64) {
        self.area().release().store(s, Ordering::Release);
        self.ring_others();
    }

    /// [`wait_free`](Self::wait_free) without waiting: whether every rank is
    /// done with step `s - 2`. While not, this rank stays registered in
    /// `wants` (`registered`), so that setting `done` rings it.
    fn try_free(&mut self, s: u64, registered: &mut bool) -> bool {
        let free = s <= 2 || self.r.known >= s - 2 || {
            if !*registered {
                self.area().wants(self.me).store(1, Ordering::Relaxed);
                self.area().wanting().fetch_add(1, Ordering::SeqCst);
                full_fence();
                *registered = true;
            }
            self.reached(Counter::Done, s - 2)
        };
        if free && *registered {
            self.area().wants(self.me).store(0, Ordering::Relaxed);
            self.area().wanting().fetch_sub(1, Ordering::Relaxed);
            *registered = false;
        }
        if free && s > 2 {
            self.learn(s - 2);
        }
        free
    }

    /// Waits until counter `c` of every other rank is `>= s`.
    fn wait_all(&self, c: Counter, s: u64) {
        let mut j = 0;
        self.wait(|| {
            while j < self.n {
                if j != self.me && self.counter(c, j).load(Ordering::Acquire) < s {
                    return false;
                }
                j += 1;
            }
            true
        });
    }

    /// Before writing a buffer at step `s`: every rank is done with step `s - 2`,
    /// the last one that used buffers of the same parity.
    fn wait_free(&mut self, s: u64) {
        if s <= 2 || self.r.known >= s - 2 {
            return;
        }
        let wants = self.area().wants(self.me);
        wants.store(1, Ordering::Relaxed);
        self.area().wanting().fetch_add(1, Ordering::SeqCst);
        full_fence();
        self.wait_all(Counter::Done, s - 2);
        wants.store(0, Ordering::Relaxed);
        self.area().wanting().fetch_sub(1, Ordering::Relaxed);
        let seen = (0..self.n)
            .map(|j| self.counter(Counter::Done, j).load(Ordering::Acquire))
            .min()
            .unwrap_or(0);
        self.learn(seen.max(s - 2));
    }
}
