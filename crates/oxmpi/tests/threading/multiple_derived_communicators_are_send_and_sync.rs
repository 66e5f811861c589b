// Under Threading::Multiple, everything made from the world keeps its thread safety:
// duplicates, splits, Cartesian, graph, distributed-graph and intercommunicators, what
// they make in turn, and IntoTopology's variants.
use oxmpi::environment::threading::Multithreaded;
use oxmpi::topology::{Color, IntoTopology, MergeOrder, SimpleCommunicator};
use oxmpi::traits::*;
use oxmpi::Threading;

fn send_sync<T: Send + Sync>(x: T) -> T {
    x
}

// Type-level only: an intercommunicator needs two disjoint groups, a singleton has one.
#[allow(dead_code)]
fn inter(world: &SimpleCommunicator<Multithreaded>, local: &SimpleCommunicator<Multithreaded>) {
    let inter = send_sync(local.create_intercommunicator(0, world, 1, 7));
    let merged = send_sync(inter.merge(MergeOrder::Low));
    send_sync(inter.duplicate());
    send_sync(merged.duplicate());
}

fn main() {
    let (universe, _) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    let world = universe.world();
    let n = world.size();
    let dup = send_sync(world.duplicate());
    let split = send_sync(world.split_by_color(Color::with_value(0)).unwrap());
    let shared = send_sync(world.split_shared(0));
    let sub = send_sync(world.split_by_subgroup_collective(&world.group()).unwrap());
    let cart = send_sync(world.create_cartesian_communicator(&[n], &[true], false).unwrap());
    let cart_sub = send_sync(cart.subgroup(&[true]));
    let cart_dup = send_sync(cart.duplicate());
    let index: Vec<i32> = (1..=n).collect();
    let edges: Vec<i32> = (0..n).map(|i| (i + 1) % n).collect();
    let graph = send_sync(world.create_graph_communicator(&index, &edges, false).unwrap());
    let r = world.rank();
    let dist = send_sync(world.create_distributed_graph_communicator_adjacent(
        &[(r + n - 1) % n], None, &[(r + 1) % n], None, false));
    let simple = send_sync(cart_dup);
    match simple.into_topology() {
        IntoTopology::Cartesian(c) => {
            send_sync(c);
        }
        other => panic!("a duplicate of a Cartesian communicator is Cartesian, got {other:?}"),
    }
    let _ = inter;
    // They all move to another thread and work there.
    let sizes = std::thread::spawn(move || {
        [dup.size(), split.size(), shared.size(), sub.size(), cart.size(), cart_sub.size(),
         graph.size(), dist.size()]
    })
    .join()
    .unwrap();
    assert!(sizes.iter().all(|&s| s == n));
}
