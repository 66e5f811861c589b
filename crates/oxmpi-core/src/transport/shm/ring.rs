//! The rings: the per-ring process-private locks, pushing and popping packets
//! (the ring protocol of the parent module's documentation, also modelled in
//! `oxmpi-loom`), the blocked-producer handshake and the incoming-packet hint.

use super::*;

/// A process-private lock guarding one side of one ring; 128 B to avoid false sharing
/// between threads working on different peers.
#[repr(align(128))]
pub(super) struct SideLock(pub(super) AtomicBool);

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

/// Takes every lock of `locks`, or none (`false`) if one is held.
fn lock_all(locks: &[SideLock]) -> bool {
    for (i, l) in locks.iter().enumerate() {
        if l.0.swap(true, Ordering::Acquire) {
            for taken in &locks[..i] {
                taken.0.store(false, Ordering::Release);
            }
            return false;
        }
    }
    true
}

fn unlock_all(locks: &[SideLock]) {
    for l in locks {
        l.0.store(false, Ordering::Release);
    }
}

/// This process's producer side of every ring of a segment, for one owner (the
/// engine keeps it in its `State`, behind the runtime's mutex): it holds every push
/// lock of the segment while it lives, so [`ShmSegment::try_push`] from anywhere else
/// finds the ring busy, and [`RingSender::push`] takes `&mut self`, so one thread at a
/// time pushes through it. That is [`ShmSegment::try_push_exclusive`]'s contract,
/// which is why `push` is safe and skips the per-packet lock. Not `Clone`.
#[derive(Debug)]
pub struct RingSender<'s> {
    seg: &'s ShmSegment,
}

/// The consumer side of every ring into this process, as [`RingSender`] is the
/// producer side: holds every pop lock of the segment; [`RingReceiver::pop`] is safe.
#[derive(Debug)]
pub struct RingReceiver<'s> {
    seg: &'s ShmSegment,
}

impl ShmSegment {
    /// The producer side of every ring from this rank, or `None` while another
    /// holder (a `RingSender`, or a `try_push` in flight) has any of it.
    pub fn sender(&self) -> Option<RingSender<'_>> {
        lock_all(&self.push_locks).then_some(RingSender { seg: self })
    }

    /// The consumer side of every ring into this rank, as [`ShmSegment::sender`].
    pub fn receiver(&self) -> Option<RingReceiver<'_>> {
        lock_all(&self.pop_locks).then_some(RingReceiver { seg: self })
    }
}

impl RingSender<'_> {
    /// [`ShmSegment::try_push`] through the held producer side: no lock per packet.
    #[inline(always)]
    pub fn push(
        &mut self,
        to: usize,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        // SAFETY: this value holds every push lock of the segment (so no `try_push` runs) and is borrowed exclusively, so no other thread of this process pushes to `to` meanwhile.
        unsafe { self.seg.try_push_exclusive(to, max_len, fill) }
    }
}

impl Drop for RingSender<'_> {
    fn drop(&mut self) {
        unlock_all(&self.seg.push_locks);
    }
}

impl RingReceiver<'_> {
    /// [`ShmSegment::try_pop`] through the held consumer side: no lock per packet.
    #[inline(always)]
    pub fn pop(&mut self, from: usize, f: impl FnOnce(&[u8])) -> bool {
        // SAFETY: this value holds every pop lock of the segment (so no `try_pop` runs) and is borrowed exclusively, so no other thread of this process pops from `from` meanwhile.
        unsafe { self.seg.try_pop_exclusive(from, f) }
    }
}

impl Drop for RingReceiver<'_> {
    fn drop(&mut self) {
        unlock_all(&self.seg.pop_locks);
    }
}

impl Drop for SideGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Slots after a packet's first that the consumer asks the cache for as soon as the
/// state word gives the packet's length, and that the producer claims for writing after
/// pushing a packet of more than one slot (the next packet's). Without them the second line of a packet was a second
/// cross-core miss in series with the first (bench/PROFILE.md, lat18).
const PREFETCH_SLOTS: usize = 4;

