use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let dup = world.duplicate();
    std::thread::spawn(move || dup.rank());
}
