//! Process topologies through the `oxmpi` API: a Cartesian grid (layout, coordinates,
//! shift, sub-grids, a halo exchange with send_receive), a periodic ring, graph and
//! distributed-graph communicators. Runs on any size >= 2.

use oxmpi::point_to_point as p2p;
use oxmpi::topology::{IntoTopology, Rank, Topology};
use oxmpi::traits::*;
use oxmpi_tests::check;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());

    // 1. A 2 x (size/2) grid, periodic in the second axis; an odd last rank is left out.
    let (nx, ny) = (2, size / 2);
    let cart = world.create_cartesian_communicator(&[nx, ny], &[false, true], true);
    check!(me, cart.is_some() == (me < nx * ny), "grid membership");
    if let Some(cart) = cart {
        check!(me, cart.num_dimensions() == 2, "ndims");
        let l = cart.get_layout();
        check!(
            me,
            l.dims == [nx, ny] && l.periods == [false, true],
            "layout {l:?}"
        );
        check!(me, l.coords == [me / ny, me % ny], "coords {:?}", l.coords);
        check!(
            me,
            cart.rank_to_coordinates(me) == l.coords,
            "rank_to_coordinates"
        );
        check!(
            me,
            cart.coordinates_to_rank(&l.coords) == me,
            "coordinates_to_rank"
        );
        // Periodic axis wraps, non-periodic does not.
        check!(
            me,
            cart.coordinates_to_rank(&[l.coords[0], l.coords[1] + ny]) == me,
            "wrap"
        );
        check!(
            me,
            cart.try_coordinates_to_rank(&[nx, 0]).is_err(),
            "non-periodic out of range"
        );
        let (up, down) = cart.shift(0, 1);
        check!(
            me,
            up == (l.coords[0] == 1).then(|| me - ny),
            "shift src {up:?}"
        );
        check!(
            me,
            down == (l.coords[0] == 0).then(|| me + ny),
            "shift dest {down:?}"
        );
        let (left, right) = cart.shift(1, 1);
        let row = l.coords[0] * ny;
        check!(
            me,
            left == Some(row + (l.coords[1] + ny - 1) % ny),
            "left {left:?}"
        );
        check!(
            me,
            right == Some(row + (l.coords[1] + 1) % ny),
            "right {right:?}"
        );
        check!(me, cart.try_shift(2, 1).is_err(), "bad dimension");

        // Halo exchange: send my rank right and down; receive from left and up
        // (the null process past the non-periodic edge leaves the buffer alone).
        let mut from_left: Rank = -1;
        p2p::send_receive_into(
            &me,
            &cart.process_or_null(right),
            &mut from_left,
            &cart.process_or_null(left),
        );
        check!(me, Some(from_left) == left, "halo from left {from_left}");
        let mut from_up: Rank = -1;
        p2p::send_receive_into(
            &me,
            &cart.process_or_null(down),
            &mut from_up,
            &cart.process_or_null(up),
        );
        check!(me, from_up == up.unwrap_or(-1), "halo from up {from_up}");

        // Sub-grids: rows (keep axis 1) and columns (keep axis 0).
        let rowc = cart.subgroup(&[false, true]);
        check!(
            me,
            rowc.size() == ny && rowc.rank() == l.coords[1],
            "row comm"
        );
        check!(me, rowc.get_layout().periods == [true], "row periodic");
        let colc = cart.subgroup(&[true, false]);
        check!(
            me,
            colc.size() == nx && colc.rank() == l.coords[0],
            "col comm"
        );
        let mut colsum = 0;
        colc.all_reduce_into(&me, &mut colsum, oxmpi::collective::SystemOperation::sum());
        check!(
            me,
            colsum == l.coords[1] + (ny + l.coords[1]),
            "column sum {colsum}"
        );

        // The topology survives duplicate and shows through the simple communicator.
        let d = cart.duplicate();
        check!(
            me,
            d.topology() == Topology::Cartesian,
            "dup keeps topology"
        );
        match d.into_topology() {
            IntoTopology::Cartesian(c) => {
                check!(me, c.get_layout() == cart.get_layout(), "into_topology")
            }
            _ => check!(me, false, "into_topology lost the grid"),
        }
    }
    check!(
        me,
        world.cartesian_map(&[size], &[false]) == Some(me),
        "cartesian_map"
    );
    check!(
        me,
        world.cartesian_map(&[1], &[false]) == (me == 0).then_some(0),
        "cartesian_map partial"
    );
    check!(
        me,
        world
            .try_create_cartesian_communicator(&[size + 1], &[false], false)
            .is_err(),
        "grid too big"
    );

    // 2. A periodic ring: a full rotation by send_receive.
    let ring = world
        .create_cartesian_communicator(&[size], &[true], false)
        .unwrap();
    let (src, dst) = ring.shift(0, 1);
    let mut token = me;
    for _ in 0..size {
        let (t, _st): (Rank, _) = p2p::send_receive(
            &token,
            &ring.process_at_rank(dst.unwrap()),
            &ring.process_at_rank(src.unwrap()),
        );
        token = t;
    }
    check!(me, token == me, "ring rotation {token}");

    // 3. A graph: a star around rank 0.
    let (index, edges) = oxmpi_tests::star_graph(size);
    let star = world
        .create_graph_communicator(&index, &edges, false)
        .unwrap();
    check!(
        me,
        star.clone().into_simple().topology() == Topology::Graph,
        "graph topology"
    );
    let n = star.neighbors(me);
    check!(
        me,
        n == if me == 0 {
            (1..size).collect::<Vec<_>>()
        } else {
            vec![0]
        },
        "neighbors {n:?}"
    );
    check!(me, star.neighbors_count(0) == size - 1, "neighbors_count");
    check!(
        me,
        star.layout() == (index.clone(), edges.clone()),
        "graph layout"
    );

    // 4. A distributed graph: each rank receives from its left and sends to its right.
    let left = (me + size - 1) % size;
    let right = (me + 1) % size;
    let dg = world.create_distributed_graph_communicator_adjacent(
        &[left],
        Some(&[2]),
        &[right],
        Some(&[2]),
        false,
    );
    check!(
        me,
        dg.sources() == [left] && dg.destinations() == [right],
        "dist graph"
    );
    check!(me, dg.weights() == Some((vec![2], vec![2])), "weights");
    let (v, _) = p2p::send_receive::<Rank, _, Rank, _>(
        &me,
        &dg.process_at_rank(right),
        &dg.process_at_rank(left),
    );
    check!(me, v == left, "dist graph traffic {v}");

    world.barrier();
    println!("api_topo: rank {me} of {size} ok");
}
