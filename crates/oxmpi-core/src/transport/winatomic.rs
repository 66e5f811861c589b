//! CPU atomics on window memory: the one-sided accumulate kernels for targets whose
//! memory is in this host's shared window segment (`MPI_Win_allocate`,
//! `_allocate_shared`).
//!
//! An element of 1, 2, 4 or 8 bytes (size equal to extent) at an address aligned to
//! its size is updated by one atomic instruction: `fetch_add` for `MPI_SUM`,
//! `fetch_and`/`_or`/`_xor` for the bitwise ops, `fetch_max`/`_min` (signed or
//! unsigned as the type) for `MPI_MAX`/`MPI_MIN`, `swap` for `MPI_REPLACE`, a load for
//! `MPI_NO_OP`, `compare_exchange` for `MPI_Compare_and_swap`, on the integer types.
//! Every other (op, type) pair of those widths (floating sums, products, logical
//! ops, complex and pair types of 8 bytes) is a compare-exchange loop around the
//! op kernel of [`crate::op`], so it is lock-free and atomic as well. Which
//! elements go this way depends on the memory, the type and the address only, never
//! on the op: any mix of ops on one location stays atomic (what `accumulate_ops =
//! same_op_no_op`, the default, and `same_op` promise, and more).

use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

use super::winmem::Span;
use crate::datatype::{Datatype, Primitive, Repr};
use crate::error::{MpiError, Result};
use crate::op::{Op, PredefinedOp};

/// The width in bytes of elements of `prim` that CPU atomics can update in place,
/// or `None` (wider or padded types go under the target's accumulate mutex).
pub fn atomic_width(prim: Primitive) -> Option<usize> {
    let s = prim.size();
    (s == prim.extent() && matches!(s, 1 | 2 | 4 | 8)).then_some(s)
}

/// Whether an element at `addr` of width `w` can be updated atomically.
pub fn aligned(addr: usize, w: usize) -> bool {
    addr.is_multiple_of(w)
}

macro_rules! rmw {
    ($name:ident, $atomic:ident, $t:ty) => {
        /// # Safety
        /// As [`fetch_op_run`], for elements of this width.
        unsafe fn $name(
            addr: usize,
            n: usize,
            op: PredefinedOp,
            direct: bool,
            src: &[u8],
            mut old: Option<&mut [u8]>,
            kernel: &dyn Fn(&[u8], &mut [u8]) -> Result<()>,
        ) -> Result<()> {
            const W: usize = std::mem::size_of::<$t>();
            let s = |i: usize| {
                <$t>::from_ne_bytes(
                    src[i * W..i * W + W]
                        .try_into()
                        .expect("one element of this width"),
                )
            };
            for i in 0..n {
                // SAFETY: the caller guarantees `n` elements from `addr` are valid, aligned for this width and only accessed atomically meanwhile.
                let a = unsafe { &*((addr + i * W) as *const $atomic) };
                let prev: $t = match op {
                    PredefinedOp::NoOp => a.load(Ordering::Acquire),
                    PredefinedOp::Replace => a.swap(s(i), Ordering::AcqRel),
                    PredefinedOp::Sum if direct => a.fetch_add(s(i), Ordering::AcqRel),
                    PredefinedOp::Band if direct => a.fetch_and(s(i), Ordering::AcqRel),
                    PredefinedOp::Bor if direct => a.fetch_or(s(i), Ordering::AcqRel),
                    PredefinedOp::Bxor if direct => a.fetch_xor(s(i), Ordering::AcqRel),
                    PredefinedOp::Max if direct => a.fetch_max(s(i), Ordering::AcqRel),
                    PredefinedOp::Min if direct => a.fetch_min(s(i), Ordering::AcqRel),
                    _ => {
                        let mut cur = a.load(Ordering::Acquire);
                        loop {
                            let mut next = cur.to_ne_bytes();
                            kernel(&src[i * W..i * W + W], &mut next)?;
                            match a.compare_exchange_weak(
                                cur,
                                <$t>::from_ne_bytes(next),
                                Ordering::AcqRel,
                                Ordering::Acquire,
                            ) {
                                Ok(_) => break cur,
                                Err(now) => cur = now,
                            }
                        }
                    }
                };
                if let Some(o) = old.as_deref_mut() {
                    o[i * W..i * W + W].copy_from_slice(&prev.to_ne_bytes());
                }
            }
            Ok(())
        }
    };
}

