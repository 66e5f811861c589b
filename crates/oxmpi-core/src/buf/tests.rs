//! Unit tests of the buffer descriptors, the lending and the regions.

use super::*;
use crate::datatype::Datatype;

#[test]
fn slices_get_their_predefined_datatype_and_length() {
    let v = [1i32, 2, 3];
    let s = SendBuf::slice(&v);
    assert_eq!((s.count(), s.datatype().unwrap().size()), (3, 4));
    let mut w = [0f64; 5];
    let r = RecvBuf::slice(&mut w);
    assert_eq!((r.count(), r.datatype().unwrap().size()), (5, 8));
    assert!(SendBuf::bytes(&[1, 2]).datatype().is_none());
    assert_eq!(as_bytes(&v).len(), 12);
}

#[test]
fn typed_descriptors_must_fit_their_bytes() {
    let int = Datatype::predefined(Primitive::Int32);
    let bytes = [0u8; 16];
    assert!(SendBuf::typed(&bytes, 4, &int).is_ok());
    assert_eq!(
        SendBuf::typed(&bytes, 5, &int).unwrap_err().class,
        ErrorClass::Buffer
    );
    assert!(SendBuf::typed(&bytes, 0, &int).is_ok());
    // A strided vector: 3 blocks of 1 int, stride 2 ints, reaches 5 ints (20 bytes).
    let vec = Datatype::vector(3, 1, 2, &int).unwrap();
    assert!(SendBuf::typed(&[0u8; 20], 1, &vec).is_ok());
    assert!(SendBuf::typed(&[0u8; 19], 1, &vec).is_err());
    let mut out = [0u8; 19];
    assert!(RecvBuf::typed(&mut out, 1, &vec).is_err());
    // A negative lower bound reaches before the start of the slice.
    let moved = Datatype::hindexed(&[1], &[-4], &int).unwrap();
    assert!(SendBuf::typed(&[0u8; 64], 1, &moved).is_err());
    // A negative extent: later elements go down from the first.
    let down = Datatype::resized(&int, 0, -4).unwrap();
    assert!(SendBuf::typed(&[0u8; 64], 2, &down).is_err());
    assert!(SendBuf::typed(&[0u8; 64], 1, &down).is_ok());
}

#[test]
fn pack_and_unpack_round_trip_a_strided_vector() {
    let int = Datatype::predefined(Primitive::Int32);
    let vec = Datatype::vector(3, 1, 2, &int).unwrap();
    vec.commit();
    let src: Vec<i32> = (0..5).collect();
    let mut packed = [0u8; 12];
    let mut pos = 0;
    pack(
        SendBuf::typed(as_bytes(&src), 1, &vec).unwrap(),
        &mut packed,
        &mut pos,
    )
    .unwrap();
    assert_eq!(pos, 12);
    let mut back = [-1i32; 5];
    let mut pos = 0;
    unpack(
        &packed,
        &mut pos,
        RecvBuf::typed(as_bytes_mut(&mut back), 1, &vec).unwrap(),
    )
    .unwrap();
    assert_eq!(back, [0, -1, 2, -1, 4]);
    let mut small = [0u8; 8];
    assert!(pack(
        SendBuf::typed(as_bytes(&src), 1, &vec).unwrap(),
        &mut small,
        &mut 0
    )
    .is_err());
}

#[test]
fn a_region_hands_out_its_elements_and_its_contiguous_bytes() {
    let dt = Datatype::predefined(Primitive::Int32);
    let mut v = [1i32, 2, 3];
    let bytes = as_bytes_mut(&mut v);
    let mut r = Region::of_bytes("t", bytes, 3, &dt).unwrap();
    assert!(r.is_exclusive());
    assert_eq!(r.send(2).count(), 2);
    assert_eq!(r.recv(9).count(), 3, "at most the region's count");
    let b = r.bytes_mut().unwrap();
    b[..4].copy_from_slice(&7i32.to_ne_bytes());
    assert_eq!(r.into_owned().into_bytes_mut().unwrap().len(), 12);
    assert_eq!(v[0], 7);
}

#[test]
fn a_region_refuses_elements_outside_its_bytes() {
    let dt = Datatype::predefined(Primitive::Int32);
    let mut b = [0u8; 7];
    assert!(Region::of_bytes("t", &mut b[..], 2, &dt).is_err());
}

#[test]
fn a_strided_region_has_no_byte_view() {
    let dt = Datatype::vector(2, 1, 2, Datatype::predefined_ref(Primitive::Int32)).unwrap();
    let mut b = [0u8; 12];
    let r = Region::of_bytes("t", &mut b[..], 1, dt).unwrap();
    assert!(r.into_bytes().is_none());
}

