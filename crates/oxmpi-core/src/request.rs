//! Request handles and completion statuses.

use crate::matching::ANY_TAG;

/// `MPI_PROC_NULL` as the engine sees it.
pub const PROC_NULL: i32 = -3;

/// A handle to an operation in flight: a slot index in the engine's request table
/// plus the slot's generation, so a stale handle to a reused slot is detected
/// (MPI_ERR_REQUEST) instead of completing somebody else's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request(pub(crate) u64);

impl Request {
    pub(crate) fn new(slot: u32, generation: u32) -> Request {
        Request(((generation as u64) << 32) | slot as u64)
    }
    pub(crate) fn slot(self) -> u32 {
        self.0 as u32
    }
    pub(crate) fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
    /// The raw value, for handle tables in other layers (the C ABI).
    pub fn to_raw(self) -> u64 {
        self.0
    }
    /// The request whose [`to_raw`](Self::to_raw) value is `raw` (the C ABI's handle
    /// tables). A request is completed, started and freed through its handle, and the
    /// owners of requests over borrowed memory (`buf::Handle`, `Lent`, `Standing`)
    /// count on no one else doing so (a persistent receive started behind a
    /// `Standing`'s back would write the buffer it hands out): a handle made from a
    /// number could be one of theirs.
    ///
    /// # Safety
    /// `raw` came from `to_raw` of a request the caller owns (the C caller's handle,
    /// whose owner MPI's rules bind), or names no live request (a stale or made-up
    /// value, for which every call is an MPI_ERR_REQUEST error).
    pub unsafe fn from_raw(raw: u64) -> Request {
        Request(raw)
    }
}

/// What a completed operation reports (`MPI_Status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// The sender's rank (receives), `PROC_NULL` for a receive from `PROC_NULL`.
    pub source: i32,
    pub tag: i32,
    /// The MPI error class of this operation (0 = success).
    pub error: i32,
    /// Bytes received (or, for a probe, bytes in the message).
    pub count_bytes: usize,
    pub cancelled: bool,
}

impl Status {
    /// The status of an operation that moved nothing (`MPI_PROC_NULL`, inactive
    /// persistent requests): source PROC_NULL, tag ANY_TAG, count 0.
    pub const EMPTY: Status = Status {
        source: PROC_NULL,
        tag: ANY_TAG,
        error: 0,
        count_bytes: 0,
        cancelled: false,
    };
    /// The standard's "empty status", of MPI_REQUEST_NULL and inactive
    /// persistent requests: source ANY_SOURCE, tag ANY_TAG, success, count 0.
    pub const NULL: Status = Status {
        source: crate::matching::ANY_SOURCE,
        tag: ANY_TAG,
        error: 0,
        count_bytes: 0,
        cancelled: false,
    };

    pub(crate) fn ok(source: i32, tag: i32, count_bytes: usize) -> Status {
        Status {
            source,
            tag,
            error: 0,
            count_bytes,
            cancelled: false,
        }
    }
}

impl Default for Status {
    fn default() -> Self {
        Status::EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn handle_packs_slot_and_generation() {
        let r = Request::new(12345, 0xfffffffe);
        assert_eq!(r.slot(), 12345);
        assert_eq!(r.generation(), 0xfffffffe);
        // SAFETY: `r`'s own value, owned by this test.
        assert_eq!(unsafe { Request::from_raw(r.to_raw()) }, r);
    }
}
