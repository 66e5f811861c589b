//! The shared-memory collectives' area (`coll/shm/`): one anonymous mapping per
//! communicator, shared by its members, seen here as typed pieces: atomic counter
//! words and a doorbell ([`CollArena`]'s accessors return `&AtomicU64` / `&Doorbell`)
//! and staging regions ([`Stage`]), which are only ever copied into, copied out of,
//! packed, unpacked or folded through this module's methods. Every `unsafe` block of
//! the shared-memory collectives lives here or in `buf/elems.rs` (the user side);
//! the protocol that decides *when* each rank touches which region is `coll/shm`'s
//! (its module docs), written in safe code over these types.
//!
//! # Layout (offsets from the page-aligned start)
//!
//! | offset | contents |
//! |---|---|
//! | 0 | the release line: `release`, `arrive` (u64 counters), then 2 × [`INLINE`] bytes of inline broadcast buffer (by step parity) |
//! | 64 | the release [`Doorbell`] |
//! | 128 | one 128-byte control line per rank: `flag`, `res`, `done`, `wants`, then 2 × [`INLINE_SLOT`] bytes of inline slot (by step parity); rank 0's also `wanting` at its offset 64 |
//! | after them | the near broadcast buffer: 2 × [`NEAR`] bytes (by step parity), in the release line's page up to 26 ranks |
//! | next page | the broadcast buffer: 2 × [`CHUNK`] (by step parity) |
//! | then | one data slot per rank: 2 × [`CHUNK`] each (by step parity) |
//!
//! # Invariants
//! * The mapping lives as long as its [`CollArena`]; every `&AtomicU64`, `&Doorbell`
//!   and [`Stage`] borrows the arena, so none outlives the mapping.
//! * The control pages hold only `AtomicU64`s and the one `Doorbell` (zero bytes are
//!   a valid initial state of both: a fresh memfd reads as zeros), at fixed
//!   8-aligned offsets below the broadcast buffer, the inline broadcast buffer
//!   (bytes 16..64 of the release line), the ranks' inline slots (bytes 32..64 of
//!   each control line) and the near broadcast buffer (after the control lines),
//!   all reached only as a [`Stage`], never as a counter (`counter` names offsets 0
//!   and 8 of the release line, 0, 8, 16 and 24 of a control line and 64 of rank
//!   0's only, and checks every offset against the near buffer's start); nothing
//!   else is ever placed there.
//! * A [`Stage`] is a range of the data pages (broadcast buffer or slots), the
//!   inline or near broadcast buffer or an inline slot, checked to
//!   lie inside its parent on every [`Stage::sub`]; no method hands out a Rust
//!   reference into a stage. The methods that need a slice of one (pack, unpack,
//!   deliver) make it for the duration of a call that runs no caller code, so within
//!   this process no two references to a stage's bytes are ever live together (and
//!   [`fold`] checks that its accumulator overlaps none of its operands).
//! * Ownership across processes is the flag protocol of `coll/shm`: a region is
//!   written by one rank between its `wait_free` (every rank done with the step two
//!   back, Acquire) and the Release store that publishes it (`flag`, `res` or
//!   `release`), and read by the others only after an Acquire load that sees that
//!   store, until they store `done`. Bytes in the data pages are never interpreted
//!   as lengths, offsets or pointers, so a peer that breaks the protocol can make us
//!   read wrong data bytes, never touch memory outside the mapping (the trust model
//!   of the whole shared-memory transport).

use std::marker::PhantomData;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::buf::elems::{Elems, ElemsMut};
use crate::datatype::Datatype;
use crate::error::Result;
use crate::op::{Op, Reducer};
use crate::transport::doorbell::Doorbell;
use crate::transport::memfd::{self, Mapping};

/// Bytes of one buffer half (the broadcast buffer and every rank's slot have two).
pub const CHUNK: usize = 64 * 1024;
/// Bytes of one half of the inline broadcast buffer (in the release line, after
/// `release` and `arrive`): a message that fits reaches the waiters with the line
/// that publishes it, one cache-line transfer instead of two.
pub const INLINE: usize = 24;
/// Bytes of one half of a rank's inline slot (bytes 32..64 of its control line,
/// after `flag`, `res`, `done` and `wants`): a block that fits reaches the readers
/// with the line whose `flag` publishes it, one cache-line transfer instead of two.
pub const INLINE_SLOT: usize = 16;
/// Bytes of one half of the near broadcast buffer, right after the control lines
/// (in the first page, beside the release line, up to 26 ranks): root publications
/// too large for the release line but not for this (bcast messages) reach the
/// readers without a line of the broadcast buffer's page. Every page our ranks touch is a TLB miss after a context switch
/// (more ranks than cores), on a VM a nested page walk: at 4 ranks on 2 cores a
/// 32-byte bcast cost 0.22 us through the broadcast buffer against 0.12 for 8 bytes
/// inline (bench/PROFILE.md collA33).
pub const NEAR: usize = 256;
const LINE: usize = 128;
const PAGE: usize = 4096;

