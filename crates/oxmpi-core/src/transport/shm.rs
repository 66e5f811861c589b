//! The shared-memory transport: one POSIX shared-memory segment per host per job,
//! holding a single-producer/single-consumer ring of 64-byte slots for every ordered
//! pair (sender, receiver) of the job's ranks on this host, and one [`Doorbell`] per
//! local rank so that idle ranks can sleep.
//!
//! # Segment layout (format version 4)
//!
//! All offsets are from the start of the mapping, which is page aligned.
//!
//! | offset | contents |
//! |---|---|
//! | 0 | [`SegHeader`] (128 B): magic, version, `nlocal`, ring size in [`CELL_SIZE`] units, [`CELL_SIZE`], total size |
//! | 128 | `nlocal` × [`RankSlot`] (128 B each): the rank's [`Doorbell`] line, then its owner line |
//! | next 256-multiple | `nlocal²` × [`RingCtl`] (384 B each): producer line, consumer line, shared-copy line |
//! | next page | `nlocal²` rings of `cells` × [`CELL_SIZE`] bytes, each `cells × 128` slots of 64 B |
//!
//! Ring `(from, to)` has index `from * nlocal + to`. A packet of `len` bytes (at most
//! [`CELL_PAYLOAD`]) takes `ceil((8 + len) / 64)` consecutive slots: an 8-byte state
//! word, then the packet. The engine's 48-byte header plus up to 8 bytes of data fit in
//! one slot, one cache line; a stream of small messages fills consecutive lines.
//!
//! The segment is created by `ftruncate` on a fresh file, so every byte starts at zero,
//! and zero is the valid initial state of every structure: idle doorbells, unowned
//! ranks, ring positions 0, and every state word "empty". Creation therefore touches
//! only the header page; the kernel allocates ring pages lazily when a pair of ranks
//! first talks, so rings between ranks that never communicate cost no memory.
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
//! consumer loads it with `Acquire`, reads the packet, clears the state word of every
//! slot the packet took, then advances `head` with `Release`, which the producer
//! `Acquire`s before it writes those slots again.
//!
//! Why a state word the consumer reads is never stale: the consumer only reads the
//! slot at `head`, which is where the producer starts its next packet. Every slot's
//! first word was zero at creation and is zeroed again by the consumer whenever a
//! packet covering that slot is consumed (payload bytes of a long packet included), so
//! until the producer publishes there it reads "empty".
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
use crate::error::{ErrorClass, MpiError, Result};

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

/// Bytes of packet one cell carries: [`CELL_SIZE`] minus the 8-byte state word.
///
/// The payload starts 8 bytes into the (64-byte aligned) cell, so it is 8-byte aligned
/// and the first cache line carries the state plus 56 payload bytes: a 48-byte engine
/// header with an 8-byte message moves in one cache-line transfer.
pub const CELL_PAYLOAD: usize = CELL_SIZE - STATE_LEN;

/// Most cells per ring (few local ranks).
pub const MAX_CELLS_PER_RING: usize = 64;
/// Fewest cells per ring (many local ranks): enough to pipeline a streamed transfer.
pub const MIN_CELLS_PER_RING: usize = 8;
/// Target bytes of ring cells in one segment.
pub const SEGMENT_BUDGET: usize = 64 << 20;
/// Largest supported number of ranks on one host.
pub const MAX_LOCAL: usize = 1024;

const MAGIC: u64 = u64::from_le_bytes(*b"OXMPISHM");
const VERSION: u32 = 4;
const PAGE: usize = 4096;
/// How long [`ShmSegment::open`] waits for a creator that has made the file but not yet
/// sized or initialized it.
const OPEN_WAIT: Duration = Duration::from_secs(10);

// The cell size must be a multiple of the page so that every cell (and every ring) is
// page aligned, and the payload length must fit the 32-bit length field.
const _: () = assert!(CELL_SIZE & (PAGE - 1) == 0 && PAGE.is_power_of_two());
const _: () = assert!(CELL_PAYLOAD <= u32::MAX as usize);

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

/// Per-local-rank data: its doorbell and, in the next cache line, its owner.
///
/// Invariant: `owner` is 0 or the pid of the process whose handle is attached as this
/// local rank; it changes only 0 -> pid (attach, compare-exchange) and pid -> 0 (that
/// handle's drop). The doorbell is rung by every producer to this rank; it gets a line
/// to itself (and 128-byte spacing, since adjacent-line prefetchers fetch line pairs).
#[repr(C, align(128))]
struct RankSlot {
    bell: Doorbell,
    owner: AtomicU32,
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

/// Shared copies that may run at once on one ring.
pub const COPY_SLOTS: usize = 4;

/// The chunk counters of the shared copies of one ring (see
/// [`ShmSegment::copy_begin`]), one slot per copy in flight.
#[repr(C, align(128))]
struct CopyLine {
    slots: [CopySlot; COPY_SLOTS],
}

/// Invariants: `claim` is `(id << 32) | next_chunk`; only the consumer of the ring
/// sets it (to `id << 32`, starting transfer `id`), and then both sides only advance
/// `next_chunk` by compare-exchange while the id is theirs. `done` counts finished
/// chunks in its low 32 bits, with [`COPY_FAILED`] set if any chunk could not be
/// copied; the consumer resets it before publishing a new id and reuses the slot
/// only once every claimed chunk is done, so no increment of an old transfer can
/// land in a new one.
#[repr(C)]
struct CopySlot {
    claim: AtomicU64,
    done: AtomicU64,
}

/// Set in [`CopyLine::done`] when a chunk of the transfer could not be copied.
const COPY_FAILED: u64 = 1 << 32;

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

/// A `MAP_SHARED` mapping, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn map(fd: &OwnedFd, len: usize, what: &str) -> Result<Mapping> {
        // SAFETY: a fresh mapping at an address the kernel chooses, of a file descriptor we own, cannot overlap or invalidate any existing Rust object.
        // `len > 0` is checked by the callers (a zero-length mmap would fail with EINVAL anyway).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: cannot map {what} ({len} bytes): {}",
                    std::io::Error::last_os_error()
                ),
            ));
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).expect("mmap returned NULL without MAP_FIXED"),
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly a mapping we created and have not unmapped;
        // every reference into it borrows the owning `ShmSegment` (or this `Mapping`), so none outlives this drop.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// A process-private lock guarding one side of one ring; 128 B to avoid false sharing
/// between threads working on different peers.
#[repr(align(128))]
struct SideLock(AtomicBool);

impl SideLock {
    #[inline]
    fn try_lock(&self) -> Option<SideGuard<'_>> {
        if self.0.swap(true, Ordering::Acquire) {
            None
        } else {
            Some(SideGuard(&self.0))
        }
    }
}

struct SideGuard<'a>(&'a AtomicBool);

