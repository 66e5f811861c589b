use oxmpi::topology::InterCommunicator;
use oxmpi::traits::*;

// An intercommunicator made below Threading::Multiple stays on its thread.
fn check(inter: InterCommunicator) {
    std::thread::spawn(move || inter.remote_size());
}

fn main() {
    let _universe = oxmpi::initialize().unwrap();
    let _ = check;
}
