//! The engine's counters behind the performance variables: traffic per
//! transport and queue high-water marks (kept by the engine's `State` under
//! its lock), and the time blocking waits spend blocked (atomics).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Where a message went or came from, as the pvars split traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    SelfLoop = 0,
    Shm = 1,
    Tcp = 2,
}

/// Counters kept by the engine's `State` (under the engine lock: plain adds).
#[derive(Debug, Default, Clone)]
pub(crate) struct Stats {
    pub msgs_sent: [u64; 3],
    pub bytes_sent: [u64; 3],
    pub msgs_recvd: [u64; 3],
    pub bytes_recvd: [u64; 3],
    pub rendezvous: u64,
    pub unexpected: u64,
    pub unexpected_hwm: u64,
    pub posted_hwm: u64,
}

impl Stats {
    #[inline]
    pub(crate) fn sent(&mut self, via: Via, bytes: usize) {
        self.msgs_sent[via as usize] += 1;
        self.bytes_sent[via as usize] += bytes as u64;
    }

    #[inline]
    pub(crate) fn received(&mut self, via: Via, bytes: usize) {
        self.msgs_recvd[via as usize] += 1;
        self.bytes_recvd[via as usize] += bytes as u64;
    }

    #[inline]
    pub(crate) fn unexpected_queued(&mut self, len: usize) {
        self.unexpected += 1;
        self.unexpected_hwm = self.unexpected_hwm.max(len as u64);
    }

    #[inline]
    pub(crate) fn posted_queued(&mut self, len: usize) {
        self.posted_hwm = self.posted_hwm.max(len as u64);
    }
}

/// Nanoseconds blocking waits spent blocked, and how many waits blocked.
pub(super) static BLOCKED_NS: AtomicU64 = AtomicU64::new(0);
pub(super) static BLOCKED_WAITS: AtomicU64 = AtomicU64::new(0);

/// Lives on a blocking wait's stack once it has polled in vain for a while:
/// adds the time until the wait returns to the time-blocked pvar.
pub(crate) struct BlockedTimer(Instant);

impl BlockedTimer {
    #[cold]
    pub(crate) fn start() -> BlockedTimer {
        BlockedTimer(Instant::now())
    }
}

impl Drop for BlockedTimer {
    fn drop(&mut self) {
        BLOCKED_NS.fetch_add(self.0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        BLOCKED_WAITS.fetch_add(1, Ordering::Relaxed);
    }
}
