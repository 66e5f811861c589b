//! Whether a medium message that answers its peer is pulled: the receiver's running
//! estimate of what one `process_vm_readv` costs against a copy out of the ring.
//!
//! A pulled message (`FLAG_PULL`, see [`State::pulls`]) moves its bytes across once,
//! where eager moves them twice (into the ring, out of it), but pays the read's fixed
//! cost: a few hundred ns on some hosts, 1.1-1.9 us on others, and it changes with
//! the host's load (bench/PROFILE.md, pull34). So each process times, with
//! [`cma::ticks`] (no system call), the reads it does as a receiver, and now and
//! then the copies a ping-pong's eager answer makes: its own answers into the ring
//! and the answers it takes out. A read of `len` bytes costs about `fixed + len * c`
//! (`c`: the average copy per byte), eager `2 * len * c` (in a ping-pong, one copy
//! in and one out), so pulling wins above `fixed / c`. The receiver reports that
//! size in the `len` of every `Fin` after a read; a blocking sender (nothing of its
//! own overlaps the read; non-blocking sends keep the fixed threshold, since a
//! window's first message read while the rest is pushed gave more bandwidth)
//! keeps the last figure
//! per peer, and a few answers in 1,024 ([`PROBE_BURST`]) take the other path, so both costs
//! stay measured whichever one wins.
//!
//! Invariants: nothing here decides correctness, only which of two correct paths a
//! send takes; with no figures yet (or `OXMPI_PULL_ADAPT=0`) the fixed threshold
//! [`State::pull_min`] alone decides, as before.

use super::*;

/// Smallest copy out of the ring that is timed: below it the two counter reads
/// would weigh on what they measure, and the fixed threshold decides anyway.
const COPY_SAMPLE_MIN: usize = 1024;
/// After the first [`COPY_SAMPLES_FIRST`] copies, one in this many is timed.
const COPY_SAMPLE_EVERY: u32 = 8;
const COPY_SAMPLES_FIRST: u32 = 8;
/// Of every [`PROBE_PERIOD`] answers to a peer, the first [`PROBE_BURST`] that
/// could be pulled take the path the estimate did not choose, so that the receiver
/// keeps measuring both; a burst, because the first read after a run of eager
/// messages finds the sender's page tables cold (8-10 us here) and is not what a
/// run of reads costs. Rare, because such a cold read is what a probe costs.
pub(super) const PROBE_BURST: u16 = 2;
pub(super) const PROBE_PERIOD: u16 = 1024;
/// A sample above this many times the running average (a read or copy the
/// scheduler interrupted) counts as this many times it.
const OUTLIER_CAP: u64 = 4;

/// Samples averaged with weight 1/2 before the running weight of 1/8 applies.
const WARM_UP: u32 = 8;

/// The receiver's running averages (weight 1/8 per sample), in [`cma::ticks`].
#[derive(Debug, Default)]
pub(crate) struct PullCost {
    /// Off: no timing, no probes, `Fin` carries no figure.
    pub(super) enabled: bool,
    read_ticks: u64,
    read_len: u64,
    reads: u32,
    /// Ticks per KiB of a copy of a message out of the ring into its receive.
    copy_per_kib: u64,
    copies: u32,
    /// Copies that could have been timed, for the one-in-[`COPY_SAMPLE_EVERY`] choice.
    copies_seen: u32,
    /// `copies_seen` at the last read: a read after more copies than a probe
    /// burst makes follows a run of eager messages and is not timed.
    copies_seen_at_read: u32,
}

/// `avg` moved 1/8 towards `sample` (capped at [`OUTLIER_CAP`] times `avg`); the
/// first sample (`count` 0) is taken as it is.
fn running(avg: u64, sample: u64, count: u32) -> u64 {
    if count == 0 {
        return sample;
    }
    if count < WARM_UP {
        // The first reads and copies fault pages in and find cold caches: let
        // the warm ones replace them quickly.
        return avg / 2 + sample / 2;
    }
    let sample = sample.min(avg.saturating_mul(OUTLIER_CAP).max(1));
    avg - avg / 8 + sample / 8
}

impl PullCost {
    pub(crate) fn new(enabled: bool) -> Self {
        PullCost {
            enabled,
            ..PullCost::default()
        }
    }

