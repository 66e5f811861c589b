//! Unit tests of the reduction operations (moved out of the former `op.rs`).

use std::cmp::Ordering;

use super::f80::*;
use super::plan::Plan;
use super::*;
use crate::datatype::Repr;
use PredefinedOp as P;

fn dt(p: Primitive) -> Datatype {
    Datatype::predefined(p)
}

/// Applies `op` to typed arrays: returns the new inout.
fn red<T: Copy>(op: &Op, d: &Datatype, inv: &[T], inout: &[T], count: usize) -> Vec<T> {
    let mut io = inout.to_vec();
    // SAFETY: test buffers are whole arrays of `count` elements of `d`.
    unsafe {
        op.apply(
            inv.as_ptr() as *const u8,
            io.as_mut_ptr() as *mut u8,
            count,
            d,
        )
    }
    .unwrap();
    io
}

fn pre(p: PredefinedOp) -> Op {
    Op::predefined(p)
}

#[test]
fn handles_names_and_cache() {
    for &p in PredefinedOp::ALL {
        assert_eq!(PredefinedOp::from_code(p.code()), Some(p));
        assert_eq!(PredefinedOp::from_name(p.name()), Some(p));
        assert!(p.name().starts_with("MPI_"));
        let op = Op::predefined(p);
        assert_eq!(op.as_predefined(), Some(p));
        assert!(op.is_commutative());
        assert_eq!(op.name(), p.name());
        assert!(Arc::ptr_eq(&op.0, &Op::predefined(p).0), "cached");
    }
    assert_eq!(PredefinedOp::from_code(0), None);
    assert_eq!(PredefinedOp::from_name("MPI_OP_NULL"), None);
    assert_eq!(PredefinedOp::ALL.len(), 14);
}

/// The standard's table (plus logical operations on Fortran integers, an
/// extension), written out independently of `allows`.
fn expected_allowed(op: PredefinedOp, c: TypeClass) -> bool {
    use TypeClass::*;
    let classes: &[TypeClass] = match op {
        P::Max | P::Min => &[CInteger, FortranInteger, Floating],
        P::Sum | P::Prod => &[CInteger, FortranInteger, Floating, Complex],
        P::Land | P::Lor | P::Lxor => &[CInteger, FortranInteger, Logical, Floating],
        P::Band | P::Bor | P::Bxor => &[CInteger, FortranInteger, Byte],
        P::Maxloc | P::Minloc => &[Pair],
        P::Replace | P::NoOp => &[
            CInteger,
            FortranInteger,
            Floating,
            Logical,
            Complex,
            Byte,
            Pair,
            Other,
        ],
    };
    classes.contains(&c)
}

#[test]
fn every_op_type_pair_is_checked() {
    for &p in PredefinedOp::ALL {
        for &t in Primitive::ALL {
            let r = Op::predefined(p).check(&dt(t), "MPI_Reduce");
            if expected_allowed(p, t.class()) {
                assert!(r.is_ok(), "{} on {}: {r:?}", p.name(), t.name());
            } else {
                let e = r.unwrap_err();
                assert_eq!(e.class, ErrorClass::Op);
                assert!(
                    e.message.starts_with("MPI_Reduce: ")
                        && e.message.contains(p.name())
                        && e.message.contains(t.name()),
                    "{}",
                    e.message
                );
                // apply refuses too and leaves the buffer alone.
                let a = [7u8; 64];
                let mut b = [9u8; 64];
                // SAFETY: 64 bytes cover one element of every primitive.
                let r = unsafe { Op::predefined(p).apply(a.as_ptr(), b.as_mut_ptr(), 1, &dt(t)) };
                assert_eq!(r.unwrap_err().class, ErrorClass::Op);
                assert_eq!(b, [9u8; 64]);
            }
        }
    }
    let e = pre(P::Band)
        .check(&dt(Primitive::Double), "MPI_Reduce")
        .unwrap_err();
    assert!(
        e.message
            .starts_with("MPI_Reduce: MPI_BAND is not defined for MPI_DOUBLE (floating point)"),
        "{}",
        e.message
    );
    // User ops accept anything.
    let u = Op::user(Arc::new(|_, _, _, _: &Datatype| {}), false);
    assert!(u.check(&dt(Primitive::Packed), "MPI_Reduce").is_ok());
}

