//! Synchronization: fence, post/start/complete/wait, lock/unlock (and their
//! MPI_MODE_NOCHECK bookkeeping), lock_all/unlock_all, flush, sync.

use super::*;
use crate::group::Group;
use std::sync::atomic::AtomicU64;

/// The assert bits of MPI_Win_post.
const POST_ASSERTS: i32 = MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT;
const POST_ASSERT_NAMES: &str = "MPI_MODE_NOCHECK, _NOSTORE and _NOPUT";

pub(super) fn lock_kind_spin(word: &std::sync::atomic::AtomicU64, kind: LockKind) -> bool {
    let v = word.load(Ordering::Relaxed);
    match kind {
        LockKind::Shared => {
            v & WRITER == 0
                && word
                    .compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        }
        LockKind::Exclusive => {
            v == 0
                && word
                    .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        }
    }
}

/// Values of `Window::mine` (per target: the lock this process holds on it).
pub(super) const MINE_NONE: u8 = 0;
/// A shared lock taken by [`Window::lock_fast`], not in the epochs' books.
pub(super) const MINE_SHARED: u8 = 1;
/// An exclusive lock taken by [`Window::lock_fast`], not in the epochs' books.
pub(super) const MINE_EXCL: u8 = 2;
/// A lock the epochs' books record (taken by the general path).
pub(super) const MINE_BOOKED: u8 = 3;

/// Waits (progressing the engine, backing off to sleeps) until `try_take` succeeds.
pub(super) fn acquire(mut try_take: impl FnMut() -> bool) -> Result<()> {
    for _ in 0..64 {
        if try_take() {
            return Ok(());
        }
        std::hint::spin_loop();
    }
    // `wait_flag` may look at its condition again after it held once: take the
    // lock once only, and report it taken from then on.
    let mut taken = false;
    runtime::engine()?.wait_flag(
        || {
            taken = taken || try_take();
            taken
        },
        Duration::from_micros(200),
    );
    Ok(())
}

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

/// A target's lock words taken off the held ones: (normal lock, MPI_MODE_NOCHECK lock).
type Taken = (Option<(i32, LockKind)>, Option<(i32, LockKind)>);

impl Window {
    /// Runs `f`, a change of the epochs, with the fast path's fence bookkeeping in
    /// step: its operations in the open fence epoch are recorded first (the epoch
    /// then counts as used, as if they had gone through `check_access`), and the
    /// open fence epoch's number is published after.
    pub(super) fn sync_fence<T>(
        &self,
        st: &mut State,
        f: impl FnOnce(&mut Epochs) -> Result<T>,
    ) -> Result<T> {
        if self.fence_used.swap(false, Ordering::Relaxed) {
            st.epochs.mark_fence_used();
        }
        let res = f(&mut st.epochs);
        let seq = if st.epochs.fence_open() {
            st.epochs.fences
        } else {
            0
        };
        self.fence_seq.store(seq, Ordering::Relaxed);
        self.reopen(st);
        res
    }

    /// Publishes whether locks must take the general path, after a change of the
    /// epochs (under the state's mutex, like every change of `closed`).
    fn reopen(&self, st: &State) {
        self.closed
            .store(st.epochs.closes_fast_locks(), Ordering::SeqCst);
    }

    /// Whether this process holds a lock on rank `r` taken by [`Self::lock_fast`].
    #[inline]
    pub(super) fn fast_locked(&self, r: usize) -> bool {
        matches!(
            self.mine[r].load(Ordering::Relaxed),
            MINE_SHARED | MINE_EXCL
        )
    }

    /// Whether this process holds any lock taken by [`Self::lock_fast`].
    pub(super) fn fast_locks_held(&self) -> bool {
        self.mine
            .iter()
            .any(|m| matches!(m.load(Ordering::SeqCst), MINE_SHARED | MINE_EXCL))
    }

    /// Before a synchronization that no passive-target epoch may be open for (fence,
    /// start, lock_all), under the state's mutex: closes the way of locks without
    /// the mutex, then fails (`call`: `why`) if such a lock is held. Closed first,
    /// checked second, all sequentially consistent, while [`Self::lock_fast`]
    /// announces its lock first and checks second: of the two, one sees the other.
    /// The caller's change of the epochs (`sync_fence`) reopens it as they say.
    fn close_fast_locks(&self, st: &State, call: &str, why: &str) -> Result<()> {
        self.closed.store(true, Ordering::SeqCst);
        if self.fast_locks_held() {
            self.reopen(st);
            return Err(epoch::sync_err(call, why));
        }
        Ok(())
    }

