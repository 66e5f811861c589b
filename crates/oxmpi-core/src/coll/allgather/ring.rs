//! Ring allgather (also allgatherv): n - 1 steps; in step i every rank sends
//! block (rank - i) to its right neighbour and receives block (rank - i - 1)
//! from its left one. Bandwidth-optimal; works for any n and any block sizes.
use crate::coll::sched::{Builder, Slice};

/// `blocks`: the packed block of every rank; this rank's own block is filled,
/// or (`src: Some`) is `src`, sent from there and copied to its block during
/// the first step.
pub fn build(b: &mut Builder, rank: i32, n: i32, blocks: &[Slice], src: Option<Slice>) {
    let (right, left) = ((rank + 1) % n, (rank - 1 + n) % n);
    let own = blocks[rank as usize];
    for i in 0..n - 1 {
        let send = match src {
            Some(s) if i == 0 => s,
            _ => blocks[((rank - i + n) % n) as usize],
        };
        b.send(send, right);
        b.recv(blocks[((rank - i - 1 + n) % n) as usize], left);
        if let (Some(s), 0) = (src, i) {
            if s.len > 0 {
                b.copy(s, own);
            }
        }
        b.fence();
    }
}
