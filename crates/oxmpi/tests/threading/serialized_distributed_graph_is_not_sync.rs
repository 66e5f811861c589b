use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Serialized).unwrap();
    let world = universe.world();
    let r = world.rank();
    let dist = world.create_distributed_graph_communicator_adjacent(&[r], None, &[r], None, false);
    std::thread::scope(|s| {
        s.spawn(|| dist.rank());
    });
}