macro_rules! int_test {
    ($fname:ident, $t:ty, $samples:expr) => {
        fn $fname(p: Primitive) {
            let d = dt(p);
            let a: Vec<$t> = $samples;
            let mut b: Vec<$t> = a.iter().rev().copied().collect();
            b[0] = <$t>::MAX;
            let n = a.len();
            let logical = |x: $t| x != 0;
            for &op in PredefinedOp::ALL {
                if !op.allows(p.class()) || matches!(op, P::Replace | P::NoOp) {
                    continue;
                }
                let got = red(&pre(op), &d, &a, &b, n);
                for i in 0..n {
                    let (x, y) = (a[i], b[i]);
                    let want: $t = match op {
                        P::Max => x.max(y),
                        P::Min => x.min(y),
                        P::Sum => x.wrapping_add(y),
                        P::Prod => x.wrapping_mul(y),
                        P::Land => (logical(x) && logical(y)) as $t,
                        P::Lor => (logical(x) || logical(y)) as $t,
                        P::Lxor => (logical(x) != logical(y)) as $t,
                        P::Band => x & y,
                        P::Bor => x | y,
                        P::Bxor => x ^ y,
                        _ => unreachable!(),
                    };
                    assert_eq!(got[i], want, "{} {} on {x} {y}", op.name(), p.name());
                }
            }
        }
    };
}

int_test!(
    ints_i8,
    i8,
    vec![0, 1, -1, 5, i8::MIN, i8::MAX, 3, -100, 100]
);
int_test!(
    ints_i16,
    i16,
    vec![0, 1, -1, 5, i16::MIN, i16::MAX, 300, -30000]
);
int_test!(
    ints_i32,
    i32,
    vec![
        0,
        1,
        -1,
        5,
        i32::MIN,
        i32::MAX,
        70000,
        -7,
        12,
        13,
        14,
        15,
        16,
        17,
        18,
        19,
        20
    ]
);
int_test!(
    ints_i64,
    i64,
    vec![0, 1, -1, 5, i64::MIN, i64::MAX, 1 << 40, -7]
);
int_test!(ints_u8, u8, vec![0, 1, 255, 5, 128, 200, 3]);
int_test!(ints_u16, u16, vec![0, 1, u16::MAX, 5, 40000, 3]);
int_test!(ints_u32, u32, vec![0, 1, u32::MAX, 5, 3_000_000_000, 3]);
int_test!(ints_u64, u64, vec![0, 1, u64::MAX, 5, 1 << 63, 3]);

#[test]
fn integer_ops_on_every_integer_and_byte_type() {
    let mut tested = 0;
    for &p in Primitive::ALL {
        if !matches!(
            p.class(),
            TypeClass::CInteger | TypeClass::FortranInteger | TypeClass::Byte
        ) {
            continue;
        }
        tested += 1;
        match p.repr() {
            Repr::I8 => ints_i8(p),
            Repr::I16 => ints_i16(p),
            Repr::I32 => ints_i32(p),
            Repr::I64 => ints_i64(p),
            Repr::U8 => ints_u8(p),
            Repr::U16 => ints_u16(p),
            Repr::U32 => ints_u32(p),
            Repr::U64 => ints_u64(p),
            r => panic!("{}: {r:?}", p.name()),
        }
    }
    assert!(tested >= 25);
    // Spot checks: wrap-around and C logic on MPI_INT.
    let d = dt(Primitive::Int);
    assert_eq!(
        red(&pre(P::Sum), &d, &[i32::MAX, -5], &[1, -7], 2),
        vec![i32::MIN, -12]
    );
    assert_eq!(red(&pre(P::Prod), &d, &[65536], &[65536], 1), vec![0]);
    assert_eq!(
        red(&pre(P::Land), &d, &[5, 0, -1], &[7, 3, 0], 3),
        vec![1, 0, 0]
    );
    assert_eq!(
        red(&pre(P::Lxor), &d, &[5, 0, -1], &[7, 3, 0], 3),
        vec![0, 1, 1]
    );
    let b = dt(Primitive::Byte);
    assert_eq!(
        red(&pre(P::Bxor), &b, &[0xf0u8, 0xff], &[0x3c, 0x0f], 2),
        vec![0xcc, 0xf0]
    );
}

fn float_case<T>(p: Primitive, nan: T, vals: [T; 4])
where
    T: Copy + PartialOrd + std::fmt::Debug + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let d = dt(p);
    let [x, y, z, w] = vals;
    let a = vec![x, y, nan, z, w];
    let b = vec![y, x, z, nan, w];
    let max = red(&pre(P::Max), &d, &a, &b, 5);
    let min = red(&pre(P::Min), &d, &a, &b, 5);
    let want = |f: fn(T, T) -> T| (0..5).map(|i| f(a[i], b[i])).collect::<Vec<_>>();
    let sum = red(&pre(P::Sum), &d, &a, &b, 5);
    let prod = red(&pre(P::Prod), &d, &a, &b, 5);
    for i in [0, 1, 4] {
        assert_eq!(
            max[i],
            if a[i] > b[i] { a[i] } else { b[i] },
            "{}",
            p.name()
        );
        assert_eq!(
            min[i],
            if a[i] < b[i] { a[i] } else { b[i] },
            "{}",
            p.name()
        );
        assert_eq!(sum[i], want(|u, v| u + v)[i]);
        assert_eq!(prod[i], want(|u, v| u * v)[i]);
    }
    // NaN in invec never replaces; NaN in inoutvec stays (C `in > io ? in : io`).
    assert_eq!(max[2], z);
    assert_eq!(min[2], z);
    let nan = |x: T| x.partial_cmp(&x).is_none();
    assert!(nan(max[3]) && nan(min[3]), "NaN in inout is kept");
    assert!(nan(sum[2]) && nan(sum[3]));
}

