use super::*;
use crate::buf::{as_bytes, as_bytes_mut, RecvBuf, Region, SendBuf};
use crate::error::ErrorClass;

fn int() -> Datatype {
    Datatype::predefined(Primitive::Int)
}
fn dbl() -> Datatype {
    Datatype::predefined(Primitive::Double)
}
fn chr() -> Datatype {
    Datatype::predefined(Primitive::Char)
}

fn bounds(d: &Datatype) -> (usize, isize, isize, isize, isize) {
    (d.size(), d.lb(), d.ub(), d.true_lb(), d.true_extent())
}

#[test]
fn predefined_are_cached_committed_and_named() {
    for &p in Primitive::ALL {
        let d = Datatype::predefined(p);
        assert_eq!(d.as_primitive(), Some(p));
        assert!(d.is_committed());
        assert_eq!(d.name(), p.name());
        assert_eq!(d.size(), p.size());
        assert_eq!(d.extent(), p.extent() as isize);
        assert_eq!(d.combiner(), Combiner::Named);
        assert_eq!(d.envelope(), (0, 0, 0, Combiner::Named));
        assert_eq!(d.blocks().iter().map(|b| b.1).sum::<usize>(), p.size());
        assert_eq!(d.single_primitive(), Some(p));
        assert!(d.ptr_eq(&Datatype::predefined(p)));
    }
    assert!(int().is_contiguous());
    let s = format!("{:?}", int());
    assert!(s.contains("MPI_INT"), "{s}");
}

#[test]
fn pair_types_have_padding() {
    let di = Datatype::predefined(Primitive::DoubleInt);
    assert_eq!((di.size(), di.extent(), di.true_extent()), (12, 16, 12));
    // The double and the int abut: merged into one block of 12 bytes.
    assert_eq!(di.blocks(), &[(0, 12)]);
    assert!(!di.is_contiguous());
    let si = Datatype::predefined(Primitive::ShortInt);
    assert_eq!(si.blocks(), &[(0, 2), (4, 4)]);
    assert_eq!((si.size(), si.extent()), (6, 8));
    assert_eq!(di.get_elements(12), Some(2));
    assert_eq!(di.get_elements(8), Some(1));
    assert_eq!(di.get_elements(4), None);
    assert_eq!(di.get_elements(20), Some(3));
    assert_eq!(di.get_count(24), Some(2));
    let c = Datatype::contiguous(2, &di).unwrap();
    assert_eq!(c.blocks(), &[(0, 12), (16, 12)]);
    assert_eq!(c.extent(), 32);
    assert_eq!(c.single_primitive(), Some(Primitive::DoubleInt));
}

#[test]
fn contiguous_and_zero_counts() {
    let c = Datatype::contiguous(5, &int()).unwrap();
    assert_eq!(bounds(&c), (20, 0, 20, 0, 20));
    assert!(c.is_contiguous() && !c.is_committed());
    assert_eq!(c.blocks(), &[(0, 20)]);
    assert_eq!(c.signature(), &[(Primitive::Int, 5)]);
    c.commit();
    assert!(c.is_committed());
    let z = Datatype::contiguous(0, &int()).unwrap();
    assert_eq!(bounds(&z), (0, 0, 0, 0, 0));
    assert!(z.blocks().is_empty() && z.signature().is_empty());
    assert_eq!(z.get_count(0), Some(0));
    assert_eq!(z.get_elements(0), Some(0));
    let e = Datatype::contiguous(-1, &int()).unwrap_err();
    assert_eq!(e.class, ErrorClass::Count);
    assert!(e.message.contains("MPI_Type_contiguous"), "{}", e.message);
    // Large dense contiguous types stay one block and are built in O(1).
    let big = Datatype::contiguous(1 << 40, &chr()).unwrap();
    assert_eq!(big.blocks(), &[(0, 1 << 40)]);
    assert!(Datatype::contiguous(i64::MAX, &dbl()).is_err());
}

