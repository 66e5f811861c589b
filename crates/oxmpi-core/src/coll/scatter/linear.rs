//! Linear scatter (also scatterv): the root starts one send per rank, all at
//! once, and copies its own block; every other rank receives from the root.
//! Empty blocks (scatterv) are not sent: the root's count for a rank and that
//! rank's own count describe the same bytes, so both sides skip them.
use crate::coll::sched::{Builder, Slice};

/// `inp`: at the root, the packed block for each rank. `out`: this rank's packed
/// output, `None` at a root in place (its block stays in its send buffer).
pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, inp: &[Slice], out: Option<Slice>) {
    if rank != root {
        if let Some(o) = out.filter(|o| o.len > 0) {
            b.recv(o, root);
        }
        return;
    }
    for (i, &blk) in inp.iter().enumerate().take(n as usize) {
        if i as i32 != root && blk.len > 0 {
            b.send(blk, i as i32);
        }
    }
    if let Some(o) = out.filter(|o| o.len > 0) {
        b.copy(inp[root as usize], o);
    }
}
