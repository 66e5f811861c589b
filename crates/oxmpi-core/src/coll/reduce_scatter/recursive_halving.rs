//! Recursive-halving reduce-scatter (MPICH; commutative ops). Pre-step for
//! non-powers of two: each even rank r < 2 rem sends all its data to r + 1 and
//! sits out; new rank i then stands for the ranks 2i, 2i+1 (i < rem) or i + rem,
//! and owns their blocks. In the rounds with distance pof2/2, pof2/4, ..., 1 each
//! rank sends the half of its current range that the partner keeps and folds in
//! the half it keeps; afterwards new rank i holds its final blocks. Post-step:
//! odd ranks r < 2 rem send rank r - 1 its block.
use super::Args;
use crate::coll::reduce::rabenseifner::real;
use crate::coll::reduce::{pof2, Red};
use crate::coll::sched::Builder;

pub(super) fn build(b: &mut Builder, red: &Red, a: &Args) {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let total = a.disp[n as usize];
    let acc = b.temp(red.len(total));
    b.copy(a.input, acc);
    let tmp = b.temp(red.len(total));
    let p2 = pof2(n);
    let rem = n - p2;
    let mine = red.block(acc, a.disp[rank as usize], a.counts[rank as usize]);
    let nr = if rank < 2 * rem {
        if rank % 2 == 0 {
            b.send(acc, rank + 1);
            b.fence();
            let t = red.block(tmp, a.disp[rank as usize], a.counts[rank as usize]);
            b.recv(t, rank + 1);
            red.deliver(b, t, a.recvbuf, a.counts[rank as usize]);
            return;
        }
        b.recv(tmp, rank - 1);
        b.fence();
        red.reduce(b, tmp, acc, total);
        rank / 2
    } else {
        rank - rem
    };
    // Element displacement of new rank i's blocks (p2 + 1 entries).
    let nd: Vec<usize> = (0..=p2)
        .map(|i| {
            if i < rem {
                a.disp[2 * i as usize]
            } else {
                a.disp[(i + rem) as usize]
            }
        })
        .collect();
    let range = |s: crate::coll::sched::Slice, lo: i32, hi: i32| {
        (
            red.block(s, nd[lo as usize], nd[hi as usize] - nd[lo as usize]),
            nd[hi as usize] - nd[lo as usize],
        )
    };
    let (mut lo, mut hi) = (0, p2);
    let mut mask = p2 / 2;
    while mask > 0 {
        let partner_nr = nr ^ mask;
        let partner = real(partner_nr, rem);
        let mid = (lo + hi) / 2;
        let (keep, give) = if nr < partner_nr {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let (out, _) = range(acc, give.0, give.1);
        let (t, _) = range(tmp, keep.0, keep.1);
        let (dst, cnt) = range(acc, keep.0, keep.1);
        b.send(out, partner);
        b.recv(t, partner);
        b.fence();
        red.reduce(b, t, dst, cnt);
        (lo, hi) = keep;
        mask >>= 1;
    }
    if rank < 2 * rem {
        let r1 = (rank - 1) as usize;
        b.send(red.block(acc, a.disp[r1], a.counts[r1]), rank - 1);
    }
    red.deliver(b, mine, a.recvbuf, a.counts[rank as usize]);
}
