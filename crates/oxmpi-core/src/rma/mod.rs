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
//! Active target: fence is a barrier on the window's communicator; post/start/
//! complete/wait are zero-byte messages on it. The epoch rules live in [`epoch`].
//!
//! Targets on other hosts (TCP peers): every operation, lock and unlock is an
//! active message on a second private communicator, applied by the target's
//! progress engine (after every progress step of any MPI call there, see [`am`]),
//! and answered; the origin waits for the answer, so operations complete in the
//! call there too. A target that stays out of MPI (computing, or blocked outside
//! MPI) is served by a progress thread that steps in when the program makes no
//! progress of its own (see [`am`]).

mod am;
pub mod epoch;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::comm::Comm;
use crate::datatype::{Datatype, Primitive};
use crate::error::{ErrorClass, MpiError, Result};
use crate::op::{Op, PredefinedOp};
use crate::request::PROC_NULL;
use crate::transport::winatomic;
use crate::transport::winmem::{full_fence, Reach, Segment};
use crate::{coll, pt2pt, runtime, SendMode};
pub use epoch::LockKind;
use epoch::Epochs;

pub(crate) use am::{serve_all, stop_progress_thread, AM_ACTIVE};

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
        return Err(MpiError::arg(ErrorClass::Assert, call, "assert", format!("{assert:#x} has bits other than {names}")));
    }
    Ok(())
}

const TAG_POST: i32 = 1;
const TAG_COMPLETE: i32 = 2;

// Per local rank, in the host segment: lock word, the locks taken with
// MPI_MODE_NOCHECK (same encoding, to detect conflicts with them), the
// MPI_MODE_NOPUT marks (the number of the fence epoch it was asserted for; 1 while a
// post asserting it is exposed), accumulate mutex,
// attached regions.
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
const CTL_REGIONS: usize = 128;
/// Regions of a dynamic window published in the host segment per process; more
/// are kept in a table in the owner's memory (see `CTL_OVF_*`), without limit.
pub const MAX_REGIONS: usize = 64;
/// The slot of a region kept in the overflow table.
const OVF_SLOT: usize = usize::MAX;
const CTL_STRIDE: usize = CTL_REGIONS + MAX_REGIONS * 16;
const WRITER: u64 = 1 << 63;
const PAGE: usize = 4096;

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// A checked target: its rank, how it is reached, the byte runs to access.
type Target = (usize, Tgt, RunList);

/// The byte runs `(window offset, len)` of an access: one, inline (contiguous
/// types, the common case of small operations: no allocation), or many.
enum RunList {
    One([(usize, usize); 1]),
    Many(Vec<(usize, usize)>),
}

impl std::ops::Deref for RunList {
    type Target = [(usize, usize)];
    fn deref(&self) -> &[(usize, usize)] {
        match self {
            RunList::One(a) => a,
            RunList::Many(v) => v,
        }
    }
}

/// How an operation reaches its target.
enum Tgt {
    /// This host: the origin copies.
    Local(Reach),
    /// Another host: an active message.
    Remote,
}

#[derive(Clone, Debug)]
struct Peer {
    /// Index among the window's ranks on this host; `None` on another host.
    local: Option<usize>,
    size: usize,
    disp_unit: usize,
    reach: Option<Reach>,
}

#[derive(Default)]
struct State {
    epochs: Epochs,
    /// Lock words this process holds (target rank, kind), to release at unlock.
    held: Vec<(i32, LockKind)>,
    /// Locks taken with MPI_MODE_NOCHECK on targets of this host (target, kind).
    nocheck: Vec<(i32, LockKind)>,
}

/// The memory this process attached to a dynamic window (its own mutex, never
/// held across progress, so the active-message server may read it any time).
#[derive(Default)]
struct Attached {
    /// Regions: slot, base, len.
    list: Vec<(usize, usize, usize)>,
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
    seg: Segment,
    my_local: usize,
    state: Mutex<State>,
    attached: Mutex<Attached>,
    /// Active messages to and from ranks on other hosts (`None` on one host).
    am: Option<am::Am>,
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
    let byte = Datatype::predefined(Primitive::Byte);
    let len = std::mem::size_of_val(mine);
    // SAFETY: `mine` is readable for `len` bytes and `all` holds `len` bytes per rank.
    unsafe {
        coll::allgather::allgather(Some(mine.as_ptr().cast()), len, &byte, all.as_mut_ptr().cast(), len, &byte, comm)?;
    }
    Ok(all)
}

fn lock_kind_spin(word: &std::sync::atomic::AtomicU64, kind: LockKind) -> bool {
    let v = word.load(Ordering::Relaxed);
    match kind {
        LockKind::Shared => v & WRITER == 0 && word.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed).is_ok(),
        LockKind::Exclusive => v == 0 && word.compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed).is_ok(),
    }
}

/// Waits (progressing the engine, backing off to sleeps) until `try_take` succeeds.
fn acquire(mut try_take: impl FnMut() -> bool) -> Result<()> {
    for _ in 0..64 {
        if try_take() {
            return Ok(());
        }
        std::hint::spin_loop();
    }
    // `wait_flag` may look at its condition again after it held once: take the
    // lock once only, and report it taken from then on.
    let mut taken = false;
    runtime::engine()?.wait_flag(
        || {
            taken = taken || try_take();
            taken
        },
        Duration::from_micros(200),
    );
    Ok(())
}

/// Whether bytes `[o, end)` lie in attached memory: `regions` (base, len), sorted
/// by base; adjacent regions together cover the run (MPI allows an access to span
/// regions attached back to back).
fn covered(regions: &[(usize, usize)], o: i128, end: i128) -> bool {
    let mut at = o;
    for &(b, l) in regions {
        let (b, e) = (b as i128, b as i128 + l as i128);
        if b > at {
            break;
        }
        if e > at {
            at = e;
            if at >= end {
                return true;
            }
        }
    }
    false
}

/// Byte runs `(offset, len)` of `count` elements of `dt` laid out from `start`.
fn runs(dt: &Datatype, count: usize, start: i128) -> Vec<(i128, usize)> {
    let mut v: Vec<(i128, usize)> = Vec::new();
    if count == 0 || dt.size() == 0 {
        return v;
    }
    if dt.is_contiguous() {
        v.push((start + dt.true_lb() as i128, dt.size() * count));
        return v;
    }
    let ext = dt.extent() as i128;
    for i in 0..count as i128 {
        dt.for_each_block(0, |off, len| {
            let o = start + i * ext + off as i128;
            match v.last_mut() {
                Some((lo, l)) if *lo + *l as i128 == o => *l += len,
                _ => v.push((o, len)),
            }
        });
    }
    v
}