rmw!(rmw_i8, AtomicI8, i8);
rmw!(rmw_u8, AtomicU8, u8);
rmw!(rmw_i16, AtomicI16, i16);
rmw!(rmw_u16, AtomicU16, u16);
rmw!(rmw_i32, AtomicI32, i32);
rmw!(rmw_u32, AtomicU32, u32);
rmw!(rmw_i64, AtomicI64, i64);
rmw!(rmw_u64, AtomicU64, u64);

/// `*e = src op *e` as one atomic step for each element `e` of the basic type `bt`
/// in `at` (its length over the type's size of them); the previous values go to
/// `old` when given. `src` holds as many packed elements (empty for `MPI_NO_OP`);
/// `op` was checked against `bt` by the caller. Every concurrent access to those
/// bytes (from any process) must be atomic for the update to be (the window's
/// accumulate protocol, [`crate::rma`]); an `at` that is not aligned to an atomic
/// width of `bt` is an internal error.
pub fn fetch_op_run(
    at: Span<'_>,
    bt: &Datatype,
    op: &Op,
    src: &[u8],
    old: Option<&mut [u8]>,
) -> Result<()> {
    let prim = bt.as_primitive().expect("a basic type");
    let w = prim.size();
    if atomic_width(prim) != Some(w) || !at.aligned(w) {
        return Err(MpiError::intern(
            "one-sided accumulate",
            "an atomic update of an unaligned or padded element",
        ));
    }
    let (addr, n) = (at.addr(), at.len() / w);
    let p = op.as_predefined().expect("checked: predefined");
    let kernel = |src: &[u8], inout: &mut [u8]| -> Result<()> {
        // SAFETY: `src` and `inout` hold one packed element of `bt` each.
        unsafe { op.apply(src.as_ptr(), inout.as_mut_ptr(), 1, bt) }
    };
    let r = prim.repr();
    let direct = matches!(
        r,
        Repr::I8 | Repr::I16 | Repr::I32 | Repr::I64 | Repr::U8 | Repr::U16 | Repr::U32 | Repr::U64
    );
    // SAFETY: `at` holds `n` elements of width `w` (a checked span of window memory), aligned to `w`; each arm picks the atomic of `w` bytes.
    unsafe {
        match (prim.size(), r) {
            (1, Repr::I8) => rmw_i8(addr, n, p, direct, src, old, &kernel),
            (1, _) => rmw_u8(addr, n, p, direct, src, old, &kernel),
            (2, Repr::I16) => rmw_i16(addr, n, p, direct, src, old, &kernel),
            (2, _) => rmw_u16(addr, n, p, direct, src, old, &kernel),
            (4, Repr::I32) => rmw_i32(addr, n, p, direct, src, old, &kernel),
            (4, _) => rmw_u32(addr, n, p, direct, src, old, &kernel),
            (8, Repr::I64) => rmw_i64(addr, n, p, direct, src, old, &kernel),
            (8, _) => rmw_u64(addr, n, p, direct, src, old, &kernel),
            (w, _) => unreachable!("winatomic: no atomic of {w} bytes"),
        }
    }
}

/// Whether `op` on elements of `prim` is one atomic instruction (no compare-exchange
/// loop, no op kernel): `MPI_REPLACE` and `MPI_NO_OP` on any type of an atomic width,
/// `MPI_SUM`, `_MAX`, `_MIN`, `_BAND`, `_BOR`, `_BXOR` on the integer types they are
/// defined for. [`fetch_op_direct`] does exactly these.
#[inline]
pub fn is_direct(prim: Primitive, op: PredefinedOp) -> bool {
    // Per type (by engine number), a bit per op (by engine number): one table look-up
    // on the fast path instead of matching type class, representation and width.
    static TABLE: std::sync::OnceLock<Vec<u16>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = vec![
            0u16;
            Primitive::ALL
                .iter()
                .map(|p| p.code() as usize)
                .max()
                .unwrap_or(0)
                + 1
        ];
        for &p in Primitive::ALL {
            for &o in PredefinedOp::ALL {
                if direct_pair(p, o) {
                    t[p.code() as usize] |= 1 << o.code();
                }
            }
        }
        t
    });
    t.get(prim.code() as usize)
        .is_some_and(|m| m >> op.code() & 1 != 0)
}

fn direct_pair(prim: Primitive, op: PredefinedOp) -> bool {
    use PredefinedOp::*;
    if atomic_width(prim).is_none() {
        return false;
    }
    match op {
        Replace | NoOp => true,
        Sum | Max | Min | Band | Bor | Bxor => op.allows(prim.class()) && prim.repr().is_integer(),
        _ => false,
    }
}

