//! The reduction kernels per type family: integers, floating point and complex,
//! value-index pairs, and the dispatch from a primitive to its kernel. The only
//! code (with `f80.rs`) that interprets element bytes.

use std::cmp::Ordering;
use std::mem::size_of;

use super::f80::{f80_cmp, k_c80, k_f80, F80};
use super::PredefinedOp;
use crate::datatype::{PairValue, Primitive, Repr};

/// `io[i] = f(in[i], io[i])` for `n` values of `T`, `stride` bytes apart.
/// Aligned packed arrays become slices (the loops vectorize); otherwise
/// unaligned reads and writes.
///
/// # Safety
/// `n` values at `stride` are readable at `inp` and writable at `io`, no overlap.
#[inline(always)]
pub(super) unsafe fn map2<T: Copy>(
    inp: *const u8,
    io: *mut u8,
    n: usize,
    stride: usize,
    f: impl Fn(T, T) -> T,
) {
    let sz = size_of::<T>();
    if stride == sz && (inp as *const T).is_aligned() && (io as *const T).is_aligned() {
        // SAFETY: aligned, `n` packed values readable/writable, not overlapping (caller).
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(inp as *const T, n),
                std::slice::from_raw_parts_mut(io as *mut T, n),
            )
        };
        for (y, &x) in b.iter_mut().zip(a) {
            *y = f(x, *y);
        }
    } else {
        for i in 0..n {
            // SAFETY: value i is inside both buffers (caller); unaligned access.
            unsafe {
                let pa = inp.add(i * stride) as *const T;
                let pb = io.add(i * stride) as *mut T;
                pb.write_unaligned(f(pa.read_unaligned(), pb.read_unaligned()));
            }
        }
    }
}

/// Reads a `T` at `p + off` (unaligned).
///
/// # Safety
/// The bytes are readable.
#[inline(always)]
pub(super) unsafe fn rd<T: Copy>(p: *const u8, off: usize) -> T {
    // SAFETY: caller guarantees the bytes are readable.
    unsafe { (p.add(off) as *const T).read_unaligned() }
}

/// Writes a `T` at `p + off` (unaligned).
///
/// # Safety
/// The bytes are writable.
#[inline(always)]
pub(super) unsafe fn wr<T: Copy>(p: *mut u8, off: usize, v: T) {
    // SAFETY: caller guarantees the bytes are writable.
    unsafe { (p.add(off) as *mut T).write_unaligned(v) }
}

macro_rules! int_kernel {
    ($name:ident, $t:ty) => {
        /// # Safety
        /// As [`map2`].
        unsafe fn $name(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            use PredefinedOp::*;
            // Every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers.
            // SAFETY: so the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    Max => map2::<$t>(inp, io, n, stride, |a, b| if a > b { a } else { b }),
                    Min => map2::<$t>(inp, io, n, stride, |a, b| if a < b { a } else { b }),
                    Sum => map2::<$t>(inp, io, n, stride, |a, b| a.wrapping_add(b)),
                    Prod => map2::<$t>(inp, io, n, stride, |a, b| a.wrapping_mul(b)),
                    Land => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) & (b != 0)) as $t),
                    Lor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) | (b != 0)) as $t),
                    Lxor => map2::<$t>(inp, io, n, stride, |a, b| ((a != 0) ^ (b != 0)) as $t),
                    Band => map2::<$t>(inp, io, n, stride, |a, b| a & b),
                    Bor => map2::<$t>(inp, io, n, stride, |a, b| a | b),
                    Bxor => map2::<$t>(inp, io, n, stride, |a, b| a ^ b),
                    Maxloc | Minloc | Replace | NoOp => {}
                }
            }
        }
    };
}

int_kernel!(k_i8, i8);
int_kernel!(k_i16, i16);
int_kernel!(k_i32, i32);
int_kernel!(k_i64, i64);
int_kernel!(k_u8, u8);
int_kernel!(k_u16, u16);
int_kernel!(k_u32, u32);
int_kernel!(k_u64, u64);

macro_rules! float_kernel {
    ($name:ident, $cname:ident, $t:ty) => {
        /// # Safety
        /// As [`map2`].
        unsafe fn $name(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            use PredefinedOp::*;
            // Every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers.
            // SAFETY: so the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    // C's `a > b ? a : b` with a = invec, b = inoutvec (see the module doc on NaN).
                    Max => map2::<$t>(inp, io, n, stride, |a, b| if a > b { a } else { b }),
                    Min => map2::<$t>(inp, io, n, stride, |a, b| if a < b { a } else { b }),
                    Sum => map2::<$t>(inp, io, n, stride, |a, b| a + b),
                    Prod => map2::<$t>(inp, io, n, stride, |a, b| a * b),
                    // Logical operations (an MPICH extension): non-zero is true; 1.0 or 0.0.
                    Land => map2::<$t>(inp, io, n, stride, |a, b| {
                        ((a != 0.0) & (b != 0.0)) as u8 as $t
                    }),
                    Lor => map2::<$t>(inp, io, n, stride, |a, b| {
                        ((a != 0.0) | (b != 0.0)) as u8 as $t
                    }),
                    Lxor => map2::<$t>(inp, io, n, stride, |a, b| {
                        ((a != 0.0) ^ (b != 0.0)) as u8 as $t
                    }),
                    _ => {}
                }
            }
        }

        /// Complex of two `$t` (real, imaginary).
        ///
        /// # Safety
        /// As [`map2`].
        unsafe fn $cname(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
            // Every arm calls map2 with `T = $t`, whose size is the
            // primitive's that selected this kernel, and the caller's `n`,
            // `stride` and buffers.
            // SAFETY: so the caller's guarantee is map2's contract.
            unsafe {
                match op {
                    PredefinedOp::Sum => {
                        map2::<[$t; 2]>(inp, io, n, stride, |a, b| [a[0] + b[0], a[1] + b[1]])
                    }
                    PredefinedOp::Prod => map2::<[$t; 2]>(inp, io, n, stride, |a, b| {
                        [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]]
                    }),
                    _ => {}
                }
            }
        }
    };
}

