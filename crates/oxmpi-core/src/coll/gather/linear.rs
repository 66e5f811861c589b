//! Linear gather (also gatherv): the root posts one receive per rank, all at
//! once, and copies its own block; every other rank sends its block to the root.
//! Empty blocks (gatherv) are not sent: the root's count for a rank and that
//! rank's own count describe the same bytes, so both sides skip them.
use crate::coll::sched::{Builder, Slice};

/// `inp`: this rank's packed contribution, `None` at a root in place (its block
/// is already in its output). `out`: at the root, the packed block of each rank.
pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, inp: Option<Slice>, out: &[Slice]) {
    if rank != root {
        if let Some(s) = inp.filter(|s| s.len > 0) {
            b.send(s, root);
        }
        return;
    }
    for (i, &blk) in out.iter().enumerate().take(n as usize) {
        if i as i32 != root && blk.len > 0 {
            b.recv(blk, i as i32);
        }
    }
    if let Some(s) = inp.filter(|s| s.len > 0) {
        b.copy(s, out[root as usize]);
    }
}
