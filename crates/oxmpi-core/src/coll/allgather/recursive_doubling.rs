//! Recursive-doubling allgather for power-of-two sizes: log2 n steps; in step k
//! every rank exchanges its aligned group of 2^k blocks with `rank ^ 2^k`.
//! Non-power-of-two sizes run Bruck's algorithm instead (same step count, any n).
use crate::coll::sched::{Builder, Slice};

/// `out`: all n blocks of `blk` bytes in rank order; this rank's own block is
/// filled, or (`src: Some`) is `src`, sent from there in the first step and
/// copied to its place during it.
pub fn build(b: &mut Builder, rank: i32, n: i32, out: Slice, blk: usize, src: Option<Slice>) {
    if n & (n - 1) != 0 {
        super::bruck::build(b, rank, n, out, blk, src);
        return;
    }
    let mut mask = 1;
    while mask < n {
        let partner = rank ^ mask;
        let mine = (rank & !(mask - 1)) as usize;
        let theirs = (partner & !(mask - 1)) as usize;
        let len = mask as usize * blk;
        match src {
            // The first step's group is our own block alone.
            Some(s) if mask == 1 => {
                b.send(s, partner);
                b.recv(out.sub(theirs * blk, len), partner);
                b.copy(s, out.sub(mine * blk, len));
            }
            _ => {
                b.send(out.sub(mine * blk, len), partner);
                b.recv(out.sub(theirs * blk, len), partner);
            }
        }
        b.fence();
        mask <<= 1;
    }
}

/// Recursive doubling over a list of blocks (allgatherv: any counts, each block
/// where its displacement puts it; `n` a power of two). Step k exchanges the
/// aligned group of 2^k blocks with `rank ^ 2^k`, one message per block (every
/// rank knows every count, so both sides post the same messages; the
/// displacements, which may differ between ranks, only place them). Empty
/// blocks are not sent. `src`, as in [`build`]: our own block's send data,
/// copied to `blocks[rank]` during the first step.
pub fn build_blocks(b: &mut Builder, rank: i32, n: i32, blocks: &[Slice], src: Option<Slice>) {
    debug_assert!(n & (n - 1) == 0, "recursive doubling needs a power of two");
    let mut mask = 1;
    while mask < n {
        let partner = rank ^ mask;
        let mine = (rank & !(mask - 1)) as usize;
        let theirs = (partner & !(mask - 1)) as usize;
        let group = mask as usize;
        for j in mine..mine + group {
            let blk = match src {
                Some(s) if mask == 1 => s,
                _ => blocks[j],
            };
            if blk.len > 0 {
                b.send(blk, partner);
            }
        }
        for &blk in &blocks[theirs..theirs + group] {
            if blk.len > 0 {
                b.recv(blk, partner);
            }
        }
        if let (Some(s), 1) = (src, mask) {
            if s.len > 0 {
                b.copy(s, blocks[rank as usize]);
            }
        }
        b.fence();
        mask <<= 1;
    }
}
