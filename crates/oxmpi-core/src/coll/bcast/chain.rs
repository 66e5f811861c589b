//! Pipelined chain broadcast: the message travels along relative ranks
//! 0 -> 1 -> ... -> n-1 in segments, so every link carries a segment at a time.
//! The receive of the next segment is posted before waiting for the current one.
use crate::coll::sched::{Builder, Slice};

/// Segment size in bytes.
pub const SEGMENT: usize = 64 * 1024;

pub fn build(b: &mut Builder, rank: i32, n: i32, root: i32, buf: Slice) {
    let vr = (rank - root + n) % n;
    let (prev, next) = ((rank - 1 + n) % n, (rank + 1) % n);
    let segs = buf.len.div_ceil(SEGMENT).max(1);
    let seg = |k: usize| {
        let at = k * SEGMENT;
        buf.sub(at.min(buf.len), SEGMENT.min(buf.len - at.min(buf.len)))
    };
    if vr != 0 {
        b.recv(seg(0), prev);
    }
    for k in 0..segs {
        if vr != 0 {
            b.fence();
            if k + 1 < segs {
                b.recv(seg(k + 1), prev);
            }
        }
        if vr != n - 1 {
            b.send(seg(k), next);
        }
    }
}
