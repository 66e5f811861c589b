//! Binomial-tree broadcast: ceil(log2 n) rounds; relative rank `vr` receives the
//! whole message from `vr - lowbit(vr)` and forwards it to `vr + mask` for every
//! mask below its lowest set bit. Works for any n and root.
use crate::coll::sched::{Builder, Slice};

pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, buf: Slice) {
    let vr = (rank - root + n) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            b.recv(buf, (rank - mask + n) % n);
            b.fence();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            b.send(buf, (rank + mask) % n);
        }
        mask >>= 1;
    }
}
