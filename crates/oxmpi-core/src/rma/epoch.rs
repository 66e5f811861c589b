//! The epoch bookkeeping of one window at one process: which access and exposure
//! epochs are open (fence, post/start/complete/wait, lock/lock_all), as a
//! deterministic state machine with no I/O. The window asks it before every
//! synchronization call and every communication call, and gets either the go
//! ahead or the `MPI_ERR_RMA_SYNC` error naming the call.
//!
//! Rules (MPI-4.1 section 12.5):
//! - A fence opens a "fence epoch" unless `MPI_MODE_NOSUCCEED`; a fence with
//!   `MPI_MODE_NOSUCCEED` closes it. Because a fence cannot know whether the next
//!   call is an RMA call, a start, post or lock after a fence is accepted when no
//!   operation was made since the fence (the fence epoch was empty).
//! - PSCW: one access epoch (start .. complete) and one exposure epoch
//!   (post .. wait/test) may be open at a time; neither with a fence epoch in use.
//! - Passive target: per target one lock at a time; lock_all excludes lock.
//!   Neither may be mixed with an active-target access epoch.

use std::sync::Arc;

use crate::error::{ErrorClass, MpiError, Result};

/// `MPI_MODE_NOSUCCEED`.
pub const MODE_NOSUCCEED: i32 = 16384;
/// `MPI_MODE_NOPRECEDE`.
const MODE_NOPRECEDE: i32 = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    Shared,
    Exclusive,
}

/// The kind of access epoch an operation is made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Passive,
    Fence,
    Start,
}

#[derive(Default, Debug)]
pub struct Epochs {
    /// Fences made on the window so far (collective: the same count on every rank).
    pub fences: u64,
    /// A fence opened an epoch; `true` once an operation was made in it.
    fence: Option<bool>,
    /// PSCW access epoch: the targets of MPI_Win_start (shared with the window's
    /// cache of group translations: opening an epoch allocates nothing).
    start: Option<Arc<[i32]>>,
    /// PSCW exposure epoch: the origins of MPI_Win_post. It ends as a whole, when
    /// every origin completed (MPI_Win_test consumes no completion before all came).
    post: Option<Arc<[i32]>>,
    /// Passive-target locks held by this process (target, kind): a few at most in
    /// practice, and a vector keeps its room, so lock/unlock pairs allocate nothing.
    locks: Vec<(i32, LockKind)>,
    lock_all: bool,
}

fn sync(call: &str, why: impl std::fmt::Display) -> MpiError {
    MpiError::new(ErrorClass::RmaSync, format!("{call}: {why}"))
}

/// An `MPI_ERR_RMA_SYNC` error of `call` (for the window's checks outside these books).
pub(crate) fn sync_err(call: &str, why: impl std::fmt::Display) -> MpiError {
    sync(call, why)
}

impl Epochs {
    fn holds(&self, target: i32) -> bool {
        self.locks.iter().any(|&(t, _)| t == target)
    }

    fn passive(&self) -> bool {
        self.lock_all || !self.locks.is_empty()
    }

    /// A start/post/lock may follow a fence whose epoch saw no operation.
    fn leave_empty_fence(&mut self, call: &str) -> Result<()> {
        match self.fence {
            Some(true) => Err(sync(
                call,
                "a fence epoch with RMA operations is open (end it with MPI_Win_fence)",
            )),
            _ => {
                self.fence = None;
                Ok(())
            }
        }
    }

    pub fn fence(&mut self, assert: i32) -> Result<()> {
        const C: &str = "MPI_Win_fence";
        if self.start.is_some() || self.post.is_some() {
            return Err(sync(C, "a post/start epoch is open"));
        }
        if self.passive() {
            return Err(sync(C, "a passive-target (lock) epoch is open"));
        }
        if assert & MODE_NOPRECEDE != 0 && self.fence == Some(true) {
            return Err(sync(C, "assert has MPI_MODE_NOPRECEDE, but this process made RMA calls in the epoch the fence ends"));
        }
        self.fence = if assert & MODE_NOSUCCEED != 0 {
            None
        } else {
            Some(false)
        };
        self.fences += 1;
        Ok(())
    }

    pub fn start(&mut self, targets: Arc<[i32]>) -> Result<()> {
        const C: &str = "MPI_Win_start";
        if self.start.is_some() {
            return Err(sync(C, "an access epoch (MPI_Win_start) is already open"));
        }
        if self.passive() {
            return Err(sync(C, "a passive-target (lock) epoch is open"));
        }
        self.leave_empty_fence(C)?;
        self.start = Some(targets);
        Ok(())
    }

