//! Active-target synchronization: fence and post/start/complete/wait (the lock
//! machinery they close and reopen is in `sync`).

use super::*;
use crate::group::Group;
use std::sync::atomic::AtomicU64;

/// The assert bits of MPI_Win_post.
const POST_ASSERTS: i32 = MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT;
const POST_ASSERT_NAMES: &str = "MPI_MODE_NOCHECK, _NOSTORE and _NOPUT";

/// Looks of a post/start/complete/wait counter before the engine's wait.
const PSCW_SPIN: u32 = 512;

/// Waits until `ready` (a look at this host's post or complete counters) holds:
/// first a short spin on the counters alone (a few µs; not when the host has
/// more ranks than cores), which sees a notice the moment it lands, then the
/// engine's `wait_flag` (progress between looks, yields, doorbell sleeps of at
/// most `sleep`; the notifier rings the doorbell).
fn pscw_block(ready: &impl Fn() -> bool, sleep: Duration) -> Result<()> {
    let e = runtime::engine()?;
    if !e.oversubscribed {
        for _ in 0..PSCW_SPIN {
            std::hint::spin_loop();
            if ready() {
                return Ok(());
            }
        }
    }
    e.wait_flag(ready, sleep);
    Ok(())
}

impl Window {
    /// `MPI_Win_fence`.
    pub fn fence(&self, assert: i32) -> Result<()> {
        check_assert(
            "MPI_Win_fence",
            assert,
            MODE_NOSTORE | MODE_NOPUT | MODE_NOPRECEDE | MODE_NOSUCCEED,
            "MPI_MODE_NOSTORE, _NOPUT, _NOPRECEDE and _NOSUCCEED",
        )?;
        let seq = {
            let mut st = self.st();
            self.close_fast_locks(
                &st,
                "MPI_Win_fence",
                "a passive-target (lock) epoch is open",
            )?;
            self.sync_fence(&mut st, |e| e.fence(assert))?;
            st.epochs.fences
        };
        // Before the barrier: no origin is in the epoch before this process marked it.
        if assert & MODE_NOPUT != 0 && assert & MODE_NOSUCCEED == 0 {
            self.ctl(self.my_local, CTL_NOPUT)
                .store(seq, Ordering::SeqCst);
        }
        full_fence();
        coll::barrier::barrier(&self.comm)?;
        full_fence();
        Ok(())
    }

    /// The counter of the posts target `t` made to origin `o` (host indices).
    #[inline]
    fn post_word(&self, o: usize, t: usize) -> &AtomicU64 {
        self.seg.word(self.pscw_off + o * self.pscw_row + t * 8)
    }

    /// The counter of the completes origin `o` made to target `t` (host indices).
    #[inline]
    fn done_word(&self, t: usize, o: usize) -> &AtomicU64 {
        self.seg
            .word(self.pscw_off + (self.nlocal + t) * self.pscw_row + o * 8)
    }

    /// Rings the doorbells of `ranks` on this host (after bumping their counters:
    /// a rank asleep in [`Self::await_posts`] or [`Self::wait`] wakes; one awake
    /// costs a fence and a load).
    fn ring(&self, ranks: &[i32]) {
        for &r in ranks {
            if let Some(b) = self.bells[r as usize] {
                b.ring();
            }
        }
    }

    /// The ranks in the window of group `g` (a post or start argument), from the
    /// cache of the last few groups when it is there.
    fn group_ranks(&self, st: &mut State, call: &str, g: &Group) -> Result<Arc<[i32]>> {
        // Group equality compares the shared pointer first, then the members.
        if let Some((_, r)) = st.groups.iter().find(|(x, _)| x == g) {
            return Ok(r.clone());
        }
        let r: Arc<[i32]> = self.ranks_of(call, g.world_ranks())?.into();
        if st.groups.len() >= 4 {
            st.groups.remove(0);
        }
        st.groups.push((g.clone(), r.clone()));
        Ok(r)
    }

    /// `MPI_Win_post` of group `g` (of the window's processes).
    pub fn post_group(&self, g: &Group, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_post";
        check_assert(C, assert, POST_ASSERTS, POST_ASSERT_NAMES)?;
        let origins = {
            let mut st = self.st();
            let o = self.group_ranks(&mut st, C, g)?;
            self.sync_fence(&mut st, |e| e.post(o.clone()))?;
            o
        };
        self.notify_posts(&origins, assert)
    }

    /// `MPI_Win_post`: exposes this window to `origins` (ranks of the window).
    pub fn post(&self, origins: impl Into<Arc<[i32]>>, assert: i32) -> Result<()> {
        check_assert("MPI_Win_post", assert, POST_ASSERTS, POST_ASSERT_NAMES)?;
        let origins = origins.into();
        self.sync_fence(&mut self.st(), |e| e.post(origins.clone()))?;
        self.notify_posts(&origins, assert)
    }

    /// Tells `origins` that this process posted: a counter bump per origin on this
    /// host (release: this process's stores before the post are visible to the
    /// origin that sees it), a zero-byte message to the others.
    fn notify_posts(&self, origins: &[i32], assert: i32) -> Result<()> {
        // Before the post notices: origins access only after they got one.
        self.set_post_noput(assert & MODE_NOPUT != 0);
        let mut remote = false;
        for &r in origins {
            match self.peers[r as usize].local {
                Some(o) => {
                    self.post_word(o, self.my_local)
                        .fetch_add(1, Ordering::Release);
                }
                None => remote = true,
            }
        }
        self.ring(origins);
        if remote {
            full_fence();
            for &r in origins {
                if self.peers[r as usize].local.is_none() {
                    pt2pt::send(&self.comm, &[], r, TAG_POST, SendMode::Standard)?;
                }
            }
        }
        Ok(())
    }

