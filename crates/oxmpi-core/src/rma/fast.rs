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

impl Window {
    /// The address in this process of `len` (> 0) bytes at displacement `disp` of
    /// `rank`'s window, if this process reaches its memory directly, the bytes lie
    /// inside the window, and this process holds a passive-target epoch to `rank`,
    /// a post/start access epoch to it, or is in a fence epoch (for an update
    /// (`writes`): one the target did not assert MPI_MODE_NOPUT for, as `target`
    /// checks); and the target's host index.
    #[inline(never)]
    fn direct(&self, rank: i32, disp: isize, len: usize, writes: bool) -> Option<(usize, usize)> {
        self.direct_inline(rank, disp, len, writes)
    }

    /// [`Self::direct`], inlined into the atomics (callgrind: fewer instructions
    /// there; put and get, small enough, are shorter calling it out of line).
    #[inline(always)]
    fn direct_inline(
        &self,
        rank: i32,
        disp: isize,
        len: usize,
        writes: bool,
    ) -> Option<(usize, usize)> {
        let r = usize::try_from(rank).ok()?;
        let p = self.peers.get(r)?;
        if p.direct == 0 {
            return None;
        }
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
        if len == 0 || off.checked_add(len)? > p.size {
            return None;
        }
        Some((p.direct + off, local))
    }

    /// `MPI_Put` of `len` bytes of a contiguous origin (same predefined type and count
    /// on both sides); `false`: not done, take the general path.
    ///
    /// # Safety
    /// `origin` is readable for `len` bytes.
    #[inline]
    pub unsafe fn put_direct(&self, origin: *const u8, len: usize, rank: i32, disp: isize) -> bool {
        let Some((a, _)) = self.direct(rank, disp, len, true) else {
            return false;
        };
        // SAFETY: `a` is inside the target's window (checked), mapped in this process; `origin` per the contract; `copy` allows the origin to lie in the window.
        unsafe { std::ptr::copy(origin, a as *mut u8, len) };
        true
    }

    /// `MPI_Get`, as [`Self::put_direct`].
    ///
    /// # Safety
    /// `origin` is writable for `len` bytes.
    #[inline]
    pub unsafe fn get_direct(&self, origin: *mut u8, len: usize, rank: i32, disp: isize) -> bool {
        let Some((a, _)) = self.direct(rank, disp, len, false) else {
            return false;
        };
        // SAFETY: as in `put_direct`, reading.
        unsafe { std::ptr::copy(a as *const u8, origin, len) };
        true
    }

