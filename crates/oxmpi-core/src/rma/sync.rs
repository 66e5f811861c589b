//! Synchronization by locks: lock/unlock (and their MPI_MODE_NOCHECK
//! bookkeeping), lock_all/unlock_all, flush, sync; the fence bookkeeping and the
//! closing of the lock fast path that fence and PSCW (`pscw`) share.

use super::*;

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
    pub(super) fn reopen(&self, st: &State) {
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
    pub(super) fn close_fast_locks(&self, st: &State, call: &str, why: &str) -> Result<()> {
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