#[test]
#[should_panic(expected = "lent again")]
fn a_region_lends_its_memory_once() {
    let dt = Datatype::predefined(Primitive::Int32);
    let mut b = [0u8; 8];
    scope(|sc| {
        let mut r = Region::of_bytes("t", &mut b[..], 2, &dt).unwrap();
        assert_eq!(r.lend_recv(sc, 2).count(), 2);
        let _ = r.lend_recv(sc, 2);
    });
}

#[test]
fn zeroed_bytes_cover_the_values() {
    let mut v = [std::mem::MaybeUninit::<(u8, u32)>::uninit(); 3];
    let b = zeroed_bytes(&mut v);
    assert_eq!(b.len(), 24);
    assert!(b.iter().all(|&x| x == 0));
}

#[test]
fn block_lists_must_fit_their_bytes() {
    let int = Datatype::predefined(Primitive::Int32);
    let vec = Datatype::vector(2, 1, 3, &int).unwrap(); // reaches 16 bytes
    let types = [int.clone(), vec.clone()];
    let bytes = [0u8; 24];
    let s = SendBlocks::within("c", "sendbuf", &bytes, &[2, 1], &[0, 8], &types).unwrap();
    assert_eq!(s.counts(), &[2, 1]);
    assert_eq!(s.addr(1) as usize - s.addr(0) as usize, 8);
    let f = |len, d: &[isize]| {
        let mut out = vec![0u8; len];
        RecvBlocks::within("c", "recvbuf", &mut out, &[2, 1], d, &types).map(|_| ())
    };
    assert!(f(24, &[0, 8]).is_ok());
    assert_eq!(f(23, &[0, 8]).unwrap_err().class, ErrorClass::Buffer);
    assert_eq!(f(64, &[-4, 8]).unwrap_err().class, ErrorClass::Buffer);
    // Empty blocks reach nothing, wherever they point.
    let mut none = [0u8; 0];
    assert!(RecvBlocks::within("c", "recvbuf", &mut none, &[0, 0], &[-5, 99], &types).is_ok());
    // Fewer displacements or datatypes than counts: MPI_ERR_ARG, not an index panic.
    let e = SendBlocks::within("c", "sendbuf", &bytes, &[1, 1], &[0], &types).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    let e = SendBlocks::within("c", "sendbuf", &bytes, &[1, 1, 1], &[0, 4, 8], &types);
    assert_eq!(e.unwrap_err().class, ErrorClass::Arg);
}

#[test]
fn active_chunks_and_landings_stay_inside() {
    let mut b = [0u8; 16];
    let mut a = ActiveBuf::take(RawBuf::from_mut_slice(&mut b));
    a.chunk_mut(4, 12).unwrap().fill(7);
    assert!(a.chunk_mut(4, 13).is_none());
    assert!(a.chunk_mut(usize::MAX, 2).is_none());
    assert_eq!(a.chunk_mut(16, 0).unwrap().len(), 0);
    assert!(a.landing(8, 9).is_none() && a.landing(3, 0).is_none());
    let mut l = a.landing(10, 6).unwrap();
    assert_eq!(l.len(), 6);
    assert_eq!(l.rest(6).len(), 0);
    l.rest(2).copy_from_slice(&[9; 4]);
    drop(l);
    a.landed();
    assert_eq!(a.bytes(), &[0, 0, 0, 0, 7, 7, 7, 7, 7, 7, 7, 7, 9, 9, 9, 9]);
    // Retired (the operation completed): nothing is reachable through it any more.
    a.retire();
    assert_eq!((a.len(), a.bytes().len(), a.bytes_mut().len()), (0, 0, 0));
    assert!(a.chunk_mut(0, 1).is_none() && a.landing(0, 1).is_none());
    assert_eq!(b[4], 7);
}