    /// Whether to time this copy of `len` bytes out of the ring (a ping-pong's
    /// answer: copies inside a window overlap others and use another routine).
    #[inline(always)]
    pub(super) fn samples_copy(&mut self, len: usize) -> bool {
        if !self.enabled || len < COPY_SAMPLE_MIN {
            return false;
        }
        self.copies_seen = self.copies_seen.wrapping_add(1);
        self.copies < COPY_SAMPLES_FIRST || self.copies_seen.is_multiple_of(COPY_SAMPLE_EVERY)
    }

    /// A copy of `len` bytes out of the ring took `ticks`.
    pub(super) fn note_copy(&mut self, len: usize, ticks: u64) {
        if len == 0 || ticks == 0 {
            return;
        }
        let per_kib = ticks.saturating_mul(1024) / len as u64;
        self.copy_per_kib = running(self.copy_per_kib, per_kib, self.copies);
        self.copies = self.copies.saturating_add(1);
    }

    /// A read of `len` bytes from a peer took `ticks`.
    pub(super) fn note_read(&mut self, len: usize, ticks: u64) {
        let copies_between = self.copies_seen.wrapping_sub(self.copies_seen_at_read);
        self.copies_seen_at_read = self.copies_seen;
        if ticks == 0 || copies_between > 2 * PROBE_BURST as u32 {
            return;
        }
        self.read_ticks = running(self.read_ticks, ticks, self.reads);
        self.read_len = if self.reads == 0 {
            len as u64
        } else if self.reads < WARM_UP {
            self.read_len / 2 + len as u64 / 2
        } else {
            self.read_len - self.read_len / 8 + len as u64 / 8
        };
        self.reads = self.reads.saturating_add(1);
    }

    /// The size above which a peer's answers should be pulled, for a `Fin`'s `len`:
    /// at least 1; 0 = no figure yet (no read or no copy measured).
    pub(super) fn floor(&self) -> u64 {
        if !self.enabled || self.reads == 0 || self.copies == 0 || self.copy_per_kib == 0 {
            return 0;
        }
        let copied = self.read_len.saturating_mul(self.copy_per_kib) / 1024;
        let fixed = self.read_ticks.saturating_sub(copied);
        (fixed.saturating_mul(1024) / self.copy_per_kib).max(1)
    }

    /// Times `f`, a read of `len` bytes from a peer, when the estimate is on.
    #[inline(always)]
    pub(super) fn time_read<T>(&mut self, len: usize, f: impl FnOnce() -> T) -> T {
        if !self.enabled {
            return f();
        }
        let start = cma::ticks();
        let out = f();
        self.note_read(len, cma::ticks().wrapping_sub(start));
        out
    }
}

impl Peer {
    /// Whether a `len`-byte answer to this peer that may be pulled is, by the
    /// peer's last figure (none yet: pulled), unless this answer is a probe.
    #[inline(always)]
    pub(super) fn pull_chosen(&self, len: usize) -> bool {
        let probe = self.pull_probes % PROBE_PERIOD < PROBE_BURST;
        (len as u64 > self.pull_floor) != probe
    }

    /// A message went to this peer: the next one no longer answers it, and an
    /// answer counts towards the next probe.
    #[inline(always)]
    pub(super) fn sent_to(&mut self) {
        self.pull_probes = self.pull_probes.wrapping_add(self.answered as u16);
        self.answered = false;
    }
}

