//! Pairwise-exchange alltoall (also alltoallv/w): n - 1 steps, one partner per
//! step: `rank ^ i` on power-of-two sizes, otherwise send to rank + i and
//! receive from rank - i. Works for any n and any block sizes; empty blocks are
//! not exchanged.
use crate::coll::sched::{Builder, Slice};
use crate::error::Result;

/// `send[i]` / `recv[i]`: the packed blocks for / from rank i.
pub fn build(b: &mut Builder, rank: i32, n: i32, send: &[Slice], recv: &[Slice]) -> Result<()> {
    let pof2 = n & (n - 1) == 0;
    if n == 1 {
        super::self_copy(b, rank, send, recv)?;
    }
    for i in 1..n {
        let (to, from) = if pof2 {
            (rank ^ i, rank ^ i)
        } else {
            ((rank + i) % n, (rank - i + n) % n)
        };
        // Zero-byte blocks are not exchanged: the block between two ranks is
        // empty on both sides or on neither (the type signatures of a pair
        // match), so an alltoallv/w whose blocks are all empty here does not
        // communicate at all.
        let (s, r) = (send[to as usize], recv[from as usize]);
        if s.len > 0 {
            b.send(s, to);
        }
        if r.len > 0 {
            b.recv(r, from);
        }
        if i == 1 {
            // Our own block while the first exchange is in flight (the
            // exchange no longer waits behind its copy).
            super::self_copy(b, rank, send, recv)?;
        }
        if s.len > 0 || r.len > 0 {
            b.fence();
        }
    }
    Ok(())
}