    /// Ends the PSCW access epoch: its targets.
    pub fn complete(&mut self) -> Result<Arc<[i32]>> {
        self.start.take().ok_or_else(|| {
            sync(
                "MPI_Win_complete",
                "no access epoch is open (no MPI_Win_start)",
            )
        })
    }

    pub fn post(&mut self, origins: Arc<[i32]>) -> Result<()> {
        const C: &str = "MPI_Win_post";
        if self.post.is_some() {
            return Err(sync(C, "an exposure epoch (MPI_Win_post) is already open"));
        }
        self.leave_empty_fence(C)?;
        self.post = Some(origins);
        Ok(())
    }

    /// The origins whose MPI_Win_complete the open exposure epoch waits for.
    pub fn post_origins(&self, call: &str) -> Result<Arc<[i32]>> {
        self.post
            .clone()
            .ok_or_else(|| sync(call, "no exposure epoch is open (no MPI_Win_post)"))
    }

    /// Ends the exposure epoch (every origin completed); whether one was open.
    pub fn end_post(&mut self) -> bool {
        self.post.take().is_some()
    }

    pub fn lock(&mut self, target: i32, kind: LockKind) -> Result<()> {
        const C: &str = "MPI_Win_lock";
        if self.lock_all {
            return Err(sync(C, "MPI_Win_lock_all is in effect"));
        }
        if self.holds(target) {
            return Err(sync(
                C,
                format!("target rank {target} is locked already by this process"),
            ));
        }
        if self.start.is_some() {
            return Err(sync(
                C,
                "an active-target access epoch (MPI_Win_start) is open",
            ));
        }
        self.leave_empty_fence(C)?;
        self.locks.push((target, kind));
        Ok(())
    }

    pub fn unlock(&mut self, target: i32) -> Result<LockKind> {
        match self.locks.iter().position(|&(t, _)| t == target) {
            Some(i) => Ok(self.locks.swap_remove(i).1),
            None => Err(sync(
                "MPI_Win_unlock",
                format!("target rank {target} is not locked by this process"),
            )),
        }
    }

    pub fn lock_all(&mut self) -> Result<()> {
        const C: &str = "MPI_Win_lock_all";
        if self.passive() {
            return Err(sync(C, "a passive-target epoch is open already"));
        }
        if self.start.is_some() {
            return Err(sync(
                C,
                "an active-target access epoch (MPI_Win_start) is open",
            ));
        }
        self.leave_empty_fence(C)?;
        self.lock_all = true;
        Ok(())
    }

    pub fn unlock_all(&mut self) -> Result<()> {
        if !self.lock_all {
            return Err(sync(
                "MPI_Win_unlock_all",
                "no MPI_Win_lock_all is in effect",
            ));
        }
        self.lock_all = false;
        Ok(())
    }

    /// Whether a passive-target epoch to `target` is open (flush, flush_local).
    pub fn check_passive(&self, call: &str, target: i32) -> Result<()> {
        if self.lock_all || self.holds(target) {
            Ok(())
        } else {
            Err(sync(
                call,
                format!("no passive-target epoch to rank {target} is open (lock it first)"),
            ))
        }
    }

    /// Whether any passive-target epoch is open (flush_all, flush_local_all).
    pub fn check_any_passive(&self, call: &str) -> Result<()> {
        if self.passive() {
            Ok(())
        } else {
            Err(sync(call, "no passive-target epoch is open"))
        }
    }

    /// An RMA operation to `target`: allowed in a lock, lock_all, start (with
    /// `target` in its group) or fence epoch; which kind it is: active-target
    /// (fence or start) epoch, or passive-target.
    pub fn check_access(&mut self, call: &str, target: i32) -> Result<Access> {
        if self.lock_all || self.holds(target) {
            return Ok(Access::Passive);
        }
        if let Some(g) = &self.start {
            if g.contains(&target) {
                return Ok(Access::Start);
            }
            return Err(sync(
                call,
                format!("target_rank {target} is not in the group of MPI_Win_start"),
            ));
        }
        if let Some(used) = self.fence.as_mut() {
            *used = true;
            return Ok(Access::Fence);
        }
        Err(sync(call, format!("no access epoch to target_rank {target} is open (call MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)")))
    }

    /// MPI_Win_free: no epoch may be open but a fence epoch.
    pub fn check_free(&self) -> Result<()> {
        const C: &str = "MPI_Win_free";
        if self.start.is_some() || self.post.is_some() {
            return Err(sync(C, "a post/start epoch is still open"));
        }
        if self.passive() {
            return Err(sync(C, "a passive-target (lock) epoch is still open"));
        }
        Ok(())
    }

