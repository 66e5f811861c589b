//! A cross-process wakeup word, so that idle ranks sleep in the kernel instead of
//! spinning on their shared-memory rings.
//!
//! A [`Doorbell`] is a 32-bit futex word plus a count of sleepers, alone in one cache
//! line. It works both in ordinary process memory (a singleton rank) and placed inside
//! a `MAP_SHARED` mapping used by several processes: the futex operations are the
//! *non-private* ones (`FUTEX_WAIT` / `FUTEX_WAKE`, not the `_PRIVATE` variants), which
//! the kernel keys on the physical page, so a waker in one process reaches a sleeper in
//! another.
//!
//! # Protocol
//!
//! Producer (the side that makes work available):
//!
//! 1. publish the work (e.g. a `Release` store that makes a ring cell visible);
//! 2. [`Doorbell::ring`]: a SeqCst fence, then only if `sleepers > 0` and `word` is
//!    armed (its bit 0, [`ARMED`], set by a sleeper since the last wake), `word += 1`
//!    (which clears the bit and bumps the generation in one RMW) and `FUTEX_WAKE`.
//!    With nobody asleep a ring writes nothing, so a consumer that spins never has its
//!    cache line stolen by the producer (that was a cache miss per message on the
//!    latency path). With a sleeper that was woken but has not run yet, the word is
//!    disarmed and a ring makes no system call either: a window of sends to a sleeping
//!    rank pays one `FUTEX_WAKE`, not one per message (bench/PROFILE.md, rate21).
//!
//! Consumer (the side that wants to sleep until there is work):
//!
//! 1. `let t = bell.prepare_sleep();` (`sleepers += 1`, arm `word` (`fetch_or(ARMED)`,
//!    whose result with the bit set is the ticket), then a SeqCst fence);
//! 2. check every source of work; if there is some, [`Doorbell::cancel_sleep`] and
//!    handle it;
//! 3. otherwise `bell.sleep(t, timeout)` (futex-wait while `word == t`, then
//!    `sleepers -= 1`).
//!
//! # Why no wakeup is lost
//!
//! Take a ring whose work the consumer's check (step 2) did not see. The producer's
//! publish-fence-load of `sleepers` and the consumer's `sleepers += 1`-fence-check
//! form the store-buffer (Dekker) pattern with a SeqCst fence on each side: in the
//! single order of the two fences, they cannot both miss each other. The consumer's check missed the work, so the producer's
//! load of `sleepers` comes after the consumer's increment and sees it: the producer
//! increments `word` and wakes. That increment comes after the consumer read its
//! ticket (which preceded the check), so either the kernel's comparison already sees
//! `word != t` (`futex_wait` returns at once) or the consumer is queued on the futex
//! and `FUTEX_WAKE` reaches it.
//!
//! A ring that finds `word` disarmed skips the bump and the wake. Take a consumer
//! whose check missed that ring's work. Its arming RMW is not before the ring's load
//! of `word` in `word`'s modification order: if it were, the ring would read the
//! armed value or a later one, and only a ring's RMW disarms; such a ring bumped the
//! word past the consumer's ticket (so `futex_wait` returns at once) and wakes the
//! futex after. So the ring's load reads before the arming; the load follows the
//! ring's fence, the arming precedes the consumer's fence, hence the ring's fence comes
//! first in the fences' single order, and the consumer's check (after its fence) sees
//! the work published before the ring's fence: contradiction. Tickets always have bit
//! 0 set and a ring's bump of an armed word leaves it clear, so a bump never restores
//! a ticket's value; two rings bumping at once may leave the bit set with nobody
//! armed, which costs one spare wake, never a lost one.
//!
//! The word is 32 bits and wraps; a wakeup could only be missed if exactly 2^32 rings
//! happened between `prepare_sleep()` and the kernel's comparison, and even then the
//! sleep is bounded by its timeout. Spurious returns (signals, wakes meant for others)
//! are allowed: callers loop.

