//! The shared-memory transport: one POSIX shared-memory segment per host per job,
//! holding a single-producer/single-consumer ring of 64-byte slots for every ordered
//! pair (sender, receiver) of the job's ranks on this host, and one [`Doorbell`] per
//! local rank so that idle ranks can sleep.
//!
//! # Segment layout (format version 5)
//!
//! All offsets are from the start of the mapping, which is page aligned.
//!
//! | offset | contents |
//! |---|---|
//! | 0 | [`SegHeader`] (128 B): magic, version, `nlocal`, ring size in [`CELL_SIZE`] units, [`CELL_SIZE`], total size |
//! | 128 | `nlocal` × [`RankSlot`] (128 B each): the rank's [`Doorbell`] line, then its owner line (owner pid, "waiting" mark, processor) |
//! | next 256-multiple | `nlocal²` × [`RingCtl`] (384 B each): producer line, consumer line, shared-copy line |
//! | next page | `nlocal²` rings of `cells` × [`CELL_SIZE`] bytes, each `cells × 128` slots of 64 B |
//!
//! Ring `(from, to)` has index `from * nlocal + to`. A packet of `len` bytes (at most
//! [`CELL_PAYLOAD`], two cells and a slot) takes `ceil((8 + len) / 64)` consecutive
//! slots, across cell boundaries: an 8-byte state word, then the packet. The engine's 48-byte header plus up to 8 bytes of data fit in
//! one slot, one cache line; a stream of small messages fills consecutive lines.
//!
//! The segment is created by `ftruncate` on a fresh file, so every byte starts at zero,
//! and zero is the valid initial state of every structure: idle doorbells, unowned
//! ranks, ring positions 0, and every state word "empty". Creation therefore touches
//! only the header page; the kernel allocates ring pages lazily when a pair of ranks
//! first talks, so rings between ranks that never communicate cost no memory. Jobs of
//! 2-4 ranks on a host (rings totalling at most [`PREFAULT_BUDGET`]) fault their own
//! rings in at attach instead, so that the first lap of a message stream pays no page
//! faults (`ShmSegment::prefault_rings`).
//!
//! # Ring protocol
//!
//! Positions count slots and only grow (no ABA): the producer's `tail` (next slot to
//! fill) lives in the producer-owned line of [`RingCtl`], the consumer's `head` (next
//! slot to read) in the consumer-owned line. Position `p` is slot `p % slots`. The
//! producer may write positions `[tail, head + slots)`; it keeps a private copy of
//! `head` and reads the consumer's line only when that copy says the ring is full.
//!
//! Publication goes through the packet's own state word, so the consumer's poll reads
//! the very line that carries the data: `0` is empty; `PUBLISHED | len` is a packet;
//! `PUBLISHED | SKIP` says the rest of the lap is unused (a packet never wraps around
//! the end of the ring; it then starts at slot 0, and is published before the skip
//! marker). The producer writes the payload, then the state word with `Release`; the
//! consumer loads it with `Acquire`, reads the packet, clears the state word of the
//! packet's first slot, then advances `head` with `Release`, which the producer
//! `Acquire`s before it writes those slots again. The consumer writes no other slot
//! of the packet, so their lines stay shared and the producer's next write of them
//! needs no data from the consumer's cache.
//!
//! Why a state word the consumer reads is never stale: the consumer only reads the
//! slot at `head`, which is where the producer starts its next packet, i.e. the slot
//! right after the last packet published. Every slot's first word was zero at
//! creation; a first slot is zeroed by the consumer when its packet is consumed; a
//! later slot of a packet holds payload, which the producer records in a private
//! bitmap (`dirty`), and before publishing a packet the producer zeroes the slot that
//! follows it if that slot is dirty (a push needs room for that slot too, so it is
//! free). The `Release` of the publication orders that zeroing before the consumer's
//! look, so until the producer publishes there the slot reads "empty".
//!
//! # Trust
//!
//! Shared memory is written by other processes. Nothing read from it is used without a
//! check that keeps us memory safe: ring positions are reduced modulo the capacity
//! before indexing, a packet length larger than [`CELL_PAYLOAD`] is clamped, and a
//! corrupted state word can only make a ring look full or empty. A peer that scribbles
//! over a cell can make us read garbage bytes (which the engine's decoder checks), never
//! read or write outside the segment.
//!
//! # Ownership (SPSC discipline)
//!
//! Only local rank `i` pushes to rings `(i, *)` and pops from rings `(*, i)`. Across
//! processes this is enforced by an owner claim: attaching as local rank `i` atomically
//! stores our pid into rank `i`'s owner word, and fails if another handle holds it.
//! Within a process, [`ShmSegment`] is `Sync`: each outgoing and each incoming ring has a
//! process-private try-lock, so two threads never act as two producers (or consumers) of
//! one ring; a thread that finds the lock taken gets `false`, as if the ring were
//! full/empty, and retries later.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::doorbell::Doorbell;
use super::memfd::Mapping;
use crate::error::{ErrorClass, MpiError, Result};

