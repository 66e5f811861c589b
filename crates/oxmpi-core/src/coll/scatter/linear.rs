//! Linear scatter (also scatterv): the root starts one send per rank, all at
//! once, and copies its own block; every other rank receives from the root.
use crate::coll::sched::{Builder, Slice};

/// `inp`: at the root, the packed block for each rank. `out`: this rank's packed
/// output, `None` at a root in place (its block stays in its send buffer).
pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, inp: &[Slice], out: Option<Slice>) {
    if rank != root {
        if let Some(o) = out {
            b.recv(o, root);
        }
        return;
    }
    for (i, &blk) in inp.iter().enumerate().take(n as usize) {
        if i as i32 != root {
            b.send(blk, i as i32);
        }
    }
    if let Some(o) = out {
        b.copy(inp[root as usize], o);
    }
}
