//! x87 extended precision (`MPI_LONG_DOUBLE`): its kernels and the 80-bit value
//! arithmetic they need (exact comparisons everywhere; sums and products with the
//! x87 unit on x86-64, through `f64` elsewhere), kept apart as the one type Rust
//! has no native arithmetic for.

use std::cmp::Ordering;

use super::kernels::{map2, rd, wr};
use super::PredefinedOp;

/// One x87 extended-precision value: the 10 significant bytes (little endian:
/// 64-bit significand with explicit integer bit, then sign and 15-bit exponent).
pub(super) type F80 = [u8; 10];

/// # Safety
/// As [`map2`] with 10-byte values.
pub(super) unsafe fn k_f80(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
    // Every arm calls map2 with `T = [u8; 10]`, the 10 value bytes
    // the caller guarantees per element (no alignment needed: byte arrays),
    // with the caller's `n`, `stride` and buffers: its contract is map2's.
    // SAFETY: the caller's guarantee for 10-byte values is map2's contract.
    unsafe {
        match op {
            PredefinedOp::Max => map2::<F80>(inp, io, n, stride, |a, b| {
                if f80_cmp(a, b) == Some(Ordering::Greater) {
                    a
                } else {
                    b
                }
            }),
            PredefinedOp::Min => map2::<F80>(inp, io, n, stride, |a, b| {
                if f80_cmp(a, b) == Some(Ordering::Less) {
                    a
                } else {
                    b
                }
            }),
            PredefinedOp::Sum => map2::<F80>(inp, io, n, stride, f80_add),
            PredefinedOp::Prod => map2::<F80>(inp, io, n, stride, f80_mul),
            PredefinedOp::Land => map2::<F80>(inp, io, n, stride, |a, b| {
                f80_bool(f80_true(a) & f80_true(b))
            }),
            PredefinedOp::Lor => map2::<F80>(inp, io, n, stride, |a, b| {
                f80_bool(f80_true(a) | f80_true(b))
            }),
            PredefinedOp::Lxor => map2::<F80>(inp, io, n, stride, |a, b| {
                f80_bool(f80_true(a) ^ f80_true(b))
            }),
            _ => {}
        }
    }
}

/// Complex long double: real part at 0, imaginary part at 16.
///
/// # Safety
/// As [`map2`] with 32-byte elements.
pub(super) unsafe fn k_c80(op: PredefinedOp, inp: *const u8, io: *mut u8, n: usize, stride: usize) {
    for i in 0..n {
        // SAFETY: element i (32 bytes) is inside both buffers (caller).
        unsafe {
            let (pa, pb) = (inp.add(i * stride), io.add(i * stride));
            let (ar, ai): (F80, F80) = (rd(pa, 0), rd(pa, 16));
            let (br, bi): (F80, F80) = (rd(pb, 0), rd(pb, 16));
            let (r, im) = match op {
                PredefinedOp::Sum => (f80_add(ar, br), f80_add(ai, bi)),
                PredefinedOp::Prod => (
                    f80_add(f80_mul(ar, br), f80_neg(f80_mul(ai, bi))),
                    f80_add(f80_mul(ar, bi), f80_mul(ai, br)),
                ),
                _ => return,
            };
            wr(pb, 0, r);
            wr(pb, 16, im);
        }
    }
}

pub(super) fn f80_parts(x: F80) -> (bool, u16, u64) {
    let mant = u64::from_le_bytes(x[..8].try_into().unwrap());
    let se = u16::from_le_bytes([x[8], x[9]]);
    (se & 0x8000 != 0, se & 0x7fff, mant)
}

pub(super) fn f80_from_parts(neg: bool, exp: u16, mant: u64) -> F80 {
    let mut x = [0u8; 10];
    x[..8].copy_from_slice(&mant.to_le_bytes());
    x[8..].copy_from_slice(&((exp & 0x7fff) | if neg { 0x8000 } else { 0 }).to_le_bytes());
    x
}

pub(super) fn f80_is_nan(x: F80) -> bool {
    let (_, e, m) = f80_parts(x);
    e == 0x7fff && (m << 1) != 0
}

