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
    // A duplicate, converted with the universe as proof, moves to another thread (Send).
    let dup = world.duplicate().into_multithreaded(&universe);
    let size = std::thread::spawn(move || dup.size()).join().unwrap();
    assert_eq!(size, world.size());
}
