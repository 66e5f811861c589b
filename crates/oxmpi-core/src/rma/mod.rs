//! One-sided communication: windows, put/get/accumulate, and their synchronization.
//!
//! A [`Window`] is an engine object with its own communicator (a private dup of the
//! one it was made on, so its own context ids: fence barriers and post/complete
//! notices never meet user traffic). On one host, the origin does every operation
//! itself, with no message to the target: window memory is in the host's window
//! segment (`MPI_Win_allocate`, `_allocate_shared`) or reached by cross-memory attach
//! (`MPI_Win_create`, dynamic windows), see [`crate::transport::winmem`]. Operations
//! therefore complete when the call returns (flushes are memory fences).
//!
//! Atomicity: on windows whose memory is in the segment (`MPI_Win_allocate`,
//! `_allocate_shared`), every aligned element of 1, 2, 4 or 8 bytes is updated by a
//! CPU atomic ([`crate::transport::winatomic`]): accumulate, get_accumulate,
//! fetch_and_op and compare_and_swap take no lock. Other elements (long double,
//! padded pairs, unaligned addresses) and windows over user memory (reached by
//! cross-memory attach) serialize on the target's accumulate mutex in the segment.
//! Either way every accumulate is atomic per element, and accumulates from one
//! origin are ordered (they complete in the call). Passive target: a reader/writer lock word per target in the
//! segment; the target never takes part, so it may compute outside MPI meanwhile.
//! An uncontended lock or unlock of a target on this host takes no mutex: two
//! compare-exchanges (this process's per-target word, the target's lock word), see
//! `sync::lock_fast`; a busy lock word is waited for with sleeps.
//! Active target: fence is a barrier on the window's communicator. Post/start/
//! complete/wait between ranks of one host are counters in the host segment (per
//! ordered pair: posts a target made to an origin, completes an origin made to a
//! target), bumped with release ordering and followed by a ring of the waiting
//! rank's doorbell, which sleeps in [`crate::runtime`]'s `wait_flag`; to ranks on
//! other hosts they are zero-byte messages on the window's communicator (see
//! `pscw`). The epoch rules live in [`epoch`].
//!
//! Targets on other hosts (TCP peers): every operation, lock and unlock is an
//! active message on a second private communicator, applied by the target's
//! progress engine (after every progress step of any MPI call there, see [`am`]),
//! and answered; the origin waits for the answer, so operations complete in the
//! call there too. A target that stays out of MPI (computing, or blocked outside
//! MPI) is served by a progress thread that steps in when the program makes no
//! progress of its own (see [`am`]).

mod am;
mod api;
mod attach;
pub mod epoch;
mod fast;
mod ops;
mod pscw;
mod sync;
mod target;
mod typed;
pub use typed::TypedWindow;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::buf::AnyBytes;
use crate::buf::{RecvBuf, SendBuf};
use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};
use crate::request::PROC_NULL;
use crate::transport::winatomic;
use crate::transport::winmem::{full_fence, CallerMem, LocalMem, Mapped, Reach, Segment};
use crate::{coll, pt2pt, runtime, SendMode};
use epoch::Epochs;
pub use epoch::LockKind;

pub(crate) use am::{serve_all, stop_progress_thread, AM_ACTIVE};
use sync::{acquire, lock_kind_spin};
use target::Tgt;

/// How the window's memory came to be (`MPI_WIN_CREATE_FLAVOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Create,
    Allocate,
    Dynamic,
    Shared,
}

/// `MPI_MODE_NOCHECK`.
pub const MODE_NOCHECK: i32 = 1024;
/// `MPI_MODE_NOPRECEDE`.
pub const MODE_NOPRECEDE: i32 = 2048;
/// `MPI_MODE_NOPUT`.
pub const MODE_NOPUT: i32 = 4096;
/// `MPI_MODE_NOSTORE`.
pub const MODE_NOSTORE: i32 = 8192;
use epoch::MODE_NOSUCCEED;

/// Rejects assert bits the call does not know (`MPI_ERR_ASSERT`).
fn check_assert(call: &str, assert: i32, allowed: i32, names: &str) -> Result<()> {
    if assert & !allowed != 0 {
        return Err(MpiError::arg(
            ErrorClass::Assert,
            call,
            "assert",
            format!("{assert:#x} has bits other than {names}"),
        ));
    }
    Ok(())
}

