//! The shared-memory ring's protocol (see `oxmpi-core/src/transport/shm/mod.rs`, "Ring
//! protocol"), over loom's atomics. Positions count slots and only grow; position
//! `p` is slot `p % slots`. A packet takes `len` consecutive slots and never wraps:
//! where it does not fit before the end of the lap, a skip marker fills the rest and
//! the packet starts at slot 0, published before the marker.
//!
//! Here a packet carries one `u64` per slot: the first in the payload cell beside its
//! first slot's state word, the others *in the state words* of its later slots, as
//! the real ring's payload runs over the later slots' first bytes. The consumer
//! clears only a packet's first state word, so a later slot's word keeps old payload
//! that may look like a published packet; the producer keeps a private bitmap of the
//! slots whose word holds payload and, before publishing a packet, clears the slot
//! after it (the one the consumer reads next) when its bit is set, so a push needs
//! room for that slot too.

use crate::doorbell::Doorbell;
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// State word: a packet (or the skip marker) is published.
pub const PUBLISHED: u64 = 1 << 63;
/// State word: the rest of the lap is unused.
pub const SKIP: u64 = 1 << 62;

/// One ring (`RingCtl` and the ring's slots in shm/mod.rs) and the consumer's doorbell.
pub struct Ring {
    state: Vec<AtomicU64>,
    payload: Vec<UnsafeCell<u64>>,
    /// The producer's next slot (its own line: only it writes).
    tail: AtomicU64,
    /// The consumer's next slot (its own line: only it writes).
    head: AtomicU64,
    /// The producer's private copy of `head` (`cached_head` in shm/mod.rs).
    cached_head: AtomicU64,
    /// The producer's private bitmap (`ShmSegment::dirty`): slots whose state word
    /// holds payload (only the producer touches it, so Relaxed throughout).
    dirty: Vec<AtomicBool>,
    /// Rung by the producer after each push (the receiver's doorbell).
    pub bell: Doorbell,
}

// SAFETY: the payload cells are shared between the one producer and the one
// consumer exactly as in shm/ring.rs: a cell is written only between the producer's
// Acquire of `head` (the consumer is done with it) and its Release of the state
// word, and read only between the consumer's Acquire of that word and its
// Release of `head`; loom's `UnsafeCell` checks that claim in every execution.
unsafe impl Sync for Ring {}

impl Ring {
    pub fn new(slots: usize) -> Ring {
        Ring {
            state: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            payload: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
            cached_head: AtomicU64::new(0),
            dirty: (0..slots).map(|_| AtomicBool::new(false)).collect(),
            bell: Doorbell::new(),
        }
    }

    fn slots(&self) -> u64 {
        self.state.len() as u64
    }

    /// `try_push_exclusive`: publishes `data` (1..=slots values) as one packet, or
    /// returns false when the ring has no room. One producer only.
    pub fn try_push(&self, data: &[u64]) -> bool {
        let slots = self.slots();
        let want = data.len() as u64;
        assert!(want >= 1 && want <= slots);
        let tail = self.tail.load(Ordering::Relaxed);
        let index = tail % slots;
        let skip = if index + want > slots {
            slots - index
        } else {
            0
        };
        // The skip, the packet and the slot after it (which we may clear).
        let need = skip + want + 1;
        if tail
            .wrapping_sub(self.cached_head.load(Ordering::Relaxed))
            .saturating_add(need)
            > slots
        {
            // Acquire: the consumer's reads of the slots it freed happen before our writes.
            let head = self.head.load(Ordering::Acquire);
            self.cached_head.store(head, Ordering::Relaxed);
            if tail.wrapping_sub(head).saturating_add(need) > slots {
                return false;
            }
        }
        let start = if skip > 0 { 0 } else { index } as usize;
        // Slots [start, start + want] lie between our tail and the consumer's head one lap on.
        // SAFETY: (checked above; loom's cell checks it too) nobody reads this slot until we publish.
        self.payload[start].with_mut(|p| unsafe { *p = data[0] });
        for (k, &v) in data.iter().enumerate().skip(1) {
            // Payload over a later slot's state word (read only after our Release below).
            self.state[start + k].store(v, Ordering::Relaxed);
        }
        // The slot after the packet, which the consumer reads next: cleared if it holds
        // old payload (the Release below orders this before the consumer's look).
        let next = tail.wrapping_add(skip + want);
        let at = (next % slots) as usize;
        if self.dirty[at].load(Ordering::Relaxed) {
            self.dirty[at].store(false, Ordering::Relaxed);
            self.state[at].store(0, Ordering::Relaxed);
        }
        self.dirty[start].store(false, Ordering::Relaxed);
        for k in 1..data.len() {
            self.dirty[start + k].store(true, Ordering::Relaxed);
        }
        if skip > 0 {
            self.dirty[index as usize].store(false, Ordering::Relaxed);
        }
        // Release: the payload is visible to whoever Acquires this state word.
        self.state[start].store(PUBLISHED | want, Ordering::Release);
        if skip > 0 {
            self.state[index as usize].store(PUBLISHED | SKIP, Ordering::Release);
        }
        self.tail.store(next, Ordering::Relaxed);
        self.bell.ring();
        true
    }

    /// `try_pop_exclusive` and `SlotRelease`: the next packet's values, or None
    /// when the ring is empty. One consumer only.
    pub fn try_pop(&self) -> Option<Vec<u64>> {
        let slots = self.slots();
        let mut pos = self.head.load(Ordering::Relaxed);
        let mut index = (pos % slots) as usize;
        // Acquire: the producer's payload writes happen before our reads.
        let mut word = self.state[index].load(Ordering::Acquire);
        if word & PUBLISHED == 0 {
            return None;
        }
        if word & SKIP != 0 {
            self.state[index].store(0, Ordering::Relaxed);
            pos = pos.wrapping_add(slots - index as u64);
            self.head.store(pos, Ordering::Release);
            index = 0;
            word = self.state[0].load(Ordering::Acquire);
            if word & PUBLISHED == 0 || word & SKIP != 0 {
                return None;
            }
        }
        let len = ((word & !(PUBLISHED | SKIP)) as usize).min(slots as usize - index);
        // SAFETY: the packet is published (its state word Acquired) and the producer writes none of its slots until `head` moves past them below.
        let mut out = vec![self.payload[index].with(|p| unsafe { *p })];
        out.extend((index + 1..index + len).map(|i| self.state[i].load(Ordering::Relaxed)));
        // SlotRelease: the packet's first slot reads "empty" again (only the first),
        // then Release `head`, which the producer Acquires before reusing the slots.
        self.state[index].store(0, Ordering::Relaxed);
        self.head
            .store(pos.wrapping_add(len as u64), Ordering::Release);
        Some(out)
    }
}