impl Drop for SideGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Frees a consumed packet's slots (also if the consumer's callback panics, so a
/// packet is never delivered twice).
struct SlotRelease<'a> {
    seg: &'a ShmSegment,
    ring: usize,
    index: usize,
    slots: usize,
    head: &'a AtomicU64,
    to: u64,
}

impl Drop for SlotRelease<'_> {
    #[inline]
    fn drop(&mut self) {
        // Every slot of the packet reads "empty" again, so that whichever of them starts
        // a packet in the next lap is not mistaken for published before it is.
        for k in 0..self.slots {
            self.seg.state(self.seg.slot_ptr(self.ring, self.index + k)).store(0, Ordering::Relaxed);
        }
        // Release: our reads of the payload and the clearing above happen before the
        // producer's next writes (it Acquires `head` before reusing the slots).
        self.head.store(self.to, Ordering::Release);
    }
}

/// A handle on a host's shared-memory segment, attached as one local rank.
pub struct ShmSegment {
    map: Mapping,
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

fn os_err(what: String) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!("{what}: {}", std::io::Error::last_os_error()),
    )
}

/// `"/name"` as a C string, after checking `name` is a valid single path component.
fn shm_path(name: &str) -> Result<CString> {
    if name.is_empty() || name.len() > 250 || name.contains('/') || name == "." || name == ".." {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!("shm: invalid segment name {name:?} (want 1..=250 bytes, no '/')"),
        ));
    }
    CString::new(format!("/{name}")).map_err(|_| {
        MpiError::new(
            ErrorClass::Arg,
            format!("shm: segment name {name:?} contains NUL"),
        )
    })
}

/// Fail early, with a clear message, if /dev/shm cannot hold the segment: a tmpfs that
/// runs out of space later delivers SIGBUS on the first touch of an unbacked page.
fn check_space(name: &str, layout: &Layout) -> Result<()> {
    let path = c"/dev/shm";
    // SAFETY: `statvfs` is plain old data, for which all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `st` a valid, writable statvfs.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        // No /dev/shm to inspect (shm_open will report the real problem, if any).
        return Ok(());
    }
    let free = (st.f_bavail as u128) * (st.f_frsize as u128);
    if free < layout.total as u128 {
        return Err(MpiError::new(
            ErrorClass::NoMem,
            format!(
                "shm: cannot create /dev/shm/{name}: {} local ranks need {} MiB but /dev/shm \
                 has only {} MiB free (enlarge it, e.g. docker --shm-size)",
                layout.nlocal,
                layout.total.div_ceil(1 << 20),
                free >> 20
            ),
        ));
    }
    Ok(())
}

/// Unlinks a freshly created segment unless disarmed (creation succeeded).
struct UnlinkOnError<'a> {
    name: &'a str,
    armed: bool,
}

impl Drop for UnlinkOnError<'_> {
    fn drop(&mut self) {
        if self.armed {
            ShmSegment::unlink(self.name);
        }
    }
}

