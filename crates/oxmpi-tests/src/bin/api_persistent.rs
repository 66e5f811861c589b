//! Persistent collectives through the `oxmpi` API: every `*_init` method, each request
//! started several times with data changed between runs (through `data_mut`), several
//! requests started in different orders on different ranks (they match in init
//! order), and the count arrays of the varcount forms overwritten right after init.
//! Runs on any size.

use oxmpi::collective::SystemOperation;
use oxmpi::datatype::{Partition, PartitionMut};
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi_tests::check;

const RUNS: i32 = 4;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let n = size as usize;
    let root = world.process_at_rank(0);
    let sum = SystemOperation::sum;

    // 1. in-place allreduce, the operands changed between runs
    let mut acc = [0i64; 3];
    scope(|s| {
        let mut r = world.all_reduce_in_place_init(s, &mut acc, sum());
        for run in 0..RUNS as i64 {
            let d = r.data_mut().unwrap();
            *d = [run, i64::from(me) * run, 1];
            r.start();
            r.wait();
            let n = i64::from(size);
            let want = [run * n, run * n * (n - 1) / 2, n];
            check!(
                me,
                r.data().unwrap() == &want,
                "allreduce in place run {run}: {:?}",
                r.data()
            );
        }
    });

    // 2. gather / reduce: the non-roots change their contribution between runs
    let mut g_mine = [0i32; 2];
    let mut g_all = vec![0i32; 2 * n];
    let mut r_mine = [0i32];
    let mut r_out = [0i32];
    let root_part = [0, -1];
    let root_red = [1000];
    scope(|s| {
        if me == 0 {
            let mut g = root.gather_init_root(s, &root_part, &mut g_all[..]);
            let mut r = root.reduce_init_root(s, &root_red, &mut r_out, sum());
            for run in 0..RUNS {
                // started in the opposite order of the other ranks
                r.start();
                g.start();
                g.wait();
                r.wait();
                let all = g.data().unwrap();
                for j in 1..n {
                    check!(
                        me,
                        all[2 * j] == 100 * j as i32 + run && all[2 * j + 1] == -run,
                        "gather run {run}: {all:?}"
                    );
                }
                check!(me, all[0] == 0 && all[1] == -1, "gather root part {all:?}");
                let want = 1000 + (1..size).map(|j| j * run).sum::<i32>();
                check!(
                    me,
                    r.data().unwrap()[0] == want,
                    "reduce run {run}: {:?} != {want}",
                    r.data()
                );
            }
        } else {
            let mut g = root.gather_init(s, &mut g_mine);
            let mut r = root.reduce_init(s, &mut r_mine, sum());
            for run in 0..RUNS {
                *g.data_mut().unwrap() = [100 * me + run, -run];
                r.data_mut().unwrap()[0] = me * run;
                g.start();
                r.start();
                r.wait();
                g.wait();
            }
        }
    });

    // 3. bcast and scatter: the root changes the data between runs
    let mut b = [0u16; 5];
    let mut sc_all: Vec<i32> = vec![0; 3 * n];
    let mut sc_mine = [0i32; 3];
    scope(|s| {
        if me == 0 {
            let mut bc = root.broadcast_init(s, &mut b[..]);
            for run in 0..RUNS as u16 {
                bc.data_mut()
                    .unwrap()
                    .copy_from_slice(&[run, run + 1, run + 2, 7, 9]);
                bc.start();
                bc.wait();
            }
        } else {
            let mut bc = root.broadcast_init(s, &mut b[..]);
            for run in 0..RUNS as u16 {
                bc.start();
                bc.wait();
                let got = bc.data().unwrap();
                check!(
                    me,
                    got == &[run, run + 1, run + 2, 7, 9],
                    "bcast run {run}: {got:?}"
                );
            }
        }
    });
    for j in 0..3 * n {
        sc_all[j] = j as i32;
    }
    scope(|s| {
        let mut sc = if me == 0 {
            root.scatter_init_root(s, &sc_all[..], &mut sc_mine[..])
        } else {
            root.scatter_init(s, &mut sc_mine[..])
        };
        for run in 0..RUNS {
            sc.start();
            sc.wait();
            let got = sc.data().unwrap();
            let m = 3 * me;
            check!(me, got == &[m, m + 1, m + 2], "scatter run {run}: {got:?}");
            // the run overwrote it; clear it so the next run must write it again
            sc.data_mut().unwrap().fill(-7);
        }
    });

    // 4. varcount forms: the counts and displacements are read once, at init
    // gatherv: rank j's element lands at slot 2 * (n - 1 - j) (reversed, with gaps)
    let rev: Vec<i32> = (0..size).map(|j| 2 * (size - 1 - j)).collect();
    let mut gv_all = vec![-1i32; 2 * n];
    let mut gv_part = PartitionMut::new(&mut gv_all[..], vec![1; n], rev.clone());
    let mut gv_mine = [0i32];
    let gv_root = [-5i32];
    // scatterv: rank j gets element n - 1 - j
    let sv_all: Vec<i32> = (0..size).map(|j| 10 * j).collect();
    let sv_displs: Vec<i32> = (0..size).rev().collect();
    let sv_part = Partition::new(&sv_all[..], vec![1; n], sv_displs.clone());
    let mut sv_mine = [0i32];
    scope(|s| {
        if me == 0 {
            let mut gv = root.gather_varcount_init_root(s, &gv_root[..], &mut gv_part);
            let mut sv = root.scatter_varcount_init_root(s, &sv_part, &mut sv_mine[..]);
            for _ in 0..RUNS {
                sv.start();
                gv.start();
                gv.wait();
                sv.wait();
                check!(me, sv.data().unwrap()[0] == sv_all[n - 1], "scatterv root");
                sv.data_mut().unwrap()[0] = -1;
            }
        } else {
            let mut gv = root.gather_varcount_init(s, &mut gv_mine[..]);
            let mut sv = root.scatter_varcount_init(s, &mut sv_mine[..]);
            for run in 0..RUNS {
                gv.data_mut().unwrap()[0] = 10 * me + run;
                gv.start();
                sv.start();
                sv.wait();
                gv.wait();
                let got = sv.data().unwrap()[0];
                check!(
                    me,
                    got == sv_all[n - 1 - me as usize],
                    "scatterv run {run}: {got}"
                );
                sv.data_mut().unwrap()[0] = -1;
            }
        }
    });
    drop(gv_part);
    if me == 0 {
        check!(
            me,
            gv_all[2 * (n - 1)] == -5,
            "gatherv root slot {gv_all:?}"
        );
        for j in 1..n {
            let want = 10 * j as i32 + RUNS - 1;
            check!(
                me,
                gv_all[2 * (n - 1 - j)] == want,
                "gatherv slot of rank {j}: {gv_all:?}"
            );
        }
    }

    // 5. the rest, started in rank-dependent orders (they match in init order)
    let ag_send = [me];
    let mut ag = vec![-1i32; n];
    let a2_send: Vec<i32> = (0..size).map(|j| 100 * me + j).collect();
    let mut a2 = vec![-1i32; n];
    let rsb_send: Vec<i32> = (0..size).map(|j| j + me).collect();
    let mut rsb = vec![-1i32; 1];
    let one = [me + 1];
    let mut scan_out = vec![-1i32; 1];
    let mut ex_out = vec![-1i32; 1];
    let mut agv_out = vec![-1i32; n];
    let mut agv_part = PartitionMut::new(&mut agv_out[..], vec![1; n], sv_displs.clone());
    // all-to-all-v: one element from each rank, stored in reverse rank order
    let a2v_send = Partition::new(&a2_send[..], vec![1; n], (0..size).collect::<Vec<i32>>());
    let mut a2v_out = vec![-1i32; n];
    let mut a2v_part = PartitionMut::new(&mut a2v_out[..], vec![1; n], sv_displs.clone());
    scope(|s| {
        let mut reqs = vec![
            world.all_gather_init(s, &ag_send[..], &mut ag[..]),
            world.all_to_all_init(s, &a2_send[..], &mut a2[..]),
            world.reduce_scatter_block_init(s, &rsb_send[..], &mut rsb[..], sum()),
            world.scan_init(s, &one[..], &mut scan_out[..], sum()),
            world.exclusive_scan_init(s, &one[..], &mut ex_out[..], sum()),
        ];
        let mut agv = world.all_gather_varcount_init(s, &ag_send[..], &mut agv_part);
        let mut a2v = world.all_to_all_varcount_init(s, &a2v_send, &mut a2v_part);
        let mut bar = world.barrier_init();
        let k = reqs.len();
        for run in 0..RUNS {
            let first = (me + run) as usize % k;
            if me % 2 == 1 {
                bar.start();
                a2v.start();
            }
            for i in 0..k {
                reqs[(first + i) % k].start();
            }
            agv.start();
            if me % 2 == 0 {
                a2v.start();
                bar.start();
            }
            for r in reqs.iter_mut().rev() {
                r.wait();
            }
            bar.wait();
            a2v.wait();
            agv.wait();
            let got = reqs[0].data().unwrap();
            check!(
                me,
                got.iter().enumerate().all(|(j, &v)| v == j as i32),
                "allgather run {run}: {got:?}"
            );
            let got = reqs[1].data().unwrap();
            check!(
                me,
                got.iter()
                    .enumerate()
                    .all(|(j, &v)| v == 100 * j as i32 + me),
                "alltoall run {run}: {got:?}"
            );
            let want: i32 = (0..size).map(|r| me + r).sum();
            check!(
                me,
                reqs[2].data().unwrap()[0] == want,
                "reduce_scatter_block run {run}: {:?} != {want}",
                reqs[2].data()
            );
            let want: i32 = (1..=me + 1).sum();
            check!(
                me,
                reqs[3].data().unwrap()[0] == want,
                "scan run {run}: {:?} != {want}",
                reqs[3].data()
            );
            if me > 0 {
                check!(
                    me,
                    reqs[4].data().unwrap()[0] == want - (me + 1),
                    "exscan run {run}: {:?}",
                    reqs[4].data()
                );
            }
            for r in reqs.iter_mut() {
                r.data_mut().unwrap().fill(-1);
            }
        }
    });
    drop(agv_part);
    drop(a2v_part);
    check!(
        me,
        agv_out
            .iter()
            .enumerate()
            .all(|(j, &v)| v == (n - 1 - j) as i32),
        "allgatherv {agv_out:?}"
    );
    check!(
        me,
        a2v_out
            .iter()
            .enumerate()
            .all(|(j, &v)| v == 100 * (n - 1 - j) as i32 + me),
        "alltoallv {a2v_out:?}"
    );

    println!("api_persistent: rank {me} of {size} ok");
}