    /// `MPI_Accumulate` (`result` null), `MPI_Get_accumulate` and `MPI_Fetch_and_op`
    /// of `n` elements of `prim` (origin, result and target alike) with `op`, when each
    /// element is one CPU atomic instruction ([`winatomic::is_direct`]), or, from
    /// [`ops::BULK_MIN`] bytes, in bulk ([`Self::acc_bulk_direct`]).
    ///
    /// # Safety
    /// `origin` is readable for `n` elements (unless `op` is `MPI_NO_OP`), `result`,
    /// unless null, writable for `n`, at any alignment.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn acc_direct(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: *const u8,
        result: *mut u8,
        n: usize,
        rank: i32,
        disp: isize,
    ) -> bool {
        if !self.atomic_memory() {
            return false;
        }
        let w = prim.size();
        let Some(len) = n.checked_mul(w) else {
            return false;
        };
        let (elementwise, no_word) = self.same_op_way(prim, op);
        if elementwise {
            // SAFETY: forwarded contract.
            return unsafe {
                self.acc_same_op(prim, op, origin, result, n, len, no_word, rank, disp)
            };
        }
        if len >= ops::BULK_MIN {
            // SAFETY: forwarded contract.
            return unsafe { self.acc_bulk_direct(prim, op, origin, result, n, len, rank, disp) };
        }
        if !winatomic::is_direct(prim, op) {
            return false;
        }
        let Some((a, local)) = self.direct_inline(rank, disp, len, op != PredefinedOp::NoOp) else {
            return false;
        };
        if !winatomic::aligned(a, w) {
            return false;
        }
        // A bulk accumulate to the target in progress: the general path waits for it.
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        // SAFETY: `n` elements of width `w` inside the target's window in the shared segment, aligned; the general path updates them with the same atomics, or in bulk while no atomic accumulate is entered.
        unsafe { winatomic::fetch_op_direct(a, n, prim, op, origin, result) };
        Self::atomic_exit(b);
        true
    }

    /// [`Self::acc_direct`] under `accumulate_ops` of an op [`Self::same_op_way`]
    /// takes element by element: CPU atomics at any size, without the bulk word
    /// unless `!no_word` (MPI_NO_OP).
    ///
    /// # Safety
    /// As [`Self::acc_direct`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    unsafe fn acc_same_op(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: *const u8,
        result: *mut u8,
        n: usize,
        len: usize,
        no_word: bool,
        rank: i32,
        disp: isize,
    ) -> bool {
        let Some((a, local)) = self.direct_inline(rank, disp, len, op != PredefinedOp::NoOp) else {
            return false;
        };
        if !winatomic::aligned(a, prim.size()) {
            return false;
        }
        if no_word {
            // SAFETY: `n` aligned elements inside the target's window in the shared segment; every concurrent accumulate to them is this op's atomic or an atomic load (the window's `accumulate_ops`).
            unsafe { winatomic::fetch_op_direct(a, n, prim, op, origin, result) };
            return true;
        }
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        // SAFETY: as above; no bulk kernel runs meanwhile (the bulk word is entered).
        unsafe { winatomic::fetch_op_direct(a, n, prim, op, origin, result) };
        Self::atomic_exit(b);
        true
    }

    /// [`Self::acc_direct`] of `len` >= [`ops::BULK_MIN`] bytes: the general path's
    /// bulk way (the op kernel on the window memory, holding the target's bulk
    /// word), without its checks' objects, when every condition of that way holds.
    ///
    /// # Safety
    /// As [`Self::acc_direct`].
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    unsafe fn acc_bulk_direct(
        &self,
        prim: Primitive,
        op: PredefinedOp,
        origin: *const u8,
        result: *mut u8,
        n: usize,
        len: usize,
        rank: i32,
        disp: isize,
    ) -> bool {
        let w = prim.size();
        let noop = op == PredefinedOp::NoOp;
        if winatomic::atomic_width(prim) != Some(w)
            || !(noop || op == PredefinedOp::Replace || op.allows(prim.class()))
        {
            return false;
        }
        let Some((a, local)) = self.direct(rank, disp, len, !noop) else {
            return false;
        };
        // The kernel wants disjoint buffers (the general path goes element-wise then).
        let apart = |p: *const u8| p.is_null() || p as usize + len <= a || p as usize >= a + len;
        if !winatomic::aligned(a, w) || !(noop || apart(origin)) || !apart(result) {
            return false;
        }
        // An error here (the engine gone while waiting) leaves everything undone:
        // the general path then reports it.
        self.with_bulk(local, || {
            if !result.is_null() {
                // SAFETY: `len` bytes inside the target's window (checked), no atomic accumulate entered meanwhile; `result` writable for `n` elements.
                unsafe { std::ptr::copy_nonoverlapping(a as *const u8, result, len) };
            }
            // SAFETY: `origin` holds `n` elements of `prim` (unless MPI_NO_OP, which reads nothing), the run `n` elements inside the window, disjoint (checked); `op` is allowed on `prim` (checked).
            unsafe { crate::op::apply_dense(op, prim, origin, a as *mut u8, n) };
            Ok(())
        })
        .is_ok()
    }

    /// `MPI_Compare_and_swap` of one element of `prim`.
    ///
    /// # Safety
    /// `origin` and `compare` are readable and `result` writable for one element.
    #[inline]
    pub unsafe fn cas_direct(
        &self,
        prim: Primitive,
        origin: *const u8,
        compare: *const u8,
        result: *mut u8,
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
        let Some((a, local)) = self.direct_inline(rank, disp, w, true) else {
            return false;
        };
        if !winatomic::aligned(a, w) {
            return false;
        }
        let Some(b) = self.atomic_try_enter(local) else {
            return false;
        };
        // SAFETY: one element each, per the contract.
        let (new, cmp, old) = unsafe {
            (
                std::slice::from_raw_parts(origin, w),
                std::slice::from_raw_parts(compare, w),
                std::slice::from_raw_parts_mut(result, w),
            )
        };
        // SAFETY: one aligned element inside the target's window in the shared segment.
        unsafe { winatomic::compare_swap(a, new, cmp, old) };
        Self::atomic_exit(b);
        true
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