/// `pack_range` in odd chunks equals `pack`; `unpack_range` in pieces equals `unpack`
/// (a strided vector of ints, datatype::tests' `partial_unpack_and_ranges`).
#[test]
fn pack_and_unpack_ranges_in_pieces() {
    let int = Datatype::predefined(Primitive::Int32);
    let v = Datatype::vector(3, 1, 2, &int).unwrap();
    let mut src: Vec<i32> = (0..12).collect();
    let packed = Region::of_bytes("test", as_bytes_mut(&mut src), 2, &v)
        .unwrap()
        .pack_vec();
    let mut again = vec![0u8; 24];
    let mut from = 0;
    while from < 24 {
        let end = (from + 7).min(24);
        // SAFETY: 2 elements of `v` (extent 20 bytes, the last int at byte 36) from src[0] stay within src's 12 ints; `again` is a separate array.
        let n = unsafe { v.pack_range(src.as_ptr() as *const u8, 2, from, &mut again[from..end]) };
        assert_eq!(n, end - from);
        from = end;
    }
    assert_eq!(again, packed);
    let mut tail = [0u8; 8];
    assert_eq!(
        // SAFETY: as above; `tail` is a separate array.
        unsafe { v.pack_range(src.as_ptr() as *const u8, 2, 20, &mut tail) },
        4
    );
    let mut dst = vec![-1i32; 12];
    for (a, b) in [(0, 3), (3, 13), (13, 24)] {
        // SAFETY: `dst` (12 ints) covers the type map of 2 elements of `v`; `packed` is a separate array.
        unsafe { v.unpack_range(&packed[a..b], dst.as_mut_ptr() as *mut u8, 2, a) };
    }
    assert_eq!(dst, vec![0, -1, 2, -1, 4, 5, -1, 7, -1, 9, -1, -1]);
}

/// Ranges of a type of 8M blocks kept by structure (datatype::tests'
/// `many_blocks_are_kept_by_structure_and_pack_like_a_flat_list`): pieces packed from
/// any offset, and unpacked in pieces, agree with the whole stream.
#[test]
fn ranges_of_many_blocks_pack_and_unpack_in_pieces() {
    let (n, two, src, packed) = crate::datatype::tests::many_blocks();
    let mut piece = vec![0u8; 1001];
    for from in [0, 1, n - 500, n - 1, n, n + 3] {
        // SAFETY: `src` covers the type map of one element of `two` (the int ends at byte 2n + 7); `piece` is a separate array.
        let got = unsafe { two.pack_range(src.as_ptr(), 1, from, &mut piece) };
        assert_eq!(
            &piece[..got],
            &packed[from..(from + 1001).min(packed.len())],
            "piece from {from}"
        );
    }
    let mut dst = vec![0u8; src.len()];
    for (a, b) in [(0, 3), (3, n - 1), (n - 1, n + 2), (n + 2, n + 4)] {
        // SAFETY: `dst` covers the type map of one element of `two`.
        unsafe { two.unpack_range(&packed[a..b], dst.as_mut_ptr(), 1, a) };
    }
    let mut expect = vec![0u8; src.len()];
    for i in 0..n {
        expect[2 * i] = src[2 * i];
    }
    expect[2 * n + 3..2 * n + 7].copy_from_slice(&src[2 * n + 3..2 * n + 7]);
    assert!(dst == expect, "unpacked layout differs");
}

#[test]
fn a_loan_keeps_its_direction_and_elements() {
    let int = Datatype::predefined(Primitive::Int32);
    static SRC: [i32; 3] = [1, 2, 3];
    let mut w = Loan::of_send(SendBuf::slice(&SRC));
    assert!(!w.is_exclusive());
    assert_eq!(w.region().count(), 3);
    assert_eq!(w.region().bytes().unwrap(), as_bytes(&SRC));
    let dst: &'static mut [i32] = Box::leak(Box::new([0i32; 4]));
    let mut r = Loan::of_recv(RecvBuf::typed(as_bytes_mut(dst), 4, &int).unwrap());
    assert!(r.is_exclusive());
    r.region().unpack(as_bytes(&[7i32, 8, 9, 10]));
    assert_eq!(r.region().bytes().unwrap(), as_bytes(&[7i32, 8, 9, 10]));
}

#[test]
fn element_pointers_are_given_only_for_elements_in_the_region() {
    let mut v = [0i32; 4];
    let int = Datatype::predefined(Primitive::Int32);
    let mut r = Region::of_bytes("test", as_bytes_mut(&mut v), 4, &int).unwrap();
    assert!(r.elements_ptr(1, 3).is_some());
    assert!(r.elements_ptr(2, 3).is_none());
    assert!(r.elements_ptr(usize::MAX, 2).is_none());
    assert!(r.elements_mut_ptr(0, 4).is_some());
    assert!(r.elements_mut_ptr(4, 1).is_none());
}