//! # Checked under loom
//!
//! `crates/oxmpi-loom` compiles this file with `cfg(loom)`: loom's atomics and
//! `fence`, and a futex modelled by a mutex and a condition variable (the kernel
//! compares the word and queues the waiter atomically with respect to wakes).
//! Sleeps there have no timeout, so a lost wakeup is a deadlock loom reports.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A futex-based wakeup word, one cache line.
///
/// Invariants:
/// * `word` only ever changes by `fetch_or(ARMED)` in [`Doorbell::prepare_sleep`] and
///   `fetch_add(1)` in [`Doorbell::ring`]; it is a generation counter (bits 1..) with
///   the [`ARMED`] bit, compared for equality only (wrapping is harmless).
/// * `sleepers` counts threads (of any process) that are between their increment and
///   decrement in [`Doorbell::sleep`]; it is an upper bound on the threads queued on the
///   futex, so `sleepers == 0` proves nobody needs a `FUTEX_WAKE`.
/// * The all-zero bit pattern is a valid, idle doorbell (shared memory from
///   `ftruncate` is zero-filled, so a segment needs no initialization for it).
#[repr(C, align(64))]
pub struct Doorbell {
    /// The futex word: armed by sleepers, bumped (and disarmed) by the next ring.
    word: AtomicU32,
    /// How many threads are (about to be) blocked in `futex_wait` on `word`.
    sleepers: AtomicU32,
    /// The modelled futex's queue (loom builds only).
    #[cfg(loom)]
    futex: (loom::sync::Mutex<()>, loom::sync::Condvar),
    // The remaining 56 bytes of the line are padding implied by `align(64)`, so that
    // nothing else shares this line (false sharing with a hot ring index would cost
    // every push a cache-line transfer).
}

// The layout is part of the shared-memory format.
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Doorbell>() == 64);
#[cfg(not(loom))]
const _: () = assert!(std::mem::align_of::<Doorbell>() == 64);

impl Default for Doorbell {
    fn default() -> Self {
        Doorbell::new()
    }
}

impl std::fmt::Debug for Doorbell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doorbell")
            .field("word", &self.word.load(Ordering::Relaxed))
            .field("sleepers", &self.sleepers.load(Ordering::Relaxed))
            .finish()
    }
}

/// Bit 0 of a doorbell's word: a sleeper took its ticket on the current generation
/// and no ring has bumped it since, so the next ring must wake (see "Why no wakeup
/// is lost").
pub const ARMED: u32 = 1;

/// A SeqCst fence, as cheap as the target allows.
///
/// On x86 `fence(SeqCst)` compiles to `mfence`, which also orders non-temporal
/// and device accesses and costs several times more than a locked instruction on
/// AMD cores; every push to a ring pays it. Any `lock`-prefixed instruction is a
/// full barrier for ordinary memory on x86 (loads and stores are not reordered
/// across it), which is all the Dekker argument above needs, so a locked RMW on
/// a private stack word stands in for it there.
#[inline(always)]
pub fn full_fence() {
    // loom models the fence the argument relies on, not x86's locked instructions.
    #[cfg(loom)]
    loom::sync::atomic::fence(Ordering::SeqCst);
    #[cfg(all(not(loom), any(target_arch = "x86", target_arch = "x86_64")))]
    {
        let private = std::sync::atomic::AtomicUsize::new(0);
        // The result is irrelevant: only the instruction's locking matters.
        let _ = private.compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst);
    }
    #[cfg(all(not(loom), not(any(target_arch = "x86", target_arch = "x86_64"))))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

impl Doorbell {
    /// An idle doorbell (all zero, the same as zero-filled shared memory).
    #[cfg(not(loom))]
    pub const fn new() -> Doorbell {
        Doorbell {
            word: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        }
    }

    /// An idle doorbell (loom's atomics have no `const` constructor).
    #[cfg(loom)]
    pub fn new() -> Doorbell {
        Doorbell {
            word: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
            futex: (loom::sync::Mutex::new(()), loom::sync::Condvar::new()),
        }
    }

    /// Signal that work has been published: if a sleeper armed the word since the
    /// last wake, bump it and wake every sleeper. Costs one fence and one load when
    /// nobody sleeps (no syscall), one more load when the sleepers were woken
    /// already and have not run yet.
    #[inline]
    pub fn ring(&self) {
        full_fence();
        if self.sleepers.load(Ordering::SeqCst) > 0 && self.word.load(Ordering::SeqCst) & ARMED != 0
        {
            // Bit 0 is set: adding 1 clears it and carries into the generation.
            self.word.fetch_add(1, Ordering::SeqCst);
            self.wake_all();
        }
    }

    /// Announces that the caller is about to sleep and returns its ticket. The
    /// caller must then check for work and end with [`Doorbell::sleep`] or
    /// [`Doorbell::cancel_sleep`].
    #[inline]
    pub fn prepare_sleep(&self) -> u32 {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let ticket = self.word.fetch_or(ARMED, Ordering::SeqCst) | ARMED;
        // The consumer's half of the Dekker pattern (see "Why no wakeup is lost"):
        // the caller's check for work comes after this fence, which follows both the
        // increment and the arming. A SeqCst RMW alone does not order the later
        // Acquire loads of the rings in the language's model (x86's locked RMW
        // happens to; loom found the lost wakeup without it).
        full_fence();
        ticket
    }