#[test]
fn vector_column_of_100x150_ints() {
    let col = Datatype::vector(100, 1, 150, &int()).unwrap();
    assert_eq!(col.size(), 400);
    assert_eq!(
        (col.lb(), col.ub(), col.extent()),
        (0, 99 * 600 + 4, 99 * 600 + 4)
    );
    assert_eq!(col.true_extent(), 99 * 600 + 4);
    assert_eq!(col.blocks().len(), 100);
    assert_eq!(col.blocks()[1], (600, 4));
    assert_eq!(col.signature(), &[(Primitive::Int, 100)]);
    assert_eq!(col.envelope(), (3, 0, 1, Combiner::Vector));
    let (ints, addrs, types) = col.contents();
    assert_eq!((ints, addrs), (vec![100, 1, 150], vec![]));
    assert!(types[0].ptr_eq(&int()));
    // Pack the column of rank 3 of a row-major array and unpack it back.
    let mut a: Vec<i32> = (0..100 * 150).collect();
    let out = Region::of_bytes("test", &mut as_bytes_mut(&mut a)[12..], 1, &col)
        .unwrap()
        .pack_vec();
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (0..100).map(|r| r * 150 + 3).collect::<Vec<_>>());
    let mut b = vec![-1i32; 100 * 150];
    Region::of_bytes("test", &mut as_bytes_mut(&mut b)[12..], 1, &col)
        .unwrap()
        .unpack(&out);
    for (i, v) in b.iter().enumerate() {
        assert_eq!(*v, if i % 150 == 3 { i as i32 } else { -1 });
    }
    // Abutting blocks merge.
    let v = Datatype::vector(4, 2, 2, &int()).unwrap();
    assert_eq!(v.blocks(), &[(0, 32)]);
    assert!(v.is_contiguous());
    assert_eq!(
        Datatype::vector(-1, 1, 1, &int()).unwrap_err().class,
        ErrorClass::Count
    );
    assert_eq!(
        Datatype::vector(1, -1, 1, &int()).unwrap_err().class,
        ErrorClass::Arg
    );
}

#[test]
fn negative_strides_and_displacements() {
    let v = Datatype::vector(3, 1, -2, &int()).unwrap();
    assert_eq!((v.lb(), v.ub(), v.extent()), (-16, 4, 20));
    assert_eq!(v.blocks(), &[(0, 4), (-8, 4), (-16, 4)]);
    assert_eq!((v.true_lb(), v.true_extent()), (-16, 20));
    let h = Datatype::hvector(2, 2, -12, &int()).unwrap();
    assert_eq!((h.lb(), h.ub()), (-12, 8));
    assert_eq!(h.blocks(), &[(0, 8), (-12, 8)]);
    let ix = Datatype::indexed(&[2, 1], &[3, -1], &dbl()).unwrap();
    assert_eq!((ix.size(), ix.lb(), ix.ub()), (24, -8, 40));
    assert_eq!(ix.blocks(), &[(24, 16), (-8, 8)]);
    assert_eq!(ix.envelope(), (5, 0, 1, Combiner::Indexed));
    assert_eq!(ix.contents().0, vec![2, 2, 1, 3, -1]);
    let hx = Datatype::hindexed(&[1, 0, 2], &[-4, 100, 4], &int()).unwrap();
    assert_eq!((hx.size(), hx.lb(), hx.ub()), (12, -4, 12));
    assert_eq!(hx.blocks(), &[(-4, 4), (4, 8)]);
    assert_eq!(hx.envelope(), (4, 3, 1, Combiner::Hindexed));
    let ib = Datatype::indexed_block(2, &[4, 0], &int()).unwrap();
    assert_eq!(ib.blocks(), &[(16, 8), (0, 8)]);
    assert_eq!((ib.lb(), ib.ub()), (0, 24));
    assert_eq!(ib.envelope(), (4, 0, 1, Combiner::IndexedBlock));
    assert_eq!(ib.contents().0, vec![2, 2, 4, 0]);
    let hb = Datatype::hindexed_block(1, &[8, -8], &dbl()).unwrap();
    assert_eq!((hb.lb(), hb.ub(), hb.size()), (-8, 16, 16));
    assert_eq!(hb.envelope(), (2, 2, 1, Combiner::HindexedBlock));
    assert_eq!(hb.contents().1, vec![8, -8]);
    let e = Datatype::indexed(&[1, 2], &[0], &int()).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    assert!(e.message.contains("MPI_Type_indexed"));
    assert_eq!(
        Datatype::indexed(&[-1], &[0], &int()).unwrap_err().class,
        ErrorClass::Arg
    );
}

