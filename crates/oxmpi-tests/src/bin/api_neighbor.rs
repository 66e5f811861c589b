//! Neighbourhood collectives through the `oxmpi` API (`NeighborCollectives`): allgather,
//! allgatherv, alltoall and alltoallv, blocking and immediate, on a periodic ring, a
//! non-periodic line (missing neighbours leave their blocks untouched), a graph (a
//! star) and a distributed graph (each rank hears from its left, talks to its right),
//! and the errors of a communicator without the right buffers. Runs on any size >= 2.

use oxmpi::datatype::{Partition, PartitionMut};
use oxmpi::topology::Rank;
use oxmpi::traits::*;
use oxmpi_tests::check;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, n) = (world.rank(), world.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);

    // 1. A periodic ring: sources and destinations are [left, right].
    let ring = world
        .create_cartesian_communicator(&[n], &[true], false)
        .unwrap();
    let mut got = [-1 as Rank; 2];
    ring.neighbor_all_gather_into(&me, &mut got[..]);
    check!(me, got == [left, right], "ring allgather {got:?}");

    // Two elements each, immediate.
    let mine = [me, 100 + me];
    let mut got4 = [-1 as Rank; 4];
    oxmpi::request::scope(|sc| {
        ring.immediate_neighbor_all_gather_into(sc, &mine[..], &mut got4[..])
            .wait();
    });
    check!(
        me,
        got4 == [left, 100 + left, right, 100 + right],
        "ring iallgather {got4:?}"
    );

    // Alltoall: block 0 goes to the left, block 1 to the right; the left neighbour's
    // block 1 and the right one's block 0 come back.
    let send = [10 * me, 10 * me + 1];
    let mut got = [-1 as Rank; 2];
    ring.neighbor_all_to_all_into(&send[..], &mut got[..]);
    check!(
        me,
        got == [10 * left + 1, 10 * right],
        "ring alltoall {got:?}"
    );
    let mut got = [-1 as Rank; 2];
    oxmpi::request::scope(|sc| {
        ring.immediate_neighbor_all_to_all_into(sc, &send[..], &mut got[..])
            .wait();
    });
    check!(
        me,
        got == [10 * left + 1, 10 * right],
        "ring ialltoall {got:?}"
    );

    // Allgatherv: the left neighbour's value at 2, the right one's at 0.
    let mut got = [-1 as Rank; 3];
    {
        let (c, d) = ([1, 1], [2, 0]);
        let mut part = PartitionMut::new(&mut got[..], &c[..], &d[..]);
        ring.neighbor_all_gather_varcount_into(&me, &mut part);
    }
    check!(me, got == [right, -1, left], "ring allgatherv {got:?}");
    let mut got = [-1 as Rank; 3];
    {
        let (c, d) = ([1, 1], [2, 0]);
        let mut part = PartitionMut::new(&mut got[..], &c[..], &d[..]);
        oxmpi::request::scope(|sc| {
            ring.immediate_neighbor_all_gather_varcount_into(sc, &me, &mut part)
                .wait();
        });
    }
    check!(me, got == [right, -1, left], "ring iallgatherv {got:?}");

    // Alltoallv: one element to the left, two to the right; receive two from the
    // left (its "right" part) and one from the right (its "left" part).
    let send = [me, 1000 + me, 2000 + me];
    let (sc_, sd) = ([1, 2], [0, 1]);
    let (rc, rd) = ([2, 1], [0, 2]);
    let mut got = [-1 as Rank; 3];
    {
        let sp = Partition::new(&send[..], &sc_[..], &sd[..]);
        let mut rp = PartitionMut::new(&mut got[..], &rc[..], &rd[..]);
        ring.neighbor_all_to_all_varcount_into(&sp, &mut rp);
    }
    check!(
        me,
        got == [1000 + left, 2000 + left, right],
        "ring alltoallv {got:?}"
    );
    let mut got = [-1 as Rank; 3];
    {
        let sp = Partition::new(&send[..], &sc_[..], &sd[..]);
        let mut rp = PartitionMut::new(&mut got[..], &rc[..], &rd[..]);
        oxmpi::request::scope(|sc| {
            ring.immediate_neighbor_all_to_all_varcount_into(sc, &sp, &mut rp)
                .wait();
        });
    }
    check!(
        me,
        got == [1000 + left, 2000 + left, right],
        "ring ialltoallv {got:?}"
    );

    // 2. A non-periodic line: the ends have a missing neighbour, whose block stays as it was.
    let line = world
        .create_cartesian_communicator(&[n], &[false], false)
        .unwrap();
    let mut got = [-7 as Rank; 2];
    line.neighbor_all_gather_into(&me, &mut got[..]);
    let want_l = if me == 0 { -7 } else { me - 1 };
    let want_r = if me == n - 1 { -7 } else { me + 1 };
    check!(me, got == [want_l, want_r], "line allgather {got:?}");

    // 3. A graph: a star around rank 0 (rank 0's neighbours are all others, in order).
    let (index, edges) = oxmpi_tests::star_graph(n);
    let star = world
        .create_graph_communicator(&index, &edges, false)
        .unwrap();
    let deg = if me == 0 { (n - 1) as usize } else { 1 };
    let mut got = vec![-1 as Rank; deg];
    star.neighbor_all_gather_into(&(me * me), &mut got[..]);
    let want: Vec<Rank> = if me == 0 {
        (1..n).map(|r| r * r).collect()
    } else {
        vec![0]
    };
    check!(me, got == want, "star allgather {got:?}");
    // Alltoall on the star: to neighbour j the value 100 * me + j.
    let send: Vec<Rank> = (0..deg as Rank).map(|j| 100 * me + j).collect();
    let mut got = vec![-1 as Rank; deg];
    star.neighbor_all_to_all_into(&send[..], &mut got[..]);
    let want: Vec<Rank> = if me == 0 {
        (1..n).map(|r| 100 * r).collect()
    } else {
        vec![me - 1]
    };
    check!(me, got == want, "star alltoall {got:?}");

    // 4. A distributed graph: in from the left only, out to the right only.
    let dg =
        world.create_distributed_graph_communicator_adjacent(&[left], None, &[right], None, false);
    let mut got = [-1 as Rank; 1];
    dg.neighbor_all_gather_into(&me, &mut got[..]);
    check!(me, got == [left], "dist graph allgather {got:?}");
    let mut got = [-1 as Rank; 1];
    let seven = [7 * me];
    oxmpi::request::scope(|sc| {
        dg.immediate_neighbor_all_to_all_into(sc, &seven[..], &mut got[..])
            .wait();
    });
    check!(me, got == [7 * left], "dist graph ialltoall {got:?}");

    // 5. Errors: a partition with the wrong number of parts, a part outside its buffer.
    let mut got = [0 as Rank; 2];
    {
        let (c, d) = ([1], [0]);
        let mut part = PartitionMut::new(&mut got[..], &c[..], &d[..]);
        let e = ring
            .try_neighbor_all_gather_varcount_into(&me, &mut part)
            .unwrap_err();
        check!(
            me,
            e.to_string().contains("MPI_Neighbor_allgatherv"),
            "error names the call: {e}"
        );
    }
    {
        let (c, d) = ([1, 1], [0, 5]);
        let mut part = PartitionMut::new(&mut got[..], &c[..], &d[..]);
        let e = ring
            .try_neighbor_all_gather_varcount_into(&me, &mut part)
            .unwrap_err();
        check!(
            me,
            e.class == oxmpi::ErrorClass::Count,
            "part outside the buffer: {e}"
        );
    }

    // 6. Persistent: planned once, run three times.
    let val = [1000 + me];
    let mut got = [-1 as Rank; 2];
    let (c, d) = ([1, 1], [0, 1]);
    let mut gv = [-1 as Rank; 2];
    let mut gv_part = PartitionMut::new(&mut gv[..], &c[..], &d[..]);
    let a2v_send = [me, -me];
    let a2v_sp = Partition::new(&a2v_send[..], &c[..], &d[..]);
    let mut a2v = [-1 as Rank; 2];
    let mut a2v_rp = PartitionMut::new(&mut a2v[..], &c[..], &d[..]);
    let mut a2 = [-1 as Rank; 2];
    let a2_send = [2 * me, 2 * me + 1];
    oxmpi::request::scope(|sc| {
        let mut ag = ring.neighbor_all_gather_init(sc, &val[..], &mut got[..]);
        let mut agv = ring.neighbor_all_gather_varcount_init(sc, &val[..], &mut gv_part);
        let mut at = ring.neighbor_all_to_all_init(sc, &a2_send[..], &mut a2[..]);
        let mut atv = ring.neighbor_all_to_all_varcount_init(sc, &a2v_sp, &mut a2v_rp);
        for run in 0..3 {
            ag.data_mut().unwrap().fill(-1);
            at.data_mut().unwrap().fill(-1);
            ag.start();
            agv.start();
            at.start();
            atv.start();
            ag.wait();
            agv.wait();
            at.wait();
            atv.wait();
            let got = ag.data().unwrap();
            check!(
                me,
                got == [1000 + left, 1000 + right],
                "persistent allgather run {run}: {got:?}"
            );
            let got = at.data().unwrap();
            check!(
                me,
                got == [2 * left + 1, 2 * right],
                "persistent alltoall run {run}: {got:?}"
            );
        }
    });
    check!(
        me,
        gv == [1000 + left, 1000 + right],
        "persistent allgatherv {gv:?}"
    );
    check!(me, a2v == [-left, right], "persistent alltoallv {a2v:?}");

    world.barrier();
    println!("api_neighbor: rank {me} of {n} ok");
}