#[test]
fn floating_point_ops() {
    for &p in Primitive::ALL {
        match (p.class(), p.repr()) {
            (TypeClass::Floating, Repr::F32) => {
                float_case::<f32>(p, f32::NAN, [1.5, -2.25, 3.0e30, -0.0])
            }
            (TypeClass::Floating, Repr::F64) => {
                float_case::<f64>(p, f64::NAN, [1.5, -2.25, 1e300, -0.0])
            }
            _ => {}
        }
    }
    let d = dt(Primitive::Double);
    assert_eq!(
        red(&pre(P::Max), &d, &[-0.0f64], &[0.0], 1)[0].to_bits(),
        0.0f64.to_bits()
    );
    assert_eq!(
        red(&pre(P::Sum), &d, &[0.1f64, 1e16], &[0.2, 1.0], 2),
        vec![0.1 + 0.2, 1e16 + 1.0]
    );
}

#[test]
fn large_arrays_aligned_and_unaligned() {
    let n = 1000;
    let a: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let b: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
    let d = dt(Primitive::Double);
    let got = red(&pre(P::Sum), &d, &a, &b, n);
    assert!((0..n).all(|i| got[i] == a[i] + b[i]));
    // Unaligned: the same values one byte into byte buffers.
    let mut ab = vec![0u8; n * 8 + 1];
    let mut bb = vec![0u8; n * 8 + 1];
    for i in 0..n {
        ab[1 + 8 * i..9 + 8 * i].copy_from_slice(&a[i].to_ne_bytes());
        bb[1 + 8 * i..9 + 8 * i].copy_from_slice(&b[i].to_ne_bytes());
    }
    // SAFETY: n doubles fit at offset 1 of both buffers.
    unsafe { pre(P::Max).apply(ab.as_ptr().add(1), bb.as_mut_ptr().add(1), n, &d) }.unwrap();
    for i in 0..n {
        let v = f64::from_ne_bytes(bb[1 + 8 * i..9 + 8 * i].try_into().unwrap());
        assert_eq!(v, a[i].max(b[i]));
    }
    assert_eq!(bb[0], 0);
    let ai: Vec<i32> = (0..n as i32).collect();
    assert_eq!(
        red(&pre(P::Sum), &dt(Primitive::Int), &ai, &ai, n),
        (0..n as i32).map(|i| 2 * i).collect::<Vec<_>>()
    );
}

#[test]
fn complex_sum_and_prod() {
    let d = dt(Primitive::CDoubleComplex);
    let a = [[1.0f64, 2.0], [0.5, -1.0]];
    let b = [[3.0f64, -4.0], [2.0, 2.0]];
    assert_eq!(
        red(&pre(P::Sum), &d, &a, &b, 2),
        vec![[4.0, -2.0], [2.5, 1.0]]
    );
    // (1+2i)(3-4i) = 11 + 2i; (0.5-i)(2+2i) = 3 - i
    assert_eq!(
        red(&pre(P::Prod), &d, &a, &b, 2),
        vec![[11.0, 2.0], [3.0, -1.0]]
    );
    for &p in Primitive::ALL {
        if p.repr() == Repr::Complex32 {
            let a = [[1.0f32, 2.0]];
            let b = [[3.0f32, -4.0]];
            assert_eq!(
                red(&pre(P::Prod), &dt(p), &a, &b, 1),
                vec![[11.0, 2.0]],
                "{}",
                p.name()
            );
            assert_eq!(
                red(&pre(P::Sum), &dt(p), &a, &b, 1),
                vec![[4.0, -2.0]],
                "{}",
                p.name()
            );
        }
    }
}

/// A long double in its 16-byte slot, padding filled with `pad`.
fn ld(v: F80, pad: u8) -> [u8; 16] {
    let mut x = [pad; 16];
    x[..10].copy_from_slice(&v);
    x
}

fn f80(v: f64) -> F80 {
    f64_to_f80(v)
}