#[test]
fn struct_epsilon_padding() {
    // struct { double d; char c; } -> extent 16.
    let s = Datatype::structure(&[1, 1], &[0, 8], &[dbl(), chr()]).unwrap();
    assert_eq!(
        (s.size(), s.lb(), s.ub(), s.extent(), s.true_extent()),
        (9, 0, 16, 16, 9)
    );
    assert_eq!(s.blocks(), &[(0, 9)]);
    assert_eq!(
        s.signature(),
        &[(Primitive::Double, 1), (Primitive::Char, 1)]
    );
    assert_eq!(s.single_primitive(), None);
    assert_eq!(s.envelope(), (3, 2, 2, Combiner::Struct));
    // struct { char c; int i; } with i at 4 -> extent 8.
    let s2 = Datatype::structure(&[1, 1], &[0, 4], &[chr(), int()]).unwrap();
    assert_eq!((s2.size(), s2.extent()), (5, 8));
    // Contiguous of the struct uses the padded extent.
    let c = Datatype::contiguous(2, &s).unwrap();
    assert_eq!(c.blocks(), &[(0, 9), (16, 9)]);
    assert_eq!(c.extent(), 32);
    // A struct of zero-length blocks.
    let z = Datatype::structure(&[0], &[8], &[dbl()]).unwrap();
    assert_eq!(bounds(&z), (0, 0, 0, 0, 0));
    assert_eq!(
        Datatype::structure(&[1], &[0, 1], &[int()])
            .unwrap_err()
            .class,
        ErrorClass::Arg
    );
}

#[test]
fn struct_with_ub_marker_stretches_an_int_to_a_row() {
    // The textbook example: one int, extent of a whole row of 150 ints.
    let row = Datatype::structure(&[1, 1], &[0, 150 * 4], &[int(), Datatype::ub_marker()]).unwrap();
    assert_eq!(
        (row.size(), row.lb(), row.ub(), row.extent()),
        (4, 0, 600, 600)
    );
    assert_eq!((row.true_lb(), row.true_extent()), (0, 4));
    assert_eq!(row.blocks(), &[(0, 4)]);
    assert!(!row.is_contiguous());
    // num elements of this type walk down a column.
    let a: Vec<i32> = (0..100 * 150).collect();
    let mut out = vec![0u8; 40];
    let mut pos = 0;
    let src = SendBuf::typed(&as_bytes(&a)[28..], 10, &row).unwrap();
    crate::buf::pack(src, &mut out, &mut pos).unwrap();
    assert_eq!(pos, 40);
    let got: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (0..10).map(|r| r * 150 + 7).collect::<Vec<_>>());
    // Markers are sticky through further constructors: no padding, marker wins.
    let c = Datatype::contiguous(3, &row).unwrap();
    assert_eq!((c.lb(), c.ub()), (0, 1800));
    let s = Datatype::structure(&[1, 1], &[0, 8], &[row.clone(), dbl()]).unwrap();
    assert_eq!((s.lb(), s.ub()), (0, 600));
    let s = Datatype::structure(&[1, 1], &[0, 1000], &[row.clone(), dbl()]).unwrap();
    assert_eq!((s.lb(), s.ub()), (0, 600));
    // MPI_LB sets the lower bound; min of LB markers, data below it ignored.
    let l = Datatype::structure(
        &[1, 1, 1, 1],
        &[-8, -4, 0, 12],
        &[
            Datatype::lb_marker(),
            Datatype::lb_marker(),
            int(),
            Datatype::ub_marker(),
        ],
    )
    .unwrap();
    assert_eq!((l.lb(), l.ub(), l.extent(), l.size()), (-8, 12, 20, 4));
    let l2 = Datatype::structure(&[1, 1], &[4, 0], &[Datatype::lb_marker(), dbl()]).unwrap();
    assert_eq!((l2.lb(), l2.ub(), l2.true_lb()), (4, 8, 0));
    assert_eq!(Datatype::lb_marker().name(), "MPI_LB");
    assert_eq!(Datatype::ub_marker().size(), 0);
    assert_eq!(Datatype::ub_marker().as_primitive(), None);
    // Only an UB marker: lb falls back to the marker position.
    let u = Datatype::structure(&[1], &[600], &[Datatype::ub_marker()]).unwrap();
    assert_eq!((u.lb(), u.ub(), u.size()), (600, 600, 0));
}