/// Areas mapped by this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Copy, Debug)]
struct Layout {
    ctl: usize,
    near: usize,
    bbuf: usize,
    slots: usize,
    total: usize,
}

impl Layout {
    fn new(n: usize) -> Layout {
        let ctl = LINE;
        let near = ctl + n * LINE;
        let bbuf = (near + 2 * NEAR).div_ceil(PAGE) * PAGE;
        let slots = bbuf + 2 * CHUNK;
        Layout {
            ctl,
            near,
            bbuf,
            slots,
            total: slots + n * 2 * CHUNK,
        }
    }
}

/// One communicator's mapped area for `n` ranks.
pub(crate) struct CollArena {
    map: Mapping,
    lay: Layout,
    n: usize,
}

// SAFETY: the arena is a shared mapping owned by this handle; through `&self` it hands out only atomics, a doorbell (all atomics) and `Stage`s, whose methods copy bytes under the ownership protocol (module docs); the communicator's mutex serializes this process's users.
unsafe impl Send for CollArena {}
// SAFETY: as for `Send`.
unsafe impl Sync for CollArena {}

impl Drop for CollArena {
    fn drop(&mut self) {
        // The mapping is unmapped when `map` drops, right after.
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

fn os_err(what: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl CollArena {
    /// Areas mapped by this process now.
    pub(crate) fn live() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    /// Bytes of the area of `n` ranks.
    pub(crate) fn size(n: usize) -> usize {
        Layout::new(n).total
    }

    /// A fresh memfd sized for `n` ranks (all zeros), to map and share through /proc.
    pub(crate) fn create_fd(n: usize) -> std::io::Result<OwnedFd> {
        let fd = memfd::new(c"oxmpi-coll").map_err(|e| os_err("memfd_create", e))?;
        memfd::set_len(&fd, Self::size(n)).map_err(|e| os_err("ftruncate", e))?;
        Ok(fd)
    }

    /// Opens another process's area memfd through /proc, checking its size for `n` ranks.
    pub(crate) fn open_fd(pid: u64, fd: u64, n: usize) -> std::io::Result<OwnedFd> {
        let fd = memfd::open_peer(pid, fd).map_err(|e| os_err("opening the creator's memfd", e))?;
        if fd_len(&fd)? != Self::size(n) as u64 {
            return Err(std::io::Error::other(
                "the creator's memfd has the wrong size",
            ));
        }
        Ok(fd)
    }

    /// Maps the area of `n` ranks from `fd` (checked to be exactly that large).
    pub(crate) fn map(fd: &OwnedFd, n: usize) -> std::io::Result<CollArena> {
        let lay = Layout::new(n);
        if fd_len(fd)? != lay.total as u64 {
            return Err(std::io::Error::other("the area's memfd has the wrong size"));
        }
        let map = Mapping::new(fd, lay.total).map_err(|e| os_err("mmap", e))?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(CollArena { map, lay, n })
    }

    /// The counter at `off` of the control pages (a rank's counters: `off` grows with
    /// the rank, checked against the control pages' end, so a wrong rank can only
    /// name another counter).
    fn counter(&self, off: usize) -> &AtomicU64 {
        assert!(off + 8 <= self.lay.near && off.is_multiple_of(8));
        // SAFETY: `off` is 8-aligned inside the control pages of the live mapping (page aligned base), which only ever hold AtomicU64s (zero = 0); the reference borrows `self`, which keeps the mapping alive.
        unsafe { &*(self.map.ptr().as_ptr().add(off) as *const AtomicU64) }
    }

    /// Step of the last root publication (bcast data, barrier release).
    pub(crate) fn release(&self) -> &AtomicU64 {
        self.counter(0)
    }
    /// Arrivals at counted steps.
    pub(crate) fn arrive(&self) -> &AtomicU64 {
        self.counter(8)
    }
    /// Rank `r` waits for the others' `done`.
    pub(crate) fn wants(&self, r: usize) -> &AtomicU64 {
        self.counter(self.lay.ctl + r * LINE + 24)
    }
    /// How many ranks wait for the others' `done` now (offset 64 of rank 0's
    /// control line, which nothing else uses), so that setting `done` reads one
    /// word, not every rank's `wants`, when nobody waits.
    pub(crate) fn wanting(&self) -> &AtomicU64 {
        self.counter(self.lay.ctl + 64)
    }
    /// Rank `r` arrived at (and its slot holds its data of) this step.
    pub(crate) fn flag(&self, r: usize) -> &AtomicU64 {
        self.counter(self.lay.ctl + r * LINE)
    }
    /// Rank `r` wrote its block of this step's result.
    pub(crate) fn res(&self, r: usize) -> &AtomicU64 {
        self.counter(self.lay.ctl + r * LINE + 8)
    }
    /// Rank `r` finished reading everything of this step.
    pub(crate) fn done(&self, r: usize) -> &AtomicU64 {
        self.counter(self.lay.ctl + r * LINE + 16)
    }

    /// The release doorbell (offset 64 of the release line).
    pub(crate) fn release_bell(&self) -> &Doorbell {
        const _: () = assert!(std::mem::size_of::<Doorbell>() == 64 && 64 + 64 <= LINE);
        // SAFETY: offset 64 of the page-aligned live mapping is 64-aligned, holds 64 bytes that only ever hold this Doorbell (all-zero is an idle one), and nothing else is placed there; the reference borrows `self`.
        unsafe { &*(self.map.ptr().as_ptr().add(64) as *const Doorbell) }
    }

    #[inline]
    fn stage(&self, off: usize) -> Stage<'_> {
        debug_assert!(off >= self.lay.bbuf && off + CHUNK <= self.lay.total);
        Stage {
            ptr: self.map.ptr().as_ptr().wrapping_add(off),
            len: CHUNK,
            _arena: PhantomData,
        }
    }

    /// The broadcast buffer of step parity `par` ([`CHUNK`] bytes).
    #[inline]
    pub(crate) fn bbuf(&self, par: u64) -> Stage<'_> {
        self.stage(self.lay.bbuf + (par as usize & 1) * CHUNK)
    }

    /// The inline broadcast buffer of step parity `par` ([`INLINE`] bytes at offset
    /// 16 of the release line).
    #[inline]
    pub(crate) fn inline_bbuf(&self, par: u64) -> Stage<'_> {
        const _: () = assert!(16 + 2 * INLINE <= 64);
        Stage {
            ptr: self
                .map
                .ptr()
                .as_ptr()
                .wrapping_add(16 + (par as usize & 1) * INLINE),
            len: INLINE,
            _arena: PhantomData,
        }
    }