impl Window {
    /// Makes a window (collective over `comm`). For `Create`, `base`/`size` are this
    /// process's memory; for `Allocate`/`Shared` the memory is made here (`base` is
    /// ignored); for `Dynamic` both are 0. `noncontig`: `alloc_shared_noncontig`.
    ///
    /// # Safety
    /// For `Create`, `base .. base + size` is memory of this process that stays valid
    /// until the window is freed (the MPI contract of `MPI_Win_create`).
    pub unsafe fn new(comm: &Comm, flavor: Flavor, base: usize, size: usize, disp_unit: usize, noncontig: bool, call: &str) -> Result<Arc<Window>> {
        if comm.is_inter() {
            return Err(MpiError::arg(ErrorClass::Comm, call, "comm", "is an intercommunicator; windows need an intracommunicator"));
        }
        if disp_unit == 0 && flavor != Flavor::Dynamic {
            return Err(MpiError::arg(ErrorClass::Disp, call, "disp_unit", "must be positive"));
        }
        let e = runtime::engine()?;
        crate::transport::cma::allow_peer_reads();
        let wcomm = private_dup(comm)?;
        let n = wcomm.size() as usize;
        let me = wcomm.rank() as usize;
        let world = wcomm.group().to_vec();
        let host = |r: usize| e.host_index(world[r]);
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u64;
        let mine = [pid, size as u64, disp_unit as u64, base as u64];
        let info = allgather_u64(&wcomm, &mine)?;
        let locals: Vec<usize> = (0..n).filter(|&r| host(r) == host(me)).collect();
        if flavor == Flavor::Shared && locals.len() != n {
            return Err(rma_err(ErrorClass::RmaShared, call, "the communicator spans several hosts; shared memory needs all its processes on one host"));
        }
        let my_local = locals.iter().position(|&r| r == me).expect("this rank is local to itself");
        // Layout of the host segment: control blocks, then (allocate flavors) data.
        let data_start = align_up(CTL_STRIDE * locals.len(), PAGE);
        let mut data_off = Vec::with_capacity(locals.len());
        let mut at = data_start;
        let with_data = matches!(flavor, Flavor::Allocate | Flavor::Shared);
        for &r in &locals {
            let sz = info[r * 4 + 1] as usize;
            if flavor == Flavor::Allocate || noncontig {
                at = align_up(at, if noncontig { PAGE } else { 64 });
            }
            data_off.push(at);
            if with_data {
                at = at.checked_add(sz).ok_or_else(|| MpiError::arg(ErrorClass::Size, call, "size", "overflows"))?;
            }
        }
        let total = align_up(at.max(data_start), PAGE);
        let leader = locals[0];
        let mut seg_opt = None;
        if me == leader {
            seg_opt = Some(Segment::create(total).map_err(|e| io_err(call, "creating the window segment", e))?);
        }
        let fd = seg_opt.as_ref().map_or(-1, |s| s.fd() as i64);
        let fds = allgather_u64(&wcomm, &[fd as u64])?;
        let mut seg = match seg_opt {
            Some(s) => s,
            None => {
                let lpid = info[leader * 4] as i32;
                Segment::open(lpid, fds[leader] as i64 as i32, total).map_err(|e| io_err(call, "mapping the window segment of the host's first rank", e))?
            }
        };
        coll::barrier::barrier(&wcomm)?;
        seg.close_fd();
        let mut peers = Vec::with_capacity(n);
        for r in 0..n {
            let (rpid, rsize, rdu, rbase) = (info[r * 4] as i32, info[r * 4 + 1] as usize, info[r * 4 + 2] as usize, info[r * 4 + 3] as usize);
            let local = locals.iter().position(|&x| x == r);
            let reach = local.map(|li| match flavor {
                Flavor::Allocate | Flavor::Shared => Reach::Mapped { addr: seg.addr() + data_off[li] },
                Flavor::Create | Flavor::Dynamic if r == me => Reach::Mapped { addr: rbase },
                Flavor::Create | Flavor::Dynamic => Reach::Cma { pid: rpid, addr: rbase },
            });
            peers.push(Peer { local, size: rsize, disp_unit: rdu.max(1), reach });
        }
        let my_base = if with_data { seg.addr() + data_off[my_local] } else { base };
        // Every rank sees the same hosts, so all take part in this dup or none.
        let multi_host = (0..n).any(|r| host(r) != host(0));
        let am = if multi_host { Some(am::Am::new(&wcomm)?) } else { None };
        let w = Arc::new(Window { comm: wcomm, flavor, base: my_base, size, disp_unit, peers, seg, my_local, state: Mutex::new(State::default()), attached: Mutex::default(), am });
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

    fn ctl(&self, local: usize, what: usize) -> &std::sync::atomic::AtomicU64 {
        self.seg.word(local * CTL_STRIDE + what)
    }

    /// `MPI_Win_shared_query`: (size, disp_unit, address in this process) of `rank`'s
    /// memory; `PROC_NULL` gives the lowest rank with memory.
    pub fn shared_query(&self, rank: i32) -> Result<(usize, usize, usize)> {
        const C: &str = "MPI_Win_shared_query";
        if !matches!(self.flavor, Flavor::Shared | Flavor::Allocate) {
            // MPI-4.1: windows of the other flavors may be queried too; their
            // memory is not in a shared mapping, so it is reported as absent
            // (size 0, a null base), as MPICH does.
            if rank != PROC_NULL {
                self.check_rank(C, rank)?;
            }
            return Ok((0, self.disp_unit, 0));
        }
        let r = if rank == PROC_NULL {
            match self.peers.iter().position(|p| p.size > 0) {
                Some(r) => r,
                None => return Ok((0, self.disp_unit, 0)),
            }
        } else {
            self.check_rank(C, rank)?
        };
        let p = &self.peers[r];
        match p.reach {
            // A rank that allocated no memory has none to share: a null base (as
            // in MPICH; programs check it), not an address inside another's memory.
            Some(Reach::Mapped { addr }) => Ok((p.size, p.disp_unit, if p.size == 0 { 0 } else { addr })),
            _ => Err(rma_err(ErrorClass::RmaShared, C, format!("rank {rank}'s memory is on another host"))),
        }
    }

    fn check_rank(&self, call: &str, rank: i32) -> Result<usize> {
        if rank < 0 || rank as usize >= self.peers.len() {
            return Err(MpiError::arg(ErrorClass::Rank, call, "target_rank", format!("{rank} is not a rank of the window's group of {}", self.peers.len())));
        }
        Ok(rank as usize)
    }

    /// The ranks of the window's group for world ranks `world` (a group argument).
    pub fn ranks_of(&self, call: &str, world: &[u32]) -> Result<Vec<i32>> {
        let g = self.comm.group();
        world
            .iter()
            .map(|w| {
                g.iter().position(|x| x == w).map(|r| r as i32).ok_or_else(|| {
                    MpiError::arg(ErrorClass::Group, call, "group", format!("world rank {w} is not in the window's group"))
                })
            })
            .collect()
    }

    /// The target's reach and the byte runs (window offsets) `count` elements of
    /// `dt` at displacement `disp` cover, after the epoch, rank and range checks.
    /// `writes`: the operation updates the target (put, accumulate, compare-and-swap).
    #[allow(clippy::too_many_arguments)]
    fn target(&self, call: &str, rank: i32, disp: isize, count: usize, dt: &Datatype, writes: bool) -> Result<Option<Target>> {
        if rank == PROC_NULL {
            return Ok(None);
        }
        let r = self.check_rank(call, rank)?;
        let (access, fences) = {
            let mut st = self.st();
            (st.epochs.check_access(call, rank)?, st.epochs.fences)
        };
        let p = &self.peers[r];
        if let (true, Some(l)) = (writes, p.local) {
            // A fence epoch is numbered by the fences made so far (the same on every
            // rank): a target that moved on to the next epoch already is not flagged.
            let noput = match access {
                epoch::Access::Fence => self.ctl(l, CTL_NOPUT).load(Ordering::SeqCst) == fences,
                epoch::Access::Start => self.ctl(l, CTL_NOPUT_POST).load(Ordering::SeqCst) != 0,
                epoch::Access::Passive => false,
            };
            if noput {
                return Err(rma_err(
                    ErrorClass::RmaConflict,
                    call,
                    format!("target_rank {rank} asserted MPI_MODE_NOPUT for this epoch: its window is not to be updated by put or accumulate calls"),
                ));
            }
        }
        let reach = match p.reach {
            Some(x) => Tgt::Local(x),
            None => Tgt::Remote,
        };
        let start = if self.flavor == Flavor::Dynamic { disp as i128 } else { disp as i128 * p.disp_unit as i128 };
        if self.flavor != Flavor::Dynamic && disp < 0 {
            return Err(MpiError::arg(ErrorClass::Disp, call, "target_disp", format!("{disp} is negative")));
        }
        // Dynamic windows on another host: the target checks its regions itself.
        let regions = match (self.flavor, p.local) {
            (Flavor::Dynamic, Some(l)) => Some(self.regions_of(call, l)?),
            (Flavor::Dynamic, None) => None,
            _ => Some(Vec::new()),
        };
        let check = |o: i128, l: usize| -> Result<(usize, usize)> {
            let end = o + l as i128;
            let ok = if self.flavor == Flavor::Dynamic {
                o >= 0 && regions.as_ref().is_none_or(|rg| covered(rg, o, end))
            } else {
                o >= 0 && end <= p.size as i128
            };
            if !ok {
                return Err(rma_err(
                    ErrorClass::RmaRange,
                    call,
                    if self.flavor == Flavor::Dynamic {
                        format!("bytes [{o:#x}, {end:#x}) of target rank {rank} are not in memory it attached to the window")
                    } else {
                        format!("bytes [{o}, {end}) are outside target rank {rank}'s window of {} bytes (target_disp {disp}, disp_unit {})", p.size, p.disp_unit)
                    },
                ));
            }
            Ok((o as usize, l))
        };
        if dt.is_contiguous() && count > 0 && dt.size() > 0 {
            let one = check(start + dt.true_lb() as i128, dt.size() * count)?;
            return Ok(Some((r, reach, RunList::One([one]))));
        }
        let rs = runs(dt, count, start);
        let mut out = Vec::with_capacity(rs.len());
        for (o, l) in rs {
            out.push(check(o, l)?);
        }
        Ok(Some((r, reach, RunList::Many(out))))
    }

    /// The regions (base, len) the process with host index `local` has attached to
    /// this dynamic window, sorted by base.
    fn regions_of(&self, call: &str, local: usize) -> Result<Vec<(usize, usize)>> {
        if local == self.my_local {
            let mut v: Vec<(usize, usize)> = self.att().list.iter().map(|&(_, b, l)| (b, l)).collect();
            v.sort_unstable();
            return Ok(v);
        }
        let mut v: Vec<(usize, usize)> = (0..MAX_REGIONS)
            .filter_map(|i| {
                let len = self.ctl(local, CTL_REGIONS + i * 16 + 8).load(Ordering::Acquire) as usize;
                let base = self.ctl(local, CTL_REGIONS + i * 16).load(Ordering::Acquire) as usize;
                (len > 0).then_some((base, len))
            })
            .collect();
        let pid = match self.peers.iter().find(|p| p.local == Some(local)).and_then(|p| p.reach) {
            Some(Reach::Cma { pid, .. }) => pid,
            _ => return Err(MpiError::intern(call, "a dynamic window's local peer is not reached by cross-memory attach")),
        };
        let (seq, ptr, len) = (self.ctl(local, CTL_OVF_SEQ), self.ctl(local, CTL_OVF_PTR), self.ctl(local, CTL_OVF_LEN));
        let mut tries = 0u32;
        loop {
            let s1 = seq.load(Ordering::Acquire);
            if s1 & 1 == 0 {
                let (p, n) = (ptr.load(Ordering::Acquire) as usize, len.load(Ordering::Acquire) as usize);
                if n == 0 {
                    break;
                }
                let mut raw = vec![0u8; n * 16];
                let read = crate::transport::cma::read_remote(pid, p, &mut raw);
                std::sync::atomic::fence(Ordering::Acquire);
                if seq.load(Ordering::Acquire) == s1 {
                    read.map_err(|e| io_err(call, "reading the target's table of attached memory", e))?;
                    for c in raw.chunks_exact(16) {
                        let b = u64::from_ne_bytes(c[..8].try_into().expect("8 bytes")) as usize;
                        let l = u64::from_ne_bytes(c[8..].try_into().expect("8 bytes")) as usize;
                        v.push((b, l));
                    }
                    break;
                }
            }
            // The owner is attaching or detaching right now: look again shortly.
            tries += 1;
            if tries < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        v.sort_unstable();
        Ok(v)
    }

    /// Republishes this process's overflow table (with `st` locked, so one writer).
    fn publish_overflow(&self, st: &mut Attached) {
        let (seq, ptr, len) = (self.ctl(self.my_local, CTL_OVF_SEQ), self.ctl(self.my_local, CTL_OVF_PTR), self.ctl(self.my_local, CTL_OVF_LEN));
        seq.fetch_add(1, Ordering::AcqRel);
        std::sync::atomic::fence(Ordering::Release);
        st.overflow = st.list.iter().filter(|a| a.0 == OVF_SLOT).map(|&(_, b, l)| [b as u64, l as u64]).collect();
        ptr.store(st.overflow.as_ptr() as u64, Ordering::Release);
        len.store(st.overflow.len() as u64, Ordering::Release);
        seq.fetch_add(1, Ordering::AcqRel);
    }

    fn check_sig(call: &str, a: &Datatype, n: usize, b: &Datatype, m: usize, what: &str) -> Result<()> {
        // The same predefined type on both sides (the common case) matches by count.
        let same = match (a.as_primitive(), b.as_primitive()) {
            (Some(x), Some(y)) if x == y => n == m,
            _ => a.same_signature(n, b, m),
        };
        if !same {
            return Err(MpiError::new(
                ErrorClass::Type,
                format!("{call}: type signature mismatch: {n} elements of the origin datatype against {m} of the {what} datatype ({} and {} bytes)", a.size() * n, b.size() * m),
            ));
        }
        Ok(())
    }

    fn read_runs(call: &str, reach: &Reach, rs: &[(usize, usize)], out: &mut [u8]) -> Result<()> {
        let mut at = 0;
        for &(o, l) in rs {
            // SAFETY: the runs were checked against the target's window (size or attached regions).
            unsafe { reach.read(o, &mut out[at..at + l]) }.map_err(|e| io_err(call, "reading the target's memory", e))?;
            at += l;
        }
        Ok(())
    }

    fn write_runs(call: &str, reach: &Reach, rs: &[(usize, usize)], data: &[u8]) -> Result<()> {
        let mut at = 0;
        for &(o, l) in rs {
            // SAFETY: as in `read_runs`.
            unsafe { reach.write(o, &data[at..at + l]) }.map_err(|e| io_err(call, "writing the target's memory", e))?;
            at += l;
        }
        Ok(())
    }

    /// # Safety
    /// `origin` holds `count` elements of `dt`.
    unsafe fn pack(origin: *const u8, count: usize, dt: &Datatype) -> Vec<u8> {
        let mut v = vec![0u8; dt.size() * count];
        // SAFETY: forwarded contract.
        unsafe { dt.pack(origin, count, &mut v) };
        v
    }

    /// `MPI_Put`.
    ///
    /// # Safety
    /// `origin` holds `ocount` elements of `odt`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put(&self, call: &str, origin: *const u8, ocount: usize, odt: &Datatype, rank: i32, disp: isize, tcount: usize, tdt: &Datatype) -> Result<()> {
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, true)? else { return Ok(()) };
        Self::check_sig(call, odt, ocount, tdt, tcount, "target")?;
        let Tgt::Local(reach) = tgt else {
            // SAFETY: forwarded contract.
            let data = unsafe { Self::pack(origin, ocount, odt) };
            return self.am_put(call, r, &rs, &data);
        };
        if rs.len() == 1 && odt.is_contiguous() {
            // SAFETY: `origin` holds ocount elements of a contiguous type: size*count bytes from its true lb.
            let data = unsafe { std::slice::from_raw_parts(origin.wrapping_offset(odt.true_lb()), rs[0].1) };
            return Self::write_runs(call, &reach, &rs, data);
        }
        // SAFETY: forwarded contract.
        let data = unsafe { Self::pack(origin, ocount, odt) };
        Self::write_runs(call, &reach, &rs, &data)
    }