#[test]
fn resized_and_dup() {
    let r = Datatype::resized(&int(), -4, 16).unwrap();
    assert_eq!((r.size(), r.lb(), r.ub(), r.extent()), (4, -4, 12, 16));
    assert_eq!((r.true_lb(), r.true_extent()), (0, 4));
    assert_eq!(r.envelope(), (0, 2, 1, Combiner::Resized));
    assert_eq!(r.contents().1, vec![-4, 16]);
    let c = Datatype::contiguous(3, &r).unwrap();
    assert_eq!(c.blocks(), &[(0, 4), (16, 4), (32, 4)]);
    assert_eq!((c.lb(), c.ub()), (-4, 44));
    // Resized children suppress the struct padding.
    let s = Datatype::structure(
        &[1, 1],
        &[0, 8],
        &[Datatype::resized(&dbl(), 0, 9).unwrap(), chr()],
    )
    .unwrap();
    assert_eq!((s.lb(), s.ub()), (0, 9));
    // Resizing to the size makes it contiguous.
    let di = Datatype::resized(&Datatype::predefined(Primitive::DoubleInt), 0, 12).unwrap();
    assert!(di.is_contiguous());
    let d = Datatype::dup(&c);
    assert!(!d.is_committed());
    assert_eq!(d.combiner(), Combiner::Dup);
    assert_eq!(d.envelope(), (0, 0, 1, Combiner::Dup));
    assert_eq!(d.blocks(), c.blocks());
    assert_eq!(d.extent(), c.extent());
    let di = Datatype::dup(&int());
    assert!(di.is_committed());
    assert_eq!(di.as_primitive(), None);
    assert_eq!(di.single_primitive(), Some(Primitive::Int));
    di.set_name("my int");
    assert_eq!(di.name(), "my int");
    assert_eq!(int().name(), "MPI_INT");
    for (i, c) in Combiner::ALL.iter().enumerate() {
        assert_eq!(*c as usize, i, "ALL is in declaration order");
        assert!(c.name().starts_with("MPI_COMBINER_"));
    }
}

#[test]
fn signatures_counts_and_elements() {
    let s = Datatype::structure(&[2, 1], &[0, 8], &[int(), dbl()]).unwrap();
    assert_eq!(
        s.signature(),
        &[(Primitive::Int, 2), (Primitive::Double, 1)]
    );
    assert_eq!(s.size(), 16);
    assert_eq!(s.get_count(32), Some(2));
    assert_eq!(s.get_count(20), None);
    assert_eq!(s.get_elements(16 + 4), Some(4));
    assert_eq!(s.get_elements(16 + 8), Some(5));
    assert_eq!(s.get_elements(16 + 10), None);
    assert_eq!(s.get_elements(16 + 16), Some(6));
    let c4 = Datatype::contiguous(4, &int()).unwrap();
    assert!(c4.same_signature(1, &int(), 4));
    assert!(c4.same_signature(3, &Datatype::vector(2, 6, 9, &int()).unwrap(), 1));
    assert!(!c4.same_signature(1, &int(), 3));
    assert!(!c4.same_signature(1, &Datatype::predefined(Primitive::Float), 4));
    assert!(c4.same_signature(2, &Datatype::predefined(Primitive::Byte), 32));
    assert!(Datatype::predefined(Primitive::Packed).same_signature(16, &s, 1));
    let t = Datatype::structure(&[1, 1, 1], &[0, 4, 16], &[int(), int(), dbl()]).unwrap();
    assert!(s.same_signature(3, &t, 3));
    assert!(!s.same_signature(
        2,
        &Datatype::structure(&[1, 2], &[0, 8], &[int(), dbl()]).unwrap(),
        2
    ));
    let d2 = Datatype::structure(&[1, 1], &[0, 16], &[dbl(), int()]).unwrap();
    let alt = Datatype::structure(&[1, 1, 1], &[0, 16, 24], &[dbl(), int(), dbl()]).unwrap();
    assert!(!d2.same_signature(2, &alt, 1));
}

#[test]
fn pack_into_and_unpack_from_positions() {
    let v = Datatype::vector(2, 1, 2, &int()).unwrap();
    let src: [i32; 4] = [1, 2, 3, 4];
    let x: f64 = 2.5;
    let mut buf = vec![0u8; 16];
    let mut pos = 0;
    let (vd, dd) = (v.clone(), dbl());
    let sv = SendBuf::typed(as_bytes(&src), 1, &vd).unwrap();
    crate::buf::pack(sv, &mut buf, &mut pos).unwrap();
    assert_eq!(pos, 8);
    let sx = SendBuf::typed(as_bytes(std::slice::from_ref(&x)), 1, &dd).unwrap();
    crate::buf::pack(sx, &mut buf, &mut pos).unwrap();
    assert_eq!(pos, 16);
    // No room: error, nothing written, position unchanged.
    let before = buf.clone();
    let e = crate::buf::pack(SendBuf::slice(&src[..1]), &mut buf, &mut pos).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    assert_eq!((pos, &buf), (16, &before));
    assert_eq!(pack_size(&v, 3), 24);

    let mut dst = [0i32; 4];
    let mut y = 0f64;
    let mut pos = 0;
    let rv = RecvBuf::typed(as_bytes_mut(&mut dst), 1, &vd).unwrap();
    crate::buf::unpack(&buf, &mut pos, rv).unwrap();
    let ry = RecvBuf::typed(as_bytes_mut(std::slice::from_mut(&mut y)), 1, &dd).unwrap();
    crate::buf::unpack(&buf, &mut pos, ry).unwrap();
    assert!(crate::buf::unpack(&buf, &mut pos, RecvBuf::slice(&mut dst[..1])).is_err());
    assert_eq!((dst, y, pos), ([1, 0, 3, 0], 2.5, 16));
}

