//! The blocking-wait loop: the engine lock, progress steps, and waits that spin,
//! yield, then sleep on the doorbell (shared memory) or poll(2) (TCP) so that
//! idle ranks on a loaded machine do not burn cores.

use super::*;
use std::sync::atomic::AtomicU64;

/// Waits until one of `fds` is readable (or writable, where asked) or `timeout` passes.
fn poll_readable(fds: &[(std::os::fd::RawFd, bool)], timeout: Duration) {
    crate::transport::os::poll_fds(fds, Some(timeout));
}

/// Whether any of `fds` is readable (or writable, where asked) now, without waiting.
fn fds_ready(fds: &[(std::os::fd::RawFd, bool)]) -> bool {
    crate::transport::os::poll_fds(fds, None)
}

/// A `sched_yield` that took longer than this probably gave the core to another
/// program for one of its scheduler slices (0.7-3 ms): on a crowded core our own
/// ranks' turns in a collective take a few µs each (16 ranks on 2 cores: a round
/// of 8 turns, 20-40 µs). A rank of ours busy computing, or starting up, can
/// hold the core as long; the short [`YIELD_BACKOFF`] bounds what such a false
/// alarm costs.
const SLOW_YIELD: Duration = Duration::from_micros(500);
/// After a slow yield, waits skip their yield phase and sleep on the doorbell
/// at once for this long (then try yielding again). 100 ms made 8 ranks on 2
/// cores run their whole barrier loop in the sleeping mode after a slow yield
/// at start-up (18 µs a barrier instead of 8-9).
const YIELD_BACKOFF: Duration = Duration::from_millis(10);
/// Oversubscribed, a shared-memory wait's yield phase makes a progress step
/// every this many turns (see [`Engine::wait_flag_on`]).
const POLL_EVERY_YIELDS: u32 = 4;

/// Nanoseconds on the monotonic clock (never 0: 0 stands for "no yield yet"
/// in [`Engine::gated_yield_after`]).
#[inline]
fn now_ns() -> u64 {
    crate::transport::os::monotonic_ns()
}

/// Whether the yield phase of blocking waits pays on this host now.
///
/// A wait yields (between polls) before it sleeps on the doorbell because a
/// yield to a rank of ours that is runnable on the same core costs a third of
/// a sleep and wake-up (no futex calls, no wake-up of another core, the core
/// never idles): 8 ranks on 2 cores, barrier 44 -> 8-9 µs. But when other
/// programs hold the cores, a yield hands the core to one of them for a whole
/// slice, while a rank asleep on its doorbell is woken (and preferred by the
/// scheduler) as soon as its peer rings. So a yield that comes back late
/// closes the gate: the waits of the next [`YIELD_BACKOFF`] sleep at once.
///
/// Where our ranks outnumber the cores, a late yield may instead have run
/// a rank of ours that computes (a program's work between calls, a large
/// fold or copy): that says nothing about other programs, and a gate closed
/// by it kept the next collectives in the sleeping mode for 10 ms (4-8 ranks
/// on 2 cores after a 16 MiB memset: 5-8 µs a call instead of 2.1). So
/// there a late yield closes the gate only when every other local rank is
/// marked waiting ([`crate::transport::shm::ShmSegment::others_waiting`]).
#[derive(Debug, Default)]
pub(crate) struct YieldGate {
    /// [`now_ns`] before which waits do not yield.
    closed_until: AtomicU64,
}

impl YieldGate {
    /// Whether a wait may yield at `now` (ns).
    pub(crate) fn open(&self, now: u64) -> bool {
        now >= self.closed_until.load(Ordering::Relaxed)
    }

    /// Records a yield from `start` to `end` (ns): whether it came back in
    /// time, or late but not through other programs (`others_to_blame`, asked
    /// only then, says no); if not, the gate closes for [`YIELD_BACKOFF`].
    pub(crate) fn record(
        &self,
        start: u64,
        end: u64,
        others_to_blame: impl FnOnce() -> bool,
    ) -> bool {
        if end.saturating_sub(start) <= SLOW_YIELD.as_nanos() as u64 || !others_to_blame() {
            return true;
        }
        self.closed_until
            .fetch_max(end + YIELD_BACKOFF.as_nanos() as u64, Ordering::Relaxed);
        false
    }
}

