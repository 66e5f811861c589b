use oxmpi::topology::SimpleCommunicator;
use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (_universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let me = SimpleCommunicator::self_comm();
    std::thread::spawn(move || me.rank());
}
