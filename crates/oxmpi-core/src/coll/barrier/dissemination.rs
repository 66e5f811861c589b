//! Dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 n) rounds; in round
//! k every rank signals rank + 2^k and waits for rank - 2^k. Works for any n.
use crate::coll::sched::{Builder, Slice};

pub fn build(b: &mut Builder, rank: i32, n: i32) {
    let empty = Slice::user(std::ptr::null(), 0);
    let mut dist = 1;
    while dist < n {
        b.send(empty, (rank + dist) % n);
        b.recv(empty, (rank - dist + n) % n);
        b.fence();
        dist *= 2;
    }
}