/// Exact comparison of two x87 values (None if either is a NaN; the two zeros
/// are equal).
/// Whether an extended-precision value is non-zero (either sign of zero is
/// false; NaNs, infinities and denormals are true, as in C).
pub(super) fn f80_true(x: F80) -> bool {
    x[..8].iter().any(|&b| b != 0) || (u16::from_le_bytes([x[8], x[9]]) & 0x7fff) != 0
}

/// 1.0 or +0.0 in extended precision.
pub(super) fn f80_bool(v: bool) -> F80 {
    if v {
        f80_from_parts(false, 0x3fff, 1 << 63)
    } else {
        [0; 10]
    }
}

pub(super) fn f80_cmp(a: F80, b: F80) -> Option<Ordering> {
    if f80_is_nan(a) || f80_is_nan(b) {
        return None;
    }
    let (sa, ea, ma) = f80_parts(a);
    let (sb, eb, mb) = f80_parts(b);
    let za = ma == 0;
    let zb = mb == 0;
    if za && zb {
        return Some(Ordering::Equal);
    }
    // Magnitude order: exponent, then significand (explicit integer bit; a
    // denormal has exponent 0 and the bit clear).
    let mag = |e: u16, m: u64| ((e as u128) << 64) | m as u128;
    let (ka, kb) = (mag(ea, ma), mag(eb, mb));
    let neg_a = sa && !za;
    let neg_b = sb && !zb;
    Some(match (neg_a, neg_b) {
        (false, false) => ka.cmp(&kb),
        (true, true) => kb.cmp(&ka),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    })
}

pub(super) fn f80_neg(x: F80) -> F80 {
    let mut y = x;
    y[9] ^= 0x80;
    y
}

/// Exact conversion of an `f64` to x87 extended precision.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn f64_to_f80(v: f64) -> F80 {
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let e = ((bits >> 52) & 0x7ff) as u16;
    let frac = bits & ((1u64 << 52) - 1);
    match e {
        0x7ff => f80_from_parts(neg, 0x7fff, (1 << 63) | (frac << 11)),
        0 if frac == 0 => f80_from_parts(neg, 0, 0),
        0 => {
            let lz = frac.leading_zeros() as u16;
            f80_from_parts(neg, 15372 - lz, frac << lz)
        }
        _ => f80_from_parts(neg, e + (16383 - 1023), (1 << 63) | (frac << 11)),
    }
}

/// Conversion of an x87 value to `f64` (rounds to 53 bits; may overflow to
/// infinity or underflow to zero).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn f80_to_f64(x: F80) -> f64 {
    let (neg, e, m) = f80_parts(x);
    let sign = if neg { -1.0 } else { 1.0 };
    if e == 0x7fff {
        return if (m << 1) == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if m == 0 {
        return sign * 0.0;
    }
    // value = m * 2^(e - 16383 - 63), denormals use exponent 1.
    let mut k = e.max(1) as i32 - 16383 - 63;
    let mut v = m as f64;
    while k > 0 {
        let s = k.min(1000);
        v *= 2f64.powi(s);
        k -= s;
    }
    while k < 0 {
        let s = k.max(-1000);
        v *= 2f64.powi(s);
        k -= s;
    }
    sign * v
}

#[cfg(target_arch = "x86_64")]
macro_rules! x87_binop {
    ($name:ident, $insn:literal) => {
        /// x87 arithmetic on extended precision values, as C `long double`.
        fn $name(a: F80, b: F80) -> F80 {
            let mut out: F80 = [0; 10];
            // SAFETY: loads two 10-byte values from valid arrays and stores one into `out`; the x87 stack is empty on entry (Rust ABI) and is left empty; all x87 registers are declared clobbered.
            unsafe {
                std::arch::asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    $insn,
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) a.as_ptr(),
                    b = in(reg) b.as_ptr(),
                    o = in(reg) out.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                    out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                    options(nostack),
                );
            }
            out
        }
    };
}

#[cfg(target_arch = "x86_64")]
x87_binop!(f80_add, "faddp");
#[cfg(target_arch = "x86_64")]
x87_binop!(f80_mul, "fmulp");

/// Without an x87 unit: computed in `f64` (precision loss, see the module doc).
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn f80_add(a: F80, b: F80) -> F80 {
    f64_to_f80(f80_to_f64(a) + f80_to_f64(b))
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn f80_mul(a: F80, b: F80) -> F80 {
    f64_to_f80(f80_to_f64(a) * f80_to_f64(b))
}
