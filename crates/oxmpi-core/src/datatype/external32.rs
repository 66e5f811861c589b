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

use std::collections::HashMap;
use std::sync::Arc;

use super::signature::{Part, Sig};
use super::{Datatype, PairValue, Primitive, Repr};
use crate::error::{MpiError, Result};

/// How one part of a primitive converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conv {
    /// An integer (or a float's bits, a logical, a character): big-endian,
    /// `native` bytes here, `ext` bytes external; narrowed or widened by
    /// `signed`.
    Int {
        native: usize,
        ext: usize,
        signed: bool,
    },
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
    Conv::Int {
        native: n,
        ext: n,
        signed: false,
    }
}

/// The parts of one element of `p`, in packed order.
fn parts(p: Primitive) -> Vec<Conv> {
    let int = Conv::Int {
        native: 4,
        ext: 4,
        signed: true,
    };
    match p {
        Primitive::Long => vec![Conv::Int {
            native: 8,
            ext: 4,
            signed: true,
        }],
        Primitive::UnsignedLong => vec![Conv::Int {
            native: 8,
            ext: 4,
            signed: false,
        }],
        _ => match p.repr() {
            Repr::F80 => vec![Conv::F80],
            Repr::Complex32 => vec![same(4), same(4)],
            Repr::Complex64 => vec![same(8), same(8)],
            Repr::Complex80 => vec![Conv::F80, Conv::F80],
            Repr::Pair { value, .. } => match value {
                PairValue::F32 => vec![same(4), int],
                PairValue::F64 => vec![same(8), int],
                PairValue::I64 => vec![
                    Conv::Int {
                        native: 8,
                        ext: 4,
                        signed: true,
                    },
                    int,
                ],
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
    plan(dt).ext
}

/// One step of a conversion plan.
#[derive(Debug)]
enum Step {
    /// `k` parts converted by `c`, one after another.
    Conv(Conv, usize),
    /// `n` copies of a sub-plan.
    Rep(usize, Arc<Plan>),
}

/// How one element converts, kept by the structure of its type signature
/// (see [`super::signature`]): a type whose signature has millions of runs
/// (a struct repeated millions of times) has a plan as small as its
/// signature's stored parts, never a flat list of its runs.
#[derive(Debug, Default)]
struct Plan {
    steps: Vec<Step>,
    /// Bytes of one element in the packed native form and in external32.
    native: usize,
    ext: usize,
}

/// A repetition of a primitive with several parts (a pair, a complex) is
/// listed part by part up to this many steps, and kept as a repetition beyond.
const FLAT_STEPS: usize = 4096;

impl Plan {
    fn push(&mut self, c: Conv, k: usize) {
        if k == 0 {
            return;
        }
        self.native = self.native.saturating_add(c.native().saturating_mul(k));
        self.ext = self.ext.saturating_add(c.ext().saturating_mul(k));
        if let Some(Step::Conv(x, n)) = self.steps.last_mut() {
            if *x == c {
                *n = n.saturating_add(k);
                return;
            }
        }
        self.steps.push(Step::Conv(c, k));
    }

    fn push_rep(&mut self, n: usize, child: Arc<Plan>) {
        if n == 0 || child.steps.is_empty() {
            return;
        }
        if let [Step::Conv(c, k)] = child.steps.as_slice() {
            return self.push(*c, k.saturating_mul(n));
        }
        self.native = self.native.saturating_add(child.native.saturating_mul(n));
        self.ext = self.ext.saturating_add(child.ext.saturating_mul(n));
        self.steps.push(Step::Rep(n, child));
    }

    /// The plan of one element of signature `sig`; sub-signatures shared by
    /// several parts are planned once (`memo`, by address).
    fn of(sig: &Sig, memo: &mut HashMap<*const Sig, Arc<Plan>>) -> Plan {
        let mut plan = Plan::default();
        for part in sig.parts() {
            match part {
                Part::Run(p, k) => {
                    let ps = parts(*p);
                    if let [c] = ps.as_slice() {
                        plan.push(*c, *k);
                    } else if k.saturating_mul(ps.len()) <= FLAT_STEPS {
                        for _ in 0..*k {
                            for &c in &ps {
                                plan.push(c, 1);
                            }
                        }
                    } else {
                        let mut one = Plan::default();
                        for &c in &ps {
                            one.push(c, 1);
                        }
                        plan.push_rep(*k, Arc::new(one));
                    }
                }
                Part::Rep(n, child) => {
                    let key = Arc::as_ptr(child);
                    let sub = match memo.get(&key) {
                        Some(p) => p.clone(),
                        None => {
                            let p = Arc::new(Plan::of(child, memo));
                            memo.insert(key, p.clone());
                            p
                        }
                    };
                    plan.push_rep(*n, sub);
                }
            }
        }
        plan
    }

    /// Bytes of step `s` of one element: (native, external32).
    fn lens(s: &Step) -> (usize, usize) {
        match s {
            Step::Conv(c, k) => (c.native() * k, c.ext() * k),
            Step::Rep(m, sub) => (sub.native * m, sub.ext * m),
        }
    }

    /// Encodes `count` elements: `native` and `ext` hold exactly that many.
    fn encode(&self, count: usize, native: &[u8], ext: &mut [u8]) {
        let (mut i, mut o) = (0, 0);
        for _ in 0..count {
            for step in &self.steps {
                let (n, e) = Plan::lens(step);
                let (src, dst) = (&native[i..i + n], &mut ext[o..o + e]);
                match step {
                    Step::Conv(c, _) => encode_run(*c, src, dst),
                    Step::Rep(m, sub) => sub.encode(*m, src, dst),
                }
                i += n;
                o += e;
            }
        }
    }

    /// Decodes `count` elements: `ext` and `native` hold exactly that many.
    fn decode(&self, count: usize, ext: &[u8], native: &mut [u8]) {
        let (mut i, mut o) = (0, 0);
        for _ in 0..count {
            for step in &self.steps {
                let (n, e) = Plan::lens(step);
                let (src, dst) = (&ext[o..o + e], &mut native[i..i + n]);
                match step {
                    Step::Conv(c, _) => decode_run(*c, src, dst),
                    Step::Rep(m, sub) => sub.decode(*m, src, dst),
                }
                i += n;
                o += e;
            }
        }
    }
}

/// The plan of one element of `dt`.
fn plan(dt: &Datatype) -> Plan {
    Plan::of(&dt.layout().sig, &mut HashMap::new())
}

/// Converts a run of parts of one kind to external32.
fn encode_run(c: Conv, native: &[u8], ext: &mut [u8]) {
    match c {
        Conv::F80 => {
            for (s, d) in native.chunks_exact(16).zip(ext.chunks_exact_mut(16)) {
                d.copy_from_slice(&f80_to_quad(s));
            }
        }
        Conv::Int { ext: 1, .. } => ext.copy_from_slice(native),
        Conv::Int {
            native: n, ext: e, ..
        } => {
            // Little-endian native: the low `e` bytes, reversed.
            for (s, d) in native.chunks_exact(n).zip(ext.chunks_exact_mut(e)) {
                for j in 0..e {
                    d[j] = s[e - 1 - j];
                }
            }
        }
    }
}

/// Converts a run of parts of one kind from external32 (narrow integers
/// sign- or zero-extended).
fn decode_run(c: Conv, ext: &[u8], native: &mut [u8]) {
    match c {
        Conv::F80 => {
            for (s, d) in ext.chunks_exact(16).zip(native.chunks_exact_mut(16)) {
                quad_to_f80(s, d);
            }
        }
        Conv::Int {
            native: 1, ext: 1, ..
        } => native.copy_from_slice(ext),
        Conv::Int {
            native: n,
            ext: e,
            signed,
        } => {
            for (s, d) in ext.chunks_exact(e).zip(native.chunks_exact_mut(n)) {
                for j in 0..e {
                    d[j] = s[e - 1 - j];
                }
                let fill = if signed && e > 0 && s[0] & 0x80 != 0 {
                    0xff
                } else {
                    0
                };
                d[e..].fill(fill);
            }
        }
    }
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
pub fn encode(
    call: &str,
    dt: &Datatype,
    count: usize,
    native: &[u8],
    ext: &mut [u8],
) -> Result<()> {
    let plan = plan(dt);
    check_lens(call, dt, &plan, count, native.len(), ext.len())?;
    plan.encode(count, native, ext);
    Ok(())
}

/// The inverse of [`encode`]: external32 bytes to the packed native form
/// (narrow integers sign- or zero-extended).
pub fn decode(
    call: &str,
    dt: &Datatype,
    count: usize,
    ext: &[u8],
    native: &mut [u8],
) -> Result<()> {
    let plan = plan(dt);
    check_lens(call, dt, &plan, count, native.len(), ext.len())?;
    plan.decode(count, ext, native);
    Ok(())
}

fn check_lens(
    call: &str,
    dt: &Datatype,
    plan: &Plan,
    count: usize,
    native: usize,
    ext: usize,
) -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(MpiError::unsupported(
            call,
            "external32 on a big-endian machine",
        ));
    }
    if plan.native != dt.size()
        || dt.size().checked_mul(count) != Some(native)
        || plan.ext.checked_mul(count) != Some(ext)
    {
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

    fn stored_steps(p: &Plan) -> usize {
        p.steps
            .iter()
            .map(|s| match s {
                Step::Conv(..) => 1,
                Step::Rep(_, sub) => 1 + stored_steps(sub),
            })
            .sum()
    }

    #[test]
    fn types_with_millions_of_runs_convert_by_structure() {
        // {long, short} repeated 2.1M times, then a double: 4.2M + 1 runs in the
        // signature, more than the 4,194,304 a flat plan was limited to.
        let pair = Datatype::structure(
            &[1, 1],
            &[0, 8],
            &[
                Datatype::predefined(Primitive::Long),
                Datatype::predefined(Primitive::Short),
            ],
        )
        .unwrap();
        let n = 2_100_000usize;
        let many = Datatype::contiguous(n as i64, &pair).unwrap();
        let dt = Datatype::structure(
            &[1, 1],
            &[0, (16 * n) as isize],
            &[many, Datatype::predefined(Primitive::Double)],
        )
        .unwrap();
        dt.commit();
        assert!(dt.layout().sig.flat_runs() > 4_194_304);
        let p = plan(&dt);
        assert!(stored_steps(&p) <= 8, "{} steps", stored_steps(&p));
        assert_eq!(p.native, dt.size());
        assert_eq!(size(&dt), 6 * n + 8);
        // The packed native form: (i64, i16) pairs, then an f64.
        let mut native = Vec::with_capacity(dt.size());
        for k in 0..n {
            native.extend_from_slice(&(-(k as i64) - 1).to_le_bytes());
            native.extend_from_slice(&(k as i16).to_le_bytes());
        }
        native.extend_from_slice(&1.5f64.to_le_bytes());
        assert_eq!(native.len(), dt.size());
        let mut ext = vec![0u8; size(&dt)];
        encode("t", &dt, 1, &native, &mut ext).unwrap();
        for k in [0, 1, 12345, n - 1] {
            let at = 6 * k;
            assert_eq!(ext[at..at + 4], (-(k as i32) - 1).to_be_bytes(), "long {k}");
            assert_eq!(ext[at + 4..at + 6], (k as i16).to_be_bytes(), "short {k}");
        }
        assert_eq!(ext[6 * n..], 1.5f64.to_be_bytes());
        let mut back = vec![0u8; dt.size()];
        decode("t", &dt, 1, &ext, &mut back).unwrap();
        assert!(back == native, "round trip differs");
    }
}
