//! Partitioned communication through the `oxmpi` API: ranks pair up (0-1,
//! 2-3, ...); the sender divides its buffer into 8 partitions and readies
//! them from 4 threads in reverse order, the receiver divides its buffer into
//! 4, polls `arrived`, and both start again several times. Then the errors:
//! a partition readied twice, out of range, before start. Last, a receive
//! forgotten (`std::mem::forget`) while active: its scope must wait for the
//! transfer, which the sender readies late, before the buffer is read again.

use oxmpi::partitioned::{PartitionedReceive, PartitionedSend};
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi::ErrorClass;
use oxmpi_tests::check;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let pairs = size / 2 * 2;
    if me < pairs {
        let peer = if me % 2 == 0 { me + 1 } else { me - 1 };
        if me % 2 == 0 {
            let mut data = vec![0u64; 64];
            for it in 0..6u64 {
                data.iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = it * 1000 + i as u64);
                scope(|sc| {
                    let mut send = PartitionedSend::new(sc, &world, &data, 8, peer, 4).unwrap();
                    check!(me, send.partitions() == 8, "partitions");
                    send.start().unwrap();
                    std::thread::scope(|s| {
                        for t in 0..4 {
                            let send = &send;
                            s.spawn(move || {
                                for p in (0..8).rev().filter(|p| p % 4 == t) {
                                    send.ready(p).unwrap();
                                }
                            });
                        }
                    });
                    send.wait().unwrap();
                });
            }
            scope(|sc| {
                let mut send = PartitionedSend::new(sc, &world, &data, 8, peer, 5).unwrap();
                check!(
                    me,
                    send.ready(0).unwrap_err().class == ErrorClass::Request,
                    "ready before start"
                );
                send.start().unwrap();
                send.ready_range(0, 3).unwrap();
                check!(
                    me,
                    send.ready(2).unwrap_err().class == ErrorClass::Arg,
                    "ready twice"
                );
                check!(
                    me,
                    send.ready(8).unwrap_err().class == ErrorClass::Arg,
                    "out of range"
                );
                send.ready_list(&[7, 5, 6, 4]).unwrap();
                send.wait().unwrap();
                check!(
                    me,
                    PartitionedSend::new(sc, &world, &data, 7, peer, 5).is_err(),
                    "7 partitions of 64"
                );
            });
            // The receiver forgets its active receive: ready late, so that only its
            // scope's wait can see the data arrive.
            let late: Vec<u64> = (0..64).map(|i| 7000 + i).collect();
            scope(|sc| {
                let mut send = PartitionedSend::new(sc, &world, &late, 4, peer, 6).unwrap();
                send.start().unwrap();
                world.process_at_rank(peer).receive::<u8>();
                std::thread::sleep(std::time::Duration::from_millis(300));
                send.ready_range(0, 3).unwrap();
                send.wait().unwrap();
            });
        } else {
            let mut data = vec![0u64; 64];
            for it in 0..6u64 {
                scope(|sc| {
                    let mut recv =
                        PartitionedReceive::new(sc, &world, &mut data, 4, peer, 4).unwrap();
                    recv.start().unwrap();
                    check!(me, recv.buffer().is_none(), "buffer while active");
                    for p in 0..4 {
                        while !recv.arrived(p).unwrap() {
                            std::thread::yield_now();
                        }
                    }
                    recv.wait().unwrap();
                    let got = recv.buffer().unwrap();
                    check!(
                        me,
                        got.iter()
                            .enumerate()
                            .all(|(i, &x)| x == it * 1000 + i as u64),
                        "iteration {it}: {got:?}"
                    );
                    check!(me, recv.arrived(0).unwrap(), "inactive: arrived");
                });
            }
            scope(|sc| {
                let mut recv = PartitionedReceive::new(sc, &world, &mut data, 2, peer, 5).unwrap();
                recv.start().unwrap();
                check!(
                    me,
                    recv.arrived(2).unwrap_err().class == ErrorClass::Arg,
                    "arrived out of range"
                );
                recv.wait().unwrap();
            });
            let mut late = vec![0u64; 64];
            scope(|sc| {
                let mut recv = PartitionedReceive::new(sc, &world, &mut late, 2, peer, 6).unwrap();
                recv.start().unwrap();
                std::mem::forget(recv);
                world.process_at_rank(peer).send(&1u8);
            });
            check!(
                me,
                late.iter().enumerate().all(|(i, &x)| x == 7000 + i as u64),
                "the scope waited for the forgotten receive: {late:?}"
            );
        }
    }
    world.barrier();
    println!("api_part: rank {me} of {size} ok");
}