/// Largest packet (bytes after the state word) whose every line the consumer asks
/// the cache for as soon as its state word gives the length, rather than only the
/// first [`PREFETCH_SLOTS`] (`OXMPI_SHM_PREFETCH_WHOLE`, bytes; 0 = never). The
/// default covers a 2 KiB message and its header: its windows ran 3-4% faster, 1-1.5
/// KiB and 4 KiB level (bench/PROFILE.md bw35); mbw33 found whole 4-8 KiB packets
/// slower to prefetch.
const WHOLE_PREFETCH_MAX: usize = 2100;

/// [`WHOLE_PREFETCH_MAX`], or `OXMPI_SHM_PREFETCH_WHOLE`.
fn whole_prefetch_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        crate::transport::env_bytes("OXMPI_SHM_PREFETCH_WHOLE", 0, WHOLE_PREFETCH_MAX)
    })
}

/// Smallest in-window copy made by [`copy_avx2`] (`OXMPI_SHM_VECTOR_COPY_MIN`, bytes,
/// raised to [`COPY_STEP`]; default [`VECTOR_COPY_MIN`]).
fn vector_copy_min() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        crate::transport::env_bytes("OXMPI_SHM_VECTOR_COPY_MIN", 0, VECTOR_COPY_MIN).max(COPY_STEP)
    })
}

/// Asks for the cache line at `p` to be read soon.
#[inline(always)]
fn prefetch_read(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address, and changes no architectural state.
    unsafe {
        std::arch::asm!("prefetcht0 [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks for the cache line at `p` in a writable state (`prefetchw`; a no-op on CPUs
/// without it, which decode it as a hint NOP).
#[inline(always)]
fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as `prefetch_read`: a hint that never faults and changes no architectural state.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Smallest copy that [`copy_packet_bytes`] makes with its own 32-byte vector loop
/// rather than `memcpy`. Above 2,112 bytes glibc's `memcpy` uses `rep movsb` on the AMD
/// EPYC host of bench/PROFILE.md mbw33, which streamed windows of 4-16 KiB messages
/// through the rings 5-25% slower than this loop. Below it glibc runs the same
/// pattern of 32-byte moves after a size dispatch: the loop from 256 bytes took a
/// 1 KiB window's copy from ~117 to ~93 instructions on each side, but windows of
/// 512 B-1 KiB 7-9% slower in the VM's slow mode (bw35): 2 KiB until a quiet A/B.
const VECTOR_COPY_MIN: usize = 2048;

/// Copies `src` to the start of `dst` (at least as long): a packet's payload into a
/// ring, or out of one into a receive buffer, when the message is one of a window
/// (the engine keeps `memcpy` for the answer of a ping-pong: this loop made 2-4 KiB
/// round trips 0.1-0.2 us slower, mbw33). From [`vector_copy_min`] bytes on CPUs with
/// AVX2, a loop of 32-byte moves; otherwise `memcpy`.
#[inline]
pub fn copy_packet_bytes(dst: &mut [u8], src: &[u8]) {
    let dst = &mut dst[..src.len()];
    #[cfg(target_arch = "x86_64")]
    if src.len() >= vector_copy_min() && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (detected just above), the one condition for running code compiled for it.
        unsafe { copy_avx2(dst, src) };
        return;
    }
    dst.copy_from_slice(src);
}

/// Bytes per step of [`copy_avx2`]: four 32-byte loads, then four stores.
const COPY_STEP: usize = 128;

/// `dst.copy_from_slice(src)` (equal lengths, at least [`COPY_STEP`]) as 32-byte
/// moves, whole steps then the last step's bytes (overlapping the one before: the
/// same bytes written twice).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn copy_avx2(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert!(dst.len() == n && n >= COPY_STEP);
    let whole = n - n % COPY_STEP;
    for (d, s) in dst[..whole]
        .chunks_exact_mut(COPY_STEP)
        .zip(src[..whole].chunks_exact(COPY_STEP))
    {
        // Fixed-size arrays, so the compiler emits the 32-byte moves inline.
        let d: &mut [u8; COPY_STEP] = d.try_into().expect("a whole step");
        let s: &[u8; COPY_STEP] = s.try_into().expect("a whole step");
        *d = *s;
    }
    if whole < n {
        let d: &mut [u8; COPY_STEP] = (&mut dst[n - COPY_STEP..]).try_into().expect("a step");
        let s: &[u8; COPY_STEP] = (&src[n - COPY_STEP..]).try_into().expect("a step");
        *d = *s;
    }
}

/// In a ring's dirty bitmap (see `ShmSegment::dirty`): slot `first` clean, slots
/// `first + 1 .. end` dirty (`end <= slots`).
#[inline(always)]
fn mark_dirty(dirty: &[AtomicU64], first: usize, end: usize) {
    clear_bit(dirty, first);
    let mut i = first + 1;
    while i < end {
        let (w, lo) = (i / 64, i % 64);
        let n = (end - i).min(64 - lo);
        let mask = if n == 64 { !0 } else { ((1u64 << n) - 1) << lo };
        let word = &dirty[w];
        word.store(word.load(Ordering::Relaxed) | mask, Ordering::Relaxed);
        i += n;
    }
}

/// Marks slot `i` clean in a ring's dirty bitmap.
#[inline(always)]
fn clear_bit(dirty: &[AtomicU64], i: usize) {
    let word = &dirty[i / 64];
    let bits = word.load(Ordering::Relaxed);
    if bits & (1 << (i % 64)) != 0 {
        word.store(bits & !(1 << (i % 64)), Ordering::Relaxed);
    }
}

/// Frees a consumed packet's slots (also if the consumer's callback panics, so a
/// packet is never delivered twice).
struct SlotRelease<'a> {
    seg: &'a ShmSegment,
    ring: usize,
    index: usize,
    head: &'a AtomicU64,
    to: u64,
}

