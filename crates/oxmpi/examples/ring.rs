//! Passes a token around the ring several times; rank 0 prints and checks the result.
//! `mpiexec -n 4 target/debug/examples/ring [LAPS]`

use oxmpi::traits::*;

fn main() {
    let laps: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    // Each rank adds its rank + 1 to the token each time it passes.
    let mut token: u64 = 0;
    for lap in 0..laps {
        if rank == 0 {
            token += 1;
            next.send_with_tag(&token, lap as i32);
            let (t, _) = prev.receive_with_tag::<u64>(lap as i32);
            token = t;
        } else {
            let (t, _) = prev.receive_with_tag::<u64>(lap as i32);
            token = t + rank as u64 + 1;
            next.send_with_tag(&token, lap as i32);
        }
    }
    if rank == 0 {
        let n = size as u64;
        let expected = laps * (n * (n + 1) / 2);
        println!("ring: {laps} laps over {size} ranks, token = {token} (expected {expected})");
        if token != expected {
            eprintln!("ring: WRONG token");
            world.abort(2);
        }
    }
}
