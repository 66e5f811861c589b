//! Deadlocks written with the `oxmpi` API, for mpiexec's detection (issue 14):
//! `cycle` (every rank receives from its right neighbour first) and
//! `collectives` (rank 0 broadcasts while the others reduce, 1 Mi ints); and
//! two jobs that must never be reported: `transfer [MIB]` (a long message in
//! flight) and `compute` (rank 0 sleeps outside MPI, the others wait).

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().expect("MPI init");
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    match std::env::args().nth(1).as_deref() {
        Some("collectives") => {
            let x = vec![1i32; 1 << 20];
            let root = world.process_at_rank(0);
            if rank == 0 {
                let mut x = x;
                root.broadcast_into(&mut x[..]);
            } else {
                root.reduce_into(&x[..], SystemOperation::sum());
            }
        }
        Some("transfer") => {
            // Not a deadlock: rank 1 waits in a receive while MIB mebibytes stream to it.
            let mib: usize = std::env::args()
                .nth(2)
                .and_then(|v| v.parse().ok())
                .unwrap_or(256);
            if rank == 0 {
                world.process_at_rank(1).send(&vec![7u8; mib << 20][..]);
            } else if rank == 1 {
                let (v, _) = world.process_at_rank(0).receive_vec::<u8>();
                assert!(v.len() == mib << 20 && v.iter().all(|&b| b == 7));
                println!("received {} bytes", v.len());
            }
        }
        Some("compute") => {
            // Not a deadlock: rank 0 sleeps outside MPI while the others wait in a barrier.
            if rank == 0 {
                std::thread::sleep(std::time::Duration::from_secs(4));
            }
            world.barrier();
            if rank == 0 {
                println!("all passed the barrier");
            }
        }
        _ => {
            let right = world.process_at_rank((rank + 1) % size);
            let (v, _) = right.receive::<i32>();
            right.send(&v);
        }
    }
}
