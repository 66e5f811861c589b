use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let barrier = world.immediate_barrier();
    std::thread::spawn(move || barrier.wait());
}