#[test]
fn partial_unpack_and_ranges() {
    let v = Datatype::vector(3, 1, 2, &int()).unwrap();
    let mut src: Vec<i32> = (0..12).collect();
    let packed = Region::of_bytes("test", as_bytes_mut(&mut src), 2, &v)
        .unwrap()
        .pack_vec();
    let vals: Vec<i32> = packed
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(vals, vec![0, 2, 4, 5, 7, 9]);
    // Truncated message: only the prefix lands.
    let mut dst = vec![-1i32; 12];
    Region::of_bytes("test", as_bytes_mut(&mut dst), 2, &v)
        .unwrap()
        .unpack(&packed[..10]);
    assert_eq!(
        &dst[..6],
        &[
            0,
            -1,
            2,
            -1,
            i32::from_ne_bytes([4, 0, -1i8 as u8, -1i8 as u8]),
            -1
        ]
    );
    // pack_range/unpack_range in pieces: buf::tests (the raw copies are buf/pack.rs's).
}

#[test]
fn absurd_sizes_are_errors_not_panics() {
    let big = Datatype::contiguous(1 << 40, &dbl()).unwrap();
    assert!(Datatype::contiguous(1 << 30, &big).is_err());
    assert!(Datatype::hvector(2, 1, isize::MAX, &int()).is_err());
    assert!(Datatype::resized(&int(), isize::MAX, 1).is_err());
}

#[test]
fn many_blocks_are_kept_by_structure_and_pack_like_a_flat_list() {
    let byte = Datatype::predefined(Primitive::Byte);
    // 2^31 one-byte blocks: made at once, no list of blocks.
    let huge = Datatype::vector(1 << 31, 1, 2, &byte).unwrap();
    assert_eq!(
        (huge.size(), huge.extent(), huge.block_count()),
        (1 << 31, (1 << 32) - 1, 1 << 31)
    );
    let huger = Datatype::contiguous(1 << 20, &huge).unwrap();
    assert_eq!((huger.size(), huger.block_count()), (1 << 51, 1 << 51));
    // 8M blocks (twice the old limit), packed and unpacked, whole and in pieces.
    let n = 1usize << 23;
    let v = Datatype::vector(n as i64, 1, 2, &byte).unwrap();
    let two = Datatype::structure(&[1, 1], &[0, 2 * n as isize + 3], &[v.clone(), int()]).unwrap();
    assert_eq!(two.block_count(), n + 1);
    let mut src: Vec<u8> = (0..2 * n + 8).map(|i| (i * 7 + i / 251) as u8).collect();
    let packed = Region::of_bytes("test", &mut src, 1, &two)
        .unwrap()
        .pack_vec();
    let want: Vec<u8> = (0..n)
        .map(|i| src[2 * i])
        .chain(src[2 * n + 3..2 * n + 7].iter().copied())
        .collect();
    assert!(packed == want, "packed stream differs");
    // pack_range/unpack_range of it in pieces: buf::tests.
    // Bounds and blocks agree with the flat description of a smaller copy.
    let small = Datatype::vector(5000, 1, 2, &byte).unwrap();
    let mut listed = Vec::new();
    small.for_each_block(0, |o, l| listed.push((o, l)));
    assert_eq!(listed.len(), 5000);
    assert_eq!(listed[4999], (9998, 1));
    assert_eq!(small.blocks(), listed);
}

#[test]
fn datatype_is_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Datatype>();
    let c = Datatype::contiguous(3, &int()).unwrap();
    let d = c.clone();
    assert!(d.ptr_eq(&c));
    let h = std::thread::spawn(move || d.size());
    assert_eq!(h.join().unwrap(), 12);
}

#[test]
fn empty_blocks_with_huge_counts_are_cheap() {
    let v = Datatype::vector(1 << 50, 0, 3, &int()).unwrap();
    assert_eq!(bounds(&v), (0, 0, 0, 0, 0));
    let h = Datatype::hvector(1 << 50, 1, 4, &int()).unwrap();
    assert_eq!(h.blocks(), &[(0, 1 << 52)]);
}
