//! The thread level in the types, across ranks: under `Threading::Multiple` a Cartesian
//! ring made from the world is shared by two threads, each exchanging with one neighbour,
//! and the requests of an ordinary scope (a receive, a send, an immediate all-reduce and
//! a barrier) are completed on other threads than the one that started them.
//!
//! `mpiexec -n 4 threads` prints one line per rank: `rank R: left L right R' sum S`.

use oxmpi::collective::SystemOperation;
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi::Threading;

fn main() {
    let (universe, provided) = oxmpi::initialize_with_threading(Threading::Multiple).unwrap();
    assert_eq!(provided, Threading::Multiple);
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let ring = world
        .create_cartesian_communicator(&[size], &[true], false)
        .unwrap();
    let (left, right) = ring.shift(0, 1);
    let (left, right) = (left.unwrap(), right.unwrap());

    // Two threads share the ring (Sync): one sends right and receives from the left,
    // the other the reverse, on different tags.
    let (from_left, from_right) = std::thread::scope(|t| {
        let a = t.spawn(|| {
            let mut x = -1i32;
            oxmpi::point_to_point::send_receive_into_with_tags(
                &rank,
                &ring.process_at_rank(right),
                1,
                &mut x,
                &ring.process_at_rank(left),
                1,
            );
            x
        });
        let b = t.spawn(|| {
            let mut x = -1i32;
            oxmpi::point_to_point::send_receive_into_with_tags(
                &rank,
                &ring.process_at_rank(left),
                2,
                &mut x,
                &ring.process_at_rank(right),
                2,
            );
            x
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((from_left, from_right), (left, right));

    // Requests of an ordinary scope, started here, completed on other threads (Send).
    let out = [rank; 64];
    let mut inp = [-1i32; 64];
    let mut sum = 0i32;
    scope(|s| {
        let recv = ring
            .process_at_rank(left)
            .immediate_receive_into_with_tag(s, &mut inp[..], 3);
        let send = ring
            .process_at_rank(right)
            .immediate_send_with_tag(s, &out[..], 3);
        let reduce = world.immediate_all_reduce_into(s, &rank, &mut sum, SystemOperation::sum());
        let barrier = ring.duplicate().immediate_barrier();
        std::thread::scope(|t| {
            t.spawn(move || recv.wait());
            t.spawn(move || send.wait());
            t.spawn(move || reduce.wait());
            t.spawn(move || barrier.wait());
        });
    });
    assert!(inp.iter().all(|&x| x == left), "received {inp:?}");
    assert_eq!(sum, size * (size - 1) / 2);
    println!("rank {rank}: left {from_left} right {from_right} sum {sum}");
}
