//! external32, the portable data representation of MPI (MPI-4.1 §14.5.2):
//! big-endian, IEEE formats, and fixed sizes per predefined type, which
//! differ from this machine's for `MPI_LONG`/`MPI_UNSIGNED_LONG` (4 bytes,
//! not 8), `MPI_LONG_INT` (4 + 4) and `MPI_LONG_DOUBLE` (IEEE binary128,
//! not the x87 80-bit format).
//!
//! Conversion works on the packed native form (the bytes `pack_into` makes:
//! each primitive's `size()` bytes, pairs without padding), so MPI_Pack_external,
//! MPI_Unpack_external and file views with the "external32" data
//! representation share it.

use super::{Datatype, PairValue, Primitive, Repr};
use crate::error::{MpiError, Result};

/// How one part of a primitive converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conv {
    /// An integer (or a float's bits, a logical, a character): big-endian,
    /// `native` bytes here, `ext` bytes external; narrowed or widened by
    /// `signed`.
    Int { native: usize, ext: usize, signed: bool },
    /// x87 80-bit extended (16 bytes here) to IEEE binary128 (16 bytes).
    F80,
}

impl Conv {
    fn native(self) -> usize {
        match self {
            Conv::Int { native, .. } => native,
            Conv::F80 => 16,
        }
    }
    fn ext(self) -> usize {
        match self {
            Conv::Int { ext, .. } => ext,
            Conv::F80 => 16,
        }
    }
}

fn same(n: usize) -> Conv {
    Conv::Int { native: n, ext: n, signed: false }
}

/// The parts of one element of `p`, in packed order.
fn parts(p: Primitive) -> Vec<Conv> {
    let int = Conv::Int { native: 4, ext: 4, signed: true };
    match p {
        Primitive::Long => vec![Conv::Int { native: 8, ext: 4, signed: true }],
        Primitive::UnsignedLong => vec![Conv::Int { native: 8, ext: 4, signed: false }],
        _ => match p.repr() {
            Repr::F80 => vec![Conv::F80],
            Repr::Complex32 => vec![same(4), same(4)],
            Repr::Complex64 => vec![same(8), same(8)],
            Repr::Complex80 => vec![Conv::F80, Conv::F80],
            Repr::Pair { value, .. } => match value {
                PairValue::F32 => vec![same(4), int],
                PairValue::F64 => vec![same(8), int],
                PairValue::I64 => vec![Conv::Int { native: 8, ext: 4, signed: true }, int],
                PairValue::I32 => vec![int, int],
                PairValue::I16 => vec![same(2), int],
                PairValue::F80 => vec![Conv::F80, int],
                PairValue::F32F32 => vec![same(4), same(4)],
                PairValue::F64F64 => vec![same(8), same(8)],
                PairValue::I32I32 => vec![int, int],
            },
            _ => vec![same(p.size())],
        },
    }
}

/// Bytes of one primitive in external32.
pub fn primitive_size(p: Primitive) -> usize {
    parts(p).iter().map(|c| c.ext()).sum()
}

/// Bytes of one element of `dt` in external32 (MPI_Pack_external_size / count).
pub fn size(dt: &Datatype) -> usize {
    dt.signature_runs(1).map(|(p, k)| primitive_size(p) * k).sum()
}

/// One element of `dt` as a list of (conversion, repetitions), runs merged.
fn plan(dt: &Datatype) -> Vec<(Conv, usize)> {
    let mut out: Vec<(Conv, usize)> = Vec::new();
    for (p, k) in dt.signature_runs(1) {
        let ps = parts(p);
        if ps.len() == 1 {
            match out.last_mut() {
                Some((c, n)) if *c == ps[0] => *n += k,
                _ => out.push((ps[0], k)),
            }
        } else {
            for _ in 0..k {
                for &c in &ps {
                    match out.last_mut() {
                        Some((x, n)) if *x == c => *n += 1,
                        _ => out.push((c, 1)),
                    }
                }
            }
        }
    }
    out
}

fn f80_to_quad(b: &[u8]) -> [u8; 16] {
    let mant = u64::from_le_bytes(b[0..8].try_into().unwrap());
    let se = u16::from_le_bytes(b[8..10].try_into().unwrap()) as u128;
    let frac = (mant & !(1u64 << 63)) as u128;
    let q = (se << 112) | (frac << 49);
    q.to_be_bytes()
}

fn quad_to_f80(b: &[u8], out: &mut [u8]) {
    let q = u128::from_be_bytes(b[0..16].try_into().unwrap());
    let se = (q >> 112) as u16;
    let exp = se & 0x7fff;
    let frac = ((q >> 49) as u64) & !(1u64 << 63);
    let mant = frac | if exp != 0 { 1u64 << 63 } else { 0 };
    out[0..8].copy_from_slice(&mant.to_le_bytes());
    out[8..10].copy_from_slice(&se.to_le_bytes());
    out[10..16].fill(0);
}

