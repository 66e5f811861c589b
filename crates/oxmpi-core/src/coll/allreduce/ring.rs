//! Ring allreduce (commutative ops; the selection falls back otherwise): the data
//! is split into n blocks; a ring reduce-scatter (n-1 steps: send block
//! (r - s) to r + 1, receive block (r - s - 1) from r - 1 and fold it in) leaves
//! rank r with the final block (r + 1) mod n; a ring allgather (n-1 steps) then
//! passes the final blocks around. Each final block is computed once and copied,
//! so every rank holds the same bits. ~2m bytes sent per rank: large messages.
use crate::coll::reduce::rabenseifner::split;
use crate::coll::reduce::{Io, Red};
use crate::coll::sched::{Builder, Slice};

pub(super) fn build(b: &mut Builder, red: &Red, io: &Io) -> Slice {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    // With an input of its own, the first step sends from it and each block's
    // one fold reads it where it is: the input is never copied into `acc`.
    let (acc, input) = io.acc_deferred(b, red);
    if n == 1 {
        if let Some(i) = input {
            b.copy(i, acc);
        }
        return acc;
    }
    let nu = n as usize;
    let disp = split(io.count, nu);
    let blk = |i: i32| -> (usize, usize) {
        let i = i.rem_euclid(n) as usize;
        (disp[i], disp[i + 1] - disp[i])
    };
    let maxcnt = (0..n).map(|i| blk(i).1).max().unwrap_or(0);
    // Our own block of `acc` is free during the reduce-scatter (sent from the
    // input, or from `acc` in the first step) until the allgather's first
    // step fills it: the received blocks land there where they fit.
    let (od, oc) = blk(rank);
    let own = red.block(acc, od, oc);
    let mut tmp: Option<Slice> = None;
    let (right, left) = ((rank + 1) % n, (rank - 1 + n) % n);
    for s in 0..n - 1 {
        let (sd, sc) = blk(rank - s);
        let (rd, rc) = blk(rank - s - 1);
        let from = match (s, input) {
            (0, Some(i)) => i,
            _ => acc,
        };
        b.send(red.block(from, sd, sc), right);
        let len = red.len(rc);
        let t = if len <= own.len && (s > 0 || input.is_some()) {
            own.sub(0, len)
        } else {
            tmp.get_or_insert_with(|| b.temp(red.len(maxcnt)))
                .sub(0, len)
        };
        b.recv(t, left);
        b.fence();
        let dst = red.block(acc, rd, rc);
        match input {
            // Block rank - s - 1 is folded once, in this step: not yet in `acc`.
            Some(i) => red.reduce_into(b, t, red.block(i, rd, rc), dst, rc),
            None => red.reduce(b, t, dst, rc),
        }
    }
    // The local reduction of the last step must finish before the block is sent:
    // local steps run in order, so the sends below see it.
    for s in 0..n - 1 {
        let (sd, sc) = blk(rank + 1 - s);
        let (rd, rc) = blk(rank - s);
        b.send(red.block(acc, sd, sc), right);
        b.recv(red.block(acc, rd, rc), left);
        b.fence();
    }
    acc
}