impl Drop for SlotRelease<'_> {
    #[inline]
    fn drop(&mut self) {
        // The packet's first slot reads "empty" again. Only the first: its other slots
        // stay untouched (read, never written, here), so the producer's next write of
        // them is an upgrade of a shared line rather than a fetch of one we modified
        // (bench/PROFILE.md med27: osu_bw 4-8 KiB +8-11%); the producer clears the
        // slot after each packet it publishes when it held payload (see
        // `try_push_exclusive`), and that slot is the only one we read next.
        self.seg
            .state(self.seg.slot_ptr(self.ring, self.index))
            .store(0, Ordering::Relaxed);
        // Release: our reads of the payload and the clearing above happen before the
        // producer's next writes (it Acquires `head` before reusing the slots).
        self.head.store(self.to, Ordering::Release);
    }
}

impl ShmSegment {
    /// Index of ring `(from, to)`; both already checked `< nlocal`.
    #[inline]
    pub(super) fn ring_index(&self, from: usize, to: usize) -> usize {
        from * self.layout.nlocal + to
    }

    #[inline]
    pub(super) fn ctl(&self, ring: usize) -> &RingCtl {
        debug_assert!(ring < self.layout.nlocal * self.layout.nlocal);
        // SAFETY: ring < nlocal², so the control block lies inside the mapping (see `Layout::new`), 128-aligned (a multiple of its 384-byte size from a 256-aligned start). RingCtl is all atomics; the reference borrows `self`, which keeps the mapping alive.
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
    pub(super) fn slots(&self) -> usize {
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
    pub(super) fn check_peer(&self, peer: usize) {
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
    pub fn try_push(
        &self,
        to: usize,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        self.check_peer(to);
        let Some(guard) = self.push_locks[to].try_lock() else {
            return false;
        };
        // SAFETY: the push lock for `to` makes us the only pusher of this process.
        let pushed = unsafe { self.try_push_exclusive(to, max_len, fill) };
        drop(guard);
        pushed
    }

    /// [`ShmSegment::try_push`] without the per-ring lock, for [`RingSender`], which
    /// holds them all (the engine pushes only through it: the extra locked
    /// instruction per packet was measurable).
    ///
    /// # Safety
    /// No other thread of this process pushes to `to` (through either method) while
    /// this call runs.
    #[inline]
    unsafe fn try_push_exclusive(
        &self,
        to: usize,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        self.check_peer(to);
        assert!(
            max_len <= CELL_PAYLOAD,
            "shm: packet of {max_len} bytes exceeds CELL_PAYLOAD ({CELL_PAYLOAD})"
        );
        let ring = self.ring_index(self.my_local, to);
        let ctl = self.ctl(ring);
        let slots = self.slots() as u64;
        let tail = ctl.tail.pos.load(Ordering::Relaxed);
        let index = self.slot_of(tail);
        // A packet never wraps: if it does not fit before the end, a skip marker
        // fills the rest of the lap and the packet starts at slot 0.
        let want = slots_for(max_len) as u64;
        let skip = if index as u64 + want > slots {
            slots - index as u64
        } else {
            0
        };
        // Room for the skip, the packet and the slot after it (whose state word we
        // may clear before publishing: the consumer reads it next).
        let need = skip + want + 1;
        let cached = &self.cached_head[to];
        if tail
            .wrapping_sub(cached.load(Ordering::Relaxed))
            .saturating_add(need)
            > slots
        {
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
        // SAFETY: the `max_len` bytes after the state word lie within the `want` slots from `start`, inside the ring (`start + want <= slots`), exclusively ours (see above).
        let payload = unsafe { std::slice::from_raw_parts_mut(first.add(STATE_LEN), max_len) };
        let len = fill(payload);
        assert!(
            len <= max_len,
            "shm: fill wrote {len} bytes into room for {max_len}"
        );
        let used = slots_for(len) as u64;
        let next = tail.wrapping_add(skip + used);
        // The slot after the packet, where the consumer looks next, must read "empty"
        // until our next packet is published there; it may hold payload of an older
        // packet (the consumer clears only first slots): then we clear it. It is free
        // (`need` counted it), and the Release below orders this store before the
        // consumer's next look. Only when dirty: a stream of one-slot packets would
        // otherwise take the consumer's next line before each publish (bench/PROFILE.md
        // med27: +0.02-0.06 us of latency at 8-256 B).
        let (words, at) = (slots as usize / 64, self.slot_of(next));
        let dirty = &self.dirty[to * words..(to + 1) * words];
        let w = &dirty[at / 64];
        let bits = w.load(Ordering::Relaxed);
        if bits & (1 << (at % 64)) != 0 {
            w.store(bits & !(1 << (at % 64)), Ordering::Relaxed);
            self.state(self.slot_ptr(ring, at))
                .store(0, Ordering::Relaxed);
        }
        // This packet's first slot (and a skip marker's) will be cleared by the
        // consumer; its later slots now hold payload.
        mark_dirty(dirty, start, start + used as usize);
        if skip > 0 {
            clear_bit(dirty, index);
        }
        // Release: the payload is visible to whoever Acquires this state word.
        self.state(first)
            .store(PUBLISHED | len as u64, Ordering::Release);
        if skip > 0 {
            // Published after the packet at slot 0, so a consumer that follows the skip
            // finds that packet's state word already set.
            self.state(self.slot_ptr(ring, index))
                .store(PUBLISHED | SKIP, Ordering::Release);
        }
        ctl.tail.pos.store(next, Ordering::Relaxed);
        self.doorbell(to).ring();
        // The next packet's lines after its first (which the consumer is polling, so
        // claiming it would only move it back and forth): the consumer last wrote them
        // (clearing their state words), so our next push would wait for each.
        // Only after a packet of more than one line: a stream of one-line packets never
        // writes those lines, and claiming them takes them from the consumer each time.
        let at = self.slot_of(next);
        if used > 1 && at + PREFETCH_SLOTS <= slots as usize {
            let p = self.slot_ptr(ring, at);
            for k in 1..PREFETCH_SLOTS {
                prefetch_write(p.wrapping_add(k * SLOT));
            }
        }
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
    unsafe fn try_pop_exclusive(&self, from: usize, f: impl FnOnce(&[u8])) -> bool {
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
        let len = (word as u32 as usize)
            .min(CELL_PAYLOAD)
            .min((self.slots() - index) * SLOT - STATE_LEN);
        // The packet's other lines, while its header is decoded.
        // (A packet never wraps, so its lines follow the first; unrolled: a loop's
        // bookkeeping cost as much as the hints.)
        if len > SLOT - STATE_LEN {
            prefetch_read(slot.wrapping_add(SLOT));
            if len > 2 * SLOT - STATE_LEN {
                prefetch_read(slot.wrapping_add(2 * SLOT));
                if len > 3 * SLOT - STATE_LEN {
                    prefetch_read(slot.wrapping_add(3 * SLOT));
                    if len <= whole_prefetch_max() {
                        // A medium packet's remaining lines all at once, so their
                        // transfers from the producer's cache overlap.
                        let lines = (STATE_LEN + len).div_ceil(SLOT);
                        for k in PREFETCH_SLOTS..lines {
                            prefetch_read(slot.wrapping_add(k * SLOT));
                        }
                    }
                }
            }
        }
        // Declared before the slice borrow ends; its drop (after `f`, also on unwind)
        // frees the packet's slots by advancing `head`.
        let release = SlotRelease {
            seg: self,
            ring,
            index,
            head,
            to: pos.wrapping_add(slots_for(len) as u64),
        };
        // The packet is published (we Acquired its state word) and the producer will not
        // write its slots again until `head` moves past them, which happens after `f`
        // returns; no other consumer exists (this function's contract, the owner claim).
        // `f` cannot retain the slice (higher-ranked FnOnce(&[u8])).
        // SAFETY: `len` bytes after the state word lie within the ring (clamped above), and nobody writes them while the slice lives (see above).
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
        self.ctl(self.ring_index(self.my_local, to))
            .head
            .producer_blocked
            .store(1, Ordering::SeqCst);
    }

    /// Whether any ring into this rank (including the loopback ring) holds a packet.
    /// A hint: cheap (one load per peer, no locks) and exact only when no other thread
    /// of this process pops concurrently. Take the doorbell ticket first, then call
    /// this, then sleep if it says `false`.
    ///
    /// Inlined, one ring after the other by adding `nlocal` to the ring index: the
    /// blocking wait's spin calls it between polls, and the progress step that finds
    /// the packet calls it again, both on a small message's critical path (an
    /// out-of-line call through a range iterator cost ~58 instructions for two rings,
    /// bench/PROFILE.md lat35).
    #[inline]
    pub fn any_incoming(&self) -> bool {
        let nlocal = self.layout.nlocal;
        let mut ring = self.my_local;
        for _ in 0..nlocal {
            let pos = self.ctl(ring).head.pos.load(Ordering::Relaxed);
            if self
                .state(self.slot_ptr(ring, self.slot_of(pos)))
                .load(Ordering::Acquire)
                & PUBLISHED
                != 0
            {
                return true;
            }
            // The ring from the next local rank into this one (`ring_index`).
            ring += nlocal;
        }
        false
    }

    /// Test hook: the state word of slot `index` of ring `(from, to)`.
    #[cfg(test)]
    pub(super) fn raw_state(&self, from: usize, to: usize, index: usize) -> &AtomicU64 {
        self.state(self.slot_ptr(self.ring_index(from, to), index % self.slots()))
    }
}