#[test]
fn f80_conversions_and_comparison() {
    for v in [
        0.0,
        -0.0,
        1.0,
        -2.5,
        1e300,
        -1e-300,
        5e-324,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let x = f64_to_f80(v);
        assert_eq!(f80_to_f64(x).to_bits(), v.to_bits(), "{v}");
    }
    assert!(f80_to_f64(f64_to_f80(f64::NAN)).is_nan());
    assert_eq!(f80(1.0), f80_from_parts(false, 16383, 1 << 63));
    let vals = [
        f64::NEG_INFINITY,
        -1e300,
        -1.0,
        -5e-324,
        0.0,
        5e-324,
        1.0,
        1.5,
        1e300,
        f64::INFINITY,
    ];
    for (i, &u) in vals.iter().enumerate() {
        for (j, &v) in vals.iter().enumerate() {
            assert_eq!(f80_cmp(f80(u), f80(v)), Some(i.cmp(&j)), "{u} {v}");
        }
    }
    assert_eq!(f80_cmp(f80(0.0), f80(-0.0)), Some(Ordering::Equal));
    assert_eq!(f80_cmp(f80(f64::NAN), f80(1.0)), None);
    // Differences below f64 precision are seen.
    let big = f80_from_parts(false, 16383 + 63, 1 << 63);
    let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1);
    assert_eq!(f80_cmp(big1, big), Some(Ordering::Greater));
    assert_eq!(f80_cmp(f80_neg(big1), f80_neg(big)), Some(Ordering::Less));
}

#[test]
fn long_double_ops() {
    let d = dt(Primitive::LongDouble);
    let big = f80_from_parts(false, 16383 + 63, 1 << 63); // 2^63
    let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1); // 2^63 + 1
    let a = [ld(big1, 0xaa), ld(f80(-3.0), 0xaa), ld(f80(2.0), 0xaa)];
    let b = [ld(big, 0x55), ld(f80(2.5), 0x55), ld(f80(f64::NAN), 0x55)];
    let max = red(&pre(P::Max), &d, &a, &b, 3);
    assert_eq!(max[0], ld(big1, 0x55), "exact max, padding untouched");
    assert_eq!(max[1], ld(f80(2.5), 0x55));
    assert!(f80_is_nan(max[2][..10].try_into().unwrap()));
    let min = red(&pre(P::Min), &d, &a, &b, 3);
    assert_eq!(min[0], ld(big, 0x55));
    assert_eq!(min[1], ld(f80(-3.0), 0x55));
    let s = red(
        &pre(P::Sum),
        &d,
        &[ld(big, 0), ld(f80(1.5), 0)],
        &[ld(f80(1.0), 0), ld(f80(-4.0), 0)],
        2,
    );
    #[cfg(target_arch = "x86_64")]
    assert_eq!(s[0], ld(big1, 0), "x87 sum is exact: 2^63 + 1");
    assert_eq!(s[1], ld(f80(-2.5), 0));
    let p = red(
        &pre(P::Prod),
        &d,
        &[ld(f80(1.5), 0)],
        &[ld(f80(-4.0), 0)],
        1,
    );
    assert_eq!(p[0], ld(f80(-6.0), 0));
    // Complex long double: (1+2i)(3-4i) = 11 + 2i.
    let c = |re: f64, im: f64| {
        let mut x = [0u8; 32];
        x[..16].copy_from_slice(&ld(f80(re), 0));
        x[16..].copy_from_slice(&ld(f80(im), 0));
        x
    };
    let cd = dt(Primitive::CLongDoubleComplex);
    assert_eq!(
        red(&pre(P::Prod), &cd, &[c(1.0, 2.0)], &[c(3.0, -4.0)], 1),
        vec![c(11.0, 2.0)]
    );
    assert_eq!(
        red(&pre(P::Sum), &cd, &[c(1.0, 2.0)], &[c(3.0, -4.0)], 1),
        vec![c(4.0, -2.0)]
    );
}