#[test]
fn v_layouts_are_checked_once_and_cut_blocks_inside_the_descriptor() {
    use crate::buf::elems::{VBlocks, VBlocksMut, VLayout};
    use crate::error::ErrorClass;
    let f = |cap, c: &'static [usize], d: &'static [isize], n| {
        VLayout::check(
            "MPI_Gatherv",
            "recvbuf",
            "recvcounts",
            "displs",
            cap,
            c,
            d,
            n,
        )
    };
    assert!(f(10, &[2, 3], &[0, 7], 2).is_ok());
    let e = f(10, &[2, 3], &[0, 8], 2).unwrap_err();
    assert_eq!(e.class, ErrorClass::Buffer);
    assert!(
        e.message.contains("MPI_Gatherv") && e.message.contains("recvbuf"),
        "{}",
        e.message
    );
    assert_eq!(
        f(10, &[2, 3], &[-1, 0], 2).unwrap_err().class,
        ErrorClass::Buffer
    );
    assert_eq!(
        f(10, &[1, usize::MAX / 2], &[0, isize::MAX], 2)
            .unwrap_err()
            .class,
        ErrorClass::Buffer
    );
    // Empty blocks reach nothing, wherever they point.
    assert!(f(0, &[0, 0], &[-5, 99], 2).is_ok());
    // Arrays shorter than the group: MPI_ERR_ARG naming the array.
    let e = f(10, &[1], &[0, 0], 2).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    assert!(e.message.contains("recvcounts"), "{}", e.message);
    assert!(f(10, &[1, 1], &[0], 2)
        .unwrap_err()
        .message
        .contains("displs"));

    // The views cut each block from the descriptor's elements.
    let data: Vec<i32> = (0..10).collect();
    let send = SendBuf::slice(&data);
    let layout = f(10, &[2, 0, 3], &[7, 99, 1], 3).unwrap();
    let blocks = VBlocks::new(send.elems(), layout);
    let mut out = [0u8; 12];
    blocks.get(2).pack(0, &mut out);
    assert_eq!(out, *as_bytes(&[1i32, 2, 3]));
    assert_eq!(blocks.get(1).count(), 0);
    let mut dst = [0i32; 10];
    let mut recv = RecvBuf::slice(&mut dst);
    let mut blocks = VBlocksMut::new(recv.elems_mut(), layout);
    blocks.get_mut(0).unpack(0, as_bytes(&[40i32, 41]));
    assert_eq!(dst[7..9], [40, 41]);
}

#[test]
fn a_v_layout_refuses_exactly_the_blocks_that_reach_outside() {
    use crate::buf::elems::VLayout;
    use crate::error::ErrorClass;
    let f = |cap, c: &[usize], d: &[isize]| {
        VLayout::check(
            "MPI_Alltoallv",
            "sendbuf",
            "sendcounts",
            "sdispls",
            cap,
            c,
            d,
            c.len().min(d.len()).max(2),
        )
        .map(|_| ())
    };
    // Up to the last element: inside; one further: outside.
    assert!(f(8, &[4, 4], &[0, 4]).is_ok());
    assert!(f(8, &[1, 1], &[7, 0]).is_ok());
    for (c, d) in [
        ([1usize, 1], [8isize, 0]),
        ([0, 5], [0, 4]),
        ([1, 1], [0, isize::MIN]),
        ([1, 1], [0, -1]),
        ([1, usize::MAX], [0, 1]),
        ([1, usize::MAX], [0, 0]),
        ([2, 1], [isize::MAX, 0]),
    ] {
        let e = f(8, &c, &d).unwrap_err();
        assert_eq!(e.class, ErrorClass::Buffer, "{c:?} at {d:?}");
        // The first block outside is the one named.
        let bad = (0..2)
            .find(|&i| {
                c[i] != 0 && (d[i] < 0 || (d[i] as usize).checked_add(c[i]).is_none_or(|e| e > 8))
            })
            .unwrap();
        assert!(
            e.message.contains(&format!("block {bad} ")) && e.message.contains("MPI_Alltoallv"),
            "{}",
            e.message
        );
    }
    // A short array is reported before any block, even one outside.
    let e = f(8, &[9], &[0, 0]).unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    assert!(e.message.contains("sendcounts"), "{}", e.message);
    // On a buffer of no elements only empty blocks are inside.
    assert!(f(0, &[0, 0], &[isize::MIN, isize::MAX]).is_ok());
    assert!(f(0, &[0, 1], &[0, 0]).is_err());
}

#[test]
#[should_panic(expected = "v blocks checked against")]
fn a_v_layout_checked_against_more_elements_than_the_view_is_refused() {
    use crate::buf::elems::{VBlocks, VLayout};
    let data = [0i32; 4];
    let send = SendBuf::slice(&data);
    let layout = VLayout::check("c", "sendbuf", "sendcounts", "displs", 8, &[8], &[0], 1).unwrap();
    VBlocks::new(send.elems(), layout);
}
