use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, provided) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    assert_eq!(provided, Threading::Multiple);
    let world = universe.world();
    // Shared by reference across scoped threads (Sync), each making its own processes.
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| world.this_process().rank());
        }
    });
    // A duplicate of the world has the world's thread safety: it moves (Send).
    let dup = world.duplicate();
    let size = std::thread::spawn(move || dup.size()).join().unwrap();
    assert_eq!(size, world.size());
    // MPI_COMM_SELF from the free function is Unthreaded; the universe converts it.
    let me = oxmpi::topology::SimpleCommunicator::self_comm().into_multithreaded(&universe);
    assert_eq!(std::thread::spawn(move || me.size()).join().unwrap(), 1);
}