/// This rank's "waiting" mark in the host segment (see [`Engine::wait_mark`]):
/// on while a wait looks or yields or sleeps, off while it runs a progress step
/// (which may copy or fold for a long time) and once it returns.
struct WaitMark {
    seg: Option<&'static crate::transport::shm::ShmSegment>,
    on: bool,
}

impl WaitMark {
    /// Turns the mark on or off (a store only when it changes).
    #[inline]
    fn set(&mut self, on: bool) {
        if on != self.on {
            if let Some(s) = self.seg {
                s.set_waiting(on);
                self.on = on;
            }
        }
    }
}

impl Drop for WaitMark {
    fn drop(&mut self) {
        self.set(false);
    }
}

impl Engine {
    /// One yield of a wait's yield phase: `false`, having yielded or not, when
    /// the wait should sleep now instead (the gate is closed, or this yield
    /// came back late: see [`YieldGate`]).
    fn gated_yield(&self) -> bool {
        let mut last = 0;
        self.gated_yield_after(&mut last)
    }

    /// [`Engine::gated_yield`] for a run of yields: `last` is when the previous
    /// one came back (0: none yet), which stands for this one's start, so a
    /// yield reads the clock once, not twice (`clock_gettime` was a tenth of a
    /// 16-rank barrier's profile). The poll between two yields is counted with
    /// the second; it takes a microsecond or two, far below [`SLOW_YIELD`].
    fn gated_yield_after(&self, last: &mut u64) -> bool {
        let start = if *last == 0 { now_ns() } else { *last };
        if !self.yield_gate.open(start) {
            return false;
        }
        std::thread::yield_now();
        let end = now_ns();
        *last = end;
        self.yield_gate
            .record(start, end, || self.others_may_hold_cores())
    }

    /// A yield point of the point-to-point wait's spin phase: `false` when the
    /// wait should stop spinning and sleep.
    ///
    /// Where every rank of ours has a processor and no other local rank of ours
    /// reported this one ([`Engine::alone_on_cpu`]), the peer we wait for runs
    /// elsewhere: a closed gate skips the yield (it would feed the other
    /// program on this core a slice) and a late yield closes the gate but does
    /// not end the spin, which runs its budget (`OXMPI_SPIN`) and catches the
    /// reply. Sleeping instead made every hand-off a wake-up that must preempt
    /// the other program beside the sleeper (IMB on 2 ranks, each on its own
    /// CPU with a `yes` beside it: PingPong 0-16 B 42-53 µs a call, 0.3 when
    /// spinning on; bench/PROFILE.md busy31). Where a rank of ours shares this
    /// processor, spinning on would hold the core it needs for the whole
    /// budget (busy31: 5-10 ms a call), so there the gate decides as before.
    fn spin_yield(&self) -> bool {
        if !self.alone_on_cpu() {
            return self.gated_yield();
        }
        if self.yield_gate.open(now_ns()) {
            self.gated_yield();
        }
        true
    }

    /// Whether this rank may keep its processor through a closed yield gate:
    /// not oversubscribed, on shared memory, and every other local rank of ours
    /// reported, since it last slept, a processor other than the one this rank
    /// runs on now (which it publishes here; see
    /// [`crate::transport::shm::ShmSegment::others_elsewhere`]). A rank that
    /// slept has not said where it was woken: the scheduler often wakes a rank
    /// on its waker's processor, where our spin then kept it from running for
    /// the rest of the spin budget or a whole slice (IMB Bcast 2-8 KiB and
    /// Allreduce 4 KiB under hogs: 3-13 ms a call; bench/PROFILE.md imb34).
    fn alone_on_cpu(&self) -> bool {
        self.report_cpu()
            .is_some_and(|(seg, cpu)| seg.others_elsewhere(cpu))
    }