/// Converts `count` elements of `dt` from the packed native form (`native`,
/// exactly `dt.size() * count` bytes) to external32 (`ext`, exactly
/// `size(dt) * count` bytes).
pub fn encode(call: &str, dt: &Datatype, count: usize, native: &[u8], ext: &mut [u8]) -> Result<()> {
    check_lens(call, dt, count, native.len(), ext.len())?;
    let plan = plan(dt);
    let (mut i, mut o) = (0, 0);
    for _ in 0..count {
        for &(c, k) in &plan {
            for _ in 0..k {
                let (n, e) = (c.native(), c.ext());
                match c {
                    Conv::F80 => ext[o..o + 16].copy_from_slice(&f80_to_quad(&native[i..i + 16])),
                    Conv::Int { .. } => {
                        // Little-endian native: the low `e` bytes, reversed.
                        for j in 0..e {
                            ext[o + j] = native[i + e - 1 - j];
                        }
                    }
                }
                i += n;
                o += e;
            }
        }
    }
    Ok(())
}

/// The inverse of [`encode`]: external32 bytes to the packed native form
/// (narrow integers sign- or zero-extended).
pub fn decode(call: &str, dt: &Datatype, count: usize, ext: &[u8], native: &mut [u8]) -> Result<()> {
    check_lens(call, dt, count, native.len(), ext.len())?;
    let plan = plan(dt);
    let (mut i, mut o) = (0, 0);
    for _ in 0..count {
        for &(c, k) in &plan {
            for _ in 0..k {
                let (n, e) = (c.native(), c.ext());
                match c {
                    Conv::F80 => quad_to_f80(&ext[o..o + 16], &mut native[i..i + 16]),
                    Conv::Int { signed, .. } => {
                        for j in 0..e {
                            native[i + j] = ext[o + e - 1 - j];
                        }
                        let fill = if signed && e > 0 && ext[o] & 0x80 != 0 { 0xff } else { 0 };
                        native[i + e..i + n].fill(fill);
                    }
                }
                i += n;
                o += e;
            }
        }
    }
    Ok(())
}

fn check_lens(call: &str, dt: &Datatype, count: usize, native: usize, ext: usize) -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(MpiError::unsupported(call, "external32 on a big-endian machine"));
    }
    if dt.size().checked_mul(count) != Some(native) || size(dt).checked_mul(count) != Some(ext) {
        return Err(MpiError::intern(call, format!("external32 conversion of {count} elements with {native} native and {ext} external bytes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_standard_table() {
        let want = [
            (Primitive::Long, 4),
            (Primitive::UnsignedLong, 4),
            (Primitive::LongLong, 8),
            (Primitive::LongDouble, 16),
            (Primitive::LongInt, 8),
            (Primitive::DoubleInt, 12),
            (Primitive::ShortInt, 6),
            (Primitive::LongDoubleInt, 20),
            (Primitive::CLongDoubleComplex, 32),
            (Primitive::WChar, 4),
            (Primitive::CBool, 1),
            (Primitive::Aint, 8),
            (Primitive::Logical, 4),
        ];
        for (p, n) in want {
            assert_eq!(primitive_size(p), n, "{}", p.name());
        }
    }

    #[test]
    fn long_double_round_trips_through_binary128() {
        // 1.5 as x87: mantissa 0xC000..., exponent 0x3fff.
        let mut x = [0u8; 16];
        x[0..8].copy_from_slice(&0xC000_0000_0000_0000u64.to_le_bytes());
        x[8..10].copy_from_slice(&0x3fffu16.to_le_bytes());
        let q = f80_to_quad(&x);
        // binary128 1.5: 0x3fff 8000 0000 ...
        assert_eq!(&q[..4], &[0x3f, 0xff, 0x80, 0x00]);
        let mut back = [0xAAu8; 16];
        quad_to_f80(&q, &mut back);
        assert_eq!(&back[..10], &x[..10]);
    }

    #[test]
    fn long_narrows_and_sign_extends() {
        let dt = Datatype::predefined(Primitive::Long);
        let v: [i64; 2] = [-2, 0x0001_e240];
        let native: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut ext = vec![0u8; 8];
        encode("t", &dt, 2, &native, &mut ext).unwrap();
        assert_eq!(ext, [0xff, 0xff, 0xff, 0xfe, 0x00, 0x01, 0xe2, 0x40]);
        let mut back = vec![0u8; 16];
        decode("t", &dt, 2, &ext, &mut back).unwrap();
        assert_eq!(back, native);
    }
}