    /// Where a root publication of `bytes` bytes (the same on every rank) of step
    /// parity `par` goes: the inline half when it fits, else the broadcast half.
    #[inline]
    pub(crate) fn bbuf_for(&self, par: u64, bytes: usize) -> Stage<'_> {
        if bytes <= INLINE {
            self.inline_bbuf(par)
        } else {
            self.bbuf(par)
        }
    }

    /// The near broadcast buffer of step parity `par` ([`NEAR`] bytes right after
    /// the control lines).
    #[inline]
    pub(crate) fn near_bbuf(&self, par: u64) -> Stage<'_> {
        Stage {
            ptr: self
                .map
                .ptr()
                .as_ptr()
                .wrapping_add(self.lay.near + (par as usize & 1) * NEAR),
            len: NEAR,
            _arena: PhantomData,
        }
    }

    /// Where a root publication of `bytes` bytes (the same on every rank) of step
    /// parity `par` goes: the inline half, the near half, or the broadcast half,
    /// the first that holds it.
    #[inline]
    pub(crate) fn root_stage(&self, par: u64, bytes: usize) -> Stage<'_> {
        if bytes <= INLINE {
            self.inline_bbuf(par)
        } else if bytes <= NEAR {
            self.near_bbuf(par)
        } else {
            self.bbuf(par)
        }
    }

    /// Rank `r`'s inline slot of step parity `par` ([`INLINE_SLOT`] bytes at offset
    /// 32 of its control line, beside its `flag`): written by rank `r` only, under
    /// the same protocol as its slot.
    #[inline]
    pub(crate) fn inline_slot(&self, r: usize, par: u64) -> Stage<'_> {
        const _: () = assert!(32 + 2 * INLINE_SLOT <= 64);
        assert!(r < self.n);
        Stage {
            ptr: self
                .map
                .ptr()
                .as_ptr()
                .wrapping_add(self.lay.ctl + r * LINE + 32 + (par as usize & 1) * INLINE_SLOT),
            len: INLINE_SLOT,
            _arena: PhantomData,
        }
    }

    /// Where rank `r`'s block of `bytes` bytes (the same on every rank) of step
    /// parity `par` goes: its inline slot when it fits, else its slot.
    #[inline]
    pub(crate) fn slot_for(&self, r: usize, par: u64, bytes: usize) -> Stage<'_> {
        if bytes <= INLINE_SLOT {
            self.inline_slot(r, par)
        } else {
            self.slot(r, par)
        }
    }

    /// Rank `r`'s slot of step parity `par` ([`CHUNK`] bytes).
    #[inline]
    pub(crate) fn slot(&self, r: usize, par: u64) -> Stage<'_> {
        assert!(r < self.n);
        self.stage(self.lay.slots + (r * 2 + (par as usize & 1)) * CHUNK)
    }
}