    /// Publishes the processor this rank runs on, for the waits that read the
    /// reports: not oversubscribed, on shared memory. `None` where they are not
    /// read, or the processor is not known.
    fn report_cpu(&self) -> Option<(&'static crate::transport::shm::ShmSegment, u32)> {
        let seg = self.shm_seg.filter(|_| !self.oversubscribed)?;
        let cpu = crate::transport::os::current_cpu()?;
        seg.set_cpu(cpu);
        Some((seg, cpu))
    }

    /// Whether another rank of ours reported the processor this rank runs on now
    /// (and publishes ours): not oversubscribed, on shared memory. Then the rank
    /// we wait for may be runnable right here, behind our spin, and only a yield
    /// (or a sleep) lets it run. The scheduler keeps two ranks on one processor
    /// when the other is busy with other programs as a job starts, and then it
    /// often kept them together for the whole job: every hand-off waited out the
    /// spin's first yield point, 2,048 looks (2 ranks: 8 B allreduce 115 µs a
    /// call instead of 0.3 in about half of the jobs; bench/PROFILE.md, coll36).
    fn peer_shares_cpu(&self) -> bool {
        let Some((seg, cpu)) = self.report_cpu() else {
            return false;
        };
        // Once seen together, a rank without a report (it slept, and withdrew
        // it) counts as here too: the scheduler tends to wake a rank on its
        // waker's processor, and a pair whose yield gate had closed slept in
        // turn, each waking the other and then spinning ~60 µs in front of it
        // (8 B ping-pong 64 µs a round trip instead of 4.7, in every other job).
        let seen = seg.cpu_neighbours(cpu);
        let shares =
            seen.one_here || (self.shares_cpu.load(Ordering::Relaxed) && !seen.all_elsewhere);
        self.shares_cpu.store(shares, Ordering::Relaxed);
        shares
    }

    /// The look (of a collective wait's spin) or spin (of a point-to-point
    /// wait's) after which a wait asks [`Engine::peer_shares_cpu`]: at once
    /// where the last answer was yes (ranks kept together hand over in ~2 µs
    /// fewer), else after `later`, past the hand-offs of ranks on processors of
    /// their own, which then pay no look at the processor.
    fn shared_cpu_check_at(&self, later: u32) -> u32 {
        if self.shares_cpu.load(Ordering::Relaxed) {
            1
        } else {
            later
        }
    }

    /// Withdraws this rank's processor report before it sleeps (see
    /// [`Engine::alone_on_cpu`]); where not oversubscribed only, the one case
    /// that reads the reports.
    fn withdraw_cpu_report(&self) {
        if let Some(seg) = self.shm_seg.filter(|_| !self.oversubscribed) {
            seg.clear_cpu();
        }
    }

    /// After a late yield: whether it gave the core to another program rather
    /// than to a rank of ours. Only where our ranks outnumber the cores can a
    /// rank of ours have taken it, and then only one that is not waiting.
    fn others_may_hold_cores(&self) -> bool {
        match self.shm_seg {
            Some(seg) if self.oversubscribed => seg.others_waiting(),
            _ => true,
        }
    }

    /// This rank's "waiting" mark, off for now (oversubscribed hosts only,
    /// where [`Engine::others_may_hold_cores`] reads the marks; elsewhere it
    /// does nothing).
    fn wait_mark(&self) -> WaitMark {
        WaitMark {
            seg: self.shm_seg.filter(|_| self.oversubscribed),
            on: false,
        }
    }

    /// Reopens the yield gate: slow yields while the job starts (our ranks
    /// exec'ing, loading libraries, faulting their pages in) say nothing about
    /// other programs, and a gate they closed kept the first collectives of a
    /// job in the sleeping mode (8 ranks on 2 cores: 17-20 µs a call instead
    /// of 6-7, the bimodal figures of the oversubscribed runs).
    pub(crate) fn reopen_yield_gate(&self) {
        self.yield_gate.closed_until.store(0, Ordering::Relaxed);
    }

