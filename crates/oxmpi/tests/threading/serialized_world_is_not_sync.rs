use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Serialized).unwrap();
    let world = universe.world();
    std::thread::scope(|s| {
        s.spawn(|| world.rank());
    });
}