    /// Whether a lock must come here (`Window::lock`'s way without these books is
    /// closed): a lock_all, start or fence epoch is open, each of which a lock must
    /// refuse or (an empty fence epoch) leave first.
    pub fn closes_fast_locks(&self) -> bool {
        self.lock_all || self.start.is_some() || self.fence.is_some()
    }

    /// Whether a fence epoch is open (then no other access epoch is: a start, post
    /// or lock leaves it): operations to any target are in it.
    pub fn fence_open(&self) -> bool {
        self.fence.is_some()
    }

    /// Records an operation made in the open fence epoch outside [`Self::check_access`]
    /// (the one-sided fast path's, see `Window::sync_fence`).
    pub fn mark_fence_used(&mut self) {
        if let Some(used) = self.fence.as_mut() {
            *used = true;
        }
    }

    pub fn lock_kind(&self, target: i32) -> Option<LockKind> {
        self.locks
            .iter()
            .find(|&&(t, _)| t == target)
            .map(|&(_, k)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_sync<T: std::fmt::Debug>(r: Result<T>) -> bool {
        matches!(r, Err(e) if e.class == ErrorClass::RmaSync)
    }

    #[test]
    fn operations_need_an_epoch() {
        let mut e = Epochs::default();
        assert!(is_sync(e.check_access("MPI_Put", 1)));
        e.fence(0).unwrap();
        e.check_access("MPI_Put", 1).unwrap();
        e.fence(MODE_NOSUCCEED).unwrap();
        assert!(is_sync(e.check_access("MPI_Put", 1)));
    }

    #[test]
    fn fence_epoch_with_operations_excludes_lock_but_empty_one_does_not() {
        let mut e = Epochs::default();
        e.fence(0).unwrap();
        e.lock(1, LockKind::Shared).unwrap();
        e.unlock(1).unwrap();
        e.fence(0).unwrap();
        e.check_access("MPI_Get", 0).unwrap();
        assert!(
            is_sync(e.fence(MODE_NOPRECEDE)),
            "operations precede this fence"
        );
        assert!(is_sync(e.lock(0, LockKind::Exclusive)));
        assert!(is_sync(e.start(vec![0].into())));
        e.fence(MODE_NOSUCCEED).unwrap();
        e.start(vec![0].into()).unwrap();
    }

    #[test]
    fn pscw_access_and_exposure() {
        let mut e = Epochs::default();
        assert!(is_sync(e.complete()));
        e.post(vec![0, 2].into()).unwrap();
        assert!(is_sync(e.post(vec![1].into())));
        e.start(vec![1].into()).unwrap();
        e.check_access("MPI_Put", 1).unwrap();
        assert!(is_sync(e.check_access("MPI_Put", 2)));
        assert!(is_sync(e.fence(0)));
        assert!(is_sync(e.lock(1, LockKind::Shared)));
        assert_eq!(&*e.complete().unwrap(), &[1]);
        assert!(is_sync(e.complete()), "the access epoch ended");
        assert_eq!(&*e.post_origins("MPI_Win_wait").unwrap(), &[0, 2]);
        assert!(is_sync(e.check_free()), "the exposure epoch is still open");
        assert!(e.end_post());
        assert!(!e.end_post());
        assert!(is_sync(e.post_origins("MPI_Win_wait")));
        e.check_free().unwrap();
    }

    #[test]
    fn locks_per_target_and_lock_all() {
        let mut e = Epochs::default();
        assert!(is_sync(e.unlock(0)));
        e.lock(0, LockKind::Exclusive).unwrap();
        e.lock(1, LockKind::Shared).unwrap();
        assert!(is_sync(e.lock(0, LockKind::Shared)));
        assert!(is_sync(e.lock_all()));
        e.check_access("MPI_Put", 0).unwrap();
        assert!(is_sync(e.check_access("MPI_Put", 2)));
        e.check_passive("MPI_Win_flush", 1).unwrap();
        assert!(is_sync(e.check_passive("MPI_Win_flush", 2)));
        assert!(is_sync(e.check_free()));
        assert_eq!(e.unlock(0).unwrap(), LockKind::Exclusive);
        assert_eq!(e.unlock(1).unwrap(), LockKind::Shared);
        assert!(is_sync(e.check_any_passive("MPI_Win_flush_all")));
        e.lock_all().unwrap();
        e.check_access("MPI_Put", 5).unwrap();
        assert!(is_sync(e.lock(1, LockKind::Shared)));
        e.unlock_all().unwrap();
        assert!(is_sync(e.unlock_all()));
        e.check_free().unwrap();
    }
}