macro_rules! direct {
    ($name:ident, $atomic:ident, $t:ty) => {
        /// `false` (nothing done) if `addr` is not aligned to this width.
        ///
        /// # Safety
        /// `addr .. addr + len` is window memory ([`Span`]); `src` is readable for `len`
        /// bytes unless the op is MPI_NO_OP, `old`, unless null, writable for `len`.
        #[inline]
        unsafe fn $name(
            addr: usize,
            len: usize,
            op: PredefinedOp,
            src: *const u8,
            old: *mut u8,
        ) -> bool {
            const W: usize = std::mem::size_of::<$t>();
            if !addr.is_multiple_of(W) {
                return false;
            }
            let n = len / W;
            for i in 0..n {
                // SAFETY: the caller guarantees `n` elements from `addr` are valid, aligned for this width and only accessed atomically meanwhile.
                let a = unsafe { &*((addr + i * W) as *const $atomic) };
                // SAFETY: `src` holds `n` elements (any alignment) unless the op is MPI_NO_OP.
                let s = || unsafe { src.add(i * W).cast::<$t>().read_unaligned() };
                let prev: $t = match op {
                    PredefinedOp::Replace => a.swap(s(), Ordering::AcqRel),
                    PredefinedOp::Sum => a.fetch_add(s(), Ordering::AcqRel),
                    PredefinedOp::Band => a.fetch_and(s(), Ordering::AcqRel),
                    PredefinedOp::Bor => a.fetch_or(s(), Ordering::AcqRel),
                    PredefinedOp::Bxor => a.fetch_xor(s(), Ordering::AcqRel),
                    PredefinedOp::Max => a.fetch_max(s(), Ordering::AcqRel),
                    PredefinedOp::Min => a.fetch_min(s(), Ordering::AcqRel),
                    // MPI_NO_OP, and (never passed: see `is_direct`) the others.
                    _ => a.load(Ordering::Acquire),
                };
                if !old.is_null() {
                    // SAFETY: `old`, when not null, is writable for `n` elements (any alignment).
                    unsafe { old.add(i * W).cast::<$t>().write_unaligned(prev) };
                }
            }
            true
        }
    };
}

direct!(direct_i8, AtomicI8, i8);
direct!(direct_u8, AtomicU8, u8);
direct!(direct_i16, AtomicI16, i16);
direct!(direct_u16, AtomicU16, u16);
direct!(direct_i32, AtomicI32, i32);
direct!(direct_u32, AtomicU32, u32);
direct!(direct_i64, AtomicI64, i64);
direct!(direct_u64, AtomicU64, u64);

/// `*e = src op *e` for each element `e` of `prim` in `at`, one atomic instruction
/// each, the previous values to `old` when given; the one-sided fast path's kernel
/// (no datatype objects). `op` on `prim` must be [`is_direct`] (anything else reads
/// only). `false` (nothing done): `at` is not aligned to `prim`'s width, or `src`
/// (unless `op` is `MPI_NO_OP`) or `old` is shorter than `at`.
#[inline]
pub fn fetch_op_direct(
    at: Span<'_>,
    prim: Primitive,
    op: PredefinedOp,
    src: &[u8],
    old: Option<&mut [u8]>,
) -> bool {
    debug_assert!(is_direct(prim, op));
    let (addr, len) = (at.addr(), at.len());
    if (op != PredefinedOp::NoOp && src.len() < len) || old.as_ref().is_some_and(|o| o.len() < len)
    {
        return false;
    }
    let (src, old) = (
        src.as_ptr(),
        old.map_or(std::ptr::null_mut(), |o| o.as_mut_ptr()),
    );
    // SAFETY: `at` is window memory of `len` bytes, `src` and `old` are at least as long (checked); each arm picks the atomic of `prim.size()` bytes, checking its alignment.
    unsafe {
        match prim.repr() {
            Repr::I8 => direct_i8(addr, len, op, src, old),
            Repr::I16 => direct_i16(addr, len, op, src, old),
            Repr::I32 => direct_i32(addr, len, op, src, old),
            Repr::I64 => direct_i64(addr, len, op, src, old),
            // Unsigned and the other types of these widths (only replaced or read).
            _ => match prim.size() {
                1 => direct_u8(addr, len, op, src, old),
                2 => direct_u16(addr, len, op, src, old),
                4 => direct_u32(addr, len, op, src, old),
                _ => direct_u64(addr, len, op, src, old),
            },
        }
    }
}

