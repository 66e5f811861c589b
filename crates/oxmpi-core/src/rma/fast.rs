//! The fast path of small one-sided operations on this host: an operation on
//! contiguous elements of one predefined type (the same on both sides), to a
//! target this process may reach with plain loads and stores, in a passive-target
//! epoch (lock or lock_all), a fence or a post/start epoch, is one `memcpy` or one CPU atomic per element into the
//! shared mapping, with no lock, no allocation and no datatype object. A flush is
//! then only a memory fence.
//!
//! Each function answers `false` (having done nothing) when its operation is not
//! such a case, or when anything would be an error (wrong rank, out of range, no
//! epoch, an op not defined on the type): the caller then takes the general path of
//! [`super::ops`], which checks everything and names the error. The cases taken here
//! are exactly those where the general path would do the same thing the same way
//! (in particular an accumulate is a CPU atomic here only where the general path
//! uses that atomic too, and a bulk kernel under the target's bulk word only where
//! the general path would too, so concurrent accumulates to one element stay atomic).

use super::*;
use crate::datatype::TypeClass;
use crate::transport::winmem::{Mapped, Span};

impl Window {
    /// The `len` bytes at displacement `disp` of `rank`'s window, as
    /// [`Self::direct_at`] finds them, if they lie inside the window; and the
    /// target's host index.
    #[inline(never)]
    fn direct(
        &self,
        rank: i32,
        disp: isize,
        len: usize,
        writes: bool,
    ) -> Option<(Span<'_>, usize)> {
        self.direct_inline(rank, disp, len, writes)
    }

    /// [`Self::direct`], inlined into the atomics (callgrind: fewer instructions
    /// there).
    #[inline(always)]
    fn direct_inline(
        &self,
        rank: i32,
        disp: isize,
        len: usize,
        writes: bool,
    ) -> Option<(Span<'_>, usize)> {
        let (m, off, local) = self.direct_at(rank, disp, writes)?;
        Some((m.span(off, len)?, local))
    }

    /// `rank`'s window memory and the byte offset of displacement `disp` in it, if
    /// this process reaches that memory directly and holds a passive-target epoch
    /// to `rank`, a post/start access epoch to it, or is in a fence epoch (for an
    /// update (`writes`): one the target did not assert MPI_MODE_NOPUT for, as
    /// `target` checks); and the target's host index. The range is the caller's
    /// to check ([`Mapped::span`], [`Mapped::read`], [`Mapped::write`]).
    #[inline(always)]
    fn direct_at(&self, rank: i32, disp: isize, writes: bool) -> Option<(&Mapped, usize, usize)> {
        let r = usize::try_from(rank).ok()?;
        let p = self.peers.get(r)?;
        let m = p.direct.as_ref()?;
        let local = p.local?;
        if self.started[r].load(Ordering::Relaxed) {
            // A post/start epoch to `rank`: updates only unless its post asserted
            // MPI_MODE_NOPUT (the general path raises that conflict).
            if writes && self.ctl(local, CTL_NOPUT_POST).load(Ordering::SeqCst) != 0 {
                return None;
            }
        } else if !self.passive[r].load(Ordering::Relaxed) {
            let f = self.fence_seq.load(Ordering::Relaxed);
            if f == 0 || (writes && self.ctl(local, CTL_NOPUT).load(Ordering::SeqCst) == f) {
                return None;
            }
            // The epoch is used (`sync_fence` records it at the next synchronization);
            // an operation the checks below send to the general path is recorded there too.
            if !self.fence_used.load(Ordering::Relaxed) {
                self.fence_used.store(true, Ordering::Relaxed);
            }
        }
        let off = usize::try_from(disp).ok()?.checked_mul(p.disp_unit)?;
        Some((m, off, local))
    }

    /// `MPI_Put` of the bytes of a contiguous origin (same predefined type and count
    /// on both sides); `false`: not done (nothing to do, out of range, no epoch...),
    /// take the general path. The origin may lie in window memory (a `memmove`).
    #[inline(never)]
    pub fn put_direct(&self, origin: &[u8], rank: i32, disp: isize) -> bool {
        match self.direct_at(rank, disp, true) {
            Some((m, off, _)) => !origin.is_empty() && m.write(off, origin),
            None => false,
        }
    }

    /// `MPI_Get`, as [`Self::put_direct`].
    #[inline(never)]
    pub fn get_direct(&self, origin: &mut [u8], rank: i32, disp: isize) -> bool {
        match self.direct_at(rank, disp, false) {
            Some((m, off, _)) => !origin.is_empty() && m.read(off, origin),
            None => false,
        }
    }