impl State {
    /// A `Fin` for send `sreq`, carrying this receiver's pull floor ([`PullCost::floor`]).
    pub(super) fn fin_with_floor(&self, sreq: u64) -> Header {
        Header {
            len: self.pull_cost.floor(),
            ..Header::control(Kind::Fin, sreq)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> Peer {
        Peer::new(Path::SelfLoop, 0, 0, true)
    }

    fn estimate(reads: &[(usize, u64)], copies: &[(usize, u64)]) -> PullCost {
        let mut c = PullCost::new(true);
        for &(len, t) in reads {
            c.note_read(len, t);
        }
        for &(len, t) in copies {
            c.note_copy(len, t);
        }
        c
    }

    #[test]
    fn no_figure_until_both_a_read_and_a_copy_were_measured() {
        assert_eq!(estimate(&[], &[]).floor(), 0);
        assert_eq!(estimate(&[(8192, 5000)], &[]).floor(), 0);
        assert_eq!(estimate(&[], &[(8192, 1000)]).floor(), 0);
        let mut off = estimate(&[(8192, 5000)], &[(8192, 1000)]);
        off.enabled = false;
        assert_eq!(off.floor(), 0);
    }

    #[test]
    fn the_floor_is_the_reads_fixed_cost_in_bytes_of_copy() {
        // A copy costs 100 ticks per KiB; a read of 8 KiB 4,800 ticks: 800 of
        // them move the bytes, 4,000 are fixed, worth 40 KiB of copying.
        let c = estimate(&[(8192, 4800)], &[(4096, 400)]);
        assert_eq!(c.floor(), 40 * 1024);
        // A cheap read (fixed 200 ticks = 2 KiB): 8 KiB answers are pulled.
        let c = estimate(&[(8192, 1000)], &[(4096, 400)]);
        assert_eq!(c.floor(), 2 * 1024);
        // A read no dearer than its copy: pull everything above the threshold.
        assert_eq!(estimate(&[(8192, 700)], &[(8192, 800)]).floor(), 1);
    }

    #[test]
    fn averages_follow_a_change_and_cap_a_single_outlier() {
        let mut c = estimate(&[(8192, 4800); 8], &[(4096, 400)]);
        // One read interrupted for a millisecond moves the figure by at most
        // (4 - 1) / 8 of the average.
        c.note_read(8192, 3_000_000);
        assert!(c.floor() < 60 * 1024, "floor {}", c.floor());
        // Reads that became cheap bring the floor down within a few dozen samples.
        for _ in 0..64 {
            c.note_read(8192, 1000);
        }
        assert!(c.floor() <= 3 * 1024, "floor {}", c.floor());
    }

    #[test]
    fn the_first_samples_give_way_quickly() {
        // A cold first read (pages faulted in) is half forgotten by each of the
        // next warm-up samples.
        let mut c = estimate(&[(8192, 30_000)], &[(4096, 400)]);
        for _ in 0..5 {
            c.note_read(8192, 1000);
        }
        assert!(c.floor() < 16 * 1024, "floor {}", c.floor());
    }

    #[test]
    fn probes_take_the_other_path_in_short_bursts() {
        let mut p = peer();
        let answers = |p: &mut Peer| {
            let mut pulled = 0;
            for _ in 0..2 * PROBE_PERIOD {
                p.answered = true;
                pulled += p.pull_chosen(8192) as usize;
                p.sent_to();
            }
            pulled
        };
        // No figure yet: pulled but for the probes.
        assert_eq!(answers(&mut p), 2 * (PROBE_PERIOD - PROBE_BURST) as usize);
        p.pull_floor = 40 * 1024;
        assert_eq!(answers(&mut p), 2 * PROBE_BURST as usize);
        // Sends that answer nothing (a window's) do not count.
        p.answered = false;
        let before = p.pull_probes;
        p.sent_to();
        assert_eq!(p.pull_probes, before);
    }

    #[test]
    fn a_read_after_a_run_of_eager_messages_is_not_timed() {
        let mut c = estimate(&[(8192, 1000); 8], &[(4096, 400)]);
        let floor = c.floor();
        for _ in 0..64 {
            if c.samples_copy(4096) {
                c.note_copy(4096, 400);
            }
        }
        c.note_read(8192, 100_000);
        assert_eq!(c.floor(), floor);
        // The next one, in a run of reads, is.
        c.note_read(8192, 100_000);
        assert!(c.floor() > floor);
    }

    #[test]
    fn copies_are_sampled_first_all_then_one_in_eight() {
        let mut c = PullCost::new(true);
        assert!(!c.samples_copy(COPY_SAMPLE_MIN - 1));
        let mut timed = 0;
        for _ in 0..COPY_SAMPLES_FIRST {
            assert!(c.samples_copy(4096));
            c.note_copy(4096, 400);
            timed += 1;
        }
        for _ in 0..800 {
            if c.samples_copy(4096) {
                c.note_copy(4096, 400);
                timed += 1;
            }
        }
        assert_eq!(timed, COPY_SAMPLES_FIRST + 100);
        let mut off = PullCost::new(false);
        assert!(!off.samples_copy(4096));
    }
}
