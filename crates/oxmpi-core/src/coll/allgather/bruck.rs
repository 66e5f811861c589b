//! Bruck's allgather: ceil(log2 n) steps for any n. Blocks are kept in a
//! temporary in order relative to this rank (slot j holds rank (rank + j) % n);
//! in step k every rank sends its first min(2^k, n - 2^k) slots to rank - 2^k and
//! receives as many into slots 2^k.. from rank + 2^k. A final rotation puts the
//! blocks in rank order.
use crate::coll::sched::{Builder, Slice};

/// `out`: all n blocks of `blk` bytes in rank order; this rank's own block is
/// filled, or (`src: Some`) is `src` (the final rotation puts it in place).
pub fn build(b: &mut Builder, rank: i32, n: i32, out: Slice, blk: usize, src: Option<Slice>) {
    let nu = n as usize;
    let r = rank as usize;
    let tmp = b.temp(nu * blk);
    b.copy(src.unwrap_or(out.sub(r * blk, blk)), tmp.sub(0, blk));
    let mut k = 1;
    while k < nu {
        let cnt = k.min(nu - k);
        b.send(tmp.sub(0, cnt * blk), ((r + nu - k) % nu) as i32);
        b.recv(tmp.sub(k * blk, cnt * blk), ((r + k) % nu) as i32);
        b.fence();
        k <<= 1;
    }
    // Slot j holds rank (r + j) % n.
    let head = (nu - r) * blk;
    b.copy(tmp.sub(0, head), out.sub(r * blk, head));
    b.copy(tmp.sub(head, r * blk), out.sub(0, r * blk));
}
