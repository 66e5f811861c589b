//! Long double (x87 80-bit), logical types and the value-index pair types of
//! MAXLOC/MINLOC.

use super::*;

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