/// `e = src op e` for the elements of `prim` (dense: size = extent) in `at`, by the
/// op kernel in bulk (plain loads and stores: the caller excludes every concurrent
/// atomic update, [`crate::rma`]'s bulk word); `MPI_NO_OP` does nothing. `false`
/// (nothing done): `prim` is not dense, `op` is not allowed on it, or `src` is
/// shorter than `at` or overlaps it.
pub fn apply_bulk(at: Span<'_>, prim: Primitive, op: PredefinedOp, src: &[u8]) -> bool {
    if op == PredefinedOp::NoOp {
        return true;
    }
    let w = prim.size();
    if w == 0
        || prim.extent() != w
        || !(op == PredefinedOp::Replace || op.allows(prim.class()))
        || src.len() < at.len()
        || !at.apart(src.as_ptr(), src.len())
    {
        return false;
    }
    // SAFETY: `at` is `at.len()` bytes of window memory, `src` as many readable bytes apart from it (checked); `n` dense elements of `prim` fit in both; `op` is allowed on `prim` (checked).
    unsafe { crate::op::apply_dense(op, prim, src.as_ptr(), at.addr() as *mut u8, at.len() / w) };
    true
}

/// Compare-and-swap of the element `at` of `new.len()` (1, 2, 4 or 8) bytes: the
/// element's previous value goes to `old`, and `new` is stored when it equaled `cmp`.
/// `false` (nothing done): `at` is not aligned to that width or not that long.
pub fn compare_swap(at: Span<'_>, new: &[u8], cmp: &[u8], old: &mut [u8]) -> bool {
    let addr = at.addr();
    if at.len() != new.len() || !at.aligned(new.len()) {
        return false;
    }
    macro_rules! cas {
        ($atomic:ident, $t:ty) => {{
            // SAFETY: `at` is window memory of this width (checked), aligned to it (checked); all accesses to it are atomic.
            let a = unsafe { &*(addr as *const $atomic) };
            let n = <$t>::from_ne_bytes(new.try_into().expect("width"));
            let c = <$t>::from_ne_bytes(cmp.try_into().expect("width"));
            let prev = match a.compare_exchange(c, n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(v) | Err(v) => v,
            };
            old.copy_from_slice(&prev.to_ne_bytes());
        }};
    }
    match new.len() {
        1 => cas!(AtomicU8, u8),
        2 => cas!(AtomicU16, u16),
        4 => cas!(AtomicU32, u32),
        8 => cas!(AtomicU64, u64),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::winmem::Mapped;

    fn run(prim: Primitive, op: PredefinedOp, init: &[u8], src: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut cell = [0u64; 1];
        let bytes = init.len();
        // SAFETY: writing `bytes` (<= 8) bytes into our own aligned u64.
        unsafe {
            std::ptr::copy_nonoverlapping(init.as_ptr(), cell.as_mut_ptr().cast::<u8>(), bytes)
        };
        let mut old = vec![0u8; bytes];
        let bt = Datatype::predefined(prim);
        // SAFETY: an aligned local u64, accessed by this thread only, outliving `m`.
        let m = unsafe { Mapped::new(cell.as_mut_ptr() as usize, bytes) };
        let at = m.span(0, bytes).unwrap();
        fetch_op_run(at, &bt, &Op::predefined(op), src, Some(&mut old)).unwrap();
        // SAFETY: reading back the same bytes.
        let now = unsafe { std::slice::from_raw_parts(cell.as_ptr().cast::<u8>(), bytes) }.to_vec();
        (old, now)
    }

    #[test]
    fn direct_and_loop_ops_match_the_kernels() {
        let (o, n) = run(
            Primitive::Int,
            PredefinedOp::Sum,
            &5i32.to_ne_bytes(),
            &(-7i32).to_ne_bytes(),
        );
        assert_eq!(
            (
                i32::from_ne_bytes(o[..].try_into().unwrap()),
                i32::from_ne_bytes(n[..].try_into().unwrap())
            ),
            (5, -2)
        );
        let (_, n) = run(
            Primitive::Int,
            PredefinedOp::Max,
            &(-5i32).to_ne_bytes(),
            &(-7i32).to_ne_bytes(),
        );
        assert_eq!(
            i32::from_ne_bytes(n[..].try_into().unwrap()),
            -5,
            "signed max"
        );
        let (_, n) = run(
            Primitive::Unsigned,
            PredefinedOp::Max,
            &5u32.to_ne_bytes(),
            &u32::MAX.to_ne_bytes(),
        );
        assert_eq!(
            u32::from_ne_bytes(n[..].try_into().unwrap()),
            u32::MAX,
            "unsigned max"
        );
        let (_, n) = run(
            Primitive::Long,
            PredefinedOp::Prod,
            &6i64.to_ne_bytes(),
            &(-7i64).to_ne_bytes(),
        );
        assert_eq!(i64::from_ne_bytes(n[..].try_into().unwrap()), -42);
        let (o, n) = run(
            Primitive::Double,
            PredefinedOp::Sum,
            &1.5f64.to_ne_bytes(),
            &2.25f64.to_ne_bytes(),
        );
        assert_eq!(
            (
                f64::from_ne_bytes(o[..].try_into().unwrap()),
                f64::from_ne_bytes(n[..].try_into().unwrap())
            ),
            (1.5, 3.75)
        );
        let (_, n) = run(
            Primitive::Float,
            PredefinedOp::Min,
            &1.5f32.to_ne_bytes(),
            &(-2.0f32).to_ne_bytes(),
        );
        assert_eq!(f32::from_ne_bytes(n[..].try_into().unwrap()), -2.0);
        let (o, n) = run(
            Primitive::Short,
            PredefinedOp::NoOp,
            &9i16.to_ne_bytes(),
            &[],
        );
        assert_eq!((o.clone(), n), (9i16.to_ne_bytes().to_vec(), o));
        let (_, n) = run(Primitive::Char, PredefinedOp::Replace, &[3], &[200]);
        assert_eq!(n, vec![200]);
        let (_, n) = run(
            Primitive::Int,
            PredefinedOp::Land,
            &3i32.to_ne_bytes(),
            &0i32.to_ne_bytes(),
        );
        assert_eq!(i32::from_ne_bytes(n[..].try_into().unwrap()), 0);
        assert_eq!(atomic_width(Primitive::LongDouble), None);
        assert_eq!(atomic_width(Primitive::DoubleInt), None);
        assert_eq!(atomic_width(Primitive::TwoInt), Some(8));
    }

    #[test]
    fn direct_ops_are_single_instructions_on_integers_only() {
        use PredefinedOp::*;
        assert!(
            is_direct(Primitive::Long, Sum)
                && is_direct(Primitive::Unsigned, Max)
                && is_direct(Primitive::Byte, Bxor)
        );
        assert!(is_direct(Primitive::Double, Replace) && is_direct(Primitive::TwoInt, NoOp));
        // A compare-exchange loop (floating sum), undefined (sum of bytes), too wide.
        assert!(!is_direct(Primitive::Double, Sum) && !is_direct(Primitive::Byte, Sum));
        assert!(!is_direct(Primitive::Long, Prod) && !is_direct(Primitive::LongDouble, Replace));
        let cell = AtomicI64::new(40);
        let mut old = [0u8; 8];
        // SAFETY: an aligned local i64, accessed atomically only, outliving `m`.
        let m = unsafe { Mapped::new(cell.as_ptr() as usize, 8) };
        let at = m.span(0, 8).unwrap();
        assert!(fetch_op_direct(
            at,
            Primitive::Long,
            Sum,
            &2i64.to_ne_bytes(),
            Some(&mut old)
        ));
        assert_eq!(
            (i64::from_ne_bytes(old), cell.load(Ordering::SeqCst)),
            (40, 42)
        );
        // Unaligned, or a source shorter than the span: nothing done.
        assert!(!fetch_op_direct(
            m.span(0, 8).unwrap(),
            Primitive::Long,
            Sum,
            &[0u8; 4],
            None
        ));
    }

    #[test]
    fn concurrent_fetch_add_and_cas_lose_nothing() {
        let cells = [AtomicU64::new(0), AtomicU64::new(0)];
        // SAFETY: aligned atomics that outlive the scope, accessed atomically only.
        let (m0, m1) = unsafe {
            (
                Mapped::new(cells[0].as_ptr() as usize, 8),
                Mapped::new(cells[1].as_ptr() as usize, 8),
            )
        };
        let (a0, a1) = (m0.span(0, 8).unwrap(), m1.span(0, 8).unwrap());
        let bt = Datatype::predefined(Primitive::Long);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let sum = Op::predefined(PredefinedOp::Sum);
                    let mut old = [0u8; 8];
                    for _ in 0..2000 {
                        fetch_op_run(a0, &bt, &sum, &1i64.to_ne_bytes(), Some(&mut old)).unwrap();
                        loop {
                            let mut cur = [0u8; 8];
                            fetch_op_run(
                                a1,
                                &bt,
                                &Op::predefined(PredefinedOp::NoOp),
                                &[],
                                Some(&mut cur),
                            )
                            .unwrap();
                            let next = (i64::from_ne_bytes(cur) + 1).to_ne_bytes();
                            assert!(compare_swap(a1, &next, &cur, &mut old));
                            if old == cur {
                                break;
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(cells[0].load(Ordering::SeqCst), 8000);
        assert_eq!(cells[1].load(Ordering::SeqCst), 8000);
    }
}