pub(crate) mod arena;
mod copy;
mod ring;
mod segment;
#[cfg(test)]
mod tests;

use copy::CopyLine;
pub use copy::COPY_SLOTS;
use ring::SideLock;
pub use ring::{copy_packet_bytes, RingReceiver, RingSender};

/// Bytes of one ring cell, state word included.
///
/// 8 KiB: larger messages are expected to go single-copy through CMA (or to be streamed
/// through several cells), so a cell only needs to carry a header plus an eager chunk;
/// two pages per cell keeps a 64-cell ring at 512 KiB, a size whose working set stays in
/// the caches of a pair of cores, while amortizing the per-packet cost of large
/// streamed transfers over ~8 KB.
pub const CELL_SIZE: usize = 8192;

/// Bytes of the state word that precedes a packet's payload.
const STATE_LEN: usize = 8;
/// Ring space is handed out in slots of one cache line: a packet takes
/// `ceil((8 + len) / 64)` consecutive slots, so small packets sit back to back.
const SLOT: usize = 64;
/// State word bit: the packet (or skip marker) is published.
const PUBLISHED: u64 = 1 << 63;
/// State word bit: nothing more in this lap; the next packet is at slot 0.
const SKIP: u64 = 1 << 62;

/// Slots taken by a packet of `len` bytes.
#[inline]
fn slots_for(len: usize) -> usize {
    (STATE_LEN + len).div_ceil(SLOT)
}

/// Largest packet, in bytes after its 8-byte state word: two cells plus one slot.
///
/// Cells are the unit of ring size; a packet takes slots and may span cells, so this
/// is not tied to [`CELL_SIZE`]. Sized so that a 16 KiB message with the engine's
/// 48-byte header travels as one packet (`8 + 48 + 16384 <= 2 * 8192 + 64`): with one
/// cell as the limit an 8 KiB message plus header took two packets (a fragment, and a
/// send request instead of the request-free path), which cost 8 KiB bandwidth 30%.
/// The largest packet is under a third of the smallest ring (8 cells), so packets of
/// that size still pipeline, and about a quarter, so a skip marker wastes at most that.
///
/// The payload starts 8 bytes into the (64-byte aligned) slot, so it is 8-byte aligned
/// and the first cache line carries the state plus 56 payload bytes: a 48-byte engine
/// header with an 8-byte message moves in one cache-line transfer.
pub const CELL_PAYLOAD: usize = 2 * CELL_SIZE + SLOT - STATE_LEN;

/// Most cells per ring (few local ranks).
pub const MAX_CELLS_PER_RING: usize = 64;
/// Fewest cells per ring (many local ranks): enough to pipeline a streamed transfer.
pub const MIN_CELLS_PER_RING: usize = 8;
/// Target bytes of ring cells in one segment.
pub const SEGMENT_BUDGET: usize = 64 << 20;
/// Largest supported number of ranks on one host.
pub const MAX_LOCAL: usize = 1024;

