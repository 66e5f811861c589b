//! Bruck's alltoall for small blocks: ceil(log2 n) steps for any n, each moving
//! about n/2 blocks. After a rotation, slot j holds the block for rank + j; in
//! step k every slot with bit k set travels to rank + 2^k (packed into one
//! message), so a block ends up j ranks further, at its destination; a final
//! inverse rotation puts the blocks in source order.
use crate::coll::sched::{Builder, Slice};

/// `inp`, `out`: n blocks of `blk` bytes in rank order (distinct memory).
pub fn build(b: &mut Builder, rank: i32, n: i32, inp: Slice, out: Slice, blk: usize) {
    let nu = n as usize;
    let r = rank as usize;
    let tmp = b.temp(nu * blk);
    // Slot j <- block for rank (r + j) % n.
    let head = (nu - r) * blk;
    b.copy(inp.sub(r * blk, head), tmp.sub(0, head));
    b.copy(inp.sub(0, r * blk), tmp.sub(head, r * blk));
    let pack = b.temp(nu.div_ceil(2) * blk);
    let unpack = b.temp(nu.div_ceil(2) * blk);
    let mut k = 1;
    while k < nu {
        let slots: Vec<usize> = (0..nu).filter(|j| j & k != 0).collect();
        let len = slots.len() * blk;
        for (i, &j) in slots.iter().enumerate() {
            b.copy(tmp.sub(j * blk, blk), pack.sub(i * blk, blk));
        }
        b.send(pack.sub(0, len), ((r + k) % nu) as i32);
        b.recv(unpack.sub(0, len), ((r + nu - k) % nu) as i32);
        b.fence();
        for (i, &j) in slots.iter().enumerate() {
            b.copy(unpack.sub(i * blk, blk), tmp.sub(j * blk, blk));
        }
        k <<= 1;
    }
    // Slot j now holds the block from rank (r - j) % n.
    for j in 0..nu {
        b.copy(
            tmp.sub(j * blk, blk),
            out.sub(((r + nu - j) % nu) * blk, blk),
        );
    }
}
