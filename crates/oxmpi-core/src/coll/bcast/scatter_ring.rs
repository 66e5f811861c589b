//! Broadcast for large messages (van de Geijn): the message is cut into n chunks
//! of ceil(len / n) bytes (the last ones shorter, possibly empty), scattered down
//! a binomial tree (relative rank `vr` ends with chunk `vr`), then collected
//! everywhere by a ring allgather. Works for any n and root; the buffer itself
//! holds every chunk at its final place, so no temporary is needed.
use crate::coll::sched::{Builder, Slice};

fn chunk_range(len: usize, cs: usize, first: i32, count: i32) -> (usize, usize) {
    let lo = (first as usize * cs).min(len);
    let hi = ((first + count) as usize * cs).min(len);
    (lo, hi - lo)
}

pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, buf: Slice) {
    let len = buf.len;
    let cs = len.div_ceil(n as usize);
    let vr = (rank - root + n) % n;
    let abs = |v: i32| (v + root) % n;
    // Scatter: receive the chunks of my subtree [vr, vr + subtree).
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            let (at, l) = chunk_range(len, cs, vr, mask.min(n - vr));
            b.recv(buf.sub(at, l), abs(vr - mask));
            b.fence();
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        let child = vr + mask;
        if child < n {
            let (at, l) = chunk_range(len, cs, child, mask.min(n - child));
            b.send(buf.sub(at, l), abs(child));
        }
        mask >>= 1;
    }
    b.fence();
    // Ring allgather of the chunks, in relative ranks.
    let (right, left) = ((rank + 1) % n, (rank - 1 + n) % n);
    for i in 0..n - 1 {
        let (sat, sl) = chunk_range(len, cs, (vr - i + n) % n, 1);
        let (rat, rl) = chunk_range(len, cs, (vr - i - 1 + n) % n, 1);
        b.send(buf.sub(sat, sl), right);
        b.recv(buf.sub(rat, rl), left);
        b.fence();
    }
}