    /// `MPI_Win_start` of group `g` (of the window's processes): waits for their posts.
    pub fn start_group(&self, g: &Group, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_start";
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        let targets = {
            let mut st = self.st();
            let t = self.group_ranks(&mut st, C, g)?;
            self.close_fast_locks(&st, C, "a passive-target (lock) epoch is open")?;
            self.sync_fence(&mut st, |e| e.start(t.clone()))?;
            t
        };
        self.await_posts(&targets)
    }

    /// `MPI_Win_start`: waits for the targets' posts.
    pub fn start(&self, targets: impl Into<Arc<[i32]>>, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_start";
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        let targets = targets.into();
        {
            let mut st = self.st();
            self.close_fast_locks(&st, C, "a passive-target (lock) epoch is open")?;
            self.sync_fence(&mut st, |e| e.start(targets.clone()))?;
        }
        self.await_posts(&targets)
    }

    /// The end of `MPI_Win_start`: waits for a post of every target not consumed
    /// yet (posts and starts of a pair match in order), consumes it, and opens the
    /// fast path to them.
    fn await_posts(&self, targets: &[i32]) -> Result<()> {
        for &r in targets {
            if self.peers[r as usize].local.is_none() {
                pt2pt::recv(&self.comm, &mut [], r, TAG_POST)?;
            }
        }
        let me = self.my_local;
        // Acquire: what each target stored before its post is visible from here on.
        let ready = || {
            targets.iter().all(|&r| match self.peers[r as usize].local {
                Some(t) => {
                    self.post_word(me, t).load(Ordering::Acquire)
                        > self.seen_post[t].load(Ordering::Relaxed)
                }
                None => true,
            })
        };
        if !ready() {
            pscw_block(&ready, self.pscw_sleep)?;
        }
        for &r in targets {
            if let Some(t) = self.peers[r as usize].local {
                // Only this process counts (one epoch at a time): no locked add.
                let seen = &self.seen_post[t];
                seen.store(seen.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
            // Every post arrived: the fast path may take operations to these targets.
            self.started[r as usize].store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// `MPI_Win_complete`: a counter bump per target on this host (release: the
    /// epoch's operations, all complete already, are visible to the target that
    /// sees it), a zero-byte message to the others.
    pub fn complete(&self) -> Result<()> {
        let targets = {
            let mut st = self.st();
            let t = st.epochs.complete();
            self.reopen(&st);
            t?
        };
        let mut remote = false;
        for &r in targets.iter() {
            self.started[r as usize].store(false, Ordering::Relaxed);
            match self.peers[r as usize].local {
                Some(t) => {
                    self.done_word(t, self.my_local)
                        .fetch_add(1, Ordering::Release);
                }
                None => remote = true,
            }
        }
        self.ring(&targets);
        if remote {
            full_fence();
            for &r in targets.iter() {
                if self.peers[r as usize].local.is_none() {
                    pt2pt::send(&self.comm, &[], r, TAG_COMPLETE, SendMode::Standard)?;
                }
            }
        }
        Ok(())
    }

    /// `MPI_Win_wait` (`block`) or `MPI_Win_test`: whether the exposure epoch ended.
    /// It ends as a whole: MPI_Win_test consumes no complete until every origin's
    /// is there.
    pub fn wait(&self, block: bool) -> Result<bool> {
        let call = if block {
            "MPI_Win_wait"
        } else {
            "MPI_Win_test"
        };
        let origins = self.st().epochs.post_origins(call)?;
        let me = self.my_local;
        // Acquire: the origins' operations of the epoch are visible from here on.
        let ready = || {
            origins.iter().all(|&r| match self.peers[r as usize].local {
                Some(o) => {
                    self.done_word(me, o).load(Ordering::Acquire)
                        > self.seen_done[o].load(Ordering::Relaxed)
                }
                None => true,
            })
        };
        let remote = || {
            origins
                .iter()
                .copied()
                .filter(|&r| self.peers[r as usize].local.is_none())
        };
        if block {
            for r in remote() {
                pt2pt::recv(&self.comm, &mut [], r, TAG_COMPLETE)?;
            }
            if !ready() {
                pscw_block(&ready, self.pscw_sleep)?;
            }
        } else {
            if !ready() {
                // MPI_Win_test in a loop makes progress.
                runtime::engine()?.progress_once();
                return Ok(false);
            }
            for r in remote() {
                if pt2pt::iprobe(&self.comm, r, TAG_COMPLETE)?.is_none() {
                    return Ok(false);
                }
            }
            for r in remote() {
                pt2pt::recv(&self.comm, &mut [], r, TAG_COMPLETE)?;
            }
        }
        for &r in origins.iter() {
            if let Some(o) = self.peers[r as usize].local {
                let seen = &self.seen_done[o];
                seen.store(seen.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
        }
        self.st().epochs.end_post();
        // Every origin completed (its operations are done): none is flagged wrongly.
        self.set_post_noput(false);
        Ok(true)
    }
}
