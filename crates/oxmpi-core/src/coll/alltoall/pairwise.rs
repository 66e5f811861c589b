//! Pairwise-exchange alltoall (also alltoallv/w): n - 1 steps, one partner per
//! step: `rank ^ i` on power-of-two sizes, otherwise send to rank + i and
//! receive from rank - i. Works for any n and any block sizes.
use crate::coll::sched::{Builder, Slice};
use crate::error::Result;

/// `send[i]` / `recv[i]`: the packed blocks for / from rank i.
pub fn build(b: &mut Builder, rank: i32, n: i32, send: &[Slice], recv: &[Slice]) -> Result<()> {
    super::self_copy(b, rank, send, recv)?;
    let pof2 = n & (n - 1) == 0;
    for i in 1..n {
        let (to, from) = if pof2 { (rank ^ i, rank ^ i) } else { ((rank + i) % n, (rank - i + n) % n) };
        b.send(send[to as usize], to);
        b.recv(recv[from as usize], from);
        b.fence();
    }
    Ok(())
}
