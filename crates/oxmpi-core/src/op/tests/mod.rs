//! Unit tests of the reduction operations (moved out of the former `op.rs`).

use std::cmp::Ordering;

use super::f80::*;
use super::plan::Plan;
use super::*;
use crate::datatype::Repr;
use PredefinedOp as P;

mod derived;
mod long_double_and_pairs;

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

/// A value-index pair as MAXLOC/MINLOC's pair types lay it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct VI<V, I> {
    v: V,
    i: I,
}

fn vi<V, I>(v: V, i: I) -> VI<V, I> {
    VI { v, i }
}