    /// `MPI_Win_lock` of a target on this host without the state's mutex, when no
    /// lock_all, start or fence epoch is open (`closed`) and this process holds no
    /// lock on it: this process's word for the target (`mine`, in its own memory)
    /// and the target's lock word in the segment, one compare-exchange each; a busy
    /// lock word is waited for (sleeping). The lock stays out of the epochs' books:
    /// `mine` says it is held. `None`: not such a case, nothing done (the general
    /// path checks everything and names the error; a lock refused here for a lock
    /// taken with MPI_MODE_NOCHECK by another process, or a failed wait, is refused
    /// there again, with its error).
    #[inline]
    fn lock_fast(&self, kind: LockKind, rank: i32) -> bool {
        let Ok(r) = usize::try_from(rank) else {
            return false;
        };
        let Some(Some(local)) = self.peers.get(r).map(|p| p.local) else {
            return false;
        };
        let mine = &self.mine[r];
        let code = if kind == LockKind::Exclusive {
            MINE_EXCL
        } else {
            MINE_SHARED
        };
        if mine
            .compare_exchange(MINE_NONE, code, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if self.closed.load(Ordering::SeqCst) {
            mine.store(MINE_NONE, Ordering::Release);
            return false;
        }
        let w = self.ctl(local, CTL_LOCK);
        if !(lock_kind_spin(w, kind) || Self::wait_lock_word(w, kind)) {
            mine.store(MINE_NONE, Ordering::Release);
            return false;
        }
        // No lock taken with MPI_MODE_NOCHECK (the common case): nothing conflicts.
        if self.ctl(local, CTL_NOCHECK).load(Ordering::SeqCst) != 0 {
            Self::unlock_word(w, kind);
            mine.store(MINE_NONE, Ordering::Release);
            return false;
        }
        self.passive[r].store(true, Ordering::Relaxed);
        true
    }

    /// Waits for a busy lock word (the engine progresses; backs off to sleeps);
    /// whether it was taken.
    #[cold]
    #[inline(never)]
    fn wait_lock_word(w: &std::sync::atomic::AtomicU64, kind: LockKind) -> bool {
        acquire(|| lock_kind_spin(w, kind)).is_ok()
    }

    /// `MPI_Win_unlock` of a lock taken by [`Self::lock_fast`]: its word given back
    /// (release ordering: the epoch's stores are visible to the next holder), then
    /// this process's. `false`: no such lock, nothing done.
    #[inline]
    fn unlock_fast(&self, rank: i32) -> bool {
        let Some(r) = usize::try_from(rank).ok() else {
            return false;
        };
        let (Some(m), Some(Some(local))) = (self.mine.get(r), self.peers.get(r).map(|p| p.local))
        else {
            return false;
        };
        let code = m.load(Ordering::Relaxed);
        let kind = match code {
            MINE_SHARED => LockKind::Shared,
            MINE_EXCL => LockKind::Exclusive,
            _ => return false,
        };
        // One thread gives it back (another unlocking it at the same time is told
        // by the general path that it holds no lock).
        if m.compare_exchange(code, MINE_NONE, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.passive[r].store(false, Ordering::Relaxed);
        Self::unlock_word(self.ctl(local, CTL_LOCK), kind);
        true
    }

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

    /// `MPI_Win_lock`.
    #[inline]
    pub fn lock(&self, kind: LockKind, rank: i32, assert: i32) -> Result<()> {
        if assert == 0 && self.lock_fast(kind, rank) {
            return Ok(());
        }
        self.lock_general(kind, rank, assert)
    }

    /// `MPI_Win_lock` with the epochs' books.
    #[inline(never)]
    fn lock_general(&self, kind: LockKind, rank: i32, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock";
        if rank == PROC_NULL {
            return Ok(());
        }
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        let r = self.check_rank(C, rank)?;
        // This process's word for the target first: a lock held without the books
        // (or being taken by another thread) makes this one an error.
        if self.mine[r]
            .compare_exchange(MINE_NONE, MINE_BOOKED, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Err(epoch::sync_err(
                C,
                format!("target rank {rank} is locked already by this process"),
            ));
        }
        if let Err(e) = self.lock_target(kind, rank, r, assert) {
            self.mine[r].store(MINE_NONE, Ordering::Release);
            return Err(e);
        }
        self.set_passive(Some(r), true);
        Ok(())
    }

    /// `MPI_Win_lock` of `rank` (index `r`), its arguments checked.
    fn lock_target(&self, kind: LockKind, rank: i32, r: usize, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock";
        {
            let mut st = self.st();
            self.sync_fence(&mut st, |e| e.lock(rank, kind))?;
            // A lock word on this host that is free: taken by one compare-exchange in
            // the same critical section as the epoch's bookkeeping (one mutex round
            // trip per lock instead of two); a busy word waits below, outside the mutex.
            if let (0, Some(local)) = (assert & MODE_NOCHECK, self.peers[r].local) {
                let w = self.ctl(local, CTL_LOCK);
                if lock_kind_spin(w, kind) {
                    if let Err(e) = self.nocheck_conflict(C, rank, local, kind) {
                        Self::unlock_word(w, kind);
                        st.epochs.unlock(rank)?;
                        return Err(e);
                    }
                    st.held.push((rank, kind));
                    return Ok(());
                }
            }
        }
        if assert & MODE_NOCHECK != 0 {
            if let Some(local) = self.peers[r].local {
                if let Err(e) = self.nocheck_enter(C, rank, local, kind) {
                    self.st().epochs.unlock(rank)?;
                    return Err(e);
                }
                self.st().nocheck.push((rank, kind));
            }
            return Ok(());
        }
        let Some(local) = self.peers[r].local else {
            if let Err(e) = self.am_lock(C, r, kind) {
                self.st().epochs.unlock(rank)?;
                return Err(e);
            }
            self.st().held.push((rank, kind));
            return Ok(());
        };
        let w = self.ctl(local, CTL_LOCK);
        acquire(|| lock_kind_spin(w, kind))?;
        if let Err(e) = self.nocheck_conflict(C, rank, local, kind) {
            Self::unlock_word(w, kind);
            self.st().epochs.unlock(rank)?;
            return Err(e);
        }
        self.st().held.push((rank, kind));
        Ok(())
    }

    /// Sets (or clears) this process's MPI_MODE_NOPUT flag for the exposure epoch
    /// a post opens; origins of this host check it before updates.
    pub(super) fn set_post_noput(&self, on: bool) {
        let w = self.ctl(self.my_local, CTL_NOPUT_POST);
        // Only this process writes it: unchanged (the common case), no store.
        if on || w.load(Ordering::Relaxed) != 0 {
            w.store(on as u64, Ordering::SeqCst);
        }
    }

    pub(super) fn lock_name(kind: LockKind) -> &'static str {
        match kind {
            LockKind::Shared => "a shared",
            LockKind::Exclusive => "an exclusive",
        }
    }

    /// After taking the lock word of `rank` (host index `local`) normally: whether
    /// another process holds a lock it took with MPI_MODE_NOCHECK that conflicts
    /// (that process promised no conflicting lock would be requested meanwhile).
    pub(super) fn nocheck_conflict(
        &self,
        call: &str,
        rank: i32,
        local: usize,
        kind: LockKind,
    ) -> Result<()> {
        let nc = self.ctl(local, CTL_NOCHECK).load(Ordering::SeqCst);
        let held = if nc & WRITER != 0 {
            Some(LockKind::Exclusive)
        } else if nc != 0 {
            Some(LockKind::Shared)
        } else {
            None
        };
        match (held, kind) {
            (Some(h), LockKind::Exclusive) | (Some(h @ LockKind::Exclusive), LockKind::Shared) => Err(rma_err(
                ErrorClass::RmaConflict,
                call,
                format!("another process holds {} lock on target_rank {rank} taken with MPI_MODE_NOCHECK, which conflicts with {} lock (lock_type)", Self::lock_name(h), Self::lock_name(kind)),
            )),
            _ => Ok(()),
        }
    }

    /// Records a lock taken with MPI_MODE_NOCHECK on `rank` (host index `local`),
    /// or fails with MPI_ERR_RMA_CONFLICT when a conflicting lock is held (normally
    /// or with MPI_MODE_NOCHECK) by another process.
    pub(super) fn nocheck_enter(
        &self,
        call: &str,
        rank: i32,
        local: usize,
        kind: LockKind,
    ) -> Result<()> {
        let nc = self.ctl(local, CTL_NOCHECK);
        let w = self.ctl(local, CTL_LOCK);
        let conflict = |held: LockKind| {
            rma_err(
                ErrorClass::RmaConflict,
                call,
                format!("assert MPI_MODE_NOCHECK promises no conflicting lock, but another process holds {} lock on target_rank {rank} (lock_type: {} lock)", Self::lock_name(held), Self::lock_name(kind)),
            )
        };
        // Registered first, checked second (and the normal lock path the other way
        // round, all sequentially consistent): of two racing conflicting lockers, at
        // least one sees the other.
        match kind {
            LockKind::Shared => {
                let prev = nc.fetch_add(1, Ordering::SeqCst);
                if prev & WRITER != 0 || w.load(Ordering::SeqCst) & WRITER != 0 {
                    nc.fetch_sub(1, Ordering::SeqCst);
                    return Err(conflict(LockKind::Exclusive));
                }
            }
            LockKind::Exclusive => {
                if let Err(v) = nc.compare_exchange(0, WRITER, Ordering::SeqCst, Ordering::SeqCst) {
                    return Err(conflict(if v & WRITER != 0 {
                        LockKind::Exclusive
                    } else {
                        LockKind::Shared
                    }));
                }
                let v = w.load(Ordering::SeqCst);
                if v != 0 {
                    nc.store(0, Ordering::SeqCst);
                    return Err(conflict(if v & WRITER != 0 {
                        LockKind::Exclusive
                    } else {
                        LockKind::Shared
                    }));
                }
            }
        }
        Ok(())
    }

    pub(super) fn unlock_word(w: &std::sync::atomic::AtomicU64, kind: LockKind) {
        match kind {
            LockKind::Shared => w.fetch_sub(1, Ordering::Release),
            LockKind::Exclusive => w.fetch_and(!WRITER, Ordering::Release),
        };
    }

    /// Removes `rank`'s lock words from the ones this process holds (normally, with
    /// MPI_MODE_NOCHECK): what [`Self::release_taken`] gives back.
    fn take_held(st: &mut State, rank: i32) -> Taken {
        let h = st
            .held
            .iter()
            .position(|&(r, _)| r == rank)
            .map(|i| st.held.remove(i));
        let n = st
            .nocheck
            .iter()
            .position(|&(r, _)| r == rank)
            .map(|i| st.nocheck.remove(i));
        (h, n)
    }

    /// Gives back lock words [`Self::take_held`] removed.
    fn release_taken(&self, (held, nocheck): Taken) -> Result<()> {
        if let Some((r, kind)) = nocheck {
            if let Some(local) = self.peers[r as usize].local {
                full_fence();
                let nc = self.ctl(local, CTL_NOCHECK);
                match kind {
                    LockKind::Shared => nc.fetch_sub(1, Ordering::SeqCst),
                    LockKind::Exclusive => nc.fetch_and(!WRITER, Ordering::SeqCst),
                };
            }
        }
        if let Some((r, kind)) = held {
            let Some(local) = self.peers[r as usize].local else {
                return self.am_unlock("MPI_Win_unlock", r as usize, kind);
            };
            let w = self.ctl(local, CTL_LOCK);
            full_fence();
            Self::unlock_word(w, kind);
        }
        Ok(())
    }

    /// `MPI_Win_unlock`.
    #[inline]
    pub fn unlock(&self, rank: i32) -> Result<()> {
        if self.unlock_fast(rank) {
            return Ok(());
        }
        self.unlock_general(rank)
    }

    /// `MPI_Win_unlock` of a lock in the epochs' books.
    #[inline(never)]
    fn unlock_general(&self, rank: i32) -> Result<()> {
        if rank == PROC_NULL {
            return Ok(());
        }
        let r = self.check_rank("MPI_Win_unlock", rank)?;
        // The epoch and the held words in one critical section.
        let taken = {
            let mut st = self.st();
            st.epochs.unlock(rank)?;
            Self::take_held(&mut st, rank)
        };
        self.set_passive(Some(r), false);
        let res = self.release_taken(taken);
        self.mine[r].store(MINE_NONE, Ordering::Release);
        res
    }

    /// `MPI_Win_lock_all`: a shared lock on every target (its lock word on this
    /// host, an active message to another), taken in rank order; how many were
    /// taken is kept in `all_taken` (no list, no allocation).
    pub fn lock_all(&self, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_lock_all";
        check_assert(C, assert, MODE_NOCHECK, "MPI_MODE_NOCHECK")?;
        {
            let mut st = self.st();
            self.close_fast_locks(&st, C, "a passive-target epoch is open already")?;
            self.sync_fence(&mut st, |e| e.lock_all())?;
        }
        let nocheck = assert & MODE_NOCHECK != 0;
        let (taken, res) = self.lock_all_targets(nocheck);
        self.all_taken.store(
            taken as u64 | if nocheck { WRITER } else { 0 },
            Ordering::Relaxed,
        );
        match res {
            Ok(()) => self.set_passive(None, true),
            // Give back what was taken: the epoch did not open.
            Err(_) => {
                let _ = self.unlock_all();
            }
        }
        res
    }

    /// Takes the shared lock of every rank in order (with MPI_MODE_NOCHECK: records
    /// it on this host's targets, for conflict checks); how many were taken, and
    /// the first error.
    fn lock_all_targets(&self, nocheck: bool) -> (usize, Result<()>) {
        const C: &str = "MPI_Win_lock_all";
        const S: LockKind = LockKind::Shared;
        for (r, p) in self.peers.iter().enumerate() {
            let rank = r as i32;
            let res = match (p.local, nocheck) {
                (Some(local), true) => self.nocheck_enter(C, rank, local, S),
                (None, true) => Ok(()),
                (Some(local), false) => {
                    let w = self.ctl(local, CTL_LOCK);
                    let got = if lock_kind_spin(w, S) {
                        Ok(())
                    } else {
                        acquire(|| lock_kind_spin(w, S))
                    };
                    got.and_then(|()| {
                        let res = self.nocheck_conflict(C, rank, local, S);
                        if res.is_err() {
                            Self::unlock_word(w, S);
                        }
                        res
                    })
                }
                (None, false) => self.am_lock(C, r, S),
            };
            if let Err(e) = res {
                return (r, Err(e));
            }
        }
        (self.peers.len(), Ok(()))
    }

    /// `MPI_Win_unlock_all`: gives back the lock words `lock_all` took.
    pub fn unlock_all(&self) -> Result<()> {
        {
            let mut st = self.st();
            let res = st.epochs.unlock_all();
            self.reopen(&st);
            res?;
        }
        self.set_passive(None, false);
        let v = self.all_taken.swap(0, Ordering::Relaxed);
        let (taken, nocheck) = ((v & !WRITER) as usize, v & WRITER != 0);
        // The epoch's stores before the words' release (each a release too).
        full_fence();
        let mut res = Ok(());
        for (r, p) in self.peers[..taken].iter().enumerate() {
            match (p.local, nocheck) {
                (Some(local), true) => {
                    self.ctl(local, CTL_NOCHECK).fetch_sub(1, Ordering::SeqCst);
                }
                (Some(local), false) => {
                    Self::unlock_word(self.ctl(local, CTL_LOCK), LockKind::Shared)
                }
                (None, true) => {}
                (None, false) => {
                    let r = self.am_unlock("MPI_Win_unlock_all", r, LockKind::Shared);
                    res = res.and(r);
                }
            }
        }
        res
    }

    /// `MPI_Win_flush` / `_flush_local` (`Some(rank)`) and `_flush_all` /
    /// `_flush_local_all` (`None`): operations complete at the call already, so
    /// this checks the epoch and orders memory.
    pub fn flush(&self, call: &str, rank: Option<i32>) -> Result<()> {
        match rank {
            Some(PROC_NULL) => {}
            Some(r) => {
                let i = self.check_rank(call, r)?;
                if !self.fast_locked(i) {
                    self.st().epochs.check_passive(call, r)?;
                }
            }
            None => {
                if !self.fast_locks_held() {
                    self.st().epochs.check_any_passive(call)?;
                }
            }
        }
        full_fence();
        Ok(())
    }

    /// `MPI_Win_sync`.
    pub fn sync(&self) {
        full_fence();
    }
}