fn fd_len(fd: &OwnedFd) -> std::io::Result<u64> {
    memfd::len(fd).map_err(|e| os_err("fstat", e))
}

/// A staging region of the area: `len` bytes of the data pages, for the arena's
/// lifetime. Its bytes are reached only through the methods below (see the module
/// docs for who may write it when).
#[derive(Clone, Copy)]
pub(crate) struct Stage<'a> {
    ptr: *mut u8,
    len: usize,
    _arena: PhantomData<&'a CollArena>,
}

impl<'a> Stage<'a> {
    /// Bytes `at..at + len` of this region.
    #[inline]
    pub(crate) fn sub(&self, at: usize, len: usize) -> Stage<'a> {
        assert!(
            at <= self.len && len <= self.len - at,
            "stage range out of bounds"
        );
        Stage {
            ptr: self.ptr.wrapping_add(at),
            len,
            _arena: PhantomData,
        }
    }

    /// Copies `src` to the start of the region.
    #[inline]
    pub(crate) fn copy_in(&self, src: &[u8]) {
        assert!(src.len() <= self.len, "stage copy_in out of bounds");
        // SAFETY: the region holds `len >= src.len()` bytes of the live mapping (invariants); `src` is a live Rust borrow and no Rust reference to the region's bytes exists (none is handed out), so they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr, src.len()) };
    }

    /// Copies the start of the region into `dst`.
    #[inline]
    pub(crate) fn copy_out(&self, dst: &mut [u8]) {
        assert!(dst.len() <= self.len, "stage copy_out out of bounds");
        // SAFETY: the region holds `len >= dst.len()` bytes of the live mapping (invariants); `dst` is an exclusive Rust borrow of this process's memory, not the mapping's (no reference into a stage is handed out), so they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr as *const u8, dst.as_mut_ptr(), dst.len())
        };
    }

    /// Packs bytes `from..from + len` of `src`'s packed stream into the region.
    #[inline]
    pub(crate) fn pack_in(&self, src: &Elems<'_>, from: usize) {
        if self.len == 0 {
            return;
        }
        // SAFETY: the region is in bounds of the live mapping; this slice is the only reference to its bytes in this process while `pack` runs (no caller code runs in it), and `src` is user memory, not the mapping.
        let out = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) };
        src.pack(from, out);
    }

    /// Unpacks the region as bytes `from..from + len` of `dst`'s packed stream.
    #[inline]
    pub(crate) fn unpack_out(&self, dst: &mut ElemsMut<'_>, from: usize) {
        if self.len == 0 {
            return;
        }
        // SAFETY: as in `pack_in`, for reading.
        let packed = unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) };
        dst.unpack(from, packed);
    }

    /// Copies elements `e0..e0 + c` of `dst` from the region, which holds them laid
    /// out as their memory span, writing only their data bytes.
    #[inline]
    pub(crate) fn deliver(&self, dst: &mut ElemsMut<'_>, e0: usize, c: usize) {
        if self.len == 0 {
            return dst.deliver(e0, c, &[]);
        }
        // SAFETY: as in `unpack_out`.
        let span = unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) };
        dst.deliver(e0, c, span);
    }
}

