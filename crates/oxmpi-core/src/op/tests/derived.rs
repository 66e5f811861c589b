//! User operations, derived datatypes and the block plan that walks them.

use super::*;

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