const MAGIC: u64 = u64::from_le_bytes(*b"OXMPISHM");
const VERSION: u32 = 5;
const PAGE: usize = 4096;
/// How long [`ShmSegment::open`] waits for a creator that has made the file but not yet
/// sized or initialized it.
const OPEN_WAIT: Duration = Duration::from_secs(10);

// The cell size must be a multiple of the page so that every cell (and every ring) is
// page aligned, and the payload length must fit the 32-bit length field.
const _: () = assert!(CELL_SIZE & (PAGE - 1) == 0 && PAGE.is_power_of_two());
const _: () = assert!(CELL_PAYLOAD <= u32::MAX as usize);
const _: () = assert!(3 * (STATE_LEN + CELL_PAYLOAD) <= MIN_CELLS_PER_RING * CELL_SIZE);

/// Rings of a host's segment totalling at most this many bytes are faulted in when a rank
/// attaches (`ShmSegment::prefault_rings`): 2-4 ranks on a host.
const PREFAULT_BUDGET: usize = 8 << 20;

/// Cells per ring for `nlocal` ranks on a host:
/// `clamp(prev_power_of_two(SEGMENT_BUDGET / (nlocal² · CELL_SIZE)), 8, 64)`.
///
/// So 64 cells (512 KiB in flight per pair) up to 8 ranks, 32 for 9..=16 ranks... down to
/// 8 from 23 ranks on; cells total at most [`SEGMENT_BUDGET`] (64 MiB) up to 32 ranks.
/// Beyond that the segment grows as `nlocal² · 64 KiB`, but only rings that are used
/// consume memory (the file is sparse).
pub fn cells_per_ring(nlocal: usize) -> usize {
    let rings = nlocal.max(1).saturating_mul(nlocal.max(1));
    let fit = SEGMENT_BUDGET / rings.saturating_mul(CELL_SIZE);
    let pow2 = if fit == 0 {
        0
    } else {
        1usize << (usize::BITS - 1 - fit.leading_zeros())
    };
    pow2.clamp(MIN_CELLS_PER_RING, MAX_CELLS_PER_RING)
}

/// Total bytes of the segment for `nlocal` ranks, or an error if `nlocal` is out of
/// range.
pub fn segment_size(nlocal: usize) -> Result<usize> {
    Layout::new(nlocal).map(|l| l.total)
}

/// The segment's header, at offset 0.
///
/// Invariant: the creator writes every other field, then `magic` with `Release`; a
/// reader that loads `magic == MAGIC` with `Acquire` sees all the fields, which are never
/// written again. All fields are atomics so that reading them while a (buggy) creator
/// still writes is a race on atomics, not undefined behaviour.
#[repr(C, align(128))]
struct SegHeader {
    magic: AtomicU64,
    version: AtomicU32,
    nlocal: AtomicU32,
    cells_per_ring: AtomicU32,
    cell_size: AtomicU32,
    total_size: AtomicU64,
    creator_pid: AtomicU32,
}

/// Per-local-rank data: its doorbell and, in the next cache line, its owner and
/// whether it waits.
///
/// Invariant: `owner` is 0 or the pid of the process whose handle is attached as this
/// local rank; it changes only 0 -> pid (attach, compare-exchange) and pid -> 0 (that
/// handle's drop). The doorbell is rung by every producer to this rank; it gets a line
/// to itself (and 128-byte spacing, since adjacent-line prefetchers fetch line pairs).
/// `waiting` is written by the rank itself (non-zero while it waits in a blocking
/// call) and read by the others only after a slow `sched_yield` (a hint, see
/// [`ShmSegment::others_waiting`]). `cpu` is written by the rank itself too (1 +
/// the processor it last saw itself on in a spinning wait; 0 before that and while
/// it sleeps) and read by the others' spinning waits ([`ShmSegment::others_elsewhere`]).
#[repr(C, align(128))]
struct RankSlot {
    bell: Doorbell,
    owner: AtomicU32,
    waiting: AtomicU32,
    cpu: AtomicU32,
}

