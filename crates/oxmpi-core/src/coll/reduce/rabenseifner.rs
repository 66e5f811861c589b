//! Rabenseifner's reduce: a reduce-scatter by recursive halving, then a binomial
//! gather of the reduced blocks to the root. Bandwidth term ~2m instead of
//! m log n for the binomial tree; used for large messages.
//!
//! Non-power-of-two sizes (as MPICH): with pof2 the largest power of two <= n and
//! rem = n - pof2, each even rank r < 2 rem sends its data to r + 1 and sits out;
//! the others take "new ranks" 0..pof2 that map monotonically onto rank ranges.
//! Recursive halving runs with the distance growing (1, 2, 4, ...), so the two
//! groups combined in every round are adjacent rank ranges and each combination
//! is `lower op higher`: the result is in rank order (correct for
//! non-commutative ops too). New rank i ends up owning the block range
//! [`region`]`(i, log2 pof2)` (bit-reversed order); the gather undoes the rounds.
//! The data is split into pof2 blocks of whole elements (some empty when count < pof2).
use super::{pof2, Io, Red};
use crate::coll::sched::{Builder, Slice};

/// The element split into `parts` blocks: displacements (with the total at the end).
pub(crate) fn split(count: usize, parts: usize) -> Vec<usize> {
    let (q, r) = (count / parts, count % parts);
    let mut disp = Vec::with_capacity(parts + 1);
    let mut at = 0;
    for i in 0..parts {
        disp.push(at);
        at += q + usize::from(i < r);
    }
    disp.push(at);
    disp
}

/// The block range `[lo, hi)` new rank `nr` is responsible for after `steps`
/// rounds of recursive halving over `pof2` blocks.
pub(crate) fn region(nr: i32, steps: u32, pof2: i32) -> (usize, usize) {
    let (mut lo, mut hi) = (0usize, pof2 as usize);
    for s in 0..steps {
        let mid = (lo + hi) / 2;
        if nr & (1 << s) == 0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (lo, hi)
}

/// The rank behind new rank `nr`.
pub(crate) fn real(nr: i32, rem: i32) -> i32 {
    if nr < rem {
        2 * nr + 1
    } else {
        nr + rem
    }
}

/// The state after the reduce-scatter phase.
pub(crate) struct Halved {
    /// This rank's new rank, or None if it sat out (even rank < 2 rem).
    pub newrank: Option<i32>,
    pub pof2: i32,
    pub rem: i32,
    pub steps: u32,
    /// Block displacements (pof2 + 1 entries).
    pub disp: Vec<usize>,
}

impl Halved {
    /// The span of the block range `[lo, hi)` inside the full span `s`.
    pub fn range(&self, red: &Red, s: Slice, (lo, hi): (usize, usize)) -> (Slice, usize) {
        let cnt = self.disp[hi] - self.disp[lo];
        (red.block(s, self.disp[lo], cnt), cnt)
    }
}

/// The pre-step and recursive halving into `acc` (a writable full span),
/// receiving into temporaries of its own. `input`: `None` where `acc` holds
/// this rank's input already; `Some(input)` where it does not yet: the first
/// round then sends from `input` and folds its kept half with the partner's
/// straight into `acc` ([`Red::reduce_into`]), so the input is never copied
/// whole (a rank of the non-power-of-two pre-step copies it first).
/// Afterwards new rank i holds the fully reduced blocks `region(i, steps)` in `acc`.
pub(crate) fn reduce_scatter_phase(
    b: &mut Builder,
    red: &Red,
    input: Option<Slice>,
    acc: Slice,
    count: usize,
) -> Halved {
    let (rank, n) = (b.comm().rank(), b.comm().size());
    let p2 = pof2(n);
    let rem = n - p2;
    let steps = p2.trailing_zeros();
    let disp = split(count, p2 as usize);
    let mut h = Halved {
        newrank: None,
        pof2: p2,
        rem,
        steps,
        disp,
    };
    let mut input = input;
    if rank < 2 * rem || steps == 0 {
        if let Some(i) = input.take() {
            b.copy(i, acc);
        }
    }
    // A full-span temporary, made only where a reception has nowhere else to go.
    let mut tmp: Option<Slice> = None;
    let mut full_tmp = |b: &mut Builder| *tmp.get_or_insert_with(|| b.temp(red.len(count)));
    if rank < 2 * rem {
        if rank % 2 == 0 {
            b.send(acc, rank + 1);
            b.fence();
            return h;
        }
        let t = full_tmp(b);
        b.recv(t, rank - 1);
        b.fence();
        red.reduce(b, t, acc, count);
        h.newrank = Some(rank / 2);
    } else {
        h.newrank = Some(rank - rem);
    }
    let nr = h.newrank.unwrap();
    // The part of `acc` the first round gives away: free once sent (or from
    // the start where the first round sends from `input`) until the gathers
    // after this phase fill it, so the partners' halves land there where they fit.
    let given_first = (steps > 0).then(|| h.range(red, acc, region(nr ^ 1, 1, p2)).0);
    for s in 0..steps {
        let partner_nr = nr ^ (1 << s);
        let partner = real(partner_nr, rem);
        let give = region(partner_nr, s + 1, p2);
        let keep = region(nr, s + 1, p2);
        let (mine, cnt) = h.range(red, acc, keep);
        let first_from_input = if s == 0 { input } else { None };
        let len = red.len(cnt);
        let t = match given_first {
            Some(g) if len <= g.len && (s > 0 || first_from_input.is_some()) => g.sub(0, len),
            _ => h.range(red, full_tmp(b), keep).0,
        };
        let from = first_from_input.unwrap_or(acc);
        b.send(h.range(red, from, give).0, partner);
        b.recv(t, partner);
        b.fence();
        match first_from_input {
            Some(i) => {
                let (kept_input, _) = h.range(red, i, keep);
                let (lower, higher) = if partner < rank {
                    (t, kept_input)
                } else {
                    (kept_input, t)
                };
                red.reduce_into(b, lower, higher, mine, cnt);
            }
            None => red.combine_into(b, mine, t, cnt, partner < rank),
        }
    }
    h
}

/// Rabenseifner's reduce; returns the slice holding the result at the root.
pub(crate) fn reduce(b: &mut Builder, red: &Red, io: &Io, root: i32) -> Option<Slice> {
    let rank = b.comm().rank();
    let count = io.count;
    let (acc, input) = io.acc_deferred(b, red);
    let h = reduce_scatter_phase(b, red, input, acc, count);
    // The new rank gathering the result: the root's, or for a root that sat out,
    // that of its partner root + 1 (which then forwards the result).
    let (target, proxy) = if root < 2 * h.rem {
        (root / 2, root % 2 == 0)
    } else {
        (root - h.rem, false)
    };
    if let Some(nr) = h.newrank {
        let mut gathered = true;
        for s in (0..h.steps).rev() {
            let m = 1 << s;
            let partner = real(nr ^ m, h.rem);
            if nr & m != target & m {
                let (mine, _) = h.range(red, acc, region(nr, s + 1, h.pof2));
                b.send(mine, partner);
                b.fence();
                gathered = false;
                break;
            }
            let (theirs, _) = h.range(red, acc, region(nr ^ m, s + 1, h.pof2));
            b.recv(theirs, partner);
            b.fence();
        }
        if gathered && proxy {
            b.send(acc, root);
            b.fence();
            return None;
        }
    } else if rank == root {
        b.recv(acc, rank + 1);
        b.fence();
    }
    (rank == root).then_some(acc)
}
