//! Recursive-doubling allreduce (MPICH's algorithm). With pof2 the largest power
//! of two <= n and rem = n - pof2: each even rank r < 2 rem first sends its data
//! to r + 1 and sits out; the remaining pof2 ranks exchange full partials with the
//! partner at distance 1, 2, 4, ... in "new rank" space (new ranks map
//! monotonically onto rank ranges, so the groups combined are adjacent); finally
//! each odd r < 2 rem sends the result to r - 1.
//!
//! Both partners compute `lower op higher` with the lower group's partial as the
//! `in` operand: same operands, same roles, hence bit-identical results. Rank
//! order is kept, so non-commutative ops are fine.
use crate::coll::reduce::{pof2, Io, Red};
use crate::coll::sched::{Builder, Slice};

/// Adds the algorithm; returns the slice holding the result.
pub(super) fn build(b: &mut Builder, red: &Red, io: &Io) -> Slice {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let p2 = pof2(n);
    let rem = n - p2;
    let mut p = io.partial(red, true);
    let newrank = if rank < 2 * rem {
        if rank % 2 == 0 {
            b.send(p.cur, rank + 1);
            b.fence();
            let t = p.scratch(b);
            b.recv(t, rank + 1);
            b.fence();
            return t;
        }
        let t = p.scratch(b);
        b.recv(t, rank - 1);
        b.fence();
        p.lower(b, red, t);
        rank / 2
    } else {
        rank - rem
    };
    let mut mask = 1;
    while mask < p2 {
        let partner_nr = newrank ^ mask;
        let partner = if partner_nr < rem {
            2 * partner_nr + 1
        } else {
            partner_nr + rem
        };
        let t = p.scratch(b);
        b.send(p.cur, partner);
        b.recv(t, partner);
        b.fence();
        if partner < rank {
            p.lower(b, red, t);
        } else {
            p.higher(b, red, t);
        }
        mask <<= 1;
    }
    if rank < 2 * rem {
        b.send(p.cur, rank - 1);
        b.fence();
    }
    p.cur
}