impl ShmSegment {
    /// Create the segment `/dev/shm/<name>` for `nlocal` local ranks and attach to it as
    /// local rank `my_local`. Fails if it already exists (`O_EXCL`). The file has mode
    /// 0600 (whatever the umask). On failure nothing is left behind.
    pub fn create(name: &str, nlocal: usize, my_local: usize) -> Result<ShmSegment> {
        let layout = Layout::new(nlocal)?;
        check_local(nlocal, my_local)?;
        let path = shm_path(name)?;
        check_space(name, &layout)?;
        // SAFETY: `path` is a valid NUL-terminated string; the flags and mode are
        // plain integers. The returned descriptor, if any, is owned by us below.
        let fd = unsafe {
            libc::shm_open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
            )
        };
        if fd < 0 {
            return Err(os_err(format!("shm: cannot create /dev/shm/{name}")));
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut cleanup = UnlinkOnError { name, armed: true };
        // The mode passed to shm_open was filtered by the umask; make it exactly 0600.
        // SAFETY: `fd` is a valid open descriptor.
        if unsafe { libc::fchmod(fd.as_raw_fd(), 0o600) } != 0 {
            return Err(os_err(format!("shm: cannot chmod /dev/shm/{name}")));
        }
        let len = libc::off_t::try_from(layout.total).map_err(|_| {
            MpiError::new(
                ErrorClass::NoMem,
                format!("shm: segment size {} too large", layout.total),
            )
        })?;
        // SAFETY: `fd` is a valid descriptor of a regular (tmpfs) file opened O_RDWR.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
            return Err(os_err(format!(
                "shm: cannot size /dev/shm/{name} to {} bytes",
                layout.total
            )));
        }
        let map = Mapping::map(&fd, layout.total, &format!("/dev/shm/{name}"))?;
        // SAFETY: the mapping is at least `size_of::<SegHeader>()` bytes, page aligned (so aligned for SegHeader), and lives as long as `map`;
        // SegHeader is made of atomics, so a shared reference into memory others may touch is sound.
        let header = unsafe { &*(map.ptr.as_ptr() as *const SegHeader) };
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        header.version.store(VERSION, Ordering::Relaxed);
        header.nlocal.store(nlocal as u32, Ordering::Relaxed);
        header
            .cells_per_ring
            .store(layout.cells as u32, Ordering::Relaxed);
        header.cell_size.store(CELL_SIZE as u32, Ordering::Relaxed);
        header
            .total_size
            .store(layout.total as u64, Ordering::Relaxed);
        header.creator_pid.store(pid, Ordering::Relaxed);
        // Publish: everything above (and the zero-filled rest) is visible to whoever
        // Acquires the magic.
        header.magic.store(MAGIC, Ordering::Release);
        let seg = ShmSegment::attach(map, layout, my_local, pid, name)?;
        cleanup.armed = false;
        Ok(seg)
    }

    /// Attach as local rank `my_local` to the existing segment `/dev/shm/<name>`,
    /// created for `nlocal` ranks. Waits (up to 10 s) for a creator that is still
    /// initializing it; fails clearly if it does not exist, was made for a different
    /// number of ranks or by an incompatible oxmpi, or if `my_local` is already attached.
    pub fn open(name: &str, nlocal: usize, my_local: usize) -> Result<ShmSegment> {
        let layout = Layout::new(nlocal)?;
        check_local(nlocal, my_local)?;
        let path = shm_path(name)?;
        // SAFETY: `path` is a valid NUL-terminated string; no O_CREAT, so mode unused.
        let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os_err(format!("shm: cannot open /dev/shm/{name}")));
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let deadline = Instant::now() + OPEN_WAIT;

        // Wait for the creator's ftruncate.
        let size = loop {
            // SAFETY: `stat` is plain old data, for which all-zero is a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `fd` is a valid descriptor and `st` a valid, writable stat.
            if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                return Err(os_err(format!("shm: cannot stat /dev/shm/{name}")));
            }
            if st.st_size > 0 {
                break st.st_size as u64;
            }
            if Instant::now() >= deadline {
                return Err(MpiError::new(
                    ErrorClass::Other,
                    format!("shm: /dev/shm/{name} is still empty after {OPEN_WAIT:?}: its creator died?"),
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let map = Mapping::map(&fd, size as usize, &format!("/dev/shm/{name}"))?;
        drop(fd);
        if (size as usize) < std::mem::size_of::<SegHeader>() {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!("shm: /dev/shm/{name} ({size} bytes) is not an oxmpi segment"),
            ));
        }
        // SAFETY: the mapping is page aligned and at least `size_of::<SegHeader>()`
        // bytes (checked above), and lives as long as `map`; SegHeader is all atomics.
        let header = unsafe { &*(map.ptr.as_ptr() as *const SegHeader) };
        // Wait for the creator to publish the header.
        loop {
            match header.magic.load(Ordering::Acquire) {
                MAGIC => break,
                0 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                0 => {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("shm: /dev/shm/{name} was never initialized: its creator died?"),
                    ))
                }
                _ => {
                    return Err(MpiError::new(
                        ErrorClass::Other,
                        format!("shm: /dev/shm/{name} is not an oxmpi segment (bad magic)"),
                    ))
                }
            }
        }
        let version = header.version.load(Ordering::Relaxed);
        if version != VERSION {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} has format version {version}, this oxmpi speaks \
                     {VERSION}: mixed oxmpi builds in one job?"
                ),
            ));
        }
        let their_nlocal = header.nlocal.load(Ordering::Relaxed) as usize;
        if their_nlocal != nlocal {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} was created for {their_nlocal} local ranks, but this \
                     rank expects {nlocal}"
                ),
            ));
        }
        let cells = header.cells_per_ring.load(Ordering::Relaxed) as usize;
        let cell_size = header.cell_size.load(Ordering::Relaxed) as usize;
        let total = header.total_size.load(Ordering::Relaxed);
        if cells != layout.cells
            || cell_size != CELL_SIZE
            || total != layout.total as u64
            || size != layout.total as u64
        {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: /dev/shm/{name} has layout {cells} cells x {cell_size} B, {total} B \
                     (file {size} B); expected {} x {CELL_SIZE} B, {} B: mixed oxmpi builds?",
                    layout.cells, layout.total
                ),
            ));
        }
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        ShmSegment::attach(map, layout, my_local, pid, name)
    }

    /// Claim local rank `my_local` in a validated mapping.
    fn attach(
        map: Mapping,
        layout: Layout,
        my_local: usize,
        pid: u32,
        name: &str,
    ) -> Result<ShmSegment> {
        let mut seg = ShmSegment {
            map,
            layout,
            my_local,
            // 0 until the claim below succeeds, so a failed attach releases nothing.
            pid: 0,
            push_locks: (0..layout.nlocal)
                .map(|_| SideLock(AtomicBool::new(false)))
                .collect(),
            pop_locks: (0..layout.nlocal)
                .map(|_| SideLock(AtomicBool::new(false)))
                .collect(),
            cached_head: (0..layout.nlocal).map(|_| AtomicU64::new(0)).collect(),
        };
        let claim =
            seg.slot(my_local)
                .owner
                .compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire);
        if let Err(holder) = claim {
            return Err(MpiError::new(
                ErrorClass::Other,
                format!(
                    "shm: local rank {my_local} of /dev/shm/{name} is already attached by pid \
                     {holder}"
                ),
            ));
        }
        seg.pid = pid;
        Ok(seg)
    }

    /// Remove `/dev/shm/<name>`; existing mappings stay valid. A missing segment (or an
    /// invalid name) is not an error.
    pub fn unlink(name: &str) {
        if let Ok(path) = shm_path(name) {
            // SAFETY: `path` is a valid NUL-terminated string. ENOENT and other errors
            // are deliberately ignored.
            unsafe {
                libc::shm_unlink(path.as_ptr());
            }
        }
    }

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

    /// The doorbell of local rank `local`. Panics if `local >= nlocal`.
    pub fn doorbell(&self, local: usize) -> &Doorbell {
        &self.slot(local).bell
    }

    fn slot(&self, local: usize) -> &RankSlot {
        assert!(
            local < self.layout.nlocal,
            "shm: local rank {local} >= nlocal {}",
            self.layout.nlocal
        );
        // SAFETY: slot `local` (< nlocal) lies at `slots + local * 128`, inside the mapping by construction of `Layout`, 128-aligned (the mapping is page aligned and `slots` a multiple of 128).
        // RankSlot is all atomics, and the reference borrows `self`, which keeps the mapping alive.
        unsafe {
            &*(self
                .map
                .ptr
                .as_ptr()
                .add(self.layout.slots + local * std::mem::size_of::<RankSlot>())
                as *const RankSlot)
        }
    }

    /// Index of ring `(from, to)`; both already checked `< nlocal`.
    #[inline]
    fn ring_index(&self, from: usize, to: usize) -> usize {
        from * self.layout.nlocal + to
    }

    #[inline]
    fn ctl(&self, ring: usize) -> &RingCtl {
        debug_assert!(ring < self.layout.nlocal * self.layout.nlocal);
        // SAFETY: ring < nlocal², so the control block lies inside the mapping (see `Layout::new`), 128-aligned (a multiple of its 384-byte size from a 256-aligned start).
        // RingCtl is all atomics; the reference borrows `self`, which keeps the mapping alive.
        unsafe {
            &*(self
                .map
                .ptr
                .as_ptr()
                .add(self.layout.ctls + ring * std::mem::size_of::<RingCtl>())
                as *const RingCtl)
        }
    }

    /// Slots per ring.
    #[inline]
    fn slots(&self) -> usize {
        self.layout.cells * (CELL_SIZE / SLOT)
    }

    /// The slot index of ring position `pos`: `pos % slots`, as a mask (cells per ring
    /// are a power of two, [`cells_per_ring`], so slots are too; a 64-bit division on
    /// every push and pop was measurable).
    #[inline]
    fn slot_of(&self, pos: u64) -> usize {
        let slots = self.slots() as u64;
        debug_assert!(slots.is_power_of_two());
        (pos & (slots - 1)) as usize
    }

    /// Pointer to slot `index` (already reduced modulo [`Self::slots`]) of ring `ring`
    /// (`ring < nlocal²`).
    #[inline]
    fn slot_ptr(&self, ring: usize, index: usize) -> *mut u8 {
        debug_assert!(ring < self.layout.nlocal * self.layout.nlocal && index < self.slots());
        let off = self.layout.rings + ring * self.layout.cells * CELL_SIZE + index * SLOT;
        // `off + SLOT <= total` by construction of `Layout` (a ring is `cells * CELL_SIZE`
        // bytes); callers reduce positions modulo the ring first. Plain pointer arithmetic;
        // every dereference is justified where it happens.
        self.map.ptr.as_ptr().wrapping_add(off)
    }

    /// The state word at the start of a slot.
    #[inline]
    fn state(&self, slot: *mut u8) -> &AtomicU64 {
        // `slot` comes from `Self::slot_ptr`: the start of a slot inside the mapping, 64-byte
        // aligned (rings start on a page). A packet's first 8 bytes are only accessed as this
        // atomic (payload slices start after it; later slots are never read as state words
        // while they carry payload, see the ring protocol).
        // SAFETY: aligned, in bounds, atomic-only access; the reference borrows `self`, which keeps the mapping alive.
        unsafe { &*(slot as *const AtomicU64) }
    }

    #[inline]
    fn check_peer(&self, peer: usize) {
        assert!(
            peer < self.layout.nlocal,
            "shm: local rank {peer} >= nlocal {}",
            self.layout.nlocal
        );
    }

    /// Producer: if ring `my_local -> to` has room for a packet of up to `max_len`
    /// bytes (at most [`CELL_PAYLOAD`]), call `fill` with that many bytes of ring,
    /// publish a packet of the length it returns, ring `to`'s doorbell and return
    /// `true`. Otherwise return `false` without calling `fill`: the ring is full, or
    /// another thread of this process is pushing to `to` at this instant.
    ///
    /// `to == my_local` is supported (a loopback ring). Panics if `to >= nlocal`, if
    /// `max_len > CELL_PAYLOAD`, or if `fill` returns more than `max_len` (then
    /// nothing is published). If `fill` panics, nothing is published.
    #[inline]
    pub fn try_push(&self, to: usize, max_len: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.check_peer(to);
        let Some(guard) = self.push_locks[to].try_lock() else {
            return false;
        };
        // SAFETY: the push lock for `to` makes us the only pusher of this process.
        let pushed = unsafe { self.try_push_exclusive(to, max_len, fill) };
        drop(guard);
        pushed
    }

    /// [`ShmSegment::try_push`] without the per-ring lock, for a caller that already
    /// serializes all of its process's ring traffic (the engine does everything under
    /// its own mutex, and the extra locked instruction per packet was measurable).
    ///
    /// # Safety
    /// No other thread of this process pushes to `to` (through either method) while
    /// this call runs.
    #[inline]
    pub unsafe fn try_push_exclusive(&self, to: usize, max_len: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.check_peer(to);
        assert!(max_len <= CELL_PAYLOAD, "shm: packet of {max_len} bytes exceeds CELL_PAYLOAD ({CELL_PAYLOAD})");
        let ring = self.ring_index(self.my_local, to);
        let ctl = self.ctl(ring);
        let slots = self.slots() as u64;
        let tail = ctl.tail.pos.load(Ordering::Relaxed);
        let index = self.slot_of(tail);
        // A packet never wraps: if it does not fit before the end, a skip marker
        // fills the rest of the lap and the packet starts at slot 0.
        let want = slots_for(max_len) as u64;
        let skip = if index as u64 + want > slots { slots - index as u64 } else { 0 };
        // Room for the skip and the packet.
        let need = skip + want;
        let cached = &self.cached_head[to];
        if tail.wrapping_sub(cached.load(Ordering::Relaxed)).saturating_add(need) > slots {
            // Acquire: the consumer's reads of the slots it freed happen before our writes.
            let head = ctl.head.pos.load(Ordering::Acquire);
            cached.store(head, Ordering::Relaxed);
            if tail.wrapping_sub(head).saturating_add(need) > slots {
                return false;
            }
        }
        let start = if skip > 0 { 0 } else { index };
        let first = self.slot_ptr(ring, start);
        // We have exclusive access to slots [start, start + want]: they lie between our
        // tail and the consumer's head one lap on (checked above), so the consumer has
        // finished with them and reads none until we publish; no other producer exists
        // (this function's contract in this process, the owner claim across processes).
        // `fill` cannot keep the slice (FnOnce(&mut [u8]) is higher-ranked).
        // SAFETY: the `max_len` bytes after the state word lie within the `want` slots from
        // `start`, inside the ring (`start + want <= slots`), exclusively ours (see above).
        let payload = unsafe { std::slice::from_raw_parts_mut(first.add(STATE_LEN), max_len) };
        let len = fill(payload);
        assert!(len <= max_len, "shm: fill wrote {len} bytes into room for {max_len}");
        let used = slots_for(len) as u64;
        // Release: the payload is visible to whoever Acquires this state word.
        self.state(first).store(PUBLISHED | len as u64, Ordering::Release);
        if skip > 0 {
            // Published after the packet at slot 0, so a consumer that follows the skip
            // finds that packet's state word already set.
            self.state(self.slot_ptr(ring, index)).store(PUBLISHED | SKIP, Ordering::Release);
        }
        ctl.tail.pos.store(tail.wrapping_add(skip + used), Ordering::Relaxed);
        self.doorbell(to).ring();
        true
    }

    /// Consumer: if ring `from -> my_local` holds a packet, call `f` with it (borrowed in
    /// place), release its slots and return `true`; otherwise return `false` (the ring
    /// is empty, or another thread of this process is popping from `from` right now).
    ///
    /// A length word larger than `CELL_PAYLOAD` (a corrupted or hostile peer) is clamped
    /// to `CELL_PAYLOAD`, and to the end of the ring. If `f` panics the packet still
    /// counts as consumed. Panics if `from >= nlocal`.
    #[inline]
    pub fn try_pop(&self, from: usize, f: impl FnOnce(&[u8])) -> bool {
        self.check_peer(from);
        let Some(_guard) = self.pop_locks[from].try_lock() else {
            return false;
        };
        // SAFETY: the pop lock for `from` makes us the only consumer of this process.
        unsafe { self.try_pop_exclusive(from, f) }
    }

    /// [`ShmSegment::try_pop`] without the per-ring lock (see
    /// [`ShmSegment::try_push_exclusive`]).
    ///
    /// # Safety
    /// No other thread of this process pops from `from` (through either method)
    /// while this call runs.
    #[inline]
    pub unsafe fn try_pop_exclusive(&self, from: usize, f: impl FnOnce(&[u8])) -> bool {
        self.check_peer(from);
        let ring = self.ring_index(from, self.my_local);
        let head = &self.ctl(ring).head.pos;
        let slots = self.slots() as u64;
        let mut pos = head.load(Ordering::Relaxed);
        let mut index = self.slot_of(pos);
        let mut slot = self.slot_ptr(ring, index);
        // Acquire: the producer's payload writes happen before our reads.
        let mut word = self.state(slot).load(Ordering::Acquire);
        if word & PUBLISHED == 0 {
            return false;
        }
        if word & SKIP != 0 {
            // The rest of the lap is unused: the packet is at slot 0.
            self.state(slot).store(0, Ordering::Relaxed);
            pos = pos.wrapping_add(slots - index as u64);
            head.store(pos, Ordering::Release);
            index = 0;
            slot = self.slot_ptr(ring, 0);
            word = self.state(slot).load(Ordering::Acquire);
            if word & PUBLISHED == 0 || word & SKIP != 0 {
                return false;
            }
        }
        let len = (word as u32 as usize).min(CELL_PAYLOAD).min((self.slots() - index) * SLOT - STATE_LEN);
        // Declared before the slice borrow ends; its drop (after `f`, also on unwind)
        // frees the packet's slots by advancing `head`.
        let release = SlotRelease { seg: self, ring, index, slots: slots_for(len), head, to: pos.wrapping_add(slots_for(len) as u64) };
        // The packet is published (we Acquired its state word) and the producer will not
        // write its slots again until `head` moves past them, which happens after `f`
        // returns; no other consumer exists (this function's contract, the owner claim).
        // `f` cannot retain the slice (higher-ranked FnOnce(&[u8])).
        // SAFETY: `len` bytes after the state word lie within the ring (clamped above),
        // and nobody writes them while the slice lives (see above).
        let packet = unsafe { std::slice::from_raw_parts(slot.add(STATE_LEN) as *const u8, len) };
        f(packet);
        drop(release);
        // A producer that found the ring full may be asleep: the slots we just freed
        // are what it waits for. (A hint read without a fence: if it is set just after
        // this load, the producer's own re-check or its short sleep covers it.)
        let blocked = &self.ctl(ring).head.producer_blocked;
        if blocked.load(Ordering::Relaxed) != 0 {
            blocked.store(0, Ordering::Relaxed);
            self.doorbell(from).ring();
        }
        true
    }

    /// Producer: announces that ring `my_local -> to` is full and we may sleep until
    /// the consumer frees a cell (it then rings our doorbell). Announce after taking
    /// the doorbell ticket and before the last look at the ring.
    pub fn announce_blocked(&self, to: usize) {
        self.check_peer(to);
        self.ctl(self.ring_index(self.my_local, to)).head.producer_blocked.store(1, Ordering::SeqCst);
    }

    /// Consumer of ring `from -> my_local`: starts shared copy `id` (non-zero, not the
    /// previous id) of the producer's large message in `slot` (< [`COPY_SLOTS`]). Call
    /// only when the slot's previous copy is finished ([`ShmSegment::copy_progress`]
    /// reported all its chunks).
    pub fn copy_begin(&self, from: usize, slot: usize, id: u32) {
        self.check_peer(from);
        let line = &self.ctl(self.ring_index(from, self.my_local)).copy.slots[slot];
        line.done.store(0, Ordering::Relaxed);
        // Release: a claimer that sees the new id sees `done` reset.
        line.claim.store(u64::from(id) << 32, Ordering::Release);
    }

    /// Either side of ring `from -> to`: claims the next of the `chunks` chunks of
    /// shared copy `id`, or `None` when all are claimed (or the ring moved on to
    /// another copy). Each claimed chunk must be reported with [`ShmSegment::copy_done`].
    pub fn copy_claim(&self, from: usize, to: usize, slot: usize, id: u32, chunks: u32) -> Option<u32> {
        self.check_peer(from);
        self.check_peer(to);
        let claim = &self.ctl(self.ring_index(from, to)).copy.slots.get(slot)?.claim;
        let mut word = claim.load(Ordering::Acquire);
        loop {
            let next = word as u32;
            if (word >> 32) as u32 != id || next >= chunks {
                return None;
            }
            match claim.compare_exchange_weak(word, word + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(next),
                Err(now) => word = now,
            }
        }
    }

    /// Reports a claimed chunk of ring `from -> to`'s shared copy as finished
    /// (`copied == false`: it could not be copied, so the transfer must be redone).
    pub fn copy_done(&self, from: usize, to: usize, slot: usize, copied: bool) {
        self.check_peer(from);
        self.check_peer(to);
        let done = &self.ctl(self.ring_index(from, to)).copy.slots[slot].done;
        if !copied {
            done.fetch_or(COPY_FAILED, Ordering::Release);
        }
        // Release: our copy of the chunk happens before the consumer sees it counted.
        done.fetch_add(1, Ordering::Release);
    }

    /// Consumer of ring `from -> my_local`: how many chunks of the current shared copy
    /// are finished, and whether any failed.
    pub fn copy_progress(&self, from: usize, slot: usize) -> (u32, bool) {
        self.check_peer(from);
        let d = self.ctl(self.ring_index(from, self.my_local)).copy.slots[slot].done.load(Ordering::Acquire);
        (d as u32, d & COPY_FAILED != 0)
    }

    /// Whether any ring into this rank (including the loopback ring) holds a packet.
    /// A hint: cheap (one load per peer, no locks) and exact only when no other thread
    /// of this process pops concurrently. Take the doorbell ticket first, then call
    /// this, then sleep if it says `false`.
    pub fn any_incoming(&self) -> bool {
        (0..self.layout.nlocal).any(|from| {
            let ring = self.ring_index(from, self.my_local);
            let pos = self.ctl(ring).head.pos.load(Ordering::Relaxed);
            self.state(self.slot_ptr(ring, self.slot_of(pos))).load(Ordering::Acquire) & PUBLISHED != 0
        })
    }

    /// Test hook: the state word of slot `index` of ring `(from, to)`.
    #[cfg(test)]
    fn raw_state(&self, from: usize, to: usize, index: usize) -> &AtomicU64 {
        self.state(self.slot_ptr(self.ring_index(from, to), index % self.slots()))
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
            // Release our claim (only if it is still ours); the mapping is unmapped by
            // `Mapping::drop` right after.
            let _ = self.slot(self.my_local).owner.compare_exchange(
                self.pid,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A unique segment name, unlinked when dropped (also when the test panics).
    struct TestName(String);

    impl TestName {
        fn new(tag: &str) -> TestName {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            TestName(format!("oxmpi-test-{}-{n}-{tag}", std::process::id()))
        }
        fn path(&self) -> String {
            format!("/dev/shm/{}", self.0)
        }
    }

    impl Drop for TestName {
        fn drop(&mut self) {
            ShmSegment::unlink(&self.0);
        }
    }

    fn push_bytes(seg: &ShmSegment, to: usize, data: &[u8]) -> bool {
        seg.try_push(to, data.len(), |buf: &mut [u8]| {
            buf.copy_from_slice(data);
            data.len()
        })
    }

    fn pop_vec(seg: &ShmSegment, from: usize) -> Option<Vec<u8>> {
        let mut out = None;
        seg.try_pop(from, |p| out = Some(p.to_vec()));
        out
    }

    /// Deterministic packet `i`: length varies over 0..=CELL_PAYLOAD, content from i.
    fn packet(i: u64) -> Vec<u8> {
        let len = match i % 7 {
            0 => 0,
            1 => 8,
            2 => 56,
            3 => 57,
            4 => CELL_PAYLOAD,
            _ => (i.wrapping_mul(2654435761) % CELL_PAYLOAD as u64) as usize,
        };
        let mut v: Vec<u8> = (0..len)
            .map(|k| (i as usize).wrapping_mul(31).wrapping_add(k) as u8)
            .collect();
        if len >= 8 {
            v[..8].copy_from_slice(&i.to_le_bytes());
        }
        v
    }

    #[test]
    fn constants_and_formula() {
        assert_eq!(CELL_PAYLOAD, 8184);
        assert_eq!(cells_per_ring(1), 64);
        assert_eq!(cells_per_ring(2), 64);
        assert_eq!(cells_per_ring(4), 64);
        assert_eq!(cells_per_ring(8), 64);
        assert_eq!(cells_per_ring(16), 32);
        assert_eq!(cells_per_ring(32), 8);
        assert_eq!(cells_per_ring(200), 8);
        for n in 1..=64 {
            let c = cells_per_ring(n);
            assert!(c.is_power_of_two() && (8..=64).contains(&c));
            if n <= 32 {
                assert!(n * n * c * CELL_SIZE <= SEGMENT_BUDGET, "n={n}");
            }
            let l = Layout::new(n).unwrap();
            assert_eq!(l.rings % PAGE, 0);
            assert_eq!(l.ctls % 256, 0);
            assert!(l.ctls >= l.slots + n * 128);
            assert!(l.rings >= l.ctls + n * n * 384);
            assert_eq!(l.total, l.rings + n * n * c * CELL_SIZE);
        }
        assert!(Layout::new(0).is_err());
        assert!(Layout::new(MAX_LOCAL + 1).is_err());
    }

    #[test]
    fn create_open_and_exchange_both_ways() {
        let name = TestName::new("both");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        let b = ShmSegment::open(&name.0, 2, 1).unwrap();
        assert_eq!((a.nlocal(), a.my_local()), (2, 0));
        assert_eq!((b.nlocal(), b.my_local()), (2, 1));
        assert_eq!(a.ring_capacity(), 64);
        assert!(!b.any_incoming());
        assert!(pop_vec(&b, 0).is_none());

        let t = b.doorbell(1).prepare_sleep();
        assert!(push_bytes(&a, 1, b"hello from 0"));
        assert_ne!(
            b.doorbell(1).generation(),
            t,
            "push must ring the receiver's doorbell"
        );
        b.doorbell(1).cancel_sleep();
        assert!(b.any_incoming());
        assert!(!a.any_incoming());
        assert_eq!(pop_vec(&b, 1), None, "nothing from myself");
        assert_eq!(pop_vec(&b, 0).unwrap(), b"hello from 0");
        assert!(!b.any_incoming());

        assert!(push_bytes(&b, 0, b"and back from 1"));
        assert!(a.any_incoming());
        assert_eq!(pop_vec(&a, 1).unwrap(), b"and back from 1");

        // Empty and maximal packets.
        assert!(push_bytes(&a, 1, b""));
        let big: Vec<u8> = (0..CELL_PAYLOAD).map(|i| (i % 251) as u8).collect();
        assert!(push_bytes(&a, 1, &big));
        assert_eq!(pop_vec(&b, 0).unwrap(), b"");
        assert_eq!(pop_vec(&b, 0).unwrap(), big);
    }

    #[test]
    fn ring_full_and_fifo() {
        let name = TestName::new("full");
        let a = ShmSegment::create(&name.0, 3, 0).unwrap();
        let c = ShmSegment::open(&name.0, 3, 2).unwrap();
        let ring_bytes = a.ring_capacity() as u64 * CELL_SIZE as u64;
        // Many laps of mixed sizes, so that skips at the end of a lap and the cleared
        // next state word are exercised.
        let mut next_in = 0u64;
        let mut next_out = 0u64;
        for _round in 0..40 {
            let mut bytes_in_flight = 0u64;
            while push_bytes(&a, 2, &packet(next_in)) {
                bytes_in_flight += slots_for(packet(next_in).len()) as u64 * SLOT as u64;
                next_in += 1;
            }
            assert!(bytes_in_flight <= ring_bytes, "more in flight than the ring holds");
            let mut called = false;
            assert!(!a.try_push(2, CELL_PAYLOAD, |_| {
                called = true;
                0
            }));
            assert!(!called, "fill must not run when the ring is full");
            // Drain half, then refill.
            for _ in 0..(next_in - next_out).div_ceil(2) {
                assert_eq!(pop_vec(&c, 0).unwrap(), packet(next_out));
                next_out += 1;
            }
        }
        // Small packets sit back to back: a ring holds many more of them than cells.
        while let Some(p) = pop_vec(&c, 0) {
            assert_eq!(p, packet(next_out));
            next_out += 1;
        }
        assert_eq!(next_in, next_out);
        let mut small = 0u64;
        while push_bytes(&a, 2, &[7u8; 8]) {
            small += 1;
        }
        assert!(small >= ring_bytes / SLOT as u64 - 2, "only {small} 8-byte packets fit");
        for _ in 0..small {
            assert_eq!(pop_vec(&c, 0).unwrap(), [7u8; 8]);
        }
        assert!(!c.any_incoming());
    }

    #[test]
    fn loopback_ring_works() {
        let name = TestName::new("self");
        let a = ShmSegment::create(&name.0, 2, 1).unwrap();
        for i in 0..200u64 {
            assert!(push_bytes(&a, 1, &packet(i)));
            assert!(a.any_incoming());
            assert_eq!(pop_vec(&a, 1).unwrap(), packet(i));
        }
        assert!(!a.any_incoming());
    }

    #[test]
    #[should_panic(expected = "exceeds CELL_PAYLOAD")]
    fn oversized_fill_panics() {
        let name = TestName::new("oversize");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        a.try_push(1, CELL_PAYLOAD + 1, |_| 0);
    }

    #[test]
    #[should_panic(expected = "into room for")]
    fn fill_longer_than_announced_panics() {
        let name = TestName::new("overfill");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        a.try_push(1, 8, |_| 9);
    }

    #[test]
    fn panicking_callbacks_leave_the_ring_consistent() {
        let name = TestName::new("panic");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        let b = ShmSegment::open(&name.0, 2, 1).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.try_push(1, 16, |_| panic!("fill fails"));
        }));
        assert!(r.is_err());
        assert!(!b.any_incoming(), "a failed fill publishes nothing");
        assert!(push_bytes(&a, 1, b"one"));
        assert!(push_bytes(&a, 1, b"two"));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.try_pop(0, |_| panic!("consumer fails"));
        }));
        assert!(r.is_err());
        assert_eq!(
            pop_vec(&b, 0).unwrap(),
            b"two",
            "the panicked packet is consumed"
        );
        assert!(push_bytes(&a, 1, b"three"), "locks were released");
        assert_eq!(pop_vec(&b, 0).unwrap(), b"three");
    }

    #[test]
    fn corrupted_length_is_clamped() {
        let name = TestName::new("torn");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        let b = ShmSegment::open(&name.0, 2, 1).unwrap();
        assert!(push_bytes(&a, 1, b"x"));
        // A hostile peer rewrites the length word of the published packet.
        let st = a.raw_state(0, 1, 0);
        st.store(PUBLISHED | u64::from(u32::MAX), Ordering::Release);
        let mut seen = None;
        assert!(b.try_pop(0, |p| seen = Some(p.len())));
        assert_eq!(seen, Some(CELL_PAYLOAD));
        // A garbage state word without the published bit makes the ring look empty.
        assert!(push_bytes(&a, 1, b"y"));
        let at = (slots_for(CELL_PAYLOAD)) % a.slots();
        a.raw_state(0, 1, at).store(0x0ead_beef_0000_0001, Ordering::Release);
        assert!(pop_vec(&b, 0).is_none());
        assert!(!b.any_incoming());
        // A consumer position that says the ring is full stops the producer.
        let ctl = a.ctl(a.ring_index(0, 1));
        let full = ctl.tail.pos.load(Ordering::Relaxed).wrapping_sub(a.slots() as u64);
        ctl.head.pos.store(full, Ordering::Relaxed);
        a.cached_head[1].store(full, Ordering::Relaxed);
        assert!(!push_bytes(&a, 1, b"z"));
        // Wildly corrupted positions still index inside the ring.
        ctl.tail.pos.store(u64::MAX - 3, Ordering::Relaxed);
        ctl.head.pos.store(u64::MAX, Ordering::Relaxed);
        let _ = push_bytes(&a, 1, b"w");
        let _ = pop_vec(&b, 0);
        let _ = b.any_incoming();
    }

    #[test]
    fn two_thread_stress_in_order() {
        let name = TestName::new("stress");
        let a = ShmSegment::create(&name.0, 2, 0).unwrap();
        let b = ShmSegment::open(&name.0, 2, 1).unwrap();
        const N: u64 = 200_000;
        let producer = std::thread::spawn(move || {
            let mut i = 0u64;
            while i < N {
                // Small packets mostly (realistic, and fast), some large ones.
                let p = if i & 63 == 0 {
                    packet(i)
                } else {
                    i.to_le_bytes().to_vec()
                };
                if push_bytes(&a, 1, &p) {
                    i += 1;
                } else {
                    std::hint::spin_loop();
                    std::thread::yield_now();
                }
            }
            a
        });
        let consumer = std::thread::spawn(move || {
            let mut i = 0u64;
            while i < N {
                let t = b.doorbell(1).prepare_sleep();
                let got = b.try_pop(0, |p| {
                    let want = if i & 63 == 0 {
                        packet(i)
                    } else {
                        i.to_le_bytes().to_vec()
                    };
                    assert_eq!(p, &want[..], "packet {i}");
                });
                if got {
                    b.doorbell(1).cancel_sleep();
                    i += 1;
                } else if !b.any_incoming() {
                    b.doorbell(1).sleep(t, Duration::from_millis(100));
                } else {
                    b.doorbell(1).cancel_sleep();
                }
            }
            assert!(!b.any_incoming());
            b
        });
        let _a = producer.join().unwrap();
        let _b = consumer.join().unwrap();
    }

    #[test]
    fn shared_handle_across_threads_is_race_free() {
        // Two threads of one process hammer the same handle (same rings): the private
        // side locks keep the SPSC discipline; every packet arrives exactly once.
        let name = TestName::new("mt");
        let a = Arc::new(ShmSegment::create(&name.0, 2, 0).unwrap());
        let b = ShmSegment::open(&name.0, 2, 1).unwrap();
        const PER_THREAD: u64 = 20_000;
        let threads: Vec<_> = (0..2u64)
            .map(|t| {
                let a = a.clone();
                std::thread::spawn(move || {
                    let mut i = 0;
                    while i < PER_THREAD {
                        if push_bytes(&a, 1, &(t << 32 | i).to_le_bytes()) {
                            i += 1;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0u64; 2];
        while next.iter().sum::<u64>() < 2 * PER_THREAD {
            b.try_pop(0, |p| {
                let v = u64::from_le_bytes(p.try_into().unwrap());
                let (t, i) = ((v >> 32) as usize, v & 0xffff_ffff);
                assert_eq!(i, next[t], "per-thread FIFO");
                next[t] += 1;
            });
        }
        for t in threads {
            t.join().unwrap();
        }
        assert!(!b.any_incoming());
    }

    #[test]
    fn shared_copy_chunks_are_claimed_once_and_ids_fence_off_old_copies() {
        let name = TestName::new("copy");
        let sender = Arc::new(ShmSegment::create(&name.0, 2, 0).unwrap());
        let receiver = ShmSegment::open(&name.0, 2, 1).unwrap();
        const CHUNKS: u32 = 5000;
        for id in 1..=3u32 {
            receiver.copy_begin(0, 2, id);
            // A stale helper of the previous copy gets nothing of this one.
            assert_eq!(sender.copy_claim(0, 1, 2, id - 1, CHUNKS), None);
            let helper = {
                let sender = sender.clone();
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    while let Some(c) = sender.copy_claim(0, 1, 2, id, CHUNKS) {
                        mine.push(c);
                        sender.copy_done(0, 1, 2, true);
                    }
                    mine
                })
            };
            let mut mine = Vec::new();
            while let Some(c) = receiver.copy_claim(0, 1, 2, id, CHUNKS) {
                mine.push(c);
                receiver.copy_done(0, 1, 2, true);
            }
            mine.extend(helper.join().unwrap());
            mine.sort_unstable();
            assert_eq!(mine, (0..CHUNKS).collect::<Vec<_>>(), "every chunk exactly once");
            assert_eq!(receiver.copy_progress(0, 2), (CHUNKS, false));
            assert_eq!(receiver.copy_progress(0, 1), (0, false), "other slots untouched");
        }
        // A failed chunk is reported.
        receiver.copy_begin(0, 3, 4);
        let c = sender.copy_claim(0, 1, 3, 4, 2).unwrap();
        assert_eq!(c, 0);
        sender.copy_done(0, 1, 3, false);
        assert_eq!(receiver.copy_progress(0, 3), (1, true));
        assert_eq!(sender.copy_claim(0, 1, COPY_SLOTS, 4, 2), None, "no such slot");
    }

    #[test]
    fn open_validates() {
        let name = TestName::new("validate");
        let _a = ShmSegment::create(&name.0, 3, 0).unwrap();
        let e = ShmSegment::open(&name.0, 4, 1).unwrap_err();
        assert!(
            e.message.contains("created for 3 local ranks"),
            "{}",
            e.message
        );
        let e = ShmSegment::open(&name.0, 2, 1).unwrap_err();
        assert!(
            e.message.contains("created for 3 local ranks"),
            "{}",
            e.message
        );
        let e = ShmSegment::open(&name.0, 3, 3).unwrap_err();
        assert_eq!(e.class, ErrorClass::Arg);
        let e = ShmSegment::open(&name.0, 3, 0).unwrap_err();
        assert!(e.message.contains("already attached"), "{}", e.message);
        let b = ShmSegment::open(&name.0, 3, 1).unwrap();
        drop(b);
        // Dropping releases the claim.
        let _b = ShmSegment::open(&name.0, 3, 1).unwrap();
        // O_EXCL: creating twice fails.
        let e = ShmSegment::create(&name.0, 3, 2).unwrap_err();
        assert!(e.message.contains("cannot create"), "{}", e.message);
        // Missing segment, bad names.
        let missing = TestName::new("missing");
        let e = ShmSegment::open(&missing.0, 3, 1).unwrap_err();
        assert!(e.message.contains("cannot open"), "{}", e.message);
        assert_eq!(
            ShmSegment::create("a/b", 2, 0).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            ShmSegment::create("", 2, 0).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            ShmSegment::create(&name.0, 0, 0).unwrap_err().class,
            ErrorClass::Arg
        );
    }

    #[test]
    fn open_rejects_foreign_file() {
        let name = TestName::new("foreign");
        std::fs::write(name.path(), vec![0xabu8; 8192]).unwrap();
        let e = ShmSegment::open(&name.0, 2, 1).unwrap_err();
        assert!(e.message.contains("not an oxmpi segment"), "{}", e.message);
    }

    #[test]
    fn mode_is_0600_and_unlink_removes() {
        let name = TestName::new("mode");
        // Even under a permissive umask the file must be private.
        let seg = ShmSegment::create(&name.0, 4, 0).unwrap();
        let meta = std::fs::metadata(name.path()).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len() as usize, seg.size());
        assert_eq!(seg.size(), segment_size(4).unwrap());
        ShmSegment::unlink(&name.0);
        assert!(!std::path::Path::new(&name.path()).exists());
        // The mapping stays usable after unlink.
        assert!(push_bytes(&seg, 0, b"still mapped"));
        assert_eq!(pop_vec(&seg, 0).unwrap(), b"still mapped");
        // Unlinking a missing segment is fine.
        ShmSegment::unlink(&name.0);
        ShmSegment::unlink("no/such");
    }

    #[test]
    fn failed_create_leaves_nothing() {
        let name = TestName::new("toobig");
        // More ranks than supported: rejected before anything is created.
        assert!(ShmSegment::create(&name.0, MAX_LOCAL + 1, 0).is_err());
        assert!(!std::path::Path::new(&name.path()).exists());
    }

    const CHILD_ENV: &str = "OXMPI_SHM_TEST_CHILD";
    const ROUNDS: u64 = 20_000;

    /// The child half of `cross_process_echo`: does nothing unless started by it.
    #[test]
    fn cross_process_echo_child() {
        let Ok(name) = std::env::var(CHILD_ENV) else {
            return;
        };
        let seg = ShmSegment::open(&name, 2, 1).unwrap();
        super::super::cma::allow_peer_reads();
        // Tell the parent where our CMA-readable buffer is.
        static SECRET: [u8; 32] = *b"the child's memory, read by CMA!";
        let mut hello = Vec::new();
        hello.extend_from_slice(&(std::process::id() as u64).to_le_bytes());
        hello.extend_from_slice(&(SECRET.as_ptr() as u64).to_le_bytes());
        while !push_bytes(&seg, 0, &hello) {
            std::thread::yield_now();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(Instant::now() < deadline, "child timed out");
            let t = seg.doorbell(1).prepare_sleep();
            let mut msg = None;
            if seg.try_pop(0, |p| msg = Some(p.to_vec())) {
                seg.doorbell(1).cancel_sleep();
                let msg = msg.unwrap();
                if msg == b"quit" {
                    break;
                }
                while !push_bytes(&seg, 0, &msg) {
                    assert!(Instant::now() < deadline, "child timed out pushing");
                    std::thread::yield_now();
                }
            } else {
                seg.doorbell(1).sleep(t, Duration::from_secs(5));
            }
        }
    }

    #[test]
    fn cross_process_echo() {
        if std::env::var(CHILD_ENV).is_ok() {
            return;
        }
        let name = TestName::new("xproc");
        let seg = ShmSegment::create(&name.0, 2, 0).unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "transport::shm::tests::cross_process_echo_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &name.0)
            // The harness' "running 1 test" chatter would clutter our output; the
            // child's panics go to stderr, which we keep.
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Wait (asleep) for the child's hello.
            let hello = loop {
                assert!(Instant::now() < deadline, "no hello from the child");
                let t = seg.doorbell(0).prepare_sleep();
                if let Some(p) = pop_vec(&seg, 1) {
                    seg.doorbell(0).cancel_sleep();
                    break p;
                }
                if let Ok(Some(st)) = child.try_wait() {
                    panic!("child exited early: {st}");
                }
                seg.doorbell(0).sleep(t, Duration::from_millis(100));
            };
            let pid = u64::from_le_bytes(hello[..8].try_into().unwrap());
            let addr = u64::from_le_bytes(hello[8..16].try_into().unwrap());
            assert_eq!(pid, u64::from(child.id()));
            if super::super::cma::probe_cma() {
                let mut buf = [0u8; 32];
                super::super::cma::read_remote(pid as i32, addr as usize, &mut buf).unwrap();
                assert_eq!(&buf, b"the child's memory, read by CMA!");
            }
            // Echo traffic with at most `cap` packets outstanding, sleeping when idle.
            let cap = seg.ring_capacity() as u64;
            let (mut sent, mut got) = (0u64, 0u64);
            while got < ROUNDS {
                assert!(Instant::now() < deadline, "echo stalled at {got}/{ROUNDS}");
                let t = seg.doorbell(0).prepare_sleep();
                let mut progress = false;
                while sent < ROUNDS && sent - got < cap && push_bytes(&seg, 1, &packet(sent)) {
                    sent += 1;
                    progress = true;
                }
                while seg.try_pop(1, |p| assert_eq!(p, &packet(got)[..], "echo {got}")) {
                    got += 1;
                    progress = true;
                }
                if !progress && !seg.any_incoming() {
                    seg.doorbell(0).sleep(t, Duration::from_millis(100));
                } else {
                    seg.doorbell(0).cancel_sleep();
                }
            }
            while !push_bytes(&seg, 1, b"quit") {
                std::thread::yield_now();
            }
            loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break st;
                }
                assert!(Instant::now() < deadline, "child did not exit");
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
        match result {
            Ok(status) => assert!(status.success(), "child failed: {status}"),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                std::panic::resume_unwind(e);
            }
        }
    }
}
