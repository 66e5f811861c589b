//! Communicator constructors at the engine level: dup, split, split_type,
//! create, compare, and creating/freeing hundreds of communicators.

use oxmpi_core::comm::{context, create};
use oxmpi_core::pt2pt::{self, SendMode};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{Comm, ANY_SOURCE, ANY_TAG};
use oxmpi_tests::check;

fn main() {
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let rank = world.rank();
    let n = world.size();

    // dup: same ranks, separate matching: a message on the dup never matches a
    // wildcard receive on world.
    let dup = create::dup(&world).unwrap();
    check!(rank, dup.rank() == rank && dup.size() == n, "dup rank/size");
    check!(
        rank,
        create::compare(&dup, &world) == create::Comparison::Congruent,
        "dup congruent"
    );
    check!(
        rank,
        create::compare(&world, &world) == create::Comparison::Ident,
        "ident"
    );
    let right = (rank + 1) % n;
    let left = (rank + n - 1) % n;
    pt2pt::send(&dup, &[1u8], right, 0, SendMode::Standard).unwrap();
    pt2pt::send(&world, &[2u8], right, 0, SendMode::Standard).unwrap();
    let mut b = [0u8];
    pt2pt::recv(&world, &mut b, ANY_SOURCE, ANY_TAG).unwrap();
    check!(rank, b[0] == 2, "world receive matched the dup's message");
    pt2pt::recv(&dup, &mut b, left, 0).unwrap();
    check!(rank, b[0] == 1, "dup message");

    // split by parity, key reverses the order.
    let sub = create::split(&world, Some(rank % 2), -rank)
        .unwrap()
        .unwrap();
    let members: Vec<i32> = (0..n).filter(|r| r % 2 == rank % 2).rev().collect();
    check!(rank, sub.size() == members.len() as i32, "split size");
    check!(rank, members[sub.rank() as usize] == rank, "split order");
    check!(
        rank,
        create::compare(&sub, &world) == create::Comparison::Unequal || n == 1,
        "split unequal"
    );
    // A ring inside the sub-communicator.
    let (sr, ss) = (sub.rank(), sub.size());
    let mut got = [0u8; 4];
    pt2pt::sendrecv(
        &sub,
        &sr.to_le_bytes(),
        (sr + 1) % ss,
        5,
        &mut got,
        (sr + ss - 1) % ss,
        5,
    )
    .unwrap();
    check!(
        rank,
        i32::from_le_bytes(got) == (sr + ss - 1) % ss,
        "ring in split"
    );
    oxmpi_core::coll::barrier::barrier(&sub).unwrap();

    // MPI_UNDEFINED colour.
    let none = create::split(&world, if rank == 0 { None } else { Some(1) }, 0).unwrap();
    check!(rank, none.is_none() == (rank == 0), "undefined colour");

    // split_type shared: the ranks of this host (all of them on one host).
    let shared = create::split_type(&world, Some(create::SplitType::Shared), rank)
        .unwrap()
        .unwrap();
    let levels = runtime::engine().unwrap().cluster_info();
    let (host_size, host_rank) = levels.get(1).map_or((n, rank), |l| (l.size, l.rank));
    check!(
        rank,
        shared.size() == host_size && shared.rank() == host_rank,
        "split_type shared: {}/{} vs host {host_rank}/{host_size}",
        shared.rank(),
        shared.size()
    );

    // create from a group: the even world ranks, reversed.
    let grp: Vec<u32> = (0..n as u32).filter(|r| r % 2 == 0).rev().collect();
    let c = create::create(&world, &grp).unwrap();
    check!(rank, c.is_some() == (rank % 2 == 0), "create membership");
    if let Some(c) = &c {
        check!(rank, grp[c.rank() as usize] == rank as u32, "create order");
        oxmpi_core::coll::barrier::barrier(c).unwrap();
    }
    // create_group: evens and odds each make theirs, only among themselves, at
    // the same time; a world collective afterwards must not be confused.
    let mine: Vec<u32> = (0..n as u32).filter(|r| r % 2 == rank as u32 % 2).collect();
    let g = create::create_group(&world, &mine, 7).unwrap().unwrap();
    check!(
        rank,
        g.size() == mine.len() as i32 && mine[g.rank() as usize] == rank as u32,
        "create_group membership"
    );
    let mut sum = [0i32];
    let op = oxmpi_core::op::Op::predefined(oxmpi_core::op::PredefinedOp::Sum);
    let me = [rank];
    let (mine_v, out) = (
        oxmpi_core::buf::SendBuf::slice(&me),
        oxmpi_core::buf::RecvBuf::slice(&mut sum[..]),
    );
    oxmpi_core::coll::api::allreduce(Some(mine_v), out, &op, &g).unwrap();
    let want: i32 = mine.iter().map(|&r| r as i32).sum();
    check!(
        rank,
        sum[0] == want,
        "allreduce over create_group comm: {} want {want}",
        sum[0]
    );
    oxmpi_core::coll::barrier::barrier(&world).unwrap();
    drop(g);
    let bad = create::create(&world, &[0, 0]).unwrap_err();
    check!(
        rank,
        bad.class == oxmpi_core::ErrorClass::Group,
        "duplicate group member: {bad}"
    );

    // idup returns at once: rank 0 sends (synchronously) between its idup and
    // its wait while rank 1 receives before starting its own idup.
    {
        let mut v = [0u8];
        let (mut r, pending) = if rank == 1 {
            pt2pt::recv(&world, &mut v, 0, 9).unwrap();
            create::idup(&world).unwrap()
        } else {
            let x = create::idup(&world).unwrap();
            if rank == 0 && n > 1 {
                pt2pt::send(&world, &[5u8], 1, 9, SendMode::Synchronous).unwrap();
            }
            x
        };
        check!(rank, rank != 1 || v[0] == 5, "message around the idup");
        // Several more in flight at once, with a blocking dup among them.
        let more: Vec<_> = (0..4).map(|_| create::idup(&dup).unwrap()).collect();
        let blocking = create::dup(&world).unwrap();
        pt2pt::wait(&mut r).unwrap();
        let d = pending
            .take()
            .expect("idup finished without a communicator");
        check!(
            rank,
            create::compare(&d, &world) == create::Comparison::Congruent,
            "idup congruent"
        );
        let mut ctxs = vec![
            d.context(),
            blocking.context(),
            world.context(),
            dup.context(),
        ];
        let mut keep = Vec::new();
        for (mut q, p) in more {
            pt2pt::wait(&mut q).unwrap();
            keep.push(p.take().unwrap());
        }
        ctxs.extend(keep.iter().map(|c| c.context()));
        ctxs.sort_unstable();
        ctxs.dedup();
        check!(rank, ctxs.len() == 8, "idup contexts collide: {ctxs:?}");
        oxmpi_core::coll::barrier::barrier(&d).unwrap();
    }

    // Hundreds of communicators created and freed: context ids are reused.
    let before = context::in_use();
    for i in 0..500 {
        let d = create::dup(&world).unwrap();
        if i % 50 == 0 {
            oxmpi_core::coll::barrier::barrier(&d).unwrap();
        }
        drop(d);
    }
    check!(
        rank,
        context::in_use() == before,
        "context ids leaked: {} -> {}",
        before,
        context::in_use()
    );
    drop((dup, sub, shared, c, none));
    check!(
        rank,
        context::in_use() == 0,
        "context ids still in use: {}",
        context::in_use()
    );
    let _ = Comm::clone(&world);
    runtime::finalize().unwrap();
    if rank == 0 {
        println!("comm: ok");
    }
}