const TAG_POST: i32 = 1;
const TAG_COMPLETE: i32 = 2;

// Per local rank, in the host segment: lock word, the locks taken with
// MPI_MODE_NOCHECK (same encoding, to detect conflicts with them), the
// MPI_MODE_NOPUT marks (the number of the fence epoch it was asserted for; 1 while a
// post asserting it is exposed), accumulate mutex, the bulk accumulate word
// (`ops::BULK_HELD` while a bulk accumulate applies; below it, the count of
// element-atomic accumulates in progress), attached regions.
const CTL_LOCK: usize = 0;
const CTL_NOCHECK: usize = 8;
const CTL_NOPUT: usize = 16;
const CTL_NOPUT_POST: usize = 24;
// Regions attached beyond the MAX_REGIONS slots: a table of (base, len) pairs in the
// owner's heap, read by cross-memory attach: its address, its pair count, and a
// sequence number that is odd while the owner rewrites them (a seqlock).
const CTL_OVF_SEQ: usize = 32;
const CTL_OVF_PTR: usize = 40;
const CTL_OVF_LEN: usize = 48;
const CTL_ACC: usize = 64;
const CTL_BULK: usize = 72;
const CTL_REGIONS: usize = 128;
/// Regions of a dynamic window published in the host segment per process; more
/// are kept in a table in the owner's memory (see `CTL_OVF_*`), without limit.
pub const MAX_REGIONS: usize = 64;
/// The slot of a region kept in the overflow table.
const OVF_SLOT: usize = usize::MAX;
const CTL_STRIDE: usize = CTL_REGIONS + MAX_REGIONS * 16;
// After the control blocks of the host's `nl` ranks: the post/start/complete/wait
// counters, two square tables of `nl` rows of `nl` words (each row on its own cache
// lines). Row `o` of the first: posts each target made to origin `o` (written by the
// target, read by `o`'s MPI_Win_start); row `t` of the second: completes each origin
// made to target `t` (written by the origin, read by `t`'s MPI_Win_wait/test).
// Every word has one writer, and only grows.
const WRITER: u64 = 1 << 63;
const PAGE: usize = 4096;

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

#[derive(Clone, Debug)]
struct Peer {
    /// Index among the window's ranks on this host; `None` on another host.
    local: Option<usize>,
    size: usize,
    disp_unit: usize,
    reach: Option<Reach>,
    /// Its window memory in this process when plain loads and stores reach it (the
    /// shared segment, or this process's own memory; not a dynamic window), else
    /// `None`: the fast path's test.
    direct: Option<Mapped>,
}

#[derive(Default)]
struct State {
    epochs: Epochs,
    /// Lock words this process holds (target rank, kind), to release at unlock.
    held: Vec<(i32, LockKind)>,
    /// Locks taken with MPI_MODE_NOCHECK on targets of this host (target, kind).
    nocheck: Vec<(i32, LockKind)>,
    /// The last groups given to post and start, with their ranks in the window
    /// (a PSCW loop names the same groups every time: translated once).
    groups: Vec<(crate::group::Group, Arc<[i32]>)>,
}

/// The memory this process attached to a dynamic window (its own mutex, never
/// held across progress, so the active-message server may read it any time).
#[derive(Default)]
struct Attached {
    /// Regions: slot, base, len.
    list: Vec<(usize, usize, usize)>,
    /// The regions' memory, this process's reach of it (`Reach::Attached`).
    mem: Arc<crate::transport::winmem::Attached>,
    /// The overflow table other processes read (base, len pairs of the regions
    /// whose slot is `OVF_SLOT`), published at `CTL_OVF_PTR`.
    overflow: Vec<[u64; 2]>,
}

