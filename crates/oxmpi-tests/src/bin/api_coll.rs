//! Collectives through the `oxmpi` API: every `CommunicatorCollectives` and `Root`
//! method (blocking and immediate) with checked values, system and user operations
//! (a non-commutative one checked for rank order), and `try_*` errors. Any size.

use oxmpi::collective::{SystemOperation, UnsafeUserOperation, UserOperation};
use oxmpi::datatype::{Partition, PartitionMut};
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi::ErrorClass;
use oxmpi_tests::check;

/// 2x2 integer matrices (wrapping): associative, not commutative.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Mat([i64; 4]);

fn mul(a: Mat, b: Mat) -> Mat {
    let (a, b) = (a.0, b.0);
    Mat([
        a[0].wrapping_mul(b[0])
            .wrapping_add(a[1].wrapping_mul(b[2])),
        a[0].wrapping_mul(b[1])
            .wrapping_add(a[1].wrapping_mul(b[3])),
        a[2].wrapping_mul(b[0])
            .wrapping_add(a[3].wrapping_mul(b[2])),
        a[2].wrapping_mul(b[1])
            .wrapping_add(a[3].wrapping_mul(b[3])),
    ])
}

fn mat(r: i32) -> Mat {
    Mat([1, r as i64 + 1, 2 * r as i64, 1])
}

