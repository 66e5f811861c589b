//! Linear alltoall (also alltoallv/w): every receive and every send is started
//! at once (receives first, in an order staggered by rank so that not every
//! rank targets rank 0 first), then one wait for all.
use crate::coll::sched::{Builder, Slice};
use crate::error::Result;

/// `send[i]` / `recv[i]`: the packed blocks for / from rank i.
pub fn build(b: &mut Builder, rank: i32, n: i32, send: &[Slice], recv: &[Slice]) -> Result<()> {
    for i in 1..n {
        let from = (rank - i + n) % n;
        // Empty blocks are not exchanged (empty on both sides of a pair, as
        // the type signatures match; see pairwise.rs).
        if recv[from as usize].len > 0 {
            b.recv(recv[from as usize], from);
        }
    }
    for i in 1..n {
        let to = (rank + i) % n;
        if send[to as usize].len > 0 {
            b.send(send[to as usize], to);
        }
    }
    // Our own block while the exchanges are in flight.
    super::self_copy(b, rank, send, recv)
}