/// Where the other local ranks last said they run, seen from one processor
/// ([`ShmSegment::cpu_neighbours`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuNeighbours {
    /// Another attached rank reported this processor.
    pub one_here: bool,
    /// Every other rank is attached and reported a processor other than this one.
    pub all_elsewhere: bool,
}

/// A cache-line pair for one side of a ring (128 B, see [`RankSlot`] on spacing).
#[repr(C, align(128))]
struct SideLine {
    pos: AtomicU64,
    /// In the consumer's line only: non-zero when the producer found the ring full
    /// and may go to sleep; the consumer clears it and rings the producer's doorbell
    /// after freeing a packet's slots. (The producer writes this line only when blocked.)
    producer_blocked: AtomicU32,
}

/// Control block of ring `(from, to)`.
///
/// Invariants: `tail` is written only by the producer (local rank `from`, under its
/// push lock), `head` only by the consumer (local rank `to`, under its pop lock); each
/// only grows (by a packet's slots). `head <= tail <= head + slots` for well-behaved peers;
/// neither side relies on it for memory safety.
#[repr(C)]
struct RingCtl {
    /// Producer-owned: the next position to fill.
    tail: SideLine,
    /// Consumer-owned: the next position to read.
    head: SideLine,
    /// Large messages of the producer's that both sides copy at once.
    copy: CopyLine,
}

const _: () = assert!(std::mem::size_of::<SegHeader>() == 128);
const _: () = assert!(std::mem::size_of::<RankSlot>() == 128);
const _: () = assert!(std::mem::size_of::<RingCtl>() == 384);

/// Where everything lives in a segment for `nlocal` ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    nlocal: usize,
    cells: usize,
    /// log2(cells).
    shift: u32,
    slots: usize,
    ctls: usize,
    rings: usize,
    total: usize,
}

impl Layout {
    fn new(nlocal: usize) -> Result<Layout> {
        if nlocal == 0 || nlocal > MAX_LOCAL {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("shm: {nlocal} local ranks is outside 1..={MAX_LOCAL}"),
            ));
        }
        let cells = cells_per_ring(nlocal);
        let nrings = nlocal * nlocal;
        let slots = std::mem::size_of::<SegHeader>();
        let ctls = round_up(slots + nlocal * std::mem::size_of::<RankSlot>(), 256);
        let rings = round_up(ctls + nrings * std::mem::size_of::<RingCtl>(), PAGE);
        // nlocal <= 1024 and cells <= 64, so this is at most 2^20 * 2^6 * 2^13 = 2^39:
        // it fits a 64-bit usize; check anyway for 32-bit targets.
        let total = nrings
            .checked_mul(cells)
            .and_then(|n| n.checked_mul(CELL_SIZE))
            .and_then(|n| n.checked_add(rings))
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::NoMem,
                    format!("shm: segment for {nlocal} local ranks exceeds the address space"),
                )
            })?;
        Ok(Layout {
            nlocal,
            cells,
            shift: cells.trailing_zeros(),
            slots,
            ctls,
            rings,
            total,
        })
    }
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The segment's mapping: `_map` unmaps it on drop; `ptr` is its start, copied out
/// for the ring code's `map.ptr`.
struct SegMap {
    ptr: NonNull<u8>,
    _map: Mapping,
}

/// Maps `len` bytes of the segment file `fd` (`what` names it in the error).
fn map(fd: &OwnedFd, len: usize, what: &str) -> Result<SegMap> {
    let m = Mapping::new(fd, len).map_err(|e| {
        MpiError::new(
            ErrorClass::Other,
            format!("shm: cannot map {what} ({len} bytes): {e}"),
        )
    })?;
    Ok(SegMap {
        ptr: m.ptr(),
        _map: m,
    })
}

