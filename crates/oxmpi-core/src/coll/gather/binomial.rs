//! Binomial-tree gather: relative rank `vr` collects the blocks of its subtree
//! (relative ranks vr .. vr + min(lowbit(vr), n - vr)) contiguously, then sends
//! them to its parent in one message. At a root other than 0 the blocks arrive in
//! relative order and are rotated into place at the end. Works for any n.
use crate::coll::sched::{Builder, Slice};

/// `inp`: this rank's packed block (`blk` bytes); `out`: at the root, all n
/// blocks in rank order (may contain `inp` at block `root`: the in-place case).
pub fn build(
    b: &mut Builder,
    rank: i32,
    n: i32,
    root: i32,
    inp: Slice,
    out: Option<Slice>,
    blk: usize,
) {
    let vr = (rank - root + n) % n;
    let abs = |v: i32| (v + root) % n;
    // Size of my subtree in blocks.
    let mut sub = 1;
    while sub < n && vr & sub == 0 {
        sub <<= 1;
    }
    let sub = if vr == 0 { n } else { sub.min(n - vr) };
    if vr != 0 && sub == 1 {
        b.send(inp, abs(vr - (vr & -vr)));
        return;
    }
    // Where the subtree's blocks gather, in relative order.
    let acc = match out {
        Some(o) if root == 0 => o,
        _ => b.temp(sub as usize * blk),
    };
    b.copy(inp, acc.sub(0, blk));
    let mut mask = 1;
    while mask < sub {
        let child = vr + mask;
        let cnt = mask.min(n - child) as usize;
        b.recv(acc.sub(mask as usize * blk, cnt * blk), abs(child));
        mask <<= 1;
    }
    b.fence();
    if vr != 0 {
        b.send(acc, abs(vr - (vr & -vr)));
    } else if let Some(o) = out {
        // Relative block j belongs to rank (j + root) % n.
        let head = (n - root) as usize * blk;
        b.copy(acc.sub(0, head), o.sub(root as usize * blk, head));
        b.copy(
            acc.sub(head, root as usize * blk),
            o.sub(0, root as usize * blk),
        );
    }
}