float_kernel!(k_f32, k_c32, f32);
float_kernel!(k_f64, k_c64, f64);

/// MAXLOC/MINLOC on (value, index) pairs: value `V` at 0, index `I` at `ioff`.
///
/// # Safety
/// `n` pairs `stride` bytes apart are readable at `inp`, writable at `io`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn k_pair<V: Copy, I: Copy>(
    op: PredefinedOp,
    inp: *const u8,
    io: *mut u8,
    n: usize,
    stride: usize,
    ioff: usize,
    cmp: impl Fn(V, V) -> Option<Ordering>,
    idx_lt: impl Fn(I, I) -> bool,
) {
    let wins = match op {
        PredefinedOp::Maxloc => Ordering::Greater,
        PredefinedOp::Minloc => Ordering::Less,
        _ => return,
    };
    for i in 0..n {
        // SAFETY: pair i is inside both buffers (caller).
        unsafe {
            let (pa, pb) = (inp.add(i * stride), io.add(i * stride));
            let (av, bv): (V, V) = (rd(pa, 0), rd(pb, 0));
            let ai: I = rd(pa, ioff);
            match cmp(av, bv) {
                Some(o) if o == wins => {
                    wr(pb, 0, av);
                    wr(pb, ioff, ai);
                }
                Some(Ordering::Equal) if idx_lt(ai, rd(pb, ioff)) => wr(pb, ioff, ai),
                _ => {}
            }
        }
    }
}

/// Applies a predefined op (not REPLACE/NO_OP) to `n` elements of `prim`,
/// `stride` bytes apart.
///
/// # Safety
/// The `n` elements are readable at `inp` and writable at `io`, no overlap.
pub(super) unsafe fn reduce_run(
    op: PredefinedOp,
    prim: Primitive,
    inp: *const u8,
    io: *mut u8,
    n: usize,
    stride: usize,
) {
    fn lt<T: PartialOrd>(a: T, b: T) -> bool {
        a < b
    }
    fn pcmp<T: PartialOrd>(a: T, b: T) -> Option<Ordering> {
        a.partial_cmp(&b)
    }
    // Each arm runs the kernel of `prim`'s representation, whose value
    // type has `prim`'s size, on the caller's `n` values `stride` apart, which
    // the caller guarantees readable at `inp` and writable at `io`, disjoint.
    // SAFETY: the kernel matches `prim`'s size; the caller guarantees the buffers.
    unsafe {
        match prim.repr() {
            Repr::I8 => k_i8(op, inp, io, n, stride),
            Repr::I16 => k_i16(op, inp, io, n, stride),
            Repr::I32 => k_i32(op, inp, io, n, stride),
            Repr::I64 => k_i64(op, inp, io, n, stride),
            Repr::U8 | Repr::Bool1 | Repr::Logical(1) => k_u8(op, inp, io, n, stride),
            Repr::U16 | Repr::Logical(2) => k_u16(op, inp, io, n, stride),
            Repr::U32 | Repr::Logical(4) => k_u32(op, inp, io, n, stride),
            Repr::U64 | Repr::Logical(8) => k_u64(op, inp, io, n, stride),
            Repr::Logical(_) => {}
            Repr::F32 => k_f32(op, inp, io, n, stride),
            Repr::F64 => k_f64(op, inp, io, n, stride),
            Repr::F80 => k_f80(op, inp, io, n, stride),
            Repr::Complex32 => k_c32(op, inp, io, n, stride),
            Repr::Complex64 => k_c64(op, inp, io, n, stride),
            Repr::Complex80 => k_c80(op, inp, io, n, stride),
            Repr::Pair {
                value,
                index_offset,
            } => {
                let o = index_offset as usize;
                match value {
                    PairValue::F32 => k_pair::<f32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F64 => k_pair::<f64, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I64 => k_pair::<i64, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I32 => k_pair::<i32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I16 => k_pair::<i16, i32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F80 => k_pair::<F80, i32>(op, inp, io, n, stride, o, f80_cmp, lt),
                    PairValue::F32F32 => k_pair::<f32, f32>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::F64F64 => k_pair::<f64, f64>(op, inp, io, n, stride, o, pcmp, lt),
                    PairValue::I32I32 => k_pair::<i32, i32>(op, inp, io, n, stride, o, pcmp, lt),
                }
            }
            Repr::Raw => {}
        }
    }
}