    /// `MPI_Accumulate` (`result` `None`), `MPI_Get_accumulate` and `MPI_Fetch_and_op`
    /// of `n` elements of `prim` (origin, result and target alike) with `op`, when each
    /// element is one CPU atomic instruction ([`winatomic::is_direct`]), or, from
    /// [`ops::BULK_MIN`] bytes, in bulk ([`Self::acc_bulk_direct`]). `origin` (empty
    /// for `MPI_NO_OP`) and `result` hold `n` elements, at any alignment; shorter
    /// ones are not done here.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn acc_direct(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: &[u8],
        result: Option<&mut [u8]>,
        n: usize,
        rank: i32,
        disp: isize,
    ) -> bool {
        if !self.atomic_memory() {
            return false;
        }
        let Some(len) = n.checked_mul(prim.size()) else {
            return false;
        };
        let (elementwise, no_word) = self.same_op_way(prim, op);
        if elementwise {
            return self.acc_same_op(prim, op, origin, result, len, no_word, rank, disp);
        }
        if len >= ops::BULK_MIN {
            return self.acc_bulk_direct(prim, op, origin, result, len, rank, disp);
        }
        if !winatomic::is_direct(prim, op) {
            return false;
        }
        let Some((at, local)) = self.direct_inline(rank, disp, len, op != PredefinedOp::NoOp)
        else {
            return false;
        };
        // A bulk accumulate to the target in progress: the general path waits for it.
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        // The general path updates these elements with the same atomics, or in bulk
        // while no atomic accumulate is entered (`false`: unaligned, left to it).
        let done = winatomic::fetch_op_direct(at, prim, op, origin, result);
        Self::atomic_exit(b);
        done
    }

    /// [`Self::acc_direct`] under `accumulate_ops` of an op [`Self::same_op_way`]
    /// takes element by element: CPU atomics at any size, without the bulk word
    /// unless `!no_word` (MPI_NO_OP).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn acc_same_op(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: &[u8],
        result: Option<&mut [u8]>,
        len: usize,
        no_word: bool,
        rank: i32,
        disp: isize,
    ) -> bool {
        let Some((at, local)) = self.direct_inline(rank, disp, len, op != PredefinedOp::NoOp)
        else {
            return false;
        };
        // Unaligned elements (`false`) are left to the general path.
        if no_word {
            // Every concurrent accumulate to them is this op's atomic or an atomic
            // load (the window's `accumulate_ops`).
            return winatomic::fetch_op_direct(at, prim, op, origin, result);
        }
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        // No bulk kernel runs meanwhile (the bulk word is entered).
        let done = winatomic::fetch_op_direct(at, prim, op, origin, result);
        Self::atomic_exit(b);
        done
    }

    /// [`Self::acc_direct`] of `len` >= [`ops::BULK_MIN`] bytes: the general path's
    /// bulk way (the op kernel on the window memory, holding the target's bulk
    /// word), without its checks' objects, when every condition of that way holds.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn acc_bulk_direct(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: &[u8],
        result: Option<&mut [u8]>,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> bool {
        let w = prim.size();
        let noop = op == PredefinedOp::NoOp;
        if winatomic::atomic_width(prim) != Some(w)
            || !(noop || op == PredefinedOp::Replace || op.allows(prim.class()))
            || !(noop || origin.len() >= len)
            || result.as_ref().is_some_and(|r| r.len() < len)
        {
            return false;
        }
        let Some((at, local)) = self.direct(rank, disp, len, !noop) else {
            return false;
        };
        // The kernel wants disjoint buffers (the general path goes element-wise then).
        let apart = |b: &[u8]| at.apart(b.as_ptr(), len);
        if !at.aligned(w) || !(noop || apart(origin)) || !result.as_deref().is_none_or(apart) {
            return false;
        }
        // An error here (the engine gone while waiting) leaves everything undone:
        // the general path then reports it.
        self.with_bulk(local, || {
            if let Some(r) = result {
                at.read(r);
            }
            winatomic::apply_bulk(at, prim, op, origin);
            Ok(())
        })
        .is_ok()
    }

    /// `MPI_Compare_and_swap` of one element of `prim` (`origin`, `compare` and
    /// `result` each that long; others are not done here).
    #[inline]
    pub fn cas_direct(
        &self,
        prim: Primitive,
        origin: &[u8],
        compare: &[u8],
        result: &mut [u8],
        rank: i32,
        disp: isize,
    ) -> bool {
        if !self.atomic_memory()
            || !matches!(
                prim.class(),
                TypeClass::CInteger
                    | TypeClass::FortranInteger
                    | TypeClass::Logical
                    | TypeClass::Byte
            )
        {
            return false;
        }
        let Some(w) = winatomic::atomic_width(prim) else {
            return false;
        };
        let Some((at, local)) = self.direct_inline(rank, disp, w, true) else {
            return false;
        };
        if !at.aligned(w) || origin.len() != w || compare.len() != w || result.len() != w {
            return false;
        }
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        let done = winatomic::compare_swap(at, origin, compare, result);
        Self::atomic_exit(b);
        done
    }

    /// `MPI_Win_flush` / `_flush_local` to `rank` in a passive-target epoch to it:
    /// operations completed in their calls, so this is a memory fence.
    #[inline]
    pub fn flush_direct(&self, rank: i32) -> bool {
        let ok = usize::try_from(rank)
            .ok()
            .and_then(|r| self.passive.get(r))
            .is_some_and(|f| f.load(Ordering::Relaxed));
        if ok {
            full_fence();
        }
        ok
    }

    /// Records whether this process holds a passive-target epoch to `rank` (`None`:
    /// to every rank, lock_all), for [`Self::direct`].
    pub(super) fn set_passive(&self, rank: Option<usize>, on: bool) {
        match rank {
            Some(r) => self.passive[r].store(on, Ordering::Relaxed),
            None => self
                .passive
                .iter()
                .for_each(|f| f.store(on, Ordering::Relaxed)),
        }
    }
}
