//! Pairwise-exchange reduce-scatter (MPICH; commutative ops): in step i = 1..n-1
//! rank r sends its input block for rank r + i there and folds in the block for
//! itself received from rank r - i. n - 1 messages per rank of one block each.
use super::Args;
use crate::coll::reduce::Red;
use crate::coll::sched::Builder;

pub(super) fn build(b: &mut Builder, red: &Red, a: &Args) {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let r = rank as usize;
    let cnt = a.counts[r];
    let acc = b.temp(red.len(cnt));
    b.copy(red.block(a.input, a.disp[r], cnt), acc);
    let tmp = b.temp(red.len(cnt));
    for i in 1..n {
        let dst = ((rank + i) % n) as usize;
        let src = (rank - i + n) % n;
        b.send(red.block(a.input, a.disp[dst], a.counts[dst]), dst as i32);
        b.recv(tmp, src);
        b.fence();
        red.reduce(b, tmp, acc, cnt);
    }
    red.deliver(b, acc, a.recvbuf, cnt);
}