    /// Withdraws a [`Doorbell::prepare_sleep`] after finding work.
    #[inline]
    pub fn cancel_sleep(&self) {
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sleeps until a ring after [`Doorbell::prepare_sleep`] (or the timeout, or
    /// a spurious wakeup), then withdraws from the sleepers.
    pub fn sleep(&self, ticket: u32, timeout: Duration) {
        if self.word.load(Ordering::SeqCst) == ticket && !timeout.is_zero() {
            self.wait(ticket, timeout);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// [`Doorbell::sleep`] on this doorbell and `other` at once (each with its
    /// ticket from [`Doorbell::prepare_sleep`]): a ring of either wakes the
    /// caller, which then withdraws from both. One `futex_waitv` (Linux 5.16+);
    /// `false`, having slept on neither and withdrawn from nothing, where the
    /// kernel lacks it ([`waitv_supported`] tells beforehand). Each doorbell's
    /// wake-up argument ("Why no wakeup is lost") holds for it on its own: the
    /// kernel compares both words before queueing the caller on both.
    #[cfg(not(loom))]
    pub fn sleep_pair(
        &self,
        ticket: u32,
        other: &Doorbell,
        other_ticket: u32,
        timeout: Duration,
    ) -> bool {
        if self.word.load(Ordering::SeqCst) == ticket
            && other.word.load(Ordering::SeqCst) == other_ticket
            && !timeout.is_zero()
            && !futex_waitv2(
                [(&self.word, ticket), (&other.word, other_ticket)],
                Some(timeout),
            )
        {
            return false;
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        other.sleepers.fetch_sub(1, Ordering::SeqCst);
        true
    }

    #[cfg(not(loom))]
    fn wait(&self, ticket: u32, timeout: Duration) {
        futex_wait(&self.word, ticket, timeout);
    }

    #[cfg(not(loom))]
    fn wake_all(&self) {
        futex_wake_all(&self.word);
    }

    /// The modelled `FUTEX_WAIT`: compares and queues under the lock that
    /// wakes take, as the kernel does under its hash-bucket lock. No timeout:
    /// a lost wakeup then shows as a deadlock.
    #[cfg(loom)]
    fn wait(&self, ticket: u32, _timeout: Duration) {
        let queue = self.futex.0.lock().unwrap();
        if self.word.load(Ordering::SeqCst) == ticket {
            drop(self.futex.1.wait(queue).unwrap());
        }
    }

    /// The modelled `FUTEX_WAKE` of every waiter.
    #[cfg(loom)]
    fn wake_all(&self) {
        let _queue = self.futex.0.lock().unwrap();
        self.futex.1.notify_all();
    }

    /// The current generation (diagnostics and tests).
    pub fn generation(&self) -> u32 {
        self.word.load(Ordering::SeqCst)
    }
}

/// `FUTEX_WAIT` (shared, not private) on `word` while it equals `expected`.
#[cfg(not(loom))]
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        // Saturate absurdly long timeouts instead of wrapping to a negative time.
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // `ts` is a valid relative timespec on our stack (tv_nsec < 1e9, tv_sec >= 0). The
    // unused `uaddr2`/`val3` arguments are ignored by FUTEX_WAIT. Any error (EAGAIN when
    // the word already changed, ETIMEDOUT, EINTR) is a permitted (spurious) return.
    // SAFETY: `word` is a live `AtomicU32` (4-byte aligned, as futex requires) for the whole call because we hold a reference to it; the kernel only reads it and `ts`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Whether this kernel has `futex_waitv` (asked once: a wait on a word whose
/// value differs returns at once, `EAGAIN` where the call exists).
#[cfg(not(loom))]
pub fn waitv_supported() -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        let (a, b) = (AtomicU32::new(1), AtomicU32::new(1));
        futex_waitv2([(&a, 0), (&b, 0)], None)
    })
}

/// `futex_waitv` (shared, 32-bit words) on both `(word, expected)` pairs for at
/// most `timeout` (`None`: no wait is expected, a probe); `false` only when the
/// kernel lacks the call (`ENOSYS`). Other errors (`EAGAIN`: a word already
/// changed, `ETIMEDOUT`, `EINTR`) are permitted spurious returns.
#[cfg(not(loom))]
fn futex_waitv2(pairs: [(&AtomicU32, u32); 2], timeout: Option<Duration>) -> bool {
    // struct futex_waitv of linux/futex.h.
    #[repr(C)]
    struct Waitv {
        val: u64,
        uaddr: u64,
        flags: u32,
        reserved: u32,
    }
    // FUTEX2_SIZE_U32, and not FUTEX2_PRIVATE: the words may be shared between processes.
    const FUTEX2_SIZE_U32: u32 = 0x02;
    let v = pairs.map(|(w, e)| Waitv {
        val: e as u64,
        uaddr: w.as_ptr() as u64,
        flags: FUTEX2_SIZE_U32,
        reserved: 0,
    });
    // The timeout of futex_waitv is absolute, on the clock named by the last argument.
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a writable timespec on our stack.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let d = timeout.unwrap_or(Duration::ZERO);
    let ns = ts.tv_nsec as u64 + d.subsec_nanos() as u64;
    ts.tv_sec = ts
        .tv_sec
        .saturating_add(libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX))
        .saturating_add((ns / 1_000_000_000) as libc::time_t);
    ts.tv_nsec = (ns % 1_000_000_000) as libc::c_long;
    // SAFETY: `v` is an array of two futex_waitv on our stack naming live, aligned AtomicU32s (we hold references), which the kernel only reads; `ts` is a valid absolute timespec.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            v.as_ptr(),
            2u32,
            0u32,
            &ts as *const libc::timespec,
            libc::CLOCK_MONOTONIC,
        )
    };
    !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}

