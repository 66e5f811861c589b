//! loom models of oxmpi-core's lock-free shared-memory code, checked by
//! `cargo test -p oxmpi-loom` (loom explores every interleaving of the model's
//! threads and the weak-memory outcomes its orderings allow).
//!
//! * [`doorbell`] is oxmpi-core's own `transport/doorbell.rs`, compiled here with
//!   `cfg(loom)` (set by this crate's build script for this crate only): the same
//!   code, with loom's atomics and fence and a modelled futex.
//! * [`ring`] is the single-producer/single-consumer ring protocol of
//!   `transport/shm/ring.rs` (`try_push_exclusive`, `try_pop_exclusive`, `SlotRelease`),
//!   restated over loom's atomics with the same words, the same orderings and the
//!   same steps; the ring itself lives in a shared mapping of raw bytes that loom
//!   cannot track, so the model keeps each slot's state word as an atomic and its
//!   payload in a loom `UnsafeCell`, which reports any read racing a write.
//!   A change to the orderings or steps in shm/ring.rs must be made here too.

#[path = "../../oxmpi-core/src/transport/doorbell.rs"]
pub mod doorbell;

pub mod ring;
