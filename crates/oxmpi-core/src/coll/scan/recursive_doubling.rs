//! Recursive-doubling scan / exscan (MPICH). In round k each rank exchanges with
//! rank ^ 2^k (if it exists) its `partial` = the reduction over the aligned
//! block of 2^k ranks containing it (clipped at n). A partial received from a
//! lower rank is a prefix of this rank's block: it is folded into the result
//! (`recv op result`) and into the partial (`recv op partial`); one from a higher
//! rank only extends the partial (`partial op recv`). Rank order is kept.
use super::Kind;
use crate::coll::reduce::{Io, Partial, Red};
use crate::coll::sched::{Builder, Slice};

pub(super) fn build(b: &mut Builder, red: &Red, io: &Io, kind: Kind) {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    // The partial never lives in the receive buffer, which holds the result.
    let mut p = if io.in_place {
        let t = b.temp(red.len(io.count));
        b.copy(io.input, t);
        Partial::in_buffer(t, io.count)
    } else {
        Io { out: None, ..*io }.partial(red, false)
    };
    // The result so far (None: nothing yet, for exscan).
    let mut res: Option<Slice> = match kind {
        Kind::Inclusive => Some(if io.in_place {
            io.slot(b, red)
        } else {
            io.acc(b, red)
        }),
        Kind::Exclusive => None,
    };
    if kind == Kind::Inclusive && io.in_place && io.raw_out(red).is_none() {
        // Non-contiguous in place: the result temporary starts as the input.
        b.copy(p.cur, res.unwrap());
    }
    let mut mask = 1;
    while mask < n {
        let partner = rank ^ mask;
        if partner < n {
            let t = p.scratch(b);
            b.send(p.cur, partner);
            b.recv(t, partner);
            b.fence();
            if partner < rank {
                match res {
                    Some(r) => red.reduce(b, t, r, io.count),
                    None => {
                        let r = io.slot(b, red);
                        b.copy(t, r);
                        res = Some(r);
                    }
                }
                p.lower(b, red, t);
            } else {
                p.higher(b, red, t);
            }
        }
        mask <<= 1;
    }
    if let Some(r) = res {
        io.deliver(b, red, r);
    }
}
