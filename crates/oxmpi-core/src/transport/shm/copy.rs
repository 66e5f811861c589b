//! Large-message shared copies: the per-ring chunk counters both sides of a
//! ring claim chunks from, so that producer and consumer copy one large message
//! at once (the data in the segment, with its invariants, and its operations).

use super::*;

/// Shared copies that may run at once on one ring.
pub const COPY_SLOTS: usize = 4;

/// The chunk counters of the shared copies of one ring (see
/// [`ShmSegment::copy_begin`]), one slot per copy in flight.
#[repr(C, align(128))]
pub(super) struct CopyLine {
    pub(super) slots: [CopySlot; COPY_SLOTS],
}

/// Invariants: `claim` is `(id << 32) | next_chunk`; only the consumer of the ring
/// sets it (to `id << 32`, starting transfer `id`), and then both sides only advance
/// `next_chunk` by compare-exchange while the id is theirs. `done` counts finished
/// chunks in its low 32 bits, with [`COPY_FAILED`] set if any chunk could not be
/// copied; the consumer resets it before publishing a new id and reuses the slot
/// only once every claimed chunk is done, so no increment of an old transfer can
/// land in a new one.
#[repr(C)]
pub(super) struct CopySlot {
    pub(super) claim: AtomicU64,
    pub(super) done: AtomicU64,
}

/// Set in [`CopyLine::done`] when a chunk of the transfer could not be copied.
const COPY_FAILED: u64 = 1 << 32;

impl ShmSegment {
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
    pub fn copy_claim(
        &self,
        from: usize,
        to: usize,
        slot: usize,
        id: u32,
        chunks: u32,
    ) -> Option<u32> {
        self.check_peer(from);
        self.check_peer(to);
        let claim = &self
            .ctl(self.ring_index(from, to))
            .copy
            .slots
            .get(slot)?
            .claim;
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
        let d = self.ctl(self.ring_index(from, self.my_local)).copy.slots[slot]
            .done
            .load(Ordering::Acquire);
        (d as u32, d & COPY_FAILED != 0)
    }
}
