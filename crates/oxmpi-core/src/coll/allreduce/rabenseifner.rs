//! Rabenseifner's allreduce: recursive-halving reduce-scatter (shared with
//! reduce/rabenseifner.rs: pre-step for non-powers of two, rank-ordered
//! combinations), then a recursive-doubling allgather undoing the halving rounds,
//! then the post-step sending the result to the ranks that sat out. Every block is
//! reduced by exactly one rank and copied to the others: bit-identical results.
use crate::coll::reduce::rabenseifner::{real, reduce_scatter_phase, region};
use crate::coll::reduce::{Io, Red};
use crate::coll::sched::{Builder, Slice};

pub(super) fn build(b: &mut Builder, red: &Red, io: &Io) -> Slice {
    let rank = b.comm().rank();
    let (acc, input) = io.acc_deferred(b, red);
    let h = reduce_scatter_phase(b, red, input, acc, io.count);
    match h.newrank {
        Some(nr) => {
            for s in (0..h.steps).rev() {
                let m = 1 << s;
                let partner = real(nr ^ m, h.rem);
                let (mine, _) = h.range(red, acc, region(nr, s + 1, h.pof2));
                let (theirs, _) = h.range(red, acc, region(nr ^ m, s + 1, h.pof2));
                b.send(mine, partner);
                b.recv(theirs, partner);
                b.fence();
            }
            if rank < 2 * h.rem {
                b.send(acc, rank - 1);
                b.fence();
            }
        }
        None => {
            b.recv(acc, rank + 1);
            b.fence();
        }
    }
    acc
}
