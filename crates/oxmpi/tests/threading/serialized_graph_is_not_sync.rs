use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Serialized).unwrap();
    let world = universe.world();
    let n = world.size();
    let index: Vec<i32> = (1..=n).collect();
    let edges: Vec<i32> = (0..n).map(|i| (i + 1) % n).collect();
    let graph = world.create_graph_communicator(&index, &edges, false).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| graph.rank());
    });
}
