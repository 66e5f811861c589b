use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Funneled).unwrap();
    let world = universe.world();
    let cart = world.create_cartesian_communicator(&[world.size()], &[true], false).unwrap();
    std::thread::spawn(move || cart.rank());
}