    /// `#[inline]`: the Rust API's sends and receives instantiate core's generic
    /// engine calls in the `oxmpi` crate, where it was a call (bench/PROFILE.md, rrate37).
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` under the lock (no progress step: the hot path of immediate
    /// calls; progress happens in the wait/test that follows).
    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        self.with_state_inlined(f)
    }

    /// [`Engine::with_state`] inlined into its caller: for the immediate send's
    /// fast path (pt2pt/fast.rs), whose whole engine work is one ring push, so
    /// the call's frame was a tenth of it (bench/PROFILE.md, rrate37).
    #[inline(always)]
    pub(crate) fn with_state_inlined<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut st = self.lock();
        let before = st.completions;
        let v = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        v
    }

    /// Runs `f` under the lock after one progress step.
    pub(crate) fn with_progress<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut st = self.lock();
        let before = st.completions;
        st.progress();
        let v = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        serve_one_sided();
        v
    }

    /// [`Engine::with_progress`] for a call that a program may repeat in a
    /// loop until it answers yes (MPI_Test and its family, MPI_Iprobe,
    /// MPI_Request_get_status, MPI_Parrived): on a host with more ranks than
    /// cores, every [`IDLE_TESTS_PER_YIELD`]th consecutive call that found
    /// nothing (`found` false) gives the core away with sched_yield, so a rank
    /// polling in a loop lets the ranks it waits for run instead of holding its
    /// core for a whole time slice (Open MPI's yield-when-idle, which it turns
    /// on when oversubscribed). mpi4py's partitioned tests poll `Parrived` in
    /// such a loop on 5 ranks on 2 cores.
    pub(crate) fn with_progress_test<T>(
        &self,
        found: impl Fn(&T) -> bool,
        f: impl FnOnce(&mut State) -> T,
    ) -> T {
        let v = self.with_progress(f);
        if self.oversubscribed {
            if found(&v) {
                self.idle_tests.store(0, Ordering::Relaxed);
            } else {
                let n = self.idle_tests.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_multiple_of(IDLE_TESTS_PER_YIELD) {
                    std::thread::yield_now();
                }
            }
        }
        v
    }

    /// Makes progress until `f` returns `Some`: spins briefly, then yields, then
    /// sleeps on the rank's doorbell, so idle ranks leave the CPU to busy ones.
    pub(crate) fn wait_until<T>(&self, f: impl FnMut(&mut State) -> Option<T>) -> T {
        self.wait_until_described(&|| None, f)
    }

    /// [`Engine::wait_until`] for a call that can describe itself should it
    /// block for long (`desc` runs only then; see `crate::diag`).
    pub(crate) fn wait_until_described<T>(
        &self,
        desc: &dyn Fn() -> Option<crate::diag::Call>,
        f: impl FnMut(&mut State) -> Option<T>,
    ) -> T {
        self.wait_inner(false, desc, f)
    }

    /// [`Engine::wait_until`] for a wait on many requests already posted
    /// (MPI_Waitall): each progress step takes every packet that lands in a
    /// posted receive, instead of stopping at the first completion (see
    /// [`State::progress_draining`]); a window of 64 messages then costs one
    /// poll, not 64.
    pub(crate) fn wait_until_draining<T>(&self, f: impl FnMut(&mut State) -> Option<T>) -> T {
        self.wait_inner(true, &|| None, f)
    }

    fn wait_inner<T>(
        &self,
        drain: bool,
        desc: &dyn Fn() -> Option<crate::diag::Call>,
        mut f: impl FnMut(&mut State) -> Option<T>,
    ) -> T {
        let mut idle: u32 = 0;
        let mut reported = false;
        let mut sleeping_since: Option<std::time::Instant> = None;
        // Tells the launcher when this wait has been idle for long (slow path
        // only; on return it costs one branch).
        let mut watch = crate::diag::Watch::new();
        // The time-blocked pvar: started once the wait has polled in vain
        // `TIMED_AFTER` times, so waits that end within a few microseconds (the
        // latency-bound fast path) read no clock.
        const TIMED_AFTER: u32 = 64;
        let mut blocked: Option<crate::tools::BlockedTimer> = None;
        let mut spins: u32 = 0;
        let check_cpu_at = self.shared_cpu_check_at(2);
        // With sockets and shared memory, how long a sleep lasts before the
        // sockets are looked at again.
        const FIRST_TCP_SLICE: Duration = Duration::from_micros(50);
        let mut tcp_slice = FIRST_TCP_SLICE;
        // This rank's "waiting" mark: on after a look that found nothing, off
        // during progress steps.
        let mut mark = self.wait_mark();
        loop {
            mark.set(false);
            let (result, progressed) = self.poll_with(&mut f, drain);
            if let Some(v) = result {
                return v;
            }
            if progressed {
                watch.progressed();
                idle = 0;
                tcp_slice = FIRST_TCP_SLICE;
                continue;
            }
            idle = idle.saturating_add(1);
            mark.set(true);
            // `>=`: the lock-free spin below advances `idle` by several at a time.
            if idle >= TIMED_AFTER && blocked.is_none() {
                blocked = Some(crate::tools::BlockedTimer::start());
            }
            if idle < self.spin {
                // Between full polls (the lock, a progress step, the caller's
                // check: ~300 instructions), look at the rings without the lock
                // and poll as soon as a packet is there: the poll loop's period is
                // what a message that lands mid-loop waits (the latency path).
                // Other work (outboxes, shared copies, schedules) is polled at
                // least every 16th spin.
                let mut k = 0;
                while k < 15 && !self.quick_incoming() {
                    std::hint::spin_loop();
                    k += 1;
                }
                idle = idle.saturating_add(k / 4);
                // Give the core away now and then (about every 100 µs of
                // spinning): when the peer waits for a CPU (this one, or both
                // taken by other programs), a spin that never yields burns
                // the whole time slice (milliseconds) before the peer runs.
                // On an idle core sched_yield returns at once.
                // A yield that gave the core to another program for a slice
                // (the gate, [`YieldGate`]) ends the spin: then the rank
                // sleeps, and its peer's ring wakes it at once, where spinning
                // on lost each yield a slice (IMB PingPong/Sendrecv/Exchange
                // on 2 ranks under load 17: 8-18 s spinning, 0.4 s sleeping).
                // Where no rank of ours shares this processor, see
                // [`Engine::spin_yield`]: the spin runs its budget.
                spins = spins.wrapping_add(1);
                // The peer known to share this processor: yield after one or
                // two spins, not SPINS_PER_YIELD ([`Engine::peer_shares_cpu`]).
                if spins == check_cpu_at && self.peer_shares_cpu() && !self.gated_yield() {
                    idle = self.spin + self.yields;
                    continue;
                }
                if spins.is_multiple_of(SPINS_PER_YIELD) && !self.spin_yield() {
                    idle = self.spin + self.yields;
                }
                continue;
            }
            if idle < self.spin + self.yields {
                if !self.gated_yield() {
                    idle = self.spin + self.yields;
                }
                continue;
            }
            // A wait that sleeps is blocked, however few polls it made first (an
            // oversubscribed rank sleeps after one look).
            if blocked.is_none() {
                blocked = Some(crate::tools::BlockedTimer::start());
            }
            // Announce the sleep, then look once more: a peer that publishes after
            // this look sees us in the doorbell's sleepers and wakes us.
            self.withdraw_cpu_report();
            let ticket = self.bell.prepare_sleep();
            self.waiters.fetch_add(1, Ordering::SeqCst);
            self.lock().announce_blocked_pushes();
            mark.set(false);
            let (result, progressed) = self.poll_with(&mut f, drain);
            if result.is_some() || progressed {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                self.bell.cancel_sleep();
                if let Some(v) = result {
                    return v;
                }
                watch.progressed();
                idle = 0;
                continue;
            }
            mark.set(true);
            // A consumer freeing a cell of a full ring rings us (announced above), but
            // that hint can be missed in a narrow race: poll often while blocked.
            let busy = self.lock().outbox_busy();
            let timeout = if busy {
                Duration::from_micros(200)
            } else {
                Duration::from_millis(20)
            };
            if !busy {
                watch.idle(self, desc);
            }
            if !reported {
                if let Some(after) = self.hang_report {
                    let started = *sleeping_since.get_or_insert_with(std::time::Instant::now);
                    if started.elapsed() > after {
                        reported = true;
                        eprint!(
                            "oxmpi: blocked for {:?}; this rank waits on:\n{}",
                            started.elapsed(),
                            self.lock().describe()
                        );
                    }
                }
            }
            if self.has_tcp.load(Ordering::Relaxed) {
                let fds = self.lock().tcp_fds();
                if self.shm_seg.is_some() {
                    // Shared-memory peers ring the doorbell, sockets do not: look
                    // at the sockets without waiting, then sleep on the doorbell
                    // for a slice that grows while nothing comes (50 µs to 1 ms).
                    // Waiting in poll(2) instead kept every shared-memory hand-off
                    // waiting for the poll's timeout (1 ms) once a process had any
                    // socket (after MPI_Comm_connect/accept or spawn).
                    if fds_ready(&fds) {
                        self.bell.cancel_sleep();
                    } else {
                        self.bell.sleep(ticket, tcp_slice.min(timeout));
                        tcp_slice = (tcp_slice * 2).min(Duration::from_millis(1));
                    }
                } else {
                    // Sockets only: wait on them.
                    poll_readable(&fds, timeout.min(Duration::from_millis(1)));
                    self.bell.cancel_sleep();
                }
            } else {
                self.bell.sleep(ticket, timeout);
            }
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether a look without the lock suggests polling now: a packet waits in a
    /// ring into this rank, or there are sockets (which only a poll reads).
    #[inline]
    fn quick_incoming(&self) -> bool {
        match self.shm_seg {
            Some(seg) if !self.has_tcp.load(Ordering::Relaxed) => seg.any_incoming(),
            _ => true,
        }
    }

    /// The doorbell of world rank `world` when it shares this rank's host
    /// segment (itself included); `None` otherwise.
    pub(crate) fn local_bell(&self, world: u32) -> Option<&'static Doorbell> {
        let seg = self.shm_seg?;
        let local = (*self.local_of.get(world as usize)?)?;
        Some(seg.doorbell(local as usize))
    }

    /// Waits until `ready()` (a look at shared memory, no lock) holds, driving
    /// the progress engine now and then: spins briefly (progress every 32 looks),
    /// then yields (progress each time), then sleeps on this rank's doorbell for
    /// at most `max_sleep` (peers ring it when they publish what `ready` looks
    /// for). On an oversubscribed host there is no spin: a collective hands over
    /// between ranks many times, and a spinning rank keeps the one it waits for
    /// off the CPU.
    pub(crate) fn wait_flag(&self, ready: impl FnMut() -> bool, max_sleep: Duration) {
        self.wait_flag_on(ready, max_sleep, None)
    }

    /// [`Engine::wait_flag`] whose sleep also ends when `extra` rings (a
    /// doorbell that one publisher rings for many waiters, such as a
    /// shared-memory collective's release: one wake-up call reaches them all),
    /// where the kernel can wait on two words ([`crate::transport::doorbell::waitv_supported`];
    /// elsewhere the caller's publishers ring each waiter's own doorbell).
    pub(crate) fn wait_flag_on(
        &self,
        mut ready: impl FnMut() -> bool,
        max_sleep: Duration,
        extra: Option<&Doorbell>,
    ) {
        let mut idle: u32 = 0;
        // Oversubscribed, no spin: a rank that runs keeps another off the
        // core, and the one that publishes what we wait for is more likely
        // waiting for a core than running (8 ranks on 2 cores, barrier: 11
        // µs with 32 looks before the yields, 6-8 with none; 16 ranks 30 ->
        // 20). `OXMPI_SPIN=0` skips even the one look.
        let spin = if self.oversubscribed {
            self.spin.min(1)
        } else {
            self.spin.saturating_mul(8)
        };
        let yields = self.yields;
        let check_cpu_at = self.shared_cpu_check_at(32);
        let mut watch = crate::diag::Watch::new();
        let mut last_yield = 0;
        // This rank's "waiting" mark: on while it looks, yields or sleeps,
        // off during progress steps.
        let mut mark = self.wait_mark();
        loop {
            if ready() {
                return;
            }
            mark.set(true);
            idle = idle.saturating_add(1);
            if idle < spin {
                // No sched_yield here while the others run elsewhere: on a
                // host loaded with other programs, a yield hands this core to
                // one of them for a whole time slice, then the peer's next
                // wait yields as well, and every hand-off of a collective
                // costs hundreds of µs (a 2-rank shm barrier: 0.6 µs alone,
                // 130-460 µs per call with one yield a call under load 10). A
                // spinning rank keeps its core (the scheduler moves two
                // spinning ranks apart); the yields and the doorbell sleep
                // below follow the spin.
                // Where every other rank of ours reported another processor
                // since it last slept, the ranks we wait for run elsewhere:
                // spin on, gate or not (a sleep would make their release a
                // wake-up that must preempt the other program here; see
                // [`Engine::spin_yield`]). Otherwise one of them may be
                // runnable on this processor (a rank woken from its sleep is
                // often put on its waker's), and a spin without yields kept it
                // off for the whole budget (2 ranks under hogs, one processor:
                // 1.7-5 ms an allreduce, no sleep on the spinning side): yield
                // through the gate, and sleep once it is closed.
                // A rank we may wait for is known to share this processor:
                // yield now rather than at the spin's first yield point
                // ([`Engine::peer_shares_cpu`]); a closed gate sleeps.
                if idle == check_cpu_at && self.peer_shares_cpu() && !self.gated_yield() {
                    idle = spin + yields;
                    continue;
                }
                if idle.is_multiple_of(32 * SPINS_PER_YIELD)
                    && !(if self.oversubscribed {
                        self.gated_yield()
                    } else {
                        self.alone_on_cpu() || self.gated_yield()
                    })
                {
                    idle = spin + yields;
                    continue;
                }
                if idle.is_multiple_of(32) {
                    mark.set(false);
                    if self.poll(&mut |_| Some(())).1 {
                        idle = 0;
                    }
                }
                std::hint::spin_loop();
                continue;
            }
            if idle < spin + yields {
                // Oversubscribed, a progress step every [`POLL_EVERY_YIELDS`]th
                // turn only (and before sleeping): a step looks at the ring
                // from every local rank, a page or two each, and after a
                // context switch those are TLB misses; with one step per turn
                // the cost of a turn grew with the ranks and a barrier with
                // their square (16 ranks on 2 cores: 2.4 µs of CPU a turn
                // against 1.6 at 8). What we wait for here is in the area,
                // not in the rings; the steps only serve other ranks'
                // point-to-point traffic, which a few turns' delay does not hurt.
                if !self.oversubscribed || idle.is_multiple_of(POLL_EVERY_YIELDS) {
                    mark.set(false);
                    if self.poll(&mut |_| Some(())).1 {
                        watch.progressed();
                        idle = 0;
                    }
                    mark.set(true);
                }
                if !self.gated_yield_after(&mut last_yield) {
                    idle = spin + yields;
                }
                continue;
            }
            last_yield = 0;
            self.withdraw_cpu_report();
            let ticket = self.bell.prepare_sleep();
            let extra_ticket = extra.map(|b| b.prepare_sleep());
            self.waiters.fetch_add(1, Ordering::SeqCst);
            mark.set(false);
            let progressed = self.poll(&mut |_| Some(())).1;
            mark.set(true);
            if progressed || ready() {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                self.bell.cancel_sleep();
                if let Some(b) = extra {
                    b.cancel_sleep();
                }
                watch.progressed();
                idle = 0;
                continue;
            }
            let outbox = self.lock().outbox_busy();
            let busy = outbox || self.has_tcp.load(Ordering::Relaxed);
            if !outbox {
                watch.idle(self, &|| None);
            }
            let timeout = if busy {
                max_sleep.min(Duration::from_micros(200))
            } else {
                max_sleep
            };
            match (extra, extra_ticket) {
                (Some(b), Some(t)) => {
                    if !self.bell.sleep_pair(ticket, b, t, timeout) {
                        b.cancel_sleep();
                        self.bell.sleep(ticket, timeout);
                    }
                }
                _ => self.bell.sleep(ticket, timeout),
            }
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// One progress step (then one-sided serving): whether it moved anything. For
    /// the one-sided progress thread, when the program is not in MPI.
    pub(crate) fn progress_step(&self) -> bool {
        self.poll(&mut |_| Some(())).1
    }

    /// One progress step (a call that waits on something outside the engine,
    /// such as a port, keeps the engine going with it).
    pub(crate) fn progress_once(&self) {
        self.poll(&mut |_| Some(()));
    }

    /// One progress step and one look at the condition, under the lock.
    fn poll<T>(&self, f: &mut impl FnMut(&mut State) -> Option<T>) -> (Option<T>, bool) {
        self.poll_with(f, false)
    }

    fn poll_with<T>(
        &self,
        f: &mut impl FnMut(&mut State) -> Option<T>,
        drain: bool,
    ) -> (Option<T>, bool) {
        let mut st = self.lock();
        let before = st.completions;
        let progressed = if drain {
            st.progress_draining()
        } else {
            st.progress()
        };
        let r = f(&mut st);
        let woke = st.completions != before;
        drop(st);
        // Another thread of this rank may sleep on our doorbell for a request we
        // just completed (MPI_THREAD_MULTIPLE).
        if woke && self.waiters.load(Ordering::SeqCst) > 0 {
            self.bell.ring();
        }
        serve_one_sided();
        (r, progressed)
    }
}

/// One-sided requests from other hosts are applied by the target's progress:
/// after each progress step, outside the engine lock (see `rma::am`).
#[inline]
fn serve_one_sided() {
    if crate::rma::AM_ACTIVE.load(Ordering::Acquire) {
        crate::rma::serve_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    #[test]
    fn quick_yields_keep_the_gate_open() {
        let g = YieldGate::default();
        assert!(g.open(0));
        let mut t = 0;
        for _ in 0..1000 {
            assert!(g.record(t, t + 5 * US, || true));
            t += 5 * US;
            assert!(g.open(t));
        }
        // Exactly the threshold still counts as quick.
        let slow = SLOW_YIELD.as_nanos() as u64;
        assert!(g.record(t, t + slow, || true));
        assert!(g.open(t + slow));
    }

    #[test]
    fn a_slow_yield_closes_the_gate_for_the_backoff_only() {
        let g = YieldGate::default();
        let (slow, back) = (
            SLOW_YIELD.as_nanos() as u64,
            YIELD_BACKOFF.as_nanos() as u64,
        );
        let start = 50 * US;
        let end = start + slow + 1;
        assert!(!g.record(start, end, || true));
        assert!(!g.open(end));
        assert!(!g.open(end + back - 1));
        assert!(g.open(end + back));
        // A quick yield (another thread's) does not reopen it early, and an
        // older slow one does not shorten a later closing.
        let end2 = end + back / 2;
        assert!(!g.record(end2 - slow - 1, end2, || true));
        assert!(g.record(end2, end2 + US, || true));
        assert!(!g.record(start, end, || true));
        assert!(!g.open(end + back));
        assert!(g.open(end2 + back));
    }

    #[test]
    fn a_slow_yield_to_a_rank_of_ours_keeps_the_gate_open() {
        let g = YieldGate::default();
        let slow = SLOW_YIELD.as_nanos() as u64;
        let (start, end) = (50 * US, 50 * US + 100 * slow);
        // A local rank of ours was running (not waiting): not blamed.
        assert!(g.record(start, end, || false));
        assert!(g.open(end));
        // Every local rank waiting: other programs had the core.
        assert!(!g.record(start, end, || true));
        assert!(!g.open(end));
        // Quick yields never ask.
        let g = YieldGate::default();
        assert!(g.record(start, start + US, || unreachable!()));
    }

    #[test]
    fn a_clock_going_backwards_is_no_slow_yield() {
        let g = YieldGate::default();
        assert!(g.record(10 * US, 5 * US, || true));
        assert!(g.open(5 * US));
    }
}