unsafe extern "C" fn c_sum(
    inv: *mut std::ffi::c_void,
    io: *mut std::ffi::c_void,
    len: *mut std::ffi::c_int,
    _dt: *mut oxmpi::ffi::MPI_Datatype,
) {
    let n = *len as usize;
    let (a, b) = (inv as *const i32, io as *mut i32);
    for i in 0..n {
        *b.add(i) += *a.add(i);
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, n) = (world.rank(), world.size());
    let nu = n as usize;

    world.barrier();
    world.immediate_barrier().wait();

    // all_gather / immediate / varcount
    let mut all = vec![0i32; 2 * nu];
    world.all_gather_into(&[me, me * 10][..], &mut all[..]);
    check!(
        me,
        (0..n).all(|r| all[2 * r as usize] == r && all[2 * r as usize + 1] == r * 10),
        "allgather {all:?}"
    );
    let mut all2 = vec![0i32; 2 * nu];
    let pair = [me, me * 10];
    scope(|s| {
        world
            .immediate_all_gather_into(s, &pair[..], &mut all2[..])
            .wait_without_status()
    });
    check!(me, all2 == all, "iallgather");
    let counts: Vec<i32> = (0..n).map(|r| r + 1).collect();
    let displs: Vec<i32> = counts
        .iter()
        .scan(0, |a, &c| {
            let d = *a;
            *a += c;
            Some(d)
        })
        .collect();
    let total = counts.iter().sum::<i32>() as usize;
    let mine = vec![me; me as usize + 1];
    let expect_v: Vec<i32> = (0..n)
        .flat_map(|r| std::iter::repeat(r).take(r as usize + 1))
        .collect();
    let mut v = vec![-1i32; total];
    world.all_gather_varcount_into(
        &mine[..],
        &mut PartitionMut::new(&mut v[..], &counts[..], &displs[..]),
    );
    check!(me, v == expect_v, "allgatherv {v:?}");
    let mut v2 = vec![-1i32; total];
    let mut p = PartitionMut::new(&mut v2[..], &counts[..], &displs[..]);
    scope(|s| {
        world
            .immediate_all_gather_varcount_into(s, &mine[..], &mut p)
            .wait();
    });
    drop(p);
    check!(me, v2 == expect_v, "iallgatherv");

    // all_to_all / immediate / varcount
    let send: Vec<i32> = (0..n).map(|r| me * 100 + r).collect();
    let mut recv = vec![0i32; nu];
    world.all_to_all_into(&send[..], &mut recv[..]);
    check!(
        me,
        (0..n).all(|r| recv[r as usize] == r * 100 + me),
        "alltoall {recv:?}"
    );
    let mut recv2 = vec![0i32; nu];
    scope(|s| {
        world
            .immediate_all_to_all_into(s, &send[..], &mut recv2[..])
            .wait()
    });
    check!(me, recv2 == recv, "ialltoall");
    // varcount: send r+1 copies of me*100+r to process r; receive me+1 from each.
    let scounts: Vec<i32> = (0..n).map(|r| r + 1).collect();
    let sdispls = displs.clone();
    let sbuf: Vec<i32> = (0..n)
        .flat_map(|r| std::iter::repeat(me * 100 + r).take(r as usize + 1))
        .collect();
    let rcounts = vec![me + 1; nu];
    let rdispls: Vec<i32> = (0..n).map(|r| r * (me + 1)).collect();
    let want: Vec<i32> = (0..n)
        .flat_map(|r| std::iter::repeat(r * 100 + me).take(me as usize + 1))
        .collect();
    let mut rbuf = vec![0i32; nu * (me as usize + 1)];
    world.all_to_all_varcount_into(
        &Partition::new(&sbuf[..], &scounts[..], &sdispls[..]),
        &mut PartitionMut::new(&mut rbuf[..], &rcounts[..], &rdispls[..]),
    );
    check!(me, rbuf == want, "alltoallv {rbuf:?}");
    let mut rbuf2 = vec![0i32; nu * (me as usize + 1)];
    let sp = Partition::new(&sbuf[..], &scounts[..], &sdispls[..]);
    let mut rp = PartitionMut::new(&mut rbuf2[..], &rcounts[..], &rdispls[..]);
    scope(|s| {
        world
            .immediate_all_to_all_varcount_into(s, &sp, &mut rp)
            .wait();
    });
    drop(rp);
    check!(me, rbuf2 == want, "ialltoallv");

    // all_reduce with every system operation
    let tri = n * (n - 1) / 2;
    let mut x = 0i32;
    world.all_reduce_into(&me, &mut x, SystemOperation::sum());
    check!(me, x == tri, "sum {x}");
    world.all_reduce_into(&me, &mut x, SystemOperation::max());
    check!(me, x == n - 1, "max {x}");
    world.all_reduce_into(&me, &mut x, SystemOperation::min());
    check!(me, x == 0, "min {x}");
    let mut p = 0i64;
    world.all_reduce_into(&(me as i64 + 1), &mut p, SystemOperation::product());
    check!(me, p == (1..=n as i64).product::<i64>(), "prod {p}");
    let mut b = false;
    world.all_reduce_into(&(me >= 0), &mut b, SystemOperation::logical_and());
    check!(me, b, "land");
    world.all_reduce_into(&(me == n - 1), &mut b, SystemOperation::logical_or());
    check!(me, b, "lor");
    world.all_reduce_into(&true, &mut b, SystemOperation::logical_xor());
    check!(me, b == (n % 2 == 1), "lxor");
    let bits = 1u32 << me;
    let mut u = 0u32;
    world.all_reduce_into(&bits, &mut u, SystemOperation::bitwise_or());
    check!(me, u == (1u32 << n) - 1, "bor {u}");
    world.all_reduce_into(&(bits | 0x100), &mut u, SystemOperation::bitwise_and());
    check!(me, u == if n == 1 { 0x101 } else { 0x100 }, "band {u:#x}");
    world.all_reduce_into(&bits, &mut u, SystemOperation::bitwise_xor());
    check!(me, u == (1u32 << n) - 1, "bxor {u}");
    let mut fs = [0f64; 3];
    world.all_reduce_into(
        &[me as f64, 1.0, -(me as f64)][..],
        &mut fs[..],
        SystemOperation::sum(),
    );
    check!(
        me,
        fs == [tri as f64, n as f64, -(tri as f64)],
        "f64 sum {fs:?}"
    );
    let mut inplace = [me, 1];
    world.all_reduce_in_place(&mut inplace[..], SystemOperation::sum());
    check!(me, inplace == [tri, n], "in place {inplace:?}");
    scope(|s| {
        world
            .immediate_all_reduce_into(s, &me, &mut x, SystemOperation::sum())
            .wait()
    });
    check!(me, x == tri, "iallreduce {x}");

    // user operations: commutative closure, non-commutative matrix product, unsafe C fn
    let op = UserOperation::commutative(|a, b| {
        let a: &[i32] = a.downcast().unwrap();
        let b: &mut [i32] = b.downcast().unwrap();
        for (x, y) in a.iter().zip(b) {
            *y += x;
        }
    });
    world.all_reduce_into(&[me, 2][..], &mut inplace[..], &op);
    check!(me, inplace == [tri, 2 * n], "user sum {inplace:?}");
    let matop = UserOperation::associative(|a, b| {
        let a: &[Mat] = a.downcast().unwrap();
        let b: &mut [Mat] = b.downcast().unwrap();
        for (x, y) in a.iter().zip(b) {
            *y = mul(*x, *y);
        }
    });
    let ordered = (1..n).fold(mat(0), |acc, r| mul(acc, mat(r)));
    let mut m = Mat::default();
    world.all_reduce_into(&mat(me), &mut m, &matop);
    check!(
        me,
        m == ordered,
        "non-commutative allreduce {m:?} != {ordered:?}"
    );
    let prefix = (1..=me).fold(mat(0), |acc, r| mul(acc, mat(r)));
    world.scan_into(&mat(me), &mut m, &matop);
    check!(me, m == prefix, "non-commutative scan {m:?}");
    let mut em = Mat([9; 4]);
    world.exclusive_scan_into(&mat(me), &mut em, &matop);
    if me > 0 {
        let ex = (1..me).fold(mat(0), |acc, r| mul(acc, mat(r)));
        check!(me, em == ex, "non-commutative exscan {em:?}");
    }
    for root in 0..n {
        let rp = world.process_at_rank(root);
        if me == root {
            let mut out = Mat::default();
            rp.reduce_into_root(&mat(me), &mut out, &matop);
            check!(
                me,
                out == ordered,
                "non-commutative reduce at {root}: {out:?}"
            );
        } else {
            rp.reduce_into(&mat(me), &matop);
        }
    }
    // SAFETY: `c_sum` adds `*len` i32s of `invec` into `inoutvec` and touches nothing else; it is used on i32 data only.
    let cop = unsafe { UnsafeUserOperation::commutative(c_sum) };
    world.all_reduce_into(&me, &mut x, &cop);
    check!(me, x == tri, "unsafe user op {x}");

    // reduce_scatter_block, scan, exscan (+ immediate)
    let rs_send: Vec<i32> = (0..n).flat_map(|r| [r + me, 1]).collect();
    let mut rs = [0i32; 2];
    world.reduce_scatter_block_into(&rs_send[..], &mut rs[..], SystemOperation::sum());
    check!(me, rs == [n * me + tri, n], "reduce_scatter_block {rs:?}");
    scope(|s| {
        world
            .immediate_reduce_scatter_block_into(
                s,
                &rs_send[..],
                &mut rs[..],
                SystemOperation::sum(),
            )
            .wait()
    });
    check!(me, rs == [n * me + tri, n], "ireduce_scatter_block {rs:?}");
    world.scan_into(&me, &mut x, SystemOperation::sum());
    check!(me, x == me * (me + 1) / 2, "scan {x}");
    scope(|s| {
        world
            .immediate_scan_into(s, &me, &mut x, SystemOperation::sum())
            .wait()
    });
    check!(me, x == me * (me + 1) / 2, "iscan {x}");
    x = -5;
    world.exclusive_scan_into(&me, &mut x, SystemOperation::sum());
    check!(
        me,
        x == if me == 0 { -5 } else { me * (me - 1) / 2 },
        "exscan {x}"
    );
    scope(|s| {
        world
            .immediate_exclusive_scan_into(s, &me, &mut x, SystemOperation::sum())
            .wait()
    });
    check!(me, me == 0 || x == me * (me - 1) / 2, "iexscan {x}");

    // Send and receive buffers of two integer types (rsmpi's dyn_communicator example
    // scans a usize into an i32): reduced in the send type, converted to the receive type.
    let rank_usize = me as usize;
    let mut narrow: i32 = -1;
    world.scan_into(&rank_usize, &mut narrow, SystemOperation::sum());
    check!(
        me,
        narrow == me * (me + 1) / 2,
        "usize scan into i32 {narrow}"
    );
    let mut wide = [0i64; 2];
    world.all_reduce_into(
        &[me as u8, 200u8][..],
        &mut wide[..],
        SystemOperation::max(),
    );
    check!(
        me,
        wide == [n as i64 - 1, 200],
        "u8 allreduce into i64 {wide:?}"
    );
    let mut ex: u16 = 77;
    world.exclusive_scan_into(&(me as i64), &mut ex, SystemOperation::sum());
    check!(
        me,
        ex == if me == 0 {
            77
        } else {
            (me * (me - 1) / 2) as u16
        },
        "i64 exscan into u16 {ex}"
    );
    // A result that does not fit the receive type is an error, and nothing is written.
    let mut tiny: i8 = 5;
    let big = 100i64 + me as i64;
    let e = world.try_all_reduce_into(&big, &mut tiny, SystemOperation::sum());
    if n >= 2 {
        check!(
            me,
            e.as_ref().is_err_and(|e| e.class == ErrorClass::Truncate
                && e.message.contains("MPI_Allreduce")
                && e.message.contains("does not fit"))
                && tiny == 5,
            "i64 allreduce overflowing an i8 {e:?} {tiny}"
        );
    } else {
        check!(
            me,
            e.is_ok() && tiny == 100,
            "i64 allreduce into i8 {e:?} {tiny}"
        );
    }
    // Other mismatches stay type errors.
    let mut f = 0f64;
    let e = world.try_all_reduce_into(&me, &mut f, SystemOperation::sum());
    check!(
        me,
        e.as_ref().is_err_and(|e| e.class == ErrorClass::Type),
        "i32 allreduce into f64 {e:?}"
    );

    // Rooted operations from every root.
    for root in 0..n {
        let rp = world.process_at_rank(root);
        let is_root = me == root;
        // broadcast
        let mut bv = if is_root { [root, 7, 8] } else { [0; 3] };
        rp.broadcast_into(&mut bv[..]);
        check!(me, bv == [root, 7, 8], "bcast {bv:?}");
        let mut bv2 = if is_root { [root + 1; 4] } else { [0; 4] };
        scope(|s| rp.immediate_broadcast_into(s, &mut bv2[..]).wait());
        check!(me, bv2 == [root + 1; 4], "ibcast {bv2:?}");
        // gather
        let gexp: Vec<i32> = (0..n).flat_map(|r| [r, -r]).collect();
        let pm = [me, -me];
        let one2 = [me, 1];
        if is_root {
            let mut g = vec![0i32; 2 * nu];
            rp.gather_into_root(&[me, -me][..], &mut g[..]);
            check!(me, g == gexp, "gather {g:?}");
            let mut g2 = vec![0i32; 2 * nu];
            scope(|s| {
                rp.immediate_gather_into_root(s, &pm[..], &mut g2[..])
                    .wait()
            });
            check!(me, g2 == gexp, "igather");
            let mut gv = vec![-1i32; total];
            rp.gather_varcount_into_root(
                &mine[..],
                &mut PartitionMut::new(&mut gv[..], &counts[..], &displs[..]),
            );
            check!(me, gv == expect_v, "gatherv {gv:?}");
            let mut gv2 = vec![-1i32; total];
            let mut p = PartitionMut::new(&mut gv2[..], &counts[..], &displs[..]);
            scope(|s| {
                rp.immediate_gather_varcount_into_root(s, &mine[..], &mut p)
                    .wait();
            });
            drop(p);
            check!(me, gv2 == expect_v, "igatherv");
        } else {
            rp.gather_into(&[me, -me][..]);
            scope(|s| rp.immediate_gather_into(s, &pm[..]).wait());
            rp.gather_varcount_into(&mine[..]);
            scope(|s| rp.immediate_gather_varcount_into(s, &mine[..]).wait());
        }
        // scatter
        let sc_src: Vec<i32> = (0..n).flat_map(|r| [r * 3, root]).collect();
        let mut sc = [0i32; 2];
        let mut sc2 = [0i32; 2];
        let mut scv = vec![0i32; me as usize + 1];
        let mut scv2 = vec![0i32; me as usize + 1];
        if is_root {
            rp.scatter_into_root(&sc_src[..], &mut sc[..]);
            scope(|s| {
                rp.immediate_scatter_into_root(s, &sc_src[..], &mut sc2[..])
                    .wait()
            });
            let part = Partition::new(&expect_v[..], &counts[..], &displs[..]);
            rp.scatter_varcount_into_root(&part, &mut scv[..]);
            scope(|s| {
                rp.immediate_scatter_varcount_into_root(s, &part, &mut scv2[..])
                    .wait()
            });
        } else {
            rp.scatter_into(&mut sc[..]);
            scope(|s| rp.immediate_scatter_into(s, &mut sc2[..]).wait());
            rp.scatter_varcount_into(&mut scv[..]);
            scope(|s| rp.immediate_scatter_varcount_into(s, &mut scv2[..]).wait());
        }
        check!(
            me,
            sc == [me * 3, root] && sc2 == sc,
            "scatter {sc:?} {sc2:?}"
        );
        check!(
            me,
            scv == vec![me; me as usize + 1] && scv2 == scv,
            "scatterv {scv:?} {scv2:?}"
        );
        // reduce
        if is_root {
            let mut r = [0i32; 2];
            rp.reduce_into_root(&[me, 1][..], &mut r[..], SystemOperation::sum());
            check!(me, r == [tri, n], "reduce {r:?}");
            let mut r2 = [0i32; 2];
            scope(|s| {
                rp.immediate_reduce_into_root(s, &one2[..], &mut r2[..], SystemOperation::sum())
                    .wait()
            });
            check!(me, r2 == [tri, n], "ireduce {r2:?}");
        } else {
            rp.reduce_into(&[me, 1][..], SystemOperation::sum());
            scope(|s| {
                rp.immediate_reduce_into(s, &one2[..], SystemOperation::sum())
                    .wait()
            });
        }
    }

    // Errors.
    let bad = world.process_at_rank(n);
    let e = bad.try_broadcast_into(&mut x).unwrap_err();
    check!(me, e.class == ErrorClass::Root, "bad root bcast: {e}");
    let e = bad.try_reduce_into(&x, SystemOperation::sum()).unwrap_err();
    check!(me, e.class == ErrorClass::Root, "bad root reduce: {e}");
    let e = world.process_at_rank(-1).try_gather_into(&x).unwrap_err();
    check!(me, e.class == ErrorClass::Root, "bad root gather: {e}");
    let e = world.this_process().try_gather_into(&x).unwrap_err();
    check!(
        me,
        e.class == ErrorClass::Root,
        "root calling non-root gather: {e}"
    );
    let mut f = 0f64;
    let e = world
        .try_all_reduce_into(&1.5f64, &mut f, SystemOperation::bitwise_and())
        .unwrap_err();
    check!(me, e.class == ErrorClass::Op, "op/type mismatch: {e}");
    let e = world
        .try_all_reduce_into(&true, &mut b, SystemOperation::sum())
        .unwrap_err();
    check!(me, e.class == ErrorClass::Op, "sum of bools: {e}");
    let mut small = vec![0i32; total - 1];
    let e = world
        .try_all_gather_varcount_into(
            &mine[..],
            &mut PartitionMut::new(&mut small[..], &counts[..], &displs[..]),
        )
        .unwrap_err();
    check!(
        me,
        e.class == ErrorClass::Count,
        "partition outside buffer: {e}"
    );

    world.barrier();
    println!("api_coll: rank {me} of {n} ok");
}
