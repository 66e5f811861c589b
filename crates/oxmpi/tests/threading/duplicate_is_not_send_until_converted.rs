use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let dup = universe.world().duplicate();
    std::thread::spawn(move || dup.rank());
}
