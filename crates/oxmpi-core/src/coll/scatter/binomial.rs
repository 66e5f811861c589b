//! Binomial-tree scatter: relative rank `vr` receives the blocks of its subtree
//! (relative ranks vr .. vr + min(lowbit(vr), n - vr)) in one message from its
//! parent and forwards each child's part. A root other than 0 first rotates its
//! blocks into relative order. Works for any n.
use crate::coll::sched::{Builder, Slice};

/// `inp`: at the root, all n packed blocks in rank order. `out`: this rank's
/// block (`blk` bytes), `None` at a root in place.
pub fn build(
    b: &mut Builder,
    rank: i32,
    n: i32,
    root: i32,
    inp: Option<Slice>,
    out: Option<Slice>,
    blk: usize,
) {
    let vr = (rank - root + n) % n;
    let abs = |v: i32| (v + root) % n;
    let mut sub = 1;
    while sub < n && vr & sub == 0 {
        sub <<= 1;
    }
    let sub = if vr == 0 { n } else { sub.min(n - vr) };
    let acc = if vr == 0 {
        let i = inp.expect("the root has the blocks");
        if root == 0 {
            i
        } else {
            let t = b.temp(n as usize * blk);
            let head = (n - root) as usize * blk;
            b.copy(i.sub(root as usize * blk, head), t.sub(0, head));
            b.copy(
                i.sub(0, root as usize * blk),
                t.sub(head, root as usize * blk),
            );
            t
        }
    } else {
        let parent = abs(vr - (vr & -vr));
        if sub == 1 {
            if let Some(o) = out {
                b.recv(o, parent);
            }
            return;
        }
        let t = b.temp(sub as usize * blk);
        b.recv(t, parent);
        b.fence();
        t
    };
    let mut mask = 1;
    while mask < sub {
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        let child = vr + mask;
        if child < n && mask < sub {
            let cnt = mask.min(n - child) as usize;
            b.send(acc.sub(mask as usize * blk, cnt * blk), abs(child));
        }
        mask >>= 1;
    }
    if let Some(o) = out {
        b.copy(acc.sub(0, blk), o);
    }
}