/// An operand of [`fold`]: a staging region or bytes of this process.
#[derive(Clone, Copy)]
pub(crate) enum Operand<'s> {
    Stage(Stage<'s>),
    Bytes(&'s [u8]),
}

impl Operand<'_> {
    fn raw(&self) -> (*const u8, usize) {
        match self {
            Operand::Stage(s) => (s.ptr as *const u8, s.len),
            Operand::Bytes(b) => (b.as_ptr(), b.len()),
        }
    }
}

/// The accumulator of [`fold`]: a staging region or bytes of this process.
pub(crate) enum Acc<'s> {
    Stage(Stage<'s>),
    Bytes(&'s mut [u8]),
}

/// `acc = src(0) op (src(1) op (... op src(n-1)))` over `c` elements of `dt` laid
/// out as their memory span at the start of every operand and of `acc` (written
/// whole: gaps too). Panics if an operand is shorter than the span or `acc`
/// overlaps one.
#[inline(always)]
pub(crate) fn fold<'s>(
    n: usize,
    src: impl Fn(usize) -> Operand<'s>,
    acc: Acc<'_>,
    c: usize,
    dt: &Datatype,
    op: &Op,
) -> Result<()> {
    fold_with(n, src, acc, c, &op.reducer(dt, "MPI_Reduce_local")?)
}

/// [`fold`] with the operation already checked against its datatype (once per
/// call by the caller, not once per chunk and operand).
#[inline(always)]
pub(crate) fn fold_with<'s>(
    n: usize,
    src: impl Fn(usize) -> Operand<'s>,
    acc: Acc<'_>,
    c: usize,
    red: &Reducer<'_>,
) -> Result<()> {
    let dt = red.datatype();
    if n == 0 || c == 0 {
        return Ok(());
    }
    let ext = dt.extent();
    assert!(c == 1 || ext > 0, "fold over a non-positive extent");
    let len = ((c as isize - 1) * ext + dt.true_extent()).max(0) as usize;
    let (acc, acc_len) = match acc {
        Acc::Stage(s) => (s.ptr, s.len),
        Acc::Bytes(b) => (b.as_mut_ptr(), b.len()),
    };
    assert!(acc_len >= len, "fold: accumulator too short");
    if len == 0 {
        return Ok(());
    }
    // Operand `j`'s start, checked to hold the span and to lie apart from `acc`.
    let operand = |j: usize| {
        let (p, l) = src(j).raw();
        assert!(l >= len, "fold: operand too short");
        assert!(
            p as usize + len <= acc as usize || acc as usize + len <= p as usize,
            "fold: the accumulator overlaps an operand"
        );
        p
    };
    let lb = dt.true_lb();
    // Blocks of elements of about FOLD_BLOCK bytes, each folded whole before the
    // next: the accumulator's block stays in the first-level cache across the n
    // operands instead of being written and read back from farther away per
    // operand (every element still sees the same operands in the same order).
    let per = if c == 1 {
        1
    } else {
        (FOLD_BLOCK / ext as usize).max(1)
    };
    let mut e0 = 0;
    while e0 < c {
        let bc = per.min(c - e0);
        let step = if c == 1 { 0 } else { ext as usize };
        let off = e0 * step;
        // The span from element e0 to the next block's first (to the end of the
        // span for the last block): the blocks tile the span, gaps included.
        let blen = if e0 + bc == c { len - off } else { bc * step };
        // SAFETY: both ranges hold `len >= off + blen` bytes (checked) of the live mapping, this process's exclusive `acc` borrow, or a shared borrow; they do not overlap (checked); no Rust reference to a stage's bytes is live (invariants).
        unsafe { std::ptr::copy_nonoverlapping(operand(n - 1).add(off), acc.add(off), blen) };
        for j in (0..n - 1).rev() {
            let (p, a) = (operand(j).wrapping_add(off), acc.wrapping_add(off));
            // SAFETY: both ranges cover the span of elements e0..e0 + bc of `dt` (inside the checked `len`), so shifted back by `true_lb` they cover `bc` elements in dt's memory layout, as `apply` needs; readable / writable as in the copy above, and apart (checked).
            unsafe { red.apply(p.wrapping_offset(-lb), a.wrapping_offset(-lb), bc)? };
        }
        e0 += bc;
    }
    Ok(())
}

