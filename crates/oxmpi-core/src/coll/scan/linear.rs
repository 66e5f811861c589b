//! Linear scan / exscan: rank r receives the prefix over ranks 0..r-1 from r - 1,
//! combines (`prefix op mine`) and passes the inclusive prefix on to r + 1.
use super::Kind;
use crate::coll::reduce::{Io, Red};
use crate::coll::sched::Builder;

pub(super) fn build(b: &mut Builder, red: &Red, io: &Io, kind: Kind) {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let len = red.len(io.count);
    if rank == 0 {
        if n > 1 {
            b.send(io.input, 1);
            b.fence();
        }
        if kind == Kind::Inclusive {
            io.deliver(b, red, io.input);
        }
        return;
    }
    match kind {
        Kind::Inclusive => {
            let prefix = b.temp(len);
            b.recv(prefix, rank - 1);
            // The result starts as the input (in the receive buffer when possible).
            let res = io.acc(b, red);
            b.fence();
            red.reduce(b, prefix, res, io.count);
            if rank + 1 < n {
                b.send(res, rank + 1);
                b.fence();
            }
            io.deliver(b, red, res);
        }
        Kind::Exclusive => {
            // In place, the input must be saved before the prefix lands in recvbuf.
            let input = if io.in_place && rank + 1 < n {
                let t = b.temp(len);
                b.copy(io.input, t);
                t
            } else {
                io.input
            };
            let prefix = io.slot(b, red);
            b.recv(prefix, rank - 1);
            b.fence();
            if rank + 1 < n {
                let incl = b.temp(len);
                b.copy(input, incl);
                red.reduce(b, prefix, incl, io.count);
                b.send(incl, rank + 1);
                b.fence();
            }
            io.deliver(b, red, prefix);
        }
    }
}
