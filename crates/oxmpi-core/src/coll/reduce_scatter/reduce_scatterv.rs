//! Reduce-scatter for any op: the in-order reduce (reduce/in_order.rs: the
//! result is a0 op a1 op ... op a(n-1)) of the whole input to rank 0, which then
//! sends every rank its block.
use super::Args;
use crate::coll::reduce::{in_order, Io, Red};
use crate::coll::sched::Builder;

pub(super) fn build(b: &mut Builder, red: &Red, a: &Args) {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let r = rank as usize;
    let total = a.disp[n as usize];
    let io = Io {
        input: a.input,
        in_place: false,
        out: None,
        count: total,
    };
    match in_order::build(b, red, io.partial(red, false), 0) {
        Some(res) => {
            for i in 1..n as usize {
                b.send(red.block(res, a.disp[i], a.counts[i]), i as i32);
            }
            b.fence();
            red.deliver(
                b,
                red.block(res, a.disp[0], a.counts[0]),
                a.recvbuf,
                a.counts[0],
            );
        }
        None => {
            let t = b.temp(red.len(a.counts[r]));
            b.recv(t, 0);
            b.fence();
            red.deliver(b, t, a.recvbuf, a.counts[r]);
        }
    }
}
