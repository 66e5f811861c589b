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
fn raw_sub_ranges_stay_inside() {
    let mut b = [0u8; 16];
    let r = RawBuf::from_mut_slice(&mut b);
    let s = r.sub(4, 12).unwrap();
    assert_eq!((s.addr() - r.addr(), s.len()), (4, 12));
    assert!(r.sub(4, 13).is_none());
    assert!(r.sub(usize::MAX, 2).is_none());
    assert_eq!(r.sub(16, 0).unwrap().len(), 0);
}