/// Bytes of elements [`fold_with`] folds through every operand before moving on.
const FOLD_BLOCK: usize = 8 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::{as_bytes, as_bytes_mut};
    use crate::datatype::Primitive;
    use crate::op::PredefinedOp;
    use std::os::fd::AsRawFd;

    /// Two mappings of one area, as two ranks see it.
    fn pair(n: usize) -> (CollArena, CollArena) {
        let fd = CollArena::create_fd(n).unwrap();
        let a = CollArena::map(&fd, n).unwrap();
        let other =
            CollArena::open_fd(std::process::id() as u64, fd.as_raw_fd() as u64, n).unwrap();
        (a, CollArena::map(&other, n).unwrap())
    }

    #[test]
    fn counters_and_stages_are_shared_between_mappings() {
        let (a, b) = pair(3);
        a.flag(2).store(7, Ordering::Release);
        a.release().store(5, Ordering::Release);
        assert_eq!(b.flag(2).load(Ordering::Acquire), 7);
        assert_eq!(b.release().load(Ordering::Acquire), 5);
        assert_eq!(b.done(1).load(Ordering::Acquire), 0);
        let dt = Datatype::predefined(Primitive::Int32);
        let v = [1i32, 2, 3];
        // SAFETY: `v` holds 3 elements of Int32 and lives for the view.
        let src = unsafe { Elems::from_raw(as_bytes(&v).as_ptr(), 3, &dt) };
        a.slot(1, 1).sub(0, 12).pack_in(&src, 0);
        let mut w = [0i32; 3];
        let p = as_bytes_mut(&mut w).as_mut_ptr();
        // SAFETY: `w` holds 3 elements of Int32, ours alone while the view lives.
        let mut dst = unsafe { ElemsMut::from_raw(p, 3, &dt) };
        b.slot(1, 1).sub(0, 12).unpack_out(&mut dst, 0);
        assert_eq!(w, v);
        // The other parity and the other slots are distinct regions.
        let mut z = [0i32; 3];
        let p = as_bytes_mut(&mut z).as_mut_ptr();
        // SAFETY: as above.
        let mut dst = unsafe { ElemsMut::from_raw(p, 3, &dt) };
        b.slot(1, 0).sub(0, 12).unpack_out(&mut dst, 0);
        b.slot(0, 1).sub(0, 12).unpack_out(&mut dst, 0);
        assert_eq!(z, [0; 3]);
    }

    #[test]
    fn a_peer_memfd_of_the_wrong_size_is_refused() {
        let fd = CollArena::create_fd(2).unwrap();
        let pid = std::process::id() as u64;
        assert!(CollArena::open_fd(pid, fd.as_raw_fd() as u64, 3).is_err());
        assert!(CollArena::map(&fd, 3).is_err());
    }

    #[test]
    fn fold_combines_in_rank_order_and_delivers_only_element_bytes() {
        let (a, _b) = pair(3);
        // A vector of 2 ints with stride 2: data at 0 and 8 of a 12-byte span.
        let int = Datatype::predefined(Primitive::Int32);
        let dt = Datatype::vector(2, 1, 2, &int).unwrap();
        for r in 0..3 {
            let v = [10 * r + 1, -1, 10 * r + 2];
            a.slot(r as usize, 0).copy_in(as_bytes(&v));
        }
        let op = Op::predefined(PredefinedOp::Sum);
        let src = |j: usize| Operand::Stage(a.slot(j, 0));
        fold(3, src, Acc::Stage(a.bbuf(0)), 1, &dt, &op).unwrap();
        let mut out = [0i32, 99, 0];
        let p = as_bytes_mut(&mut out).as_mut_ptr();
        // SAFETY: `out` is one element of `dt` (its whole span), ours alone.
        let mut dst = unsafe { ElemsMut::from_raw(p, 1, &dt) };
        a.bbuf(0).deliver(&mut dst, 0, 1);
        assert_eq!(out, [33, 99, 36]);
    }

    #[test]
    #[should_panic(expected = "overlaps")]
    fn fold_refuses_an_accumulator_that_overlaps_an_operand() {
        let (a, _b) = pair(2);
        let dt = Datatype::predefined(Primitive::Int32);
        let op = Op::predefined(PredefinedOp::Sum);
        let src = |j: usize| Operand::Stage(a.slot(j, 0));
        let _ = fold(2, src, Acc::Stage(a.slot(1, 0).sub(2, 8)), 1, &dt, &op);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_stage_range_past_the_region_panics() {
        let (a, _b) = pair(2);
        a.slot(0, 0).sub(CHUNK - 4, 8);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn copy_in_longer_than_the_region_panics() {
        let (a, _b) = pair(2);
        a.bbuf(1).sub(0, 4).copy_in(&[0u8; 5]);
    }
}