    /// `MPI_Get`.
    ///
    /// # Safety
    /// `origin` is writable for `ocount` elements of `odt`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn get(&self, call: &str, origin: *mut u8, ocount: usize, odt: &Datatype, rank: i32, disp: isize, tcount: usize, tdt: &Datatype) -> Result<()> {
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, false)? else { return Ok(()) };
        Self::check_sig(call, odt, ocount, tdt, tcount, "target")?;
        let Tgt::Local(reach) = tgt else {
            let data = self.am_get(call, r, &rs, tdt.size() * tcount)?;
            // SAFETY: forwarded contract.
            unsafe { odt.unpack(&data, origin, ocount) };
            return Ok(());
        };
        if rs.len() == 1 && odt.is_contiguous() {
            // SAFETY: `origin` is writable for ocount elements of a contiguous type.
            let out = unsafe { std::slice::from_raw_parts_mut(origin.wrapping_offset(odt.true_lb()), rs[0].1) };
            return Self::read_runs(call, &reach, &rs, out);
        }
        let mut data = vec![0u8; tdt.size() * tcount];
        Self::read_runs(call, &reach, &rs, &mut data)?;
        // SAFETY: forwarded contract.
        unsafe { odt.unpack(&data, origin, ocount) };
        Ok(())
    }

    /// The basic type an accumulate works on, after the op and datatype checks.
    fn acc_type(call: &str, op: &Op, odt: Option<&Datatype>, tdt: &Datatype) -> Result<Datatype> {
        let Some(p) = op.as_predefined() else {
            return Err(MpiError::arg(ErrorClass::Op, call, "op", "user-defined operations cannot be used in one-sided accumulates"));
        };
        let prim = tdt.as_primitive().or_else(|| tdt.single_primitive());
        let Some(prim) = prim else {
            if tdt.size() == 0 {
                return Ok(Datatype::predefined(Primitive::Byte));
            }
            return Err(MpiError::arg(ErrorClass::Type, call, "target_datatype", "an accumulate needs a datatype whose basic elements are all of one predefined type"));
        };
        if let Some(odt) = odt {
            let oprim = odt.as_primitive().or_else(|| odt.single_primitive());
            if odt.size() > 0 && oprim != Some(prim) {
                return Err(MpiError::arg(ErrorClass::Type, call, "origin_datatype", "the origin and target basic types differ"));
            }
        }
        let bt = Datatype::predefined(prim);
        if p != PredefinedOp::Replace && p != PredefinedOp::NoOp {
            op.check(&bt, call)?;
        }
        Ok(bt)
    }

    /// Runs `f` on the accumulate mutex of the target with host index `local`.
    fn with_acc_lock<T>(&self, local: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let m = self.ctl(local, CTL_ACC);
        acquire(|| m.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok())?;
        let res = f();
        m.store(0, Ordering::Release);
        res
    }

    /// `MPI_Accumulate` and `MPI_Get_accumulate` (`result`: the result buffer).
    ///
    /// # Safety
    /// `origin` holds `ocount` elements of `odt` (unless the op is `MPI_NO_OP`);
    /// `result`, when given, is writable for its count of its datatype.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate(
        &self,
        call: &str,
        origin: *const u8,
        ocount: usize,
        odt: &Datatype,
        result: Option<(*mut u8, usize, &Datatype)>,
        rank: i32,
        disp: isize,
        tcount: usize,
        tdt: &Datatype,
        op: &Op,
    ) -> Result<()> {
        let noop = op.as_predefined() == Some(PredefinedOp::NoOp);
        // Nothing moves when every side is empty (zero counts or zero-size
        // datatypes): any op then does nothing (as in MPICH, which programs probing
        // for get_accumulate rely on).
        if tdt.size() * tcount == 0 && (noop || odt.size() * ocount == 0) && result.is_none_or(|(_, rcount, rdt)| rdt.size() * rcount == 0) {
            self.target(call, rank, disp, tcount, tdt, false)?;
            return Ok(());
        }
        let bt = Self::acc_type(call, op, (!noop).then_some(odt), tdt)?;
        if let Some((_, rcount, rdt)) = result {
            Self::check_sig(call, rdt, rcount, tdt, tcount, "target").map_err(|e| MpiError::new(e.class, e.message.replace("origin datatype", "result datatype")))?;
        }
        let Some((r, tgt, rs)) = self.target(call, rank, disp, tcount, tdt, !noop)? else { return Ok(()) };
        if !noop {
            Self::check_sig(call, odt, ocount, tdt, tcount, "target")?;
        }
        let bytes = tdt.size() * tcount;
        let src: std::borrow::Cow<'_, [u8]> = if noop {
            std::borrow::Cow::Borrowed(&[])
        } else if odt.is_contiguous() {
            // SAFETY: forwarded contract: origin holds ocount elements of a contiguous
            // type, size * count bytes from its true lb (read in place, not copied).
            std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(origin.wrapping_offset(odt.true_lb()), odt.size() * ocount) })
        } else {
            // SAFETY: forwarded contract (origin holds ocount elements of odt).
            std::borrow::Cow::Owned(unsafe { Self::pack(origin, ocount, odt) })
        };
        let Tgt::Local(reach) = tgt else {
            let old = self.am_acc(call, r, &rs, op, &bt, &src, result.is_some(), bytes)?;
            if let Some((rbuf, rcount, rdt)) = result {
                // SAFETY: the caller's contract: `rbuf` is writable for rcount elements of rdt.
                unsafe { rdt.unpack(&old, rbuf, rcount) };
            }
            return Ok(());
        };
        let local = self.peers[r].local.expect("reachable targets are local");
        let old = self.acc_apply(call, local, &reach, &rs, op, &bt, &src, result.is_some())?;
        if let Some((rbuf, rcount, rdt)) = result {
            // SAFETY: the caller's contract: `rbuf` is writable for rcount elements of rdt.
            unsafe { rdt.unpack(&old, rbuf, rcount) };
        }
        Ok(())
    }

    /// Whether accumulates to this window may use CPU atomics: its memory is in the
    /// host segment, which every local origin and the target's own active-message
    /// server reach mapped (windows over user memory are reached by cross-memory
    /// attach from other processes, so they serialize on the accumulate mutex).
    fn atomic_memory(&self) -> bool {
        matches!(self.flavor, Flavor::Allocate | Flavor::Shared)
    }

    /// Applies an accumulate (`src`: packed elements of the basic type `bt`, empty
    /// for `MPI_NO_OP`) to the runs `rs` of the target with host index `local`;
    /// returns the previous contents when `want_old`. Elements that CPU atomics can
    /// update in place (see [`crate::transport::winatomic`]) are updated so, one
    /// atomic step each, without the mutex; the others (wide or padded types,
    /// unaligned addresses, memory reached by cross-memory attach) under the
    /// target's accumulate mutex. The choice depends on the location and type only,
    /// so concurrent accumulates to one element always take the same way.
    #[allow(clippy::too_many_arguments)]
    fn acc_apply(&self, call: &str, local: usize, reach: &Reach, rs: &[(usize, usize)], op: &Op, bt: &Datatype, src: &[u8], want_old: bool) -> Result<Vec<u8>> {
        let total: usize = rs.iter().map(|r| r.1).sum();
        let noop = op.as_predefined() == Some(PredefinedOp::NoOp);
        let width = if self.atomic_memory() { bt.as_primitive().and_then(winatomic::atomic_width) } else { None };
        if let (Some(w), Reach::Mapped { addr }) = (width, *reach) {
            if rs.iter().all(|&(_, l)| l.is_multiple_of(w)) {
                let mut old = vec![0u8; if want_old { total } else { 0 }];
                // Runs at unaligned addresses: (window offset, packed offset, length).
                // Elements of a run are `w` apart, so all or none of them are aligned.
                let mut slow = Vec::new();
                let mut at = 0;
                for &(o, l) in rs {
                    let a = addr + o;
                    if winatomic::aligned(a, w) {
                        let s = if noop { &[][..] } else { &src[at..at + l] };
                        let out = if want_old { Some(&mut old[at..at + l]) } else { None };
                        // Every concurrent accumulate to these elements takes this atomic way too.
                        // SAFETY: the run is inside the target's window (checked), shared, aligned to `w`.
                        unsafe { winatomic::fetch_op_run(a, l / w, bt, op, s, out)? };
                    } else {
                        slow.push((o, at, l));
                    }
                    at += l;
                }
                if !slow.is_empty() {
                    self.with_acc_lock(local, || {
                        for &(o, at, l) in &slow {
                            let run = [(o, l)];
                            let mut cur = vec![0u8; l];
                            Self::read_runs(call, reach, &run, &mut cur)?;
                            if want_old {
                                old[at..at + l].copy_from_slice(&cur);
                            }
                            if !noop {
                                // SAFETY: both hold `l / w` packed elements of `bt`.
                                unsafe { op.apply(src[at..].as_ptr(), cur.as_mut_ptr(), l / w, bt)? };
                                Self::write_runs(call, reach, &run, &cur)?;
                            }
                        }
                        Ok(())
                    })?;
                }
                return Ok(old);
            }
        }
        let mut cur = vec![0u8; total];
        let mut old = Vec::new();
        let nelem = if bt.size() == 0 { 0 } else { total / bt.size() };
        self.with_acc_lock(local, || {
            if want_old || !matches!(op.as_predefined(), Some(PredefinedOp::Replace | PredefinedOp::NoOp)) {
                Self::read_runs(call, reach, rs, &mut cur)?;
            }
            if want_old {
                old = cur.clone();
            }
            if noop {
                return Ok(());
            }
            Self::apply_packed(op, src, &mut cur, nelem, bt)?;
            Self::write_runs(call, reach, rs, &cur)
        })?;
        Ok(old)
    }

    /// `cur[i] = src[i] op cur[i]` for `nelem` packed elements of the basic type
    /// `bt`. `Op::apply` works on elements in memory layout (`extent` apart); a pair
    /// type with padding (`MPI_SHORT_INT`, `MPI_DOUBLE_INT`, ...) is packed tighter
    /// than that, so it is laid out, combined, and packed again.
    fn apply_packed(op: &Op, src: &[u8], cur: &mut [u8], nelem: usize, bt: &Datatype) -> Result<()> {
        let size = bt.size();
        debug_assert!(src.len() >= size * nelem && cur.len() >= size * nelem);
        if bt.extent() == size as isize && bt.true_lb() == 0 {
            // SAFETY: both buffers hold `nelem` packed elements of `bt`, which are
            // dense (extent = size), so packed and memory layout agree.
            return unsafe { op.apply(src.as_ptr(), cur.as_mut_ptr(), nelem, bt) };
        }
        let ext = bt.extent().max(0) as usize;
        let mut a = vec![0u8; ext * nelem];
        let mut b = vec![0u8; ext * nelem];
        // `a` and `b` hold `nelem` elements of `bt` (extent apart, lb 0 for the pair types).
        // SAFETY: the packed buffers hold `nelem` packed elements; `a` and `b` do not overlap.
        unsafe {
            bt.unpack(&src[..size * nelem], a.as_mut_ptr(), nelem);
            bt.unpack(&cur[..size * nelem], b.as_mut_ptr(), nelem);
            op.apply(a.as_ptr(), b.as_mut_ptr(), nelem, bt)?;
            bt.pack(b.as_ptr(), nelem, &mut cur[..size * nelem]);
        }
        Ok(())
    }

    /// Compare-and-swap of one element (runs `rs`, `new.len()` bytes) at the target
    /// with host index `local`: its previous value. A CPU compare-exchange where
    /// [`Self::acc_apply`] would use CPU atomics, the accumulate mutex elsewhere.
    fn cas_apply(&self, call: &str, local: usize, reach: &Reach, rs: &[(usize, usize)], new: &[u8], cmp: &[u8]) -> Result<Vec<u8>> {
        let n = new.len();
        let mut cur = vec![0u8; n];
        if let (true, Reach::Mapped { addr }, [(o, l)]) = (self.atomic_memory(), *reach, rs) {
            let a = addr + o;
            if *l == n && matches!(n, 1 | 2 | 4 | 8) && winatomic::aligned(a, n) {
                // SAFETY: one checked element of the window in the shared segment,
                // aligned to its width; concurrent accumulates to it are atomic too.
                unsafe { winatomic::compare_swap(a, new, cmp, &mut cur) };
                return Ok(cur);
            }
        }
        self.with_acc_lock(local, || {
            Self::read_runs(call, reach, rs, &mut cur)?;
            if cur == cmp {
                Self::write_runs(call, reach, rs, new)?;
            }
            Ok(())
        })?;
        Ok(cur)
    }

    /// `MPI_Compare_and_swap`.
    ///
    /// # Safety
    /// `origin` and `compare` hold, and `result` is writable for, one element of `dt`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn compare_and_swap(&self, call: &str, origin: *const u8, compare: *const u8, result: *mut u8, dt: &Datatype, rank: i32, disp: isize) -> Result<()> {
        let Some(prim) = dt.as_primitive() else {
            return Err(MpiError::arg(ErrorClass::Type, call, "datatype", "must be a predefined datatype"));
        };
        use crate::datatype::TypeClass;
        if !matches!(prim.class(), TypeClass::CInteger | TypeClass::FortranInteger | TypeClass::Logical | TypeClass::Byte) {
            return Err(MpiError::arg(ErrorClass::Type, call, "datatype", format!("{} is not an integer, logical or byte type", prim.name())));
        }
        let Some((r, tgt, rs)) = self.target(call, rank, disp, 1, dt, true)? else { return Ok(()) };
        let n = dt.size();
        // SAFETY: the caller's contract: one element each.
        let (new, cmp, res) = unsafe { (std::slice::from_raw_parts(origin, n), std::slice::from_raw_parts(compare, n), std::slice::from_raw_parts_mut(result, n)) };
        let Tgt::Local(reach) = tgt else {
            let old = self.am_cas(call, r, &rs, new, cmp)?;
            res.copy_from_slice(&old);
            return Ok(());
        };
        let local = self.peers[r].local.expect("reachable targets are local");
        let old = self.cas_apply(call, local, &reach, &rs, new, cmp)?;
        res.copy_from_slice(&old);
        Ok(())
    }

    // ----- synchronization ------------------------------------------------------

    /// `MPI_Win_fence`.
    pub fn fence(&self, assert: i32) -> Result<()> {
        check_assert("MPI_Win_fence", assert, MODE_NOSTORE | MODE_NOPUT | MODE_NOPRECEDE | MODE_NOSUCCEED, "MPI_MODE_NOSTORE, _NOPUT, _NOPRECEDE and _NOSUCCEED")?;
        let seq = {
            let mut st = self.st();
            st.epochs.fence(assert)?;
            st.epochs.fences
        };
        // Before the barrier: no origin is in the epoch before this process marked it.
        if assert & MODE_NOPUT != 0 && assert & MODE_NOSUCCEED == 0 {
            self.ctl(self.my_local, CTL_NOPUT).store(seq, Ordering::SeqCst);
        }
        full_fence();
        coll::barrier::barrier(&self.comm)?;
        full_fence();
        Ok(())
    }

    /// `MPI_Win_post`: exposes this window to `origins` (ranks of the window).
    pub fn post(&self, origins: Vec<i32>, assert: i32) -> Result<()> {
        check_assert("MPI_Win_post", assert, MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT, "MPI_MODE_NOCHECK, _NOSTORE and _NOPUT")?;
        self.st().epochs.post(origins.clone())?;
        // Before the post notices: origins access only after they got one.
        self.set_post_noput(assert & MODE_NOPUT != 0);
        full_fence();
        for r in origins {
            pt2pt::send(&self.comm, &[], r, TAG_POST, SendMode::Standard)?;
        }
        Ok(())
    }

    /// `MPI_Win_start`: waits for the targets' posts.
    pub fn start(&self, targets: Vec<i32>, assert: i32) -> Result<()> {
        check_assert("MPI_Win_start", assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        self.st().epochs.start(targets.clone())?;
        for r in targets {
            pt2pt::recv(&self.comm, &mut [], r, TAG_POST)?;
        }
        full_fence();
        Ok(())
    }

    /// `MPI_Win_complete`.
    pub fn complete(&self) -> Result<()> {
        let targets = self.st().epochs.complete()?;
        full_fence();
        for r in targets {
            pt2pt::send(&self.comm, &[], r, TAG_COMPLETE, SendMode::Standard)?;
        }
        Ok(())
    }

    /// `MPI_Win_wait` (`block`) or `MPI_Win_test`: whether the exposure epoch ended.
    pub fn wait(&self, block: bool) -> Result<bool> {
        let call = if block { "MPI_Win_wait" } else { "MPI_Win_test" };
        let pending = self.st().epochs.pending_origins(call)?;
        for r in pending {
            if block || pt2pt::iprobe(&self.comm, r, TAG_COMPLETE)?.is_some() {
                pt2pt::recv(&self.comm, &mut [], r, TAG_COMPLETE)?;
                self.st().epochs.origin_completed(r);
            }
        }
        let done = self.st().epochs.finish_post();
        if done {
            // Every origin completed (its operations are done): none is flagged wrongly.
            self.set_post_noput(false);
        }
        full_fence();
        Ok(done)
    }

    /// `MPI_Win_lock`.
    pub fn lock(&self, kind: LockKind, rank: i32, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock";
        if rank == PROC_NULL {
            return Ok(());
        }
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        let r = self.check_rank(C, rank)?;
        self.st().epochs.lock(rank, kind)?;
        if assert & MODE_NOCHECK != 0 {
            if let Some(local) = self.peers[r].local {
                if let Err(e) = self.nocheck_enter(C, rank, local, kind) {
                    self.st().epochs.unlock(rank)?;
                    return Err(e);
                }
                self.st().nocheck.push((rank, kind));
            }
            return Ok(());
        }
        let Some(local) = self.peers[r].local else {
            if let Err(e) = self.am_lock(C, r, kind) {
                self.st().epochs.unlock(rank)?;
                return Err(e);
            }
            self.st().held.push((rank, kind));
            return Ok(());
        };
        let w = self.ctl(local, CTL_LOCK);
        acquire(|| lock_kind_spin(w, kind))?;
        if let Err(e) = self.nocheck_conflict(C, rank, local, kind) {
            Self::unlock_word(w, kind);
            self.st().epochs.unlock(rank)?;
            return Err(e);
        }
        self.st().held.push((rank, kind));
        Ok(())
    }

    /// Sets (or clears) this process's MPI_MODE_NOPUT flag for the exposure epoch
    /// a post opens; origins of this host check it before updates.
    fn set_post_noput(&self, on: bool) {
        self.ctl(self.my_local, CTL_NOPUT_POST).store(on as u64, Ordering::SeqCst);
    }

    fn lock_name(kind: LockKind) -> &'static str {
        match kind {
            LockKind::Shared => "a shared",
            LockKind::Exclusive => "an exclusive",
        }
    }

    /// After taking the lock word of `rank` (host index `local`) normally: whether
    /// another process holds a lock it took with MPI_MODE_NOCHECK that conflicts
    /// (that process promised no conflicting lock would be requested meanwhile).
    fn nocheck_conflict(&self, call: &str, rank: i32, local: usize, kind: LockKind) -> Result<()> {
        let nc = self.ctl(local, CTL_NOCHECK).load(Ordering::SeqCst);
        let held = if nc & WRITER != 0 { Some(LockKind::Exclusive) } else if nc != 0 { Some(LockKind::Shared) } else { None };
        match (held, kind) {
            (Some(h), LockKind::Exclusive) | (Some(h @ LockKind::Exclusive), LockKind::Shared) => Err(rma_err(
                ErrorClass::RmaConflict,
                call,
                format!("another process holds {} lock on target_rank {rank} taken with MPI_MODE_NOCHECK, which conflicts with {} lock (lock_type)", Self::lock_name(h), Self::lock_name(kind)),
            )),
            _ => Ok(()),
        }
    }

    /// Records a lock taken with MPI_MODE_NOCHECK on `rank` (host index `local`),
    /// or fails with MPI_ERR_RMA_CONFLICT when a conflicting lock is held (normally
    /// or with MPI_MODE_NOCHECK) by another process.
    fn nocheck_enter(&self, call: &str, rank: i32, local: usize, kind: LockKind) -> Result<()> {
        let nc = self.ctl(local, CTL_NOCHECK);
        let w = self.ctl(local, CTL_LOCK);
        let conflict = |held: LockKind| {
            rma_err(
                ErrorClass::RmaConflict,
                call,
                format!("assert MPI_MODE_NOCHECK promises no conflicting lock, but another process holds {} lock on target_rank {rank} (lock_type: {} lock)", Self::lock_name(held), Self::lock_name(kind)),
            )
        };
        // Registered first, checked second (and the normal lock path the other way
        // round, all sequentially consistent): of two racing conflicting lockers, at
        // least one sees the other.
        match kind {
            LockKind::Shared => {
                let prev = nc.fetch_add(1, Ordering::SeqCst);
                if prev & WRITER != 0 || w.load(Ordering::SeqCst) & WRITER != 0 {
                    nc.fetch_sub(1, Ordering::SeqCst);
                    return Err(conflict(LockKind::Exclusive));
                }
            }
            LockKind::Exclusive => {
                if let Err(v) = nc.compare_exchange(0, WRITER, Ordering::SeqCst, Ordering::SeqCst) {
                    return Err(conflict(if v & WRITER != 0 { LockKind::Exclusive } else { LockKind::Shared }));
                }
                let v = w.load(Ordering::SeqCst);
                if v != 0 {
                    nc.store(0, Ordering::SeqCst);
                    return Err(conflict(if v & WRITER != 0 { LockKind::Exclusive } else { LockKind::Shared }));
                }
            }
        }
        Ok(())
    }

    fn unlock_word(w: &std::sync::atomic::AtomicU64, kind: LockKind) {
        match kind {
            LockKind::Shared => w.fetch_sub(1, Ordering::Release),
            LockKind::Exclusive => w.fetch_and(!WRITER, Ordering::Release),
        };
    }

    fn release(&self, rank: i32) -> Result<()> {
        let (held, nocheck) = {
            let mut st = self.st();
            let h = st.held.iter().position(|&(r, _)| r == rank).map(|i| st.held.remove(i));
            let n = st.nocheck.iter().position(|&(r, _)| r == rank).map(|i| st.nocheck.remove(i));
            (h, n)
        };
        if let Some((r, kind)) = nocheck {
            if let Some(local) = self.peers[r as usize].local {
                full_fence();
                let nc = self.ctl(local, CTL_NOCHECK);
                match kind {
                    LockKind::Shared => nc.fetch_sub(1, Ordering::SeqCst),
                    LockKind::Exclusive => nc.fetch_and(!WRITER, Ordering::SeqCst),
                };
            }
        }
        if let Some((r, kind)) = held {
            let Some(local) = self.peers[r as usize].local else {
                return self.am_unlock("MPI_Win_unlock", r as usize, kind);
            };
            let w = self.ctl(local, CTL_LOCK);
            full_fence();
            Self::unlock_word(w, kind);
        }
        Ok(())
    }

    /// `MPI_Win_unlock`.
    pub fn unlock(&self, rank: i32) -> Result<()> {
        if rank == PROC_NULL {
            return Ok(());
        }
        self.check_rank("MPI_Win_unlock", rank)?;
        self.st().epochs.unlock(rank)?;
        self.release(rank)
    }

    /// `MPI_Win_lock_all`: a shared lock on every target on this host.
    pub fn lock_all(&self, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock_all";
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        self.st().epochs.lock_all()?;
        let res = self.lock_all_targets(assert);
        if res.is_err() {
            // Give back what was taken: the epoch did not open.
            let _ = self.unlock_all();
        }
        res
    }

    fn lock_all_targets(&self, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock_all";
        for (r, p) in self.peers.iter().enumerate() {
            let rank = r as i32;
            match p.local {
                Some(local) if assert & MODE_NOCHECK != 0 => {
                    self.nocheck_enter(C, rank, local, LockKind::Shared)?;
                    self.st().nocheck.push((rank, LockKind::Shared));
                }
                None if assert & MODE_NOCHECK != 0 => {}
                Some(local) => {
                    let w = self.ctl(local, CTL_LOCK);
                    acquire(|| lock_kind_spin(w, LockKind::Shared))?;
                    if let Err(e) = self.nocheck_conflict(C, rank, local, LockKind::Shared) {
                        Self::unlock_word(w, LockKind::Shared);
                        return Err(e);
                    }
                    self.st().held.push((rank, LockKind::Shared));
                }
                None => {
                    self.am_lock(C, r, LockKind::Shared)?;
                    self.st().held.push((rank, LockKind::Shared));
                }
            }
        }
        Ok(())
    }

    /// `MPI_Win_unlock_all`.
    pub fn unlock_all(&self) -> Result<()> {
        self.st().epochs.unlock_all()?;
        let held: Vec<i32> = {
            let st = self.st();
            let mut v: Vec<i32> = st.held.iter().chain(st.nocheck.iter()).map(|&(r, _)| r).collect();
            v.dedup();
            v
        };
        for r in held {
            self.release(r)?;
        }
        Ok(())
    }

    /// `MPI_Win_flush` / `_flush_local` (`Some(rank)`) and `_flush_all` /
    /// `_flush_local_all` (`None`): operations complete at the call already, so
    /// this checks the epoch and orders memory.
    pub fn flush(&self, call: &str, rank: Option<i32>) -> Result<()> {
        match rank {
            Some(PROC_NULL) => {}
            Some(r) => {
                self.check_rank(call, r)?;
                self.st().epochs.check_passive(call, r)?;
            }
            None => self.st().epochs.check_any_passive(call)?,
        }
        full_fence();
        Ok(())
    }

    /// `MPI_Win_sync`.
    pub fn sync(&self) {
        full_fence();
    }

    /// `MPI_Win_attach` (dynamic windows).
    pub fn attach(&self, base: usize, size: usize) -> Result<()> {
        const C: &str = "MPI_Win_attach";
        if self.flavor != Flavor::Dynamic {
            return Err(rma_err(ErrorClass::RmaFlavor, C, "the window was not made by MPI_Win_create_dynamic"));
        }
        if size == 0 {
            return Ok(());
        }
        let mut st = self.att();
        if st.list.iter().any(|&(_, b, l)| base < b + l && b < base + size) {
            return Err(rma_err(ErrorClass::RmaAttach, C, format!("[{base:#x}, +{size}) overlaps memory attached already")));
        }
        if base.checked_add(size).is_none() {
            return Err(MpiError::arg(ErrorClass::Size, C, "size", format!("{size} bytes from {base:#x} pass the end of the address space")));
        }
        let used: Vec<usize> = st.list.iter().map(|a| a.0).collect();
        match (0..MAX_REGIONS).find(|s| !used.contains(s)) {
            Some(slot) => {
                self.ctl(self.my_local, CTL_REGIONS + slot * 16).store(base as u64, Ordering::Release);
                self.ctl(self.my_local, CTL_REGIONS + slot * 16 + 8).store(size as u64, Ordering::Release);
                st.list.push((slot, base, size));
            }
            None => {
                st.list.push((OVF_SLOT, base, size));
                self.publish_overflow(&mut st);
            }
        }
        Ok(())
    }

    /// `MPI_Win_detach`.
    pub fn detach(&self, base: usize) -> Result<()> {
        const C: &str = "MPI_Win_detach";
        if self.flavor != Flavor::Dynamic {
            return Err(rma_err(ErrorClass::RmaFlavor, C, "the window was not made by MPI_Win_create_dynamic"));
        }
        let mut st = self.att();
        let Some(i) = st.list.iter().position(|&(_, b, _)| b == base) else {
            return Err(rma_err(ErrorClass::RmaAttach, C, format!("{base:#x} is not the base of memory attached to the window")));
        };
        let (slot, _, _) = st.list.remove(i);
        if slot == OVF_SLOT {
            self.publish_overflow(&mut st);
        } else {
            self.ctl(self.my_local, CTL_REGIONS + slot * 16 + 8).store(0, Ordering::Release);
            self.ctl(self.my_local, CTL_REGIONS + slot * 16).store(0, Ordering::Release);
        }
        Ok(())
    }

    /// `MPI_Win_free` (collective): checks no epoch is open, then waits for every
    /// process so nobody accesses memory that goes away.
    pub fn free(&self) -> Result<()> {
        self.st().epochs.check_free()?;
        full_fence();
        coll::barrier::barrier(&self.comm)?;
        if self.am.is_some() {
            am::unregister(self);
        }
        Ok(())
    }

    /// Whether `free` would be accepted (no epoch but a fence one is open).
    pub fn check_free(&self) -> Result<()> {
        self.st().epochs.check_free()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_and_offset() {
        let int = Datatype::predefined(Primitive::Int);
        assert_eq!(runs(&int, 3, 8), vec![(8, 12)]);
        let v = Datatype::vector(2, 1, 2, &int).unwrap();
        v.commit();
        // extent 12: the second element starts right after the first one's last block.
        assert_eq!(runs(&v, 2, 0), vec![(0, 4), (8, 8), (20, 4)]);
        assert!(runs(&int, 0, 0).is_empty());
    }
}