/// A handle on a host's shared-memory segment, attached as one local rank.
pub struct ShmSegment {
    map: SegMap,
    layout: Layout,
    my_local: usize,
    /// Our pid, stored in our rank's owner word while attached.
    pid: u32,
    /// `push_locks[to]` guards the producer side of ring `(my_local, to)`.
    push_locks: Box<[SideLock]>,
    /// `pop_locks[from]` guards the consumer side of ring `(from, my_local)`.
    pop_locks: Box<[SideLock]>,
    /// `cached_head[to]`: the consumer position of ring `(my_local, to)` as the
    /// producer last read it (a lower bound of the real one), so that a push reads
    /// the consumer's line only when the ring looks full. Process-private.
    cached_head: Box<[AtomicU64]>,
    /// Bit `i` of ring `(my_local, to)`'s words (`to * slots / 64` on): slot `i`'s
    /// first word may hold payload of a packet that covered it as a later slot (the
    /// consumer clears only first slots), so it must be cleared before the consumer
    /// polls it. Producer-private (the push side's exclusivity guards it).
    dirty: Box<[AtomicU64]>,
}

// SAFETY: the handle owns its mapping (a raw pointer, hence not auto Send/Sync). All
// shared state in the mapping is either atomics, or ring cells whose exclusive use is
// handed between the single producer and the single consumer by Release/Acquire on the
// cell's state word. Within this process the producer side of each ring is serialized by
// `push_locks`, the consumer side by `pop_locks`; across processes, by the owner claim
// (one attached handle per local rank). So using the handle from several threads, or
// moving it to another thread, creates no data race.
unsafe impl Send for ShmSegment {}
// SAFETY: see `Send` above; every `&self` method is race-free under those locks.
unsafe impl Sync for ShmSegment {}

impl std::fmt::Debug for ShmSegment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmSegment")
            .field("nlocal", &self.layout.nlocal)
            .field("my_local", &self.my_local)
            .field("cells_per_ring", &self.layout.cells)
            .field("size", &self.layout.total)
            .finish()
    }
}

impl ShmSegment {
    /// Number of ranks sharing the segment.
    pub fn nlocal(&self) -> usize {
        self.layout.nlocal
    }

    /// Our local rank in the segment.
    pub fn my_local(&self) -> usize {
        self.my_local
    }

    /// Ring size in units of [`CELL_SIZE`]: the number of maximal packets a sender can
    /// have in flight to one receiver (small packets: 128 times as many).
    pub fn ring_capacity(&self) -> usize {
        self.layout.cells
    }

    /// Total bytes of the segment.
    pub fn size(&self) -> usize {
        self.layout.total
    }

    /// Marks this rank as waiting in a blocking call (`true`) or running (`false`).
    /// One store to a line of its own that the others read only after a slow
    /// yield ([`ShmSegment::others_waiting`]).
    #[inline]
    pub fn set_waiting(&self, waiting: bool) {
        self.slot(self.my_local)
            .waiting
            .store(waiting as u32, Ordering::Relaxed);
    }

    /// Whether every other local rank is marked waiting, i.e. none of them is
    /// computing, starting up or otherwise running outside a blocking wait (a
    /// rank not attached counts as running: it may be starting). A hint for
    /// the waits' yield gate: a `sched_yield` that came back late gave the
    /// core to another program only if none of our own ranks could have
    /// taken it.
    pub fn others_waiting(&self) -> bool {
        (0..self.layout.nlocal)
            .filter(|&j| j != self.my_local)
            .all(|j| {
                let s = self.slot(j);
                s.waiting.load(Ordering::Relaxed) != 0 && s.owner.load(Ordering::Relaxed) != 0
            })
    }

    /// Publishes the processor this rank runs on (from a spinning wait; see
    /// [`ShmSegment::others_elsewhere`]). A store only when it changed: the others read
    /// this line while they spin, and a store would take it from their caches.
    #[inline]
    pub fn set_cpu(&self, cpu: u32) {
        self.store_cpu_word(cpu.saturating_add(1));
    }