/// A one-sided communication window (one process's view of it).
pub struct Window {
    comm: Comm,
    flavor: Flavor,
    base: usize,
    size: usize,
    disp_unit: usize,
    peers: Vec<Peer>,
    seg: Arc<Segment>,
    my_local: usize,
    state: Mutex<State>,
    attached: Mutex<Attached>,
    /// Active messages to and from ranks on other hosts (`None` on one host).
    am: Option<am::Am>,
    /// Per rank of the window: whether this process holds a passive-target epoch
    /// to it (a lock, or lock_all), read without the state's mutex by [`fast`].
    passive: Box<[std::sync::atomic::AtomicBool]>,
    /// The number of the open fence epoch (`Epochs::fences`), 0 when none is open,
    /// and whether the fast path made an operation in it: read and set without the
    /// state's mutex by [`fast`], kept in step with the epochs by `sync_fence`.
    fence_seq: std::sync::atomic::AtomicU64,
    fence_used: std::sync::atomic::AtomicBool,
    /// Per rank of the window: whether it is a target of this process's open
    /// post/start/complete access epoch whose post arrived (set at the end of
    /// `start`, cleared by `complete`), read by [`fast`].
    started: Box<[std::sync::atomic::AtomicBool]>,
    /// Per rank of the window: the lock this process holds on it (`sync::MINE_*`):
    /// none, one taken without the state's mutex (shared or exclusive, not in the
    /// epochs' books), or one the epochs record (`MINE_BOOKED`). See `sync::lock_fast`.
    mine: Box<[std::sync::atomic::AtomicU8]>,
    /// Whether locks must take the general path now (a lock_all, start or fence
    /// epoch is open: the epochs decide), kept in step under the state's mutex.
    closed: std::sync::atomic::AtomicBool,
    /// Every process made the window with info `accumulate_ops` set (`same_op` or
    /// `same_op_no_op`): concurrent accumulates to one element use one op (or
    /// MPI_NO_OP). See [`Window::same_op_way`].
    same_op: bool,
    /// Ranks of the window on this host, the byte offset of the post/start/complete/
    /// wait counters in the segment, and the length of one of their rows.
    nlocal: usize,
    pscw_off: usize,
    pscw_row: usize,
    /// Per host index: how many posts of that target (completes of that origin)
    /// this process consumed (its own counts, compared with the segment's).
    seen_post: Box<[std::sync::atomic::AtomicU64]>,
    seen_done: Box<[std::sync::atomic::AtomicU64]>,
    /// Per rank of the window: the doorbell of its process when it shares this
    /// process's host segment (rung after a post or complete to it).
    bells: Box<[Option<&'static crate::transport::doorbell::Doorbell>]>,
    /// How long a wait for a post or complete sleeps at most between looks: short
    /// when a peer on this host has no doorbell of ours to ring (another job's).
    pscw_sleep: Duration,
    /// (world rank, rank in the window), sorted: group arguments' translation.
    by_world: Box<[(u32, i32)]>,
    /// The window's last MPI_Win_lock_all: how many ranks (in rank order) its
    /// lock words are held, and whether with MPI_MODE_NOCHECK (bit 63).
    all_taken: std::sync::atomic::AtomicU64,
}

/// What a window's creation info promises (the hints the engine uses).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints {
    /// `accumulate_ops` was given (`same_op` or `same_op_no_op`) by this process.
    pub same_op: bool,
}

fn rma_err(class: ErrorClass, call: &str, why: impl std::fmt::Display) -> MpiError {
    MpiError::new(class, format!("{call}: {why}"))
}

fn io_err(call: &str, what: &str, e: std::io::Error) -> MpiError {
    rma_err(ErrorClass::Other, call, format!("{what}: {e}"))
}

/// A communicator with `comm`'s group and new context ids, without the user's
/// attributes (`MPI_Comm_dup` would run their copy callbacks) or topology.
fn private_dup(comm: &Comm) -> Result<Comm> {
    let c = crate::comm::create::create(comm, comm.group())?;
    c.ok_or_else(|| MpiError::intern("MPI_Win_create", "the window's communicator lost this rank"))
}

/// Allgathers `mine` (equal length on every rank) over `comm`.
fn allgather_u64(comm: &Comm, mine: &[u64]) -> Result<Vec<u64>> {
    let n = comm.size() as usize;
    let mut all = vec![0u64; mine.len() * n];
    coll::api_move::allgather(
        Some(SendBuf::slice(mine)),
        RecvBuf::slice(&mut all),
        mine.len(),
        comm,
    )?;
    Ok(all)
}

