//! Intercommunicators at the engine level: create over a peer communicator,
//! point-to-point addressed by remote rank, merge ordering.

use oxmpi_core::comm::{create, inter};
use oxmpi_core::pt2pt::{self, SendMode};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::ANY_SOURCE;
use oxmpi_tests::check;

fn main() {
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let rank = world.rank();
    let n = world.size();
    let color = rank % 2;
    let local = create::split(&world, Some(color), rank).unwrap().unwrap();
    // Leaders: world rank 0 (evens) and 1 (odds); each names the other in world.
    let remote_leader = 1 - color;
    let ic = inter::intercomm_create(&local, 0, Some(&world), remote_leader, 99).unwrap();
    check!(rank, ic.is_inter(), "not an intercommunicator");
    let (lsize, rsize) = (ic.size(), ic.peer_group_size());
    check!(
        rank,
        lsize == local.size() && rsize == n - local.size(),
        "sizes {lsize}/{rsize}"
    );
    check!(rank, ic.rank() == local.rank(), "local rank");

    // Every rank of the even group sends to remote rank (r % rsize); receivers
    // see the sender's rank in the sender's own group.
    if color == 0 {
        let dest = ic.rank() % rsize;
        pt2pt::send(&ic, &ic.rank().to_le_bytes(), dest, 7, SendMode::Standard).unwrap();
    } else {
        let senders: Vec<i32> = (0..rsize).filter(|r| r % lsize == ic.rank()).collect();
        let mut seen = Vec::new();
        for _ in 0..senders.len() {
            let mut b = [0u8; 4];
            let st = pt2pt::recv(&ic, &mut b, ANY_SOURCE, 7).unwrap();
            check!(
                rank,
                st.source == i32::from_le_bytes(b),
                "status source {} vs payload {}",
                st.source,
                i32::from_le_bytes(b)
            );
            seen.push(st.source);
        }
        seen.sort();
        check!(rank, seen == senders, "senders {seen:?} want {senders:?}");
    }

    // Merge: odds pass high=true, so evens come first.
    let merged = inter::intercomm_merge(&ic, color == 1).unwrap();
    check!(
        rank,
        merged.size() == n && !merged.is_inter(),
        "merged size"
    );
    let evens = (n + 1) / 2;
    let want = if color == 0 {
        rank / 2
    } else {
        evens + rank / 2
    };
    check!(
        rank,
        merged.rank() == want,
        "merged rank {} want {want}",
        merged.rank()
    );
    oxmpi_core::coll::barrier::barrier(&merged).unwrap();
    // Both low: the group whose first member has the lower world rank (evens) first.
    let merged2 = inter::intercomm_merge(&ic, false).unwrap();
    check!(
        rank,
        merged2.rank() == want,
        "tie-break merged rank {}",
        merged2.rank()
    );
    drop((merged, merged2, ic, local));
    check!(
        rank,
        oxmpi_core::comm::context::in_use() == 0,
        "context ids leaked"
    );
    runtime::finalize().unwrap();
    if rank == 0 {
        println!("inter: ok");
    }
}
