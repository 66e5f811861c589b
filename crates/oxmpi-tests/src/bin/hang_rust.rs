//! Deadlocks written with the `oxmpi` API, for mpiexec's detection (issue 14):
//! `cycle` (every rank receives from its right neighbour first) and
//! `collectives` (rank 0 broadcasts while the others reduce, 1 Mi ints).

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
        _ => {
            let right = world.process_at_rank((rank + 1) % size);
            let (v, _) = right.receive::<i32>();
            right.send(&v);
        }
    }
}