/// `FUTEX_WAKE` (shared) every waiter on `word`.
#[cfg(not(loom))]
fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned `AtomicU32`; FUTEX_WAKE does not access the memory at all, it only uses the address as a key. The remaining arguments are ignored by FUTEX_WAKE. Failure (impossible for a valid address) would only mean nobody was woken, and sleepers are bounded by their timeouts.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

// Linux futex operations (linux/futex.h). Deliberately *not* FUTEX_PRIVATE_FLAG: the
// word may live in a mapping shared between processes.
#[cfg(not(loom))]
const FUTEX_WAIT: libc::c_int = 0;
#[cfg(not(loom))]
const FUTEX_WAKE: libc::c_int = 1;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn layout_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Doorbell>(), 64);
        assert_eq!(std::mem::align_of::<Doorbell>(), 64);
    }

    #[test]
    fn zeroed_memory_is_a_valid_doorbell() {
        // SAFETY: Doorbell is two AtomicU32 (valid for any bit pattern, including zero) plus padding; the all-zero pattern is documented as a valid idle doorbell.
        let bell: Doorbell = unsafe { std::mem::zeroed() };
        assert_eq!(bell.generation(), 0);
        bell.ring();
        // Nobody asleep: a ring changes nothing.
        assert_eq!(bell.generation(), 0);
        let t = bell.prepare_sleep();
        bell.ring();
        assert_eq!(bell.generation(), t + 1);
        bell.cancel_sleep();
    }

    #[test]
    fn stale_ticket_returns_at_once() {
        let bell = Doorbell::new();
        let t = bell.prepare_sleep();
        bell.ring();
        let start = Instant::now();
        bell.sleep(t, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(bell.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn sleep_times_out() {
        let bell = Doorbell::new();
        let t = bell.generation();
        let start = Instant::now();
        // Loop over spurious returns, like a real caller.
        while start.elapsed() < Duration::from_millis(30) {
            let t = bell.prepare_sleep();
            bell.sleep(t, Duration::from_millis(30));
        }
        assert_eq!(bell.sleepers.load(Ordering::SeqCst), 0);
        assert!(start.elapsed() >= Duration::from_millis(30));
        // Armed by the sleeps, never bumped: no ring happened.
        assert_eq!(bell.generation() & !ARMED, t);
    }

    #[test]
    fn rings_after_a_wake_skip_until_a_sleeper_arms_again() {
        let bell = Doorbell::new();
        let t = bell.prepare_sleep();
        assert_eq!(t & ARMED, ARMED);
        bell.ring();
        let g = bell.generation();
        assert_ne!(g, t);
        // The sleeper was woken and has not run yet: further rings change nothing.
        bell.ring();
        bell.ring();
        assert_eq!(bell.generation(), g);
        let start = Instant::now();
        bell.sleep(t, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(1));
        // Armed again by the next sleeper, the next ring wakes it.
        let t2 = bell.prepare_sleep();
        assert_ne!(t2, t);
        bell.ring();
        assert_ne!(bell.generation(), t2);
        bell.sleep(t2, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(bell.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn zero_timeout_does_not_block() {
        let bell = Doorbell::new();
        let start = Instant::now();
        bell.sleep(bell.prepare_sleep(), Duration::ZERO);
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn ring_wakes_a_sleeper_promptly() {
        let bell = Arc::new(Doorbell::new());
        let flag = Arc::new(AtomicU32::new(0));
        let (b2, f2) = (bell.clone(), flag.clone());
        let sleeper = std::thread::spawn(move || {
            let start = Instant::now();
            loop {
                let t = b2.prepare_sleep();
                if f2.load(Ordering::Acquire) == 1 {
                    b2.cancel_sleep();
                    break;
                }
                b2.sleep(t, Duration::from_secs(20));
            }
            start.elapsed()
        });
        // Give the sleeper time to actually block in the kernel.
        let deadline = Instant::now() + Duration::from_secs(5);
        while bell.sleepers.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        flag.store(1, Ordering::Release);
        let rung = Instant::now();
        bell.ring();
        let slept = sleeper.join().unwrap();
        assert!(
            rung.elapsed() < Duration::from_secs(2),
            "wakeup took {:?}",
            rung.elapsed()
        );
        assert!(
            slept < Duration::from_secs(10),
            "sleeper ran into its timeout"
        );
        assert_eq!(bell.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_ring_of_either_doorbell_ends_a_paired_sleep() {
        if !waitv_supported() {
            // A kernel without futex_waitv: the call says so and sleeps on neither.
            let (a, b) = (Doorbell::new(), Doorbell::new());
            let (ta, tb) = (a.prepare_sleep(), b.prepare_sleep());
            assert!(!a.sleep_pair(ta, &b, tb, Duration::from_secs(10)));
            return;
        }
        for ring_second in [false, true] {
            let bells = Arc::new((Doorbell::new(), Doorbell::new(), AtomicU32::new(0)));
            let b2 = bells.clone();
            let sleeper = std::thread::spawn(move || {
                let start = Instant::now();
                loop {
                    let ta = b2.0.prepare_sleep();
                    let tb = b2.1.prepare_sleep();
                    if b2.2.load(Ordering::Acquire) == 1 {
                        b2.0.cancel_sleep();
                        b2.1.cancel_sleep();
                        break;
                    }
                    assert!(b2.0.sleep_pair(ta, &b2.1, tb, Duration::from_secs(20)));
                }
                start.elapsed()
            });
            let deadline = Instant::now() + Duration::from_secs(5);
            while bells.1.sleepers.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(20));
            bells.2.store(1, Ordering::Release);
            if ring_second {
                bells.1.ring();
            } else {
                bells.0.ring();
            }
            let slept = sleeper.join().unwrap();
            assert!(
                slept < Duration::from_secs(10),
                "the paired sleep ran into its timeout"
            );
            assert_eq!(bells.0.sleepers.load(Ordering::SeqCst), 0);
            assert_eq!(bells.1.sleepers.load(Ordering::SeqCst), 0);
        }
    }

    #[test]
    fn many_rounds_no_lost_wakeup() {
        // Ping-pong through two doorbells with long timeouts: a single lost wakeup
        // would make this take 20 s instead of milliseconds.
        let a = Arc::new((Doorbell::new(), AtomicU32::new(0)));
        let b = Arc::new((Doorbell::new(), AtomicU32::new(0)));
        let (a2, b2) = (a.clone(), b.clone());
        const ROUNDS: u32 = 2000;
        let wait = |cell: &(Doorbell, AtomicU32), want: u32| loop {
            let t = cell.0.prepare_sleep();
            if cell.1.load(Ordering::Acquire) >= want {
                cell.0.cancel_sleep();
                break;
            }
            cell.0.sleep(t, Duration::from_secs(20));
        };
        let start = Instant::now();
        let peer = std::thread::spawn(move || {
            for i in 1..=ROUNDS {
                wait(&b2, i);
                a2.1.store(i, Ordering::Release);
                a2.0.ring();
            }
        });
        for i in 1..=ROUNDS {
            b.1.store(i, Ordering::Release);
            b.0.ring();
            wait(&a, i);
        }
        peer.join().unwrap();
        assert!(start.elapsed() < Duration::from_secs(15));
    }
}
