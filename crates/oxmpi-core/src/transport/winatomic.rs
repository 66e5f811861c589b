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

use crate::datatype::{Datatype, Primitive, Repr};
use crate::error::Result;
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

/// `*addr = src op *addr` as one atomic step for each of `n` consecutive elements of
/// the basic type `bt` from `addr`; the previous values go to `old` when given.
/// `src` holds `n` packed elements (empty for `MPI_NO_OP`); `op` was checked against
/// `bt` by the caller.
///
/// # Safety
/// `addr .. addr + n * atomic_width(bt)` is valid for reads and writes, `addr` is aligned
/// to that width, and every concurrent access to those bytes (from any process) is
/// atomic.
pub unsafe fn fetch_op_run(
    addr: usize,
    n: usize,
    bt: &Datatype,
    op: &Op,
    src: &[u8],
    old: Option<&mut [u8]>,
) -> Result<()> {
    let prim = bt.as_primitive().expect("a basic type");
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
    // The caller's `addr` is valid for `n` elements, aligned to `atomic_width(bt)`, only accessed atomically.
    // SAFETY: each arm picks the atomic of `prim.size()` bytes, that width, as the rmw function requires.
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
        Sum | Max | Min | Band | Bor | Bxor => {
            op.allows(prim.class())
                && matches!(
                    prim.repr(),
                    Repr::I8
                        | Repr::I16
                        | Repr::I32
                        | Repr::I64
                        | Repr::U8
                        | Repr::U16
                        | Repr::U32
                        | Repr::U64
                )
        }
        _ => false,
    }
}

macro_rules! direct {
    ($name:ident, $atomic:ident, $t:ty) => {
        /// # Safety
        /// As [`fetch_op_direct`], for elements of this width.
        #[inline]
        unsafe fn $name(addr: usize, n: usize, op: PredefinedOp, src: *const u8, old: *mut u8) {
            const W: usize = std::mem::size_of::<$t>();
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

/// `*addr = src op *addr` for `n` consecutive elements of `prim` from `addr`, one
/// atomic instruction each, the previous values to `old` unless it is null; the
/// one-sided fast path's kernel (raw pointers: no slices, no datatype objects). `op`
/// on `prim` must be [`is_direct`] (anything else reads only).
///
/// # Safety
/// As [`fetch_op_run`]; `src` is readable for `n` elements of `prim` (unless `op` is
/// `MPI_NO_OP`) and `old`, when not null, writable for `n`, at any alignment.
#[inline]
pub unsafe fn fetch_op_direct(
    addr: usize,
    n: usize,
    prim: Primitive,
    op: PredefinedOp,
    src: *const u8,
    old: *mut u8,
) {
    debug_assert!(is_direct(prim, op));
    // SAFETY: each arm picks the atomic of `prim.size()` bytes and the signedness of its repr.
    unsafe {
        match prim.repr() {
            Repr::I8 => direct_i8(addr, n, op, src, old),
            Repr::I16 => direct_i16(addr, n, op, src, old),
            Repr::I32 => direct_i32(addr, n, op, src, old),
            Repr::I64 => direct_i64(addr, n, op, src, old),
            // Unsigned and the other types of these widths (only replaced or read).
            _ => match prim.size() {
                1 => direct_u8(addr, n, op, src, old),
                2 => direct_u16(addr, n, op, src, old),
                4 => direct_u32(addr, n, op, src, old),
                _ => direct_u64(addr, n, op, src, old),
            },
        }
    }
}

/// Compare-and-swap of one element of `new.len()` (1, 2, 4 or 8) bytes: the element's
/// previous value goes to `old`, and `new` is stored when it equaled `cmp`.
///
/// # Safety
/// As [`fetch_op_run`], for one element.
pub unsafe fn compare_swap(addr: usize, new: &[u8], cmp: &[u8], old: &mut [u8]) {
    macro_rules! cas {
        ($atomic:ident, $t:ty) => {{
            // SAFETY: forwarded contract: valid, aligned, accessed atomically only.
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
        n => unreachable!("winatomic: no compare-and-swap of {n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(prim: Primitive, op: PredefinedOp, init: &[u8], src: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut cell = [0u64; 1];
        let bytes = init.len();
        // SAFETY: writing `bytes` (<= 8) bytes into our own aligned u64.
        unsafe {
            std::ptr::copy_nonoverlapping(init.as_ptr(), cell.as_mut_ptr().cast::<u8>(), bytes)
        };
        let mut old = vec![0u8; bytes];
        let bt = Datatype::predefined(prim);
        // SAFETY: an aligned local u64, accessed by this thread only.
        unsafe {
            fetch_op_run(
                cell.as_mut_ptr() as usize,
                1,
                &bt,
                &Op::predefined(op),
                src,
                Some(&mut old),
            )
            .unwrap()
        };
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
        let (mut cell, mut old) = (40i64, 0i64);
        // SAFETY: an aligned local i64, accessed by this thread only.
        unsafe {
            fetch_op_direct(
                std::ptr::addr_of_mut!(cell) as usize,
                1,
                Primitive::Long,
                Sum,
                2i64.to_ne_bytes().as_ptr(),
                std::ptr::addr_of_mut!(old).cast(),
            )
        };
        assert_eq!((old, cell), (40, 42));
    }

    #[test]
    fn concurrent_fetch_add_and_cas_lose_nothing() {
        let cells = [AtomicU64::new(0), AtomicU64::new(0)];
        let (a0, a1) = (cells[0].as_ptr() as usize, cells[1].as_ptr() as usize);
        let bt = Datatype::predefined(Primitive::Long);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let sum = Op::predefined(PredefinedOp::Sum);
                    let mut old = [0u8; 8];
                    for _ in 0..2000 {
                        // SAFETY: aligned atomics that live for the scope.
                        unsafe {
                            fetch_op_run(a0, 1, &bt, &sum, &1i64.to_ne_bytes(), Some(&mut old))
                                .unwrap()
                        };
                        loop {
                            let mut cur = [0u8; 8];
                            // SAFETY: as above.
                            unsafe {
                                fetch_op_run(
                                    a1,
                                    1,
                                    &bt,
                                    &Op::predefined(PredefinedOp::NoOp),
                                    &[],
                                    Some(&mut cur),
                                )
                                .unwrap()
                            };
                            let next = (i64::from_ne_bytes(cur) + 1).to_ne_bytes();
                            // SAFETY: as above.
                            unsafe { compare_swap(a1, &next, &cur, &mut old) };
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
