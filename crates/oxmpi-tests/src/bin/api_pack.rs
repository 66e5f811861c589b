//! rsmpi's pack/unpack on communicators: rank 0 packs mixed values into one
//! byte buffer, broadcasts it, everybody unpacks and checks.
use oxmpi::traits::*;
use oxmpi::ErrorClass;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    let ints = [rank * 10, 7, -3];
    let doubles = [0.5f64, rank as f64];
    let mut buf = world.pack(&ints[..]);
    let first = buf.len() as i32;
    buf.resize(
        first as usize + world.pack_size(2, &f64::equivalent_datatype()) as usize,
        0,
    );
    let end = world.pack_into(&doubles[..], &mut buf, first);
    assert_eq!(end as usize, buf.len());
    // Too small a buffer: an error naming the call, nothing written.
    let mut small = [0u8; 3];
    let err = world.try_pack_into(&ints[..], &mut small, 0).unwrap_err();
    assert_eq!(err.class, ErrorClass::Arg, "{err}");
    // Everybody gets rank 0's packed bytes.
    let mut len = buf.len() as u64;
    world.process_at_rank(0).broadcast_into(&mut len);
    let mut got = if rank == 0 {
        buf.clone()
    } else {
        vec![0u8; len as usize]
    };
    world.process_at_rank(0).broadcast_into(&mut got[..]);
    let (mut i2, mut d2) = ([0i32; 3], [0f64; 2]);
    // SAFETY: the bytes were packed from an [i32; 3] then an [f64; 2].
    let pos = unsafe { world.unpack_into(&got, &mut i2[..], 0) };
    // SAFETY: as above.
    let end = unsafe { world.unpack_into(&got, &mut d2[..], pos) };
    assert_eq!((i2, d2, end as u64), ([0, 7, -3], [0.5, 0.0], len));
    println!("api_pack: rank {rank} of {} ok", world.size());
}
