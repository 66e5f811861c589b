//! Every rank says hello: `mpiexec -n 4 target/debug/examples/hello`.

use oxmpi::traits::*;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let host = oxmpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
    println!(
        "Hello from rank {} of {} on {}",
        world.rank(),
        world.size(),
        host
    );
}
