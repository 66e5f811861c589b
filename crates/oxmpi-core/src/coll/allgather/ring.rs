//! Ring allgather (also allgatherv): n - 1 steps; in step i every rank sends
//! block (rank - i) to its right neighbour and receives block (rank - i - 1)
//! from its left one. Bandwidth-optimal; works for any n and any block sizes.
use crate::coll::sched::{Builder, Slice};

/// `blocks`: the packed block of every rank; this rank's own block is filled.
pub fn build(b: &mut Builder, rank: i32, n: i32, blocks: &[Slice]) {
    let (right, left) = ((rank + 1) % n, (rank - 1 + n) % n);
    for i in 0..n - 1 {
        b.send(blocks[((rank - i + n) % n) as usize], right);
        b.recv(blocks[((rank - i - 1 + n) % n) as usize], left);
        b.fence();
    }
}
