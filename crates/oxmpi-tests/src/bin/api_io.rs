//! The safe MPI-IO API: a process grid writes a 2-D array collectively through a
//! subarray view, which is read back byte for byte with std::fs; explicit offsets,
//! individual and shared pointers, ordered writes, non-blocking forms in a scope,
//! and error classes. argv[1] is a directory to work in.
use oxmpi::io::{File, Mode, Whence};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("a directory"));

    // Explicit offsets, independent and collective.
    let p = dir.join("api_io_basic.dat");
    let f = File::open(&world, &p, Mode::CREATE | Mode::RDWR);
    let mine: Vec<i32> = (0..8).map(|i| (rank * 100 + i) as i32).collect();
    f.set_view::<i32, _>(0, &i32::equivalent_datatype());
    f.write_at(rank * 8, &mine[..]);
    world.barrier();
    let peer = (rank + 1) % size;
    let mut got = vec![0i32; 8];
    let st = f.read_at_all(peer * 8, &mut got[..]);
    assert_eq!(st.count(i32::equivalent_datatype()), 8);
    assert!(
        got.iter()
            .enumerate()
            .all(|(i, &v)| v == (peer * 100 + i as u64) as i32),
        "{got:?}"
    );
    // Short read at end of file.
    let st = f.read_at(size * 8 - 2, &mut got[..]);
    assert_eq!(st.count(i32::equivalent_datatype()), 2);
    // Individual pointer.
    f.try_seek((rank * 8) as i64, Whence::Set).unwrap();
    let mut two = [0i32; 2];
    f.read(&mut two[..]);
    assert_eq!(f.try_position().unwrap(), rank * 8 + 2);
    assert_eq!(two[1], (rank * 100 + 1) as i32);
    // Non-blocking, in a scope.
    let doubled: Vec<i32> = mine.iter().map(|v| v * 2).collect();
    // The collective write progresses in the background: rank r starts only
    // after rank r-1 started and told it so with a synchronous send.
    oxmpi::request::scope(|scope| {
        if rank > 0 {
            let (t, _) = world.process_at_rank(rank as i32 - 1).receive::<u64>();
            assert_eq!(t, rank - 1);
        }
        let r = f.immediate_write_at(scope, rank * 8, &doubled[..], true);
        if rank + 1 < size {
            world
                .process_at_rank(rank as i32 + 1)
                .synchronous_send(&rank);
        }
        r.wait();
    });
    let mut back = vec![0i32; 8];
    oxmpi::request::scope(|scope| {
        let st = f
            .immediate_read_at(scope, rank * 8, &mut back[..], false)
            .wait();
        assert_eq!(st.count(i32::equivalent_datatype()), 8);
    });
    assert_eq!(back, doubled);
    // Non-blocking at the individual pointer, collective, then independent.
    f.try_seek((rank * 8) as i64, Whence::Set).unwrap();
    oxmpi::request::scope(|scope| {
        f.try_immediate_write(scope, &mine[..], true)
            .unwrap()
            .wait();
    });
    assert_eq!(f.try_position().unwrap(), rank * 8 + 8);
    f.try_seek((rank * 8) as i64, Whence::Set).unwrap();
    oxmpi::request::scope(|scope| {
        let st = f
            .try_immediate_read(scope, &mut back[..], false)
            .unwrap()
            .wait();
        assert_eq!(st.count(i32::equivalent_datatype()), 8);
    });
    assert_eq!(back, mine);
    // Ordered writes land in rank order at the shared pointer.
    f.try_seek_shared(0, Whence::Set).unwrap();
    let me = vec![rank as i32; rank as usize + 1];
    f.write_ordered(&me[..]);
    assert_eq!(f.try_position_shared().unwrap(), size * (size + 1) / 2);
    f.close();
    if rank == 0 {
        let bytes = std::fs::read(&p).unwrap();
        let ints: Vec<i32> = bytes
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        let mut k = 0;
        for r in 0..size as i32 {
            for _ in 0..=r {
                assert_eq!(ints[k], r, "{ints:?}");
                k += 1;
            }
        }
        File::try_delete(&p).unwrap();
    }
    world.barrier();

    // Each rank owns 2 columns of an nr x nc array of f64 (a vector view);
    // written collectively, read back with std::fs byte for byte.
    let p = dir.join("api_io_grid.dat");
    let (nr, nc) = (5i32, 2 * size as i32);
    let ft = oxmpi::datatype::UserDatatype::vector(nr, 2, nc, &f64::equivalent_datatype());
    let local: Vec<f64> = (0..nr * 2)
        .map(|k| ((k / 2) * 1000 + rank as i32 * 2 + k % 2) as f64)
        .collect();
    let f = File::open(&world, &p, Mode::CREATE | Mode::WRONLY);
    if rank == 0 {
        // One aggregator per host by default (the multi-host test checks this line).
        let nodes = f
            .hints()
            .into_iter()
            .find(|(k, _)| k == "cb_nodes")
            .map(|(_, v)| v)
            .unwrap();
        println!("api_io: cb_nodes {nodes}");
    }
    f.set_view::<f64, _>(rank * 16, &ft);
    let st = f.write_all(&local[..]);
    assert_eq!(st.count(f64::equivalent_datatype()), nr * 2);
    f.close();
    world.barrier();
    if rank == 0 {
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len(), (nr * nc * 8) as usize);
        for (k, c) in bytes.chunks(8).enumerate() {
            let v = f64::from_ne_bytes(c.try_into().unwrap());
            assert_eq!(v, ((k as i32 / nc) * 1000 + k as i32 % nc) as f64);
        }
        File::try_delete(&p).unwrap();
    }
    world.barrier();

    // Errors: a missing file, a read-only file written, an exclusive create of an existing one.
    let err = File::try_open(&world, dir.join("no/such/file"), Mode::RDONLY).unwrap_err();
    assert_eq!(err.class, ErrorClass::NoSuchFile, "{err}");
    assert!(
        err.message.contains("MPI_File_open") && err.message.contains("no/such/file"),
        "{err}"
    );
    let err = File::try_open(&world, &p, Mode::RDONLY | Mode::CREATE).unwrap_err();
    assert_eq!(err.class, ErrorClass::Amode, "{err}");
    let p = dir.join("api_io_ro.dat");
    File::open(&world, &p, Mode::CREATE | Mode::WRONLY).close();
    let err = File::try_open(&world, &p, Mode::CREATE | Mode::EXCL | Mode::WRONLY).unwrap_err();
    assert_eq!(err.class, ErrorClass::FileExists, "{err}");
    let f = File::open(&world, &p, Mode::RDONLY | Mode::DELETE_ON_CLOSE);
    assert_eq!(
        f.try_write_at(0, &[1u8][..]).unwrap_err().class,
        ErrorClass::ReadOnly
    );
    f.close();
    assert!(!p.exists());
    println!("api_io: rank {rank} of {size} ok");
}
