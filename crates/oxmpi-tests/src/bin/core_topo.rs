//! Process topologies at the engine level: Cartesian grids (coordinates,
//! shifts, sub-grids, a halo exchange by neighbourhood collective), the seed's
//! shuffle-exchange graph with its three sendrecv_replace permutations (8 ranks),
//! distributed graphs, and topology errors.

use oxmpi_core::buf::{RecvBuf, SendBuf};
use oxmpi_core::coll::api_move as mv;
use oxmpi_core::comm::topology;
use oxmpi_core::pt2pt;
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::topo::{dims_create, DistGraphEdges, Topology};
use oxmpi_core::{ErrorClass, PROC_NULL};
use oxmpi_tests::check;

fn main() {
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let rank = world.rank();
    let n = world.size();

    // A periodic 2-D grid over all ranks.
    let mut dims = [0, 0];
    dims_create(n, &mut dims).unwrap();
    let cart = topology::cart_create(&world, &dims, &[true, false], false)
        .unwrap()
        .unwrap();
    let Some(Topology::Cart(c)) = cart.topology() else {
        panic!("no cart topology")
    };
    let coords = c.coords(cart.rank()).unwrap();
    check!(rank, c.rank(&coords).unwrap() == cart.rank(), "rank/coords");
    // Halo exchange: every rank sends its rank to its 4 neighbours and checks
    // what comes back against the shifts.
    let nbrs = c.neighbors(cart.rank()).unwrap();
    let send = vec![cart.rank(); 4];
    let mut recv = vec![-7i32; 4];
    mv::neighbor_alltoall(
        SendBuf::slice(&send),
        1,
        RecvBuf::slice(&mut recv),
        1,
        &cart,
    )
    .unwrap();
    for (i, &src) in nbrs.iter().enumerate() {
        let want = if src == PROC_NULL { -7 } else { src };
        check!(
            rank,
            recv[i] == want,
            "halo slot {i}: got {} want {want} (neighbours {nbrs:?})",
            recv[i]
        );
    }
    let mut gathered = vec![-7i32; 4];
    mv::neighbor_allgather(
        SendBuf::slice(&[cart.rank()]),
        1,
        RecvBuf::slice(&mut gathered),
        1,
        &cart,
    )
    .unwrap();
    check!(
        rank,
        gathered == recv,
        "allgather {gathered:?} vs alltoall {recv:?}"
    );
    // Rows and columns as sub-grids.
    let row = topology::cart_sub(&cart, &[false, true]).unwrap();
    check!(
        rank,
        row.size() == dims[1] && row.rank() == coords[1],
        "row sub-grid"
    );
    // Shifts at a non-periodic edge give PROC_NULL.
    let (src, dst) = c.shift(cart.rank(), 1, 1).unwrap();
    check!(
        rank,
        (coords[1] == 0) == (src == PROC_NULL) && (coords[1] == dims[1] - 1) == (dst == PROC_NULL),
        "shift ends"
    );
    // Errors: a cart query on a graph-less communicator, a grid too big.
    let e = topology::cart_sub(&world, &[true]).unwrap_err();
    check!(rank, e.class == ErrorClass::Topology, "{e}");
    let e = topology::cart_create(&world, &[n + 1], &[false], false).unwrap_err();
    check!(
        rank,
        e.class == ErrorClass::Arg || e.class == ErrorClass::Dims,
        "{e}"
    );

    // The seed's shuffle-exchange graph on 8 nodes.
    if n == 8 {
        let ex = |a: i32| a ^ 1;
        let sh = |a: i32| ((a << 1) | (a >> 2)) & 7;
        let unsh = |a: i32| ((a >> 1) | ((a & 1) << 2)) & 7;
        let mut index = Vec::new();
        let mut edges = Vec::new();
        for a in 0..8 {
            edges.extend([ex(a), sh(a), unsh(a)]);
            index.push(edges.len() as i32);
        }
        let g = topology::graph_create(&world, 8, &index, &edges, false)
            .unwrap()
            .unwrap();
        let Some(Topology::Graph(gt)) = g.topology() else {
            panic!("no graph topology")
        };
        let nb = gt.neighbors(g.rank()).unwrap().to_vec();
        let table = [
            [1, 0, 0],
            [0, 2, 4],
            [3, 4, 1],
            [2, 6, 5],
            [5, 1, 2],
            [4, 3, 6],
            [7, 5, 3],
            [6, 7, 7],
        ];
        check!(
            rank,
            nb == table[g.rank() as usize],
            "neighbours {nb:?} vs the seed's table"
        );
        let mut a = (g.rank() as f32).to_le_bytes();
        pt2pt::sendrecv_replace(&g, &mut a, nb[0], 0, nb[0], 0).unwrap();
        check!(
            rank,
            f32::from_le_bytes(a) == ex(g.rank()) as f32,
            "after exchange"
        );
        pt2pt::sendrecv_replace(&g, &mut a, nb[1], 0, nb[2], 0).unwrap();
        check!(
            rank,
            f32::from_le_bytes(a) == ex(unsh(g.rank())) as f32,
            "after shuffle"
        );
        pt2pt::sendrecv_replace(&g, &mut a, nb[2], 0, nb[1], 0).unwrap();
        check!(
            rank,
            f32::from_le_bytes(a) == ex(g.rank()) as f32,
            "after unshuffle"
        );
    }

    // A distributed graph: rank r sends to r+1 and r+2 (mod n), declared by
    // rank 0 for everybody; each rank must learn its own in/out lists.
    let edges = if rank == 0 {
        let mut e = DistGraphEdges::default();
        for r in 0..n {
            e.sources.push(r);
            e.degrees.push(2);
            e.destinations.extend([(r + 1) % n, (r + 2) % n]);
        }
        e
    } else {
        DistGraphEdges::default()
    };
    let dg = topology::dist_graph_create(&world, &edges, false).unwrap();
    let Some(Topology::DistGraph(d)) = dg.topology() else {
        panic!("no dist graph")
    };
    let mut ins = d.sources.clone();
    ins.sort();
    let mut want = vec![(rank + n - 1) % n, (rank + n - 2) % n];
    want.sort();
    check!(
        rank,
        ins == want && d.destinations == vec![(rank + 1) % n, (rank + 2) % n],
        "dist graph {d:?}"
    );
    let mut got = vec![0i32; 2];
    mv::neighbor_allgather(SendBuf::slice(&[rank]), 1, RecvBuf::slice(&mut got), 1, &dg).unwrap();
    check!(
        rank,
        got == d.sources,
        "dist graph allgather {got:?} vs {:?}",
        d.sources
    );
    runtime::finalize().unwrap();
    if rank == 0 {
        println!("topo: ok");
    }
}
