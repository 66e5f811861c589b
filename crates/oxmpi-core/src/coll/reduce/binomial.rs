//! Binomial-tree reduce over ranks relative to the root (commutative ops only:
//! a subtree's ranks wrap around from n-1 to 0). ceil(log2 n) rounds; in round k
//! a rank whose relative rank has bit k set sends its partial to the rank without
//! that bit and is done; the others receive from relative rank + 2^k.
use super::{Io, Red};
use crate::coll::sched::{Builder, Slice};

/// Adds the tree to `b`; returns the slice holding the result at the root.
pub(crate) fn build(b: &mut Builder, red: &Red, io: &Io, root: i32) -> Option<Slice> {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let vr = (rank - root + n) % n;
    let mut p = io.partial(red, true);
    let mut mask = 1;
    while mask < n {
        if vr & mask == 0 {
            let child = vr | mask;
            if child < n {
                let t = p.scratch(b);
                b.recv(t, (child + root) % n);
                b.fence();
                // Commutative: the child's ranks are not necessarily higher, the
                // operand order is irrelevant.
                p.higher(b, red, t);
            }
        } else {
            b.send(p.cur, (vr - mask + root) % n);
            b.fence();
            return None;
        }
        mask <<= 1;
    }
    Some(p.cur)
}