impl Window {
    /// Makes a window (collective over `comm`). For `Create`, `mem` is this process's
    /// memory (`size` bytes of it are the window; the window reaches no further than
    /// `mem`); for `Allocate`/`Shared` the memory is made here (`mem` is ignored); for
    /// `Dynamic` `size` is 0. `noncontig`: `alloc_shared_noncontig`.
    pub fn new(
        comm: &Comm,
        flavor: Flavor,
        mem: CallerMem,
        size: usize,
        disp_unit: usize,
        noncontig: bool,
        call: &str,
    ) -> Result<Arc<Window>> {
        Self::new_hinted(
            comm,
            flavor,
            mem,
            size,
            disp_unit,
            noncontig,
            Hints::default(),
            call,
        )
    }

    /// [`Window::new`] with the creation info's hints; a hint holds only if every
    /// process gave it (they are agreed on in the creation's allgather).
    #[allow(clippy::too_many_arguments)]
    pub fn new_hinted(
        comm: &Comm,
        flavor: Flavor,
        mem: CallerMem,
        size: usize,
        disp_unit: usize,
        noncontig: bool,
        hints: Hints,
        call: &str,
    ) -> Result<Arc<Window>> {
        if comm.is_inter() {
            return Err(MpiError::arg(
                ErrorClass::Comm,
                call,
                "comm",
                "is an intercommunicator; windows need an intracommunicator",
            ));
        }
        if disp_unit == 0 && flavor != Flavor::Dynamic {
            return Err(MpiError::arg(
                ErrorClass::Disp,
                call,
                "disp_unit",
                "must be positive",
            ));
        }
        let base = mem.addr();
        let e = runtime::engine()?;
        crate::transport::cma::allow_peer_reads();
        let wcomm = private_dup(comm)?;
        let n = wcomm.size() as usize;
        let me = wcomm.rank() as usize;
        let world = wcomm.group().to_vec();
        let host = |r: usize| e.host_index(world[r]);
        let pid = u64::from(std::process::id());
        let mine = [
            pid,
            size as u64,
            disp_unit as u64,
            base as u64,
            hints.same_op as u64,
        ];
        let info = allgather_u64(&wcomm, &mine)?;
        const F: usize = 5;
        let same_op = (0..n).all(|r| info[r * F + 4] != 0);
        let locals: Vec<usize> = (0..n).filter(|&r| host(r) == host(me)).collect();
        if flavor == Flavor::Shared && locals.len() != n {
            return Err(rma_err(ErrorClass::RmaShared, call, "the communicator spans several hosts; shared memory needs all its processes on one host"));
        }
        let my_local = locals
            .iter()
            .position(|&r| r == me)
            .expect("this rank is local to itself");
        // Layout of the host segment: control blocks, post/start/complete/wait
        // counters, then (allocate flavors) data.
        let nl = locals.len();
        let pscw_off = CTL_STRIDE * nl;
        let pscw_row = align_up(nl * 8, 64);
        let data_start = align_up(pscw_off + 2 * nl * pscw_row, PAGE);
        let mut data_off = Vec::with_capacity(locals.len());
        let mut at = data_start;
        let with_data = matches!(flavor, Flavor::Allocate | Flavor::Shared);
        for &r in &locals {
            let sz = info[r * F + 1] as usize;
            if flavor == Flavor::Allocate || noncontig {
                at = align_up(at, if noncontig { PAGE } else { 64 });
            }
            data_off.push(at);
            if with_data {
                at = at
                    .checked_add(sz)
                    .ok_or_else(|| MpiError::arg(ErrorClass::Size, call, "size", "overflows"))?;
            }
        }
        let total = align_up(at.max(data_start), PAGE);
        let leader = locals[0];
        let mut seg_opt = None;
        if me == leader {
            seg_opt = Some(
                Segment::create(total)
                    .map_err(|e| io_err(call, "creating the window segment", e))?,
            );
        }
        let fd = seg_opt.as_ref().map_or(-1, |s| s.fd() as i64);
        let fds = allgather_u64(&wcomm, &[fd as u64])?;
        let mut seg = match seg_opt {
            Some(s) => s,
            None => {
                let lpid = info[leader * F] as i32;
                Segment::open(lpid, fds[leader] as i64 as i32, total).map_err(|e| {
                    io_err(
                        call,
                        "mapping the window segment of the host's first rank",
                        e,
                    )
                })?
            }
        };
        coll::barrier::barrier(&wcomm)?;
        seg.close_fd();
        let seg = Arc::new(seg);
        let attached = Attached::default();
        let mut peers = Vec::with_capacity(n);
        for r in 0..n {
            let (rpid, rsize, rdu, rbase) = (
                info[r * F] as i32,
                info[r * F + 1] as usize,
                info[r * F + 2] as usize,
                info[r * F + 3] as usize,
            );
            let local = locals.iter().position(|&x| x == r);
            let reach = match local.map(|li| (li, flavor)) {
                None => None,
                // `rsize` bytes of the host segment from the rank's data offset (the
                // layout above), kept mapped by the reach.
                Some((li, Flavor::Allocate | Flavor::Shared)) => {
                    let part = seg.part(data_off[li], rsize).ok_or_else(|| {
                        MpiError::intern(call, "a rank's window memory lies outside the segment")
                    })?;
                    Some(Reach::Mapped(part))
                }
                // The caller's memory, as far as it reaches (not past `mem`).
                Some((_, Flavor::Create)) if r == me => {
                    Some(Reach::Mapped(mem.mapped().within(rsize)))
                }
                // A dynamic window's offsets are addresses of this process, each run
                // found in the regions attached (`MPI_Win_attach`'s `CallerMem`s).
                Some((_, Flavor::Dynamic)) if r == me => {
                    Some(Reach::Attached(attached.mem.clone()))
                }
                Some((_, Flavor::Create | Flavor::Dynamic)) => Some(Reach::Cma {
                    pid: rpid,
                    addr: rbase,
                }),
            };
            let direct = match &reach {
                Some(Reach::Mapped(m)) => Some(m.clone()),
                _ => None,
            };
            peers.push(Peer {
                local,
                size: rsize,
                disp_unit: rdu.max(1),
                reach,
                direct,
            });
        }
        let my_base = if with_data {
            seg.addr() + data_off[my_local]
        } else {
            base
        };
        // Every rank sees the same hosts, so all take part in this dup or none.
        let multi_host = (0..n).any(|r| host(r) != host(0));
        let am = if multi_host {
            Some(am::Am::new(&wcomm)?)
        } else {
            None
        };
        let bells: Box<[_]> = (0..n)
            .map(|r| peers[r].local.and_then(|_| e.local_bell(world[r])))
            .collect();
        let unrung = (0..n).any(|r| peers[r].local.is_some() && bells[r].is_none());
        let mut by_world: Box<[(u32, i32)]> = world
            .iter()
            .enumerate()
            .map(|(r, &w)| (w, r as i32))
            .collect();
        by_world.sort_unstable();
        let w = Arc::new(Window {
            comm: wcomm,
            flavor,
            base: my_base,
            size,
            disp_unit,
            peers,
            seg,
            my_local,
            state: Mutex::new(State::default()),
            attached: Mutex::new(attached),
            am,
            passive: (0..n).map(|_| Default::default()).collect(),
            fence_seq: Default::default(),
            fence_used: Default::default(),
            started: (0..n).map(|_| Default::default()).collect(),
            mine: (0..n).map(|_| Default::default()).collect(),
            closed: Default::default(),
            same_op,
            nlocal: nl,
            pscw_off,
            pscw_row,
            seen_post: (0..nl).map(|_| Default::default()).collect(),
            seen_done: (0..nl).map(|_| Default::default()).collect(),
            bells,
            pscw_sleep: if unrung {
                Duration::from_micros(200)
            } else {
                Duration::from_millis(10)
            },
            by_world,
            all_taken: Default::default(),
        });
        if w.am.is_some() {
            am::register(&w);
        }
        Ok(w)
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn att(&self) -> std::sync::MutexGuard<'_, Attached> {
        self.attached.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn comm(&self) -> &Comm {
        &self.comm
    }
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }
    /// This process's window memory (`MPI_WIN_BASE`).
    pub fn base(&self) -> usize {
        self.base
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn disp_unit(&self) -> usize {
        self.disp_unit
    }
    /// Whether the window honours `accumulate_ops` (every process gave it).
    pub fn same_op(&self) -> bool {
        self.same_op
    }

    #[inline]
    fn ctl(&self, local: usize, what: usize) -> &std::sync::atomic::AtomicU64 {
        self.seg.word(local * CTL_STRIDE + what)
    }

    /// `MPI_Win_shared_query`: (size, disp_unit, address in this process) of `rank`'s
    /// memory; `PROC_NULL` gives the lowest rank with memory.
    pub fn shared_query(&self, rank: i32) -> Result<(usize, usize, usize)> {
        let (size, du, m) = self.shared_of(rank)?;
        Ok((size, du, m.map_or(0, |m| m.addr())))
    }

    /// `rank`'s memory in a shared mapping of this process (`None`: it has none there,
    /// as [`shared_query`](Self::shared_query)'s null base), kept mapped by the value.
    pub fn shared_mapped(&self, rank: i32) -> Result<Option<Mapped>> {
        Ok(self.shared_of(rank)?.2.cloned())
    }

    /// This process's part of a window the library allocated, `len` `T`s, as its one
    /// view of `T`s (an error naming `call` for other flavors, misaligned memory, or
    /// a second view).
    pub fn local_mem<T>(&self, len: usize, any: AnyBytes<T>, call: &str) -> Result<LocalMem<T>> {
        let off = self.base.wrapping_sub(self.seg.addr());
        matches!(self.flavor, Flavor::Allocate | Flavor::Shared)
            .then(|| self.seg.take_local(off, len, any))
            .flatten()
            .ok_or_else(|| {
                MpiError::intern(call, "the window's memory cannot be viewed as its elements")
            })
    }

    /// (size, disp_unit, memory in this process) of `rank`'s part, as `shared_query`.
    fn shared_of(&self, rank: i32) -> Result<(usize, usize, Option<&Mapped>)> {
        const C: &str = "MPI_Win_shared_query";
        if !matches!(self.flavor, Flavor::Shared | Flavor::Allocate) {
            // MPI-4.1: windows of the other flavors may be queried too; their
            // memory is not in a shared mapping, so it is reported as absent
            // (size 0, a null base), as MPICH does.
            if rank != PROC_NULL {
                self.check_rank(C, rank)?;
            }
            return Ok((0, self.disp_unit, None));
        }
        let r = if rank == PROC_NULL {
            match self.peers.iter().position(|p| p.size > 0) {
                Some(r) => r,
                None => return Ok((0, self.disp_unit, None)),
            }
        } else {
            self.check_rank(C, rank)?
        };
        let p = &self.peers[r];
        match &p.reach {
            // A rank that allocated no memory has none to share: a null base (as
            // in MPICH; programs check it), not an address inside another's memory.
            Some(Reach::Mapped(m)) => Ok((p.size, p.disp_unit, (p.size > 0).then_some(m))),
            _ => Err(rma_err(
                ErrorClass::RmaShared,
                C,
                format!("rank {rank}'s memory is on another host"),
            )),
        }
    }

    fn check_rank(&self, call: &str, rank: i32) -> Result<usize> {
        if rank < 0 || rank as usize >= self.peers.len() {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                call,
                "target_rank",
                format!(
                    "{rank} is not a rank of the window's group of {}",
                    self.peers.len()
                ),
            ));
        }
        Ok(rank as usize)
    }

    /// The ranks of the window's group for world ranks `world` (a group argument).
    pub fn ranks_of(&self, call: &str, world: &[u32]) -> Result<Vec<i32>> {
        world
            .iter()
            .map(|w| {
                self.by_world
                    .binary_search_by_key(w, |&(x, _)| x)
                    .map(|i| self.by_world[i].1)
                    .map_err(|_| {
                        MpiError::arg(
                            ErrorClass::Group,
                            call,
                            "group",
                            format!("world rank {w} is not in the window's group"),
                        )
                    })
            })
            .collect()
    }

    /// `MPI_Win_free` (collective): checks no epoch is open, then waits for every
    /// process so nobody accesses memory that goes away.
    pub fn free(&self) -> Result<()> {
        self.check_free()?;
        full_fence();
        coll::barrier::barrier(&self.comm)?;
        if self.am.is_some() {
            am::unregister(self);
        }
        Ok(())
    }

    /// Whether `free` would be accepted (no epoch but a fence one is open).
    pub fn check_free(&self) -> Result<()> {
        self.st().epochs.check_free()?;
        if self.fast_locks_held() {
            return Err(epoch::sync_err(
                "MPI_Win_free",
                "a passive-target (lock) epoch is still open",
            ));
        }
        Ok(())
    }
}
