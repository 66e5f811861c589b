//! The fast path of small one-sided operations on this host: an operation on
//! contiguous elements of one predefined type (the same on both sides), to a
//! target this process may reach with plain loads and stores, in a passive-target
//! epoch (lock or lock_all), is one `memcpy` or one CPU atomic per element into the
//! shared mapping, with no lock, no allocation and no datatype object. A flush is
//! then only a memory fence.
//!
//! Each function answers `false` (having done nothing) when its operation is not
//! such a case, or when anything would be an error (wrong rank, out of range, no
//! epoch, an op not defined on the type): the caller then takes the general path of
//! [`super::ops`], which checks everything and names the error. The cases taken here
//! are exactly those where the general path would do the same thing the same way
//! (in particular an accumulate is a CPU atomic here only where the general path
//! uses that atomic too, so concurrent accumulates to one element stay atomic).

use super::*;
use crate::datatype::TypeClass;

impl Window {
    /// The address in this process of `len` (> 0) bytes at displacement `disp` of
    /// `rank`'s window, if this process holds a passive-target epoch to `rank` and
    /// reaches its memory directly, and the bytes lie inside the window.
    #[inline]
    fn direct(&self, rank: i32, disp: isize, len: usize) -> Option<usize> {
        let r = usize::try_from(rank).ok()?;
        let p = self.peers.get(r)?;
        if p.direct == 0 || !self.passive[r].load(Ordering::Relaxed) {
            return None;
        }
        let off = usize::try_from(disp).ok()?.checked_mul(p.disp_unit)?;
        if len == 0 || off.checked_add(len)? > p.size {
            return None;
        }
        Some(p.direct + off)
    }

    /// `MPI_Put` of `len` bytes of a contiguous origin (same predefined type and count
    /// on both sides); `false`: not done, take the general path.
    ///
    /// # Safety
    /// `origin` is readable for `len` bytes.
    #[inline]
    pub unsafe fn put_direct(&self, origin: *const u8, len: usize, rank: i32, disp: isize) -> bool {
        let Some(a) = self.direct(rank, disp, len) else { return false };
        // SAFETY: `a` is inside the target's window (checked), mapped in this process;
        // `origin` per the contract; `copy` allows the origin to lie in the window.
        unsafe { std::ptr::copy(origin, a as *mut u8, len) };
        true
    }

    /// `MPI_Get`, as [`Self::put_direct`].
    ///
    /// # Safety
    /// `origin` is writable for `len` bytes.
    #[inline]
    pub unsafe fn get_direct(&self, origin: *mut u8, len: usize, rank: i32, disp: isize) -> bool {
        let Some(a) = self.direct(rank, disp, len) else { return false };
        // SAFETY: as in `put_direct`, reading.
        unsafe { std::ptr::copy(a as *const u8, origin, len) };
        true
    }

    /// `MPI_Accumulate` (`result` null), `MPI_Get_accumulate` and `MPI_Fetch_and_op`
    /// of `n` elements of `prim` (origin, result and target alike) with `op`, when each
    /// element is one CPU atomic instruction ([`winatomic::is_direct`]).
    ///
    /// # Safety
    /// `origin` is readable for `n` elements (unless `op` is `MPI_NO_OP`), `result`,
    /// unless null, writable for `n`, at any alignment.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn acc_direct(&self, prim: Primitive, op: PredefinedOp, origin: *const u8, result: *mut u8, n: usize, rank: i32, disp: isize) -> bool {
        if !self.atomic_memory() || !winatomic::is_direct(prim, op) {
            return false;
        }
        let w = prim.size();
        // Large accumulates apply in bulk (the general path's choice, by size alone).
        let Some(len) = n.checked_mul(w).filter(|&l| l < ops::BULK_MIN) else { return false };
        let Some(a) = self.direct(rank, disp, len) else { return false };
        if !winatomic::aligned(a, w) {
            return false;
        }
        // A bulk accumulate to the target in progress: the general path waits for it.
        let Some(local) = self.peers[rank as usize].local else { return false };
        if !self.atomic_try_enter(local) {
            return false;
        }
        // SAFETY: `n` elements of width `w` inside the target's window in the shared
        // segment, aligned; the general path updates them with the same atomics, or
        // in bulk while no atomic accumulate is entered.
        unsafe { winatomic::fetch_op_direct(a, n, prim, op, origin, result) };
        self.atomic_exit(local);
        true
    }

    /// `MPI_Compare_and_swap` of one element of `prim`.
    ///
    /// # Safety
    /// `origin` and `compare` are readable and `result` writable for one element.
    #[inline]
    pub unsafe fn cas_direct(&self, prim: Primitive, origin: *const u8, compare: *const u8, result: *mut u8, rank: i32, disp: isize) -> bool {
        if !self.atomic_memory() || !matches!(prim.class(), TypeClass::CInteger | TypeClass::FortranInteger | TypeClass::Logical | TypeClass::Byte) {
            return false;
        }
        let Some(w) = winatomic::atomic_width(prim) else { return false };
        let Some(a) = self.direct(rank, disp, w) else { return false };
        if !winatomic::aligned(a, w) {
            return false;
        }
        // SAFETY: one element each, per the contract.
        let (new, cmp, old) = unsafe { (std::slice::from_raw_parts(origin, w), std::slice::from_raw_parts(compare, w), std::slice::from_raw_parts_mut(result, w)) };
        let Some(local) = self.peers[rank as usize].local else { return false };
        if !self.atomic_try_enter(local) {
            return false;
        }
        // SAFETY: one aligned element inside the target's window in the shared segment.
        unsafe { winatomic::compare_swap(a, new, cmp, old) };
        self.atomic_exit(local);
        true
    }

    /// `MPI_Win_flush` / `_flush_local` to `rank` in a passive-target epoch to it:
    /// operations completed in their calls, so this is a memory fence.
    #[inline]
    pub fn flush_direct(&self, rank: i32) -> bool {
        let ok = usize::try_from(rank).ok().and_then(|r| self.passive.get(r)).is_some_and(|f| f.load(Ordering::Relaxed));
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
            None => self.passive.iter().for_each(|f| f.store(on, Ordering::Relaxed)),
        }
    }
}
