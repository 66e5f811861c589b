use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let world = universe.world();
    let p = world.process_at_rank(0);
    std::thread::scope(|s| {
        s.spawn(move || p.send(&1i32));
    });
}
