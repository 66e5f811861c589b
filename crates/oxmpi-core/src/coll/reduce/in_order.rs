//! In-order reduce for non-commutative ops: a binomial tree over *absolute*
//! ranks rooted at rank 0. The subtree of rank r in round k is the contiguous
//! rank range [r, r + 2^k), so every combination is `lower op higher` and the
//! result is exactly a0 op a1 op ... op a(n-1). Rank 0 then sends the result to
//! the root if the root is another rank (one extra message, as MPICH does).
use super::{Partial, Red};
use crate::coll::sched::{Builder, Slice};

/// Adds the reduction of `p` to `b`; returns the slice holding the result at the
/// root. The partial's buffers may be reused by the caller once this returns.
pub(crate) fn build(b: &mut Builder, red: &Red, mut p: Partial, root: i32) -> Option<Slice> {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let mut mask = 1;
    let mut sent = false;
    while mask < n {
        if rank & mask == 0 {
            if rank | mask < n {
                let t = p.scratch(b);
                b.recv(t, rank | mask);
                b.fence();
                p.higher(b, red, t);
            }
        } else {
            b.send(p.cur, rank - mask);
            b.fence();
            sent = true;
            break;
        }
        mask <<= 1;
    }
    if root == 0 {
        return (rank == 0).then_some(p.cur);
    }
    if rank == 0 {
        b.send(p.cur, root);
        b.fence();
        None
    } else if rank == root {
        // The partial was sent (and fenced) or this is rank 0's tree root;
        // `sent` is always true here since root != 0 has some bit set.
        debug_assert!(sent);
        let t = p.scratch(b);
        b.recv(t, 0);
        b.fence();
        Some(t)
    } else {
        None
    }
}