    /// Withdraws this rank's processor report: it is about to sleep, and where the
    /// scheduler will wake it (often on its waker's processor) is not known until
    /// it spins again.
    #[inline]
    pub fn clear_cpu(&self) {
        self.store_cpu_word(0);
    }

    fn store_cpu_word(&self, word: u32) {
        let slot = self.slot(self.my_local);
        if slot.cpu.load(Ordering::Relaxed) != word {
            slot.cpu.store(word, Ordering::Relaxed);
        }
    }

    /// Whether every other local rank is attached and last reported a processor
    /// other than `cpu` (see [`ShmSegment::set_cpu`]). A rank that has not reported
    /// since it last slept ([`ShmSegment::clear_cpu`]) may be runnable on `cpu`
    /// right now, waiting for it: then the answer is no. A hint: a rank reports
    /// only from its spinning waits, so one that the scheduler moved since then
    /// still shows its old processor until its next spin.
    pub fn others_elsewhere(&self, cpu: u32) -> bool {
        let word = cpu.saturating_add(1);
        self.other_cpu_words()
            .all(|theirs| theirs != 0 && theirs != word)
    }

    /// Whether another attached local rank last reported processor `cpu`, i.e.
    /// is known to share it with the caller (see [`ShmSegment::set_cpu`]). A rank
    /// without a report does not count: unlike [`ShmSegment::others_elsewhere`],
    /// this asks for a co-location seen, not one that cannot be ruled out.
    pub fn other_on(&self, cpu: u32) -> bool {
        let word = cpu.saturating_add(1);
        self.other_cpu_words().any(|theirs| theirs == word)
    }

    /// Both answers about `cpu` in one walk over the other ranks' reports:
    /// ([`ShmSegment::other_on`], [`ShmSegment::others_elsewhere`]).
    pub fn cpu_neighbours(&self, cpu: u32) -> CpuNeighbours {
        let word = cpu.saturating_add(1);
        let mut seen = CpuNeighbours {
            one_here: false,
            all_elsewhere: true,
        };
        for theirs in self.other_cpu_words() {
            seen.one_here |= theirs == word;
            seen.all_elsewhere &= theirs != 0 && theirs != word;
        }
        seen
    }

    /// Every other local rank's processor word (processor + 1; 0 when it has not
    /// reported since it last slept, or is not attached).
    fn other_cpu_words(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.layout.nlocal)
            .filter(|&j| j != self.my_local)
            .map(|j| {
                let s = self.slot(j);
                if s.owner.load(Ordering::Relaxed) == 0 {
                    0
                } else {
                    s.cpu.load(Ordering::Relaxed)
                }
            })
    }

    /// The doorbell of local rank `local`. Panics if `local >= nlocal`.
    #[inline]
    pub fn doorbell(&self, local: usize) -> &Doorbell {
        &self.slot(local).bell
    }

    #[inline]
    fn slot(&self, local: usize) -> &RankSlot {
        assert!(
            local < self.layout.nlocal,
            "shm: local rank {local} >= nlocal {}",
            self.layout.nlocal
        );
        // SAFETY: slot `local` (< nlocal) lies at `slots + local * 128`, inside the mapping by construction of `Layout`, 128-aligned (the mapping is page aligned and `slots` a multiple of 128). RankSlot is all atomics, and the reference borrows `self`, which keeps the mapping alive.
        unsafe {
            &*(self
                .map
                .ptr
                .as_ptr()
                .add(self.layout.slots + local * std::mem::size_of::<RankSlot>())
                as *const RankSlot)
        }
    }
}

fn check_local(nlocal: usize, my_local: usize) -> Result<()> {
    if my_local >= nlocal {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("shm: local rank {my_local} is outside 0..{nlocal}"),
        ));
    }
    Ok(())
}

impl Drop for ShmSegment {
    fn drop(&mut self) {
        if self.pid != 0 {
            // Release our claim (only if it is still ours); the mapping is unmapped
            // when `map` drops, right after.
            let _ = self.slot(self.my_local).owner.compare_exchange(
                self.pid,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }
}
