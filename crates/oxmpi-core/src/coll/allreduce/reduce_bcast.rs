//! Allreduce as an in-order reduce to rank 0 (reduce/in_order.rs: rank order,
//! any op) followed by a binomial broadcast of rank 0's result, which every rank
//! then holds bit for bit.
use crate::coll::reduce::{in_order, Io, Red};
use crate::coll::sched::{Builder, Slice};

pub(super) fn build(b: &mut Builder, red: &Red, io: &Io) -> Slice {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let reduced = in_order::build(b, red, io.partial(red, true), 0);
    let res = match reduced {
        Some(s) => s,
        // The reduce's sends are fenced: the receive buffer is free again.
        None => io.slot(b, red),
    };
    let mut mask = 1;
    while mask < n {
        if rank & mask != 0 {
            b.recv(res, rank - mask);
            b.fence();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rank + mask < n {
            b.send(res, rank + mask);
        }
        mask >>= 1;
    }
    b.fence();
    res
}