#[test]
fn logical_ops_on_bool_and_fortran_logical() {
    let ins = [0u64, 0, 1, 1, 2, 0xff, 0];
    let ios = [0u64, 1, 0, 1, 0x80, 3, 0x100];
    let truth = |x: u64, w: usize| x & (u64::MAX >> (64 - 8 * w)) != 0;
    for &p in Primitive::ALL {
        if p.class() != TypeClass::Logical {
            continue;
        }
        let w = p.size();
        let enc = |v: &[u64]| {
            v.iter()
                .flat_map(|x| x.to_le_bytes()[..w].to_vec())
                .collect::<Vec<u8>>()
        };
        for op in [P::Land, P::Lor, P::Lxor] {
            let got = red(&pre(op), &dt(p), &enc(&ins), &enc(&ios), ins.len());
            let want: Vec<u64> = ins
                .iter()
                .zip(&ios)
                .map(|(&x, &y)| {
                    let (x, y) = (truth(x, w), truth(y, w));
                    (match op {
                        P::Land => x && y,
                        P::Lor => x || y,
                        _ => x != y,
                    }) as u64
                })
                .collect();
            assert_eq!(got, enc(&want), "{} on {}", op.name(), p.name());
        }
        for op in [P::Max, P::Sum, P::Band] {
            assert_eq!(
                pre(op).check(&dt(p), "MPI_Allreduce").unwrap_err().class,
                ErrorClass::Op
            );
        }
    }
    let b = dt(Primitive::CBool);
    assert_eq!(
        red(&pre(P::Lor), &b, &[0u8, 0, 7], &[0u8, 9, 0], 3),
        vec![0, 1, 1]
    );
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct VI<V, I> {
    v: V,
    i: I,
}

fn vi<V, I>(v: V, i: I) -> VI<V, I> {
    VI { v, i }
}

/// Reduces `rows` (one per "rank") in rank order, as a reduce would.
fn loc_reduce<V: Copy, I: Copy>(
    op: PredefinedOp,
    p: Primitive,
    rows: &[Vec<VI<V, I>>],
) -> Vec<VI<V, I>> {
    assert_eq!(size_of::<VI<V, I>>(), p.extent(), "{}", p.name());
    let mut acc = rows[rows.len() - 1].clone();
    for r in rows[..rows.len() - 1].iter().rev() {
        acc = red(&pre(op), &dt(p), r, &acc, r.len());
    }
    acc
}

fn loc_case<V, I>(p: Primitive, vals: [[V; 3]; 3], idx: impl Fn(usize) -> I)
where
    V: Copy + PartialOrd + std::fmt::Debug,
    I: Copy + PartialOrd + std::fmt::Debug,
{
    // rows[rank][j] = (vals[rank][j], rank)
    let rows: Vec<Vec<VI<V, I>>> = (0..3)
        .map(|r| (0..3).map(|j| vi(vals[r][j], idx(r))).collect())
        .collect();
    for op in [P::Maxloc, P::Minloc] {
        let got = loc_reduce(op, p, &rows);
        for j in 0..3 {
            // The extreme value; among equal values the lowest index.
            let mut best = 0;
            for r in 1..3 {
                let tie = vals[r][j] == vals[best][j] && idx(r) < idx(best);
                let better = tie
                    || match op {
                        P::Maxloc => vals[r][j] > vals[best][j],
                        _ => vals[r][j] < vals[best][j],
                    };
                if better {
                    best = r;
                }
            }
            assert_eq!(
                got[j].v,
                vals[best][j],
                "{} {} col {j}",
                op.name(),
                p.name()
            );
            assert_eq!(got[j].i, idx(best), "{} {} col {j}", op.name(), p.name());
        }
        // Commutative: the other order gives the same.
        let rev: Vec<_> = rows.iter().rev().cloned().collect();
        let got2 = loc_reduce(op, p, &rev);
        assert_eq!(
            got2.iter().map(|x| (x.v, x.i)).collect::<Vec<_>>(),
            got.iter().map(|x| (x.v, x.i)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn maxloc_minloc_on_all_pairs() {
    loc_case::<f32, i32>(
        Primitive::FloatInt,
        [[1.0, 5.0, -2.0], [3.0, 5.0, -2.0], [3.0, 1.0, -7.0]],
        |r| r as i32,
    );
    loc_case::<f64, i32>(
        Primitive::DoubleInt,
        [[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [3.0, 1.0, 2.0]],
        |r| r as i32,
    );
    loc_case::<i64, i32>(
        Primitive::LongInt,
        [[i64::MIN, 5, 9], [3, 5, 9], [i64::MAX, 1, 9]],
        |r| r as i32,
    );
    loc_case::<i32, i32>(
        Primitive::TwoInt,
        [[1, -5, 0], [-3, -5, 0], [1, 8, -1]],
        |r| 10 - r as i32 * 4,
    );
    loc_case::<f32, f32>(
        Primitive::TwoReal,
        [[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [3.0, 1.0, 2.0]],
        |r| r as f32,
    );
    loc_case::<f64, f64>(
        Primitive::TwoDoublePrecision,
        [[1.0, 5.0, 2.0], [3.0, 5.0, 0.0], [3.0, 1.0, 2.0]],
        |r| r as f64,
    );
    loc_case::<i32, i32>(
        Primitive::TwoInteger,
        [[1, 5, 2], [3, 5, 2], [3, 1, 2]],
        |r| r as i32,
    );
    loc_case::<i16, i32>(
        Primitive::ShortInt,
        [[1, 5, 2], [3, 5, 2], [i16::MIN, 1, 2]],
        |r| r as i32 + 100,
    );
    // The lower index wins a tie even if it comes from invec or inoutvec.
    let d = dt(Primitive::DoubleInt);
    assert_eq!(
        red(&pre(P::Maxloc), &d, &[vi(2.0f64, 7i32)], &[vi(2.0, 3)], 1),
        vec![vi(2.0, 3)]
    );
    assert_eq!(
        red(&pre(P::Maxloc), &d, &[vi(2.0f64, 3i32)], &[vi(2.0, 7)], 1),
        vec![vi(2.0, 3)]
    );
    assert_eq!(
        red(&pre(P::Minloc), &d, &[vi(1.0f64, 9i32)], &[vi(2.0, 3)], 1),
        vec![vi(1.0, 9)]
    );
    // NaN: the inoutvec pair is kept.
    let r = red(&pre(P::Maxloc), &d, &[vi(f64::NAN, 0i32)], &[vi(1.0, 4)], 1);
    assert_eq!(r, vec![vi(1.0, 4)]);
}

#[test]
fn maxloc_padding_and_long_double_int() {
    // MPI_SHORT_INT: value at 0, 2 padding bytes, index at 4; MPI_DOUBLE_INT: 4 trailing.
    let d = dt(Primitive::ShortInt);
    let mut a = [0xeeu8; 8];
    a[..2].copy_from_slice(&9i16.to_ne_bytes());
    a[4..].copy_from_slice(&5i32.to_ne_bytes());
    let mut b = [0x11u8; 8];
    b[..2].copy_from_slice(&1i16.to_ne_bytes());
    b[4..].copy_from_slice(&2i32.to_ne_bytes());
    let r = red(&pre(P::Maxloc), &d, &a, &b, 1);
    assert_eq!(&r[..2], &9i16.to_ne_bytes());
    assert_eq!(&r[2..4], &[0x11, 0x11]);
    assert_eq!(&r[4..], &5i32.to_ne_bytes());
    // MPI_LONG_DOUBLE_INT: 16-byte value, index at 16, extent 32.
    let ldi = |v: F80, i: i32| {
        let mut x = [0x33u8; 32];
        x[..10].copy_from_slice(&v);
        x[16..20].copy_from_slice(&i.to_ne_bytes());
        x
    };
    let big = f80_from_parts(false, 16383 + 63, 1 << 63);
    let big1 = f80_from_parts(false, 16383 + 63, (1 << 63) | 1);
    let d = dt(Primitive::LongDoubleInt);
    let a = [ldi(big1, 4), ldi(f80(1.0), 6)];
    let b = [ldi(big, 1), ldi(f80(1.0), 2)];
    assert_eq!(
        red(&pre(P::Maxloc), &d, &a, &b, 2),
        vec![ldi(big1, 4), ldi(f80(1.0), 2)]
    );
    assert_eq!(
        red(&pre(P::Minloc), &d, &a, &b, 2),
        vec![ldi(big, 1), ldi(f80(1.0), 2)]
    );
}

#[test]
fn example_4_18_global_minloc() {
    // Each "rank" has a local minimum and the index rank*LEN + local index.
    const LEN: i32 = 1000;
    let locals = [(3.5f32, 17), (-1.0, 999), (-1.0, 2), (0.0, 0)];
    let rows: Vec<Vec<VI<f32, i32>>> = locals
        .iter()
        .enumerate()
        .map(|(r, &(v, i))| vec![vi(v, r as i32 * LEN + i)])
        .collect();
    let out = loc_reduce(P::Minloc, Primitive::FloatInt, &rows)[0];
    assert_eq!(out.v, -1.0);
    assert_eq!((out.i / LEN, out.i % LEN), (1, 999));
}

#[test]
fn user_op_non_commutative_matrix_product() {
    // inout = in * inout for 2x2 row-major matrices of doubles.
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = calls.clone();
    let f: Arc<UserFunction> = Arc::new(
        move |inv: *const u8, inout: *mut u8, n: usize, d: &Datatype| {
            assert_eq!(d.extent(), 32);
            c2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for k in 0..n {
                // SAFETY: the engine passes `n` elements of 4 doubles.
                let (a, b) = unsafe {
                    (
                        (inv as *const [f64; 4]).add(k).read_unaligned(),
                        &mut *(inout as *mut [f64; 4]).add(k),
                    )
                };
                let m = [
                    a[0] * b[0] + a[1] * b[2],
                    a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3],
                ];
                *b = m;
            }
        },
    );
    let op = Op::user(f, false);
    assert!(!op.is_commutative() && op.as_predefined().is_none());
    assert!(format!("{op:?}").contains("non-commutative"));
    let mat = Datatype::contiguous(4, &dt(Primitive::Double)).unwrap();
    let a = [[1.0f64, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 0.0]];
    let b = [[5.0f64, 6.0, 7.0, 8.0], [2.0, 0.0, 0.0, 3.0]];
    let got = red(&op, &mat, &a, &b, 2);
    assert_eq!(
        got[0],
        [19.0, 22.0, 43.0, 50.0],
        "A*B, not B*A = [23, 34, 31, 46]"
    );
    assert_eq!(got[1], [0.0, 3.0, 2.0, 0.0]);
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "one call for the whole count"
    );
    assert!(Op::user(Arc::new(|_, _, _, _: &Datatype| {}), true).is_commutative());
}

#[test]
fn derived_vector_with_gaps() {
    // vector(3 blocks of 2 ints, stride 3): ints 0,1 3,4 6,7 of each element; 2,5 are gaps.
    let v = Datatype::vector(3, 2, 3, &dt(Primitive::Int)).unwrap();
    assert_eq!(v.single_primitive(), Some(Primitive::Int));
    let ext = v.extent() as usize / 4;
    assert_eq!(ext, 8);
    let count = 2;
    let a: Vec<i32> = (0..(ext * count) as i32).map(|i| i * 10).collect();
    let b: Vec<i32> = vec![-1; ext * count];
    let got = red(&pre(P::Sum), &v, &a, &b, count);
    for e in 0..count {
        for k in 0..ext {
            let i = e * ext + k;
            if k % 3 == 2 {
                assert_eq!(got[i], -1, "gap {i} untouched");
            } else {
                assert_eq!(got[i], a[i] - 1, "data {i}");
            }
        }
    }
    let e = pre(P::Band).check(
        &Datatype::vector(2, 1, 2, &dt(Primitive::Float)).unwrap(),
        "MPI_Allreduce",
    );
    let e = e.unwrap_err();
    assert_eq!(e.class, ErrorClass::Op);
    assert!(
        e.message.contains("MPI_BAND") && e.message.contains("MPI_FLOAT"),
        "{}",
        e.message
    );
    // A dense derived type (contiguous) goes through one run.
    let c = Datatype::contiguous(3, &dt(Primitive::Double)).unwrap();
    let got = red(
        &pre(P::Max),
        &c,
        &[1.0f64, 5.0, 3.0, 4.0, 0.0, 9.0],
        &[2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
        2,
    );
    assert_eq!(got, vec![2.0, 5.0, 3.0, 4.0, 2.0, 9.0]);
}

#[test]
fn derived_pairs_and_mixed_types() {
    // contiguous(2, MPI_DOUBLE_INT): blocks (0,12),(16,12).
    let c = Datatype::contiguous(2, &dt(Primitive::DoubleInt)).unwrap();
    assert_eq!(c.single_primitive(), Some(Primitive::DoubleInt));
    let a = [vi(1.0f64, 0i32), vi(9.0, 0)];
    let b = [vi(3.0f64, 1i32), vi(9.0, 1)];
    assert_eq!(
        red(&pre(P::Maxloc), &c, &a, &b, 1),
        vec![vi(3.0, 1), vi(9.0, 0)]
    );
    // dup(MPI_SHORT_INT): value and index in separate blocks.
    let s = Datatype::dup(&dt(Primitive::ShortInt));
    let a = [vi(4i16, 8i32), vi(-2, 8)];
    let b = [vi(4i16, 3i32), vi(7, 3)];
    assert_eq!(
        red(&pre(P::Minloc), &s, &a, &b, 2),
        vec![vi(4, 3), vi(-2, 8)]
    );
    // vector of MPI_SHORT_INT with a gap element.
    let v = Datatype::vector(2, 1, 2, &dt(Primitive::ShortInt)).unwrap();
    let a = [vi(4i16, 8i32), vi(100, 100), vi(9, 1)];
    let b = [vi(5i16, 3i32), vi(-1, -1), vi(9, 0)];
    assert_eq!(
        red(&pre(P::Minloc), &v, &a, &b, 1),
        vec![vi(4, 8), vi(-1, -1), vi(9, 0)]
    );
    // A struct of an int and a double: no predefined op but REPLACE/NO_OP.
    let st = Datatype::structure(
        &[1, 1],
        &[0, 8],
        &[dt(Primitive::Int), dt(Primitive::Double)],
    )
    .unwrap();
    assert_eq!(st.single_primitive(), None);
    let e = pre(P::Sum).check(&st, "MPI_Reduce").unwrap_err();
    assert_eq!(e.class, ErrorClass::Op);
    assert!(
        e.message.contains("MPI_SUM") && e.message.contains("derived datatype"),
        "{}",
        e.message
    );
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct S {
        i: i32,
        pad: i32,
        d: f64,
    }
    let a = [S {
        i: 1,
        pad: 7,
        d: 2.0,
    }];
    let b = [S {
        i: 5,
        pad: 9,
        d: 6.0,
    }];
    assert_eq!(
        red(&pre(P::Replace), &st, &a, &b, 1),
        vec![S {
            i: 1,
            pad: 9,
            d: 2.0
        }]
    );
    assert_eq!(red(&pre(P::NoOp), &st, &a, &b, 1), b.to_vec());
    assert_eq!(
        red(
            &pre(P::Replace),
            &dt(Primitive::Double),
            &[1.0f64, 2.0],
            &[3.0, 4.0],
            2
        ),
        vec![1.0, 2.0]
    );
}

#[test]
fn plan_walks_blocks_by_data_stream() {
    // Two MPI_SHORT_INT at stride 8 merged by the flattener: (0,2),(4,6),(12,4).
    let p = plan(Primitive::ShortInt, &[(0, 2), (4, 6), (12, 4)], 16).unwrap();
    assert_eq!(
        p,
        Plan {
            runs: vec![(0, 1), (8, 1)],
            dense: None
        }
    );
    let p = plan(Primitive::Int, &[(0, 8), (12, 8)], 24).unwrap();
    assert_eq!(
        p,
        Plan {
            runs: vec![(0, 2), (12, 2)],
            dense: None
        }
    );
    let p = plan(Primitive::Int, &[(0, 8), (8, 4)], 12).unwrap();
    assert_eq!(
        p,
        Plan {
            runs: vec![(0, 3)],
            dense: Some(3)
        }
    );
    assert!(plan(Primitive::Int, &[(0, 6)], 8).is_err());
    // Zero count touches nothing.
    let mut b = [1i32];
    // SAFETY: count 0 reads and writes nothing.
    unsafe {
        pre(P::Sum).apply(
            ptr::null(),
            b.as_mut_ptr() as *mut u8,
            0,
            &dt(Primitive::Int),
        )
    }
    .unwrap();
    assert_eq!(b, [1]);
}

#[test]
fn logical_operations_on_floating_point() {
    let f = Datatype::predefined(Primitive::Float);
    let d = Datatype::predefined(Primitive::Double);
    let inv = [0.0f32, 2.5, -0.0, f32::NAN, 0.0];
    let io = [0.0f32, 0.0, 3.0, 1.0, -7.0];
    assert_eq!(
        red(&pre(P::Land), &f, &inv, &io, 5),
        vec![0.0, 0.0, 0.0, 1.0, 0.0]
    );
    assert_eq!(
        red(&pre(P::Lor), &f, &inv, &io, 5),
        vec![0.0, 1.0, 1.0, 1.0, 1.0]
    );
    assert_eq!(
        red(&pre(P::Lxor), &f, &inv, &io, 5),
        vec![0.0, 1.0, 1.0, 0.0, 1.0]
    );
    let inv = [1e-300f64, 0.0, -4.0];
    let io = [2.0f64, 0.0, 0.0];
    assert_eq!(red(&pre(P::Land), &d, &inv, &io, 3), vec![1.0, 0.0, 0.0]);
    assert_eq!(red(&pre(P::Lor), &d, &inv, &io, 3), vec![1.0, 0.0, 1.0]);
    assert_eq!(red(&pre(P::Lxor), &d, &inv, &io, 3), vec![0.0, 0.0, 1.0]);
    // Fortran REAL and DOUBLE PRECISION, and long double.
    for p in [
        Primitive::Real,
        Primitive::DoublePrecision,
        Primitive::Real4,
        Primitive::Real8,
    ] {
        assert!(
            pre(P::Lor)
                .check(&Datatype::predefined(p), "MPI_Allreduce")
                .is_ok(),
            "{p:?}"
        );
    }
    let ld = Datatype::predefined(Primitive::LongDouble);
    let mut a = [0u8; 48];
    let mut b = [0u8; 48];
    a[..10].copy_from_slice(&f64_to_f80(2.0));
    a[16..26].copy_from_slice(&f64_to_f80(0.0));
    a[32..42].copy_from_slice(&f64_to_f80(-0.0));
    b[..10].copy_from_slice(&f64_to_f80(3.0));
    b[16..26].copy_from_slice(&f64_to_f80(5.0));
    b[32..42].copy_from_slice(&f64_to_f80(0.0));
    let land = red(&pre(P::Land), &ld, &a, &b, 3);
    let lor = red(&pre(P::Lor), &ld, &a, &b, 3);
    let at = |v: &[u8], i: usize| f80_to_f64(v[i * 16..i * 16 + 10].try_into().unwrap());
    assert_eq!((at(&land, 0), at(&land, 1), at(&land, 2)), (1.0, 0.0, 0.0));
    assert_eq!((at(&lor, 0), at(&lor, 1), at(&lor, 2)), (1.0, 1.0, 0.0));
    // Combinations MPICH rejects stay MPI_ERR_OP: logical on complex, bitwise on floats.
    let e = pre(P::Land)
        .check(
            &Datatype::predefined(Primitive::CDoubleComplex),
            "MPI_Allreduce",
        )
        .unwrap_err();
    assert_eq!(e.class, ErrorClass::Op);
    assert_eq!(
        pre(P::Band).check(&f, "MPI_Allreduce").unwrap_err().class,
        ErrorClass::Op
    );
    assert_eq!(
        pre(P::Lxor)
            .check(&Datatype::predefined(Primitive::DoubleInt), "MPI_Allreduce")
            .unwrap_err()
            .class,
        ErrorClass::Op
    );
}
