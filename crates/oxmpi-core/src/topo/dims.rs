//! `MPI_Dims_create`: balanced factorisations of a process count, with MPICH's
//! algorithm so that users comparing decompositions across MPIs see the same grid.
//! Its own file because it is pure arithmetic, independent of any topology object.

use crate::error::{ErrorClass, MpiError, Result};

/// `MPI_Dims_create`: fills the zero entries of `dims` so that the product of all
/// entries is `nnodes`, as balanced as possible (the smallest difference between the
/// largest and the smallest filled-in entry, as MPICH), the filled-in entries in
/// non-increasing order. Positive entries are kept.
///
/// Errors: `nnodes < 0` is `MPI_ERR_ARG`; a negative `dims[i]`, `nnodes` not a
/// multiple of the product of the positive entries, or all entries positive with a
/// product other than `nnodes` are `MPI_ERR_DIMS`. With no dimensions at all the call
/// does nothing (as MPICH).
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> Result<()> {
    const CALL: &str = "MPI_Dims_create";
    if nnodes < 0 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            CALL,
            "nnodes",
            format!("{nnodes} is negative"),
        ));
    }
    if dims.is_empty() {
        return Ok(());
    }
    let mut product: i64 = 1;
    let mut free = 0usize;
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                CALL,
                "dims",
                format!("dims[{i}] = {d} is negative"),
            ));
        }
        if d == 0 {
            free += 1;
        } else {
            // Saturate: anything above i32::MAX cannot divide nnodes anyway.
            product = (product * d as i64).min(i64::from(i32::MAX) + 1);
        }
    }
    let n = nnodes as i64;
    if n == 0 || n % product != 0 {
        return Err(MpiError::arg(
            ErrorClass::Dims,
            CALL,
            "dims",
            format!("{nnodes} nodes cannot be divided into a grid whose fixed dimensions multiply to {product}"),
        ));
    }
    if free == 0 {
        if product != n {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                CALL,
                "dims",
                format!("all dimensions are given and multiply to {product}, not {nnodes}"),
            ));
        }
        return Ok(());
    }
    let factors = if free <= MPICH_MAX_DIMS {
        mpich_factors((n / product) as i32, free)
    } else {
        balanced_factors((n / product) as u64, free)
    };
    let mut it = factors.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free dimension") as i32;
    }
    Ok(())
}

/// The most free dimensions MPICH's algorithm handles (beyond, the exhaustive
/// search below decides).
const MPICH_MAX_DIMS: usize = 20;

/// `n` split into `k` factors as MPICH's MPI_Dims_create splits it, so that
/// users comparing decompositions across MPIs see the same grid. The method
/// (after Träff and Lübbe, EuroMPI'15, as MPICH implements it): primes larger
/// than the square root of what is left take their own dimension first; then a
/// few shapes have a single answer (no more primes than dimensions, one prime
/// left, every multiplicity divisible by the dimensions left); otherwise a
/// search over the divisors, pruned by the best balance (largest minus
/// smallest) found so far, where a later candidate of equal balance replaces
/// an earlier one. Arithmetic wraps as MPICH's `int` arithmetic does.
fn mpich_factors(n: i32, k: usize) -> Vec<u64> {
    debug_assert!(n >= 1 && k >= 1);
    if k == 1 {
        return vec![n as u64];
    }
    // Prime factors with multiplicity, ascending.
    let mut f: Vec<(i32, u32)> = Vec::new();
    for p in prime_factors(n as u64) {
        match f.last_mut() {
            Some((v, c)) if *v as u64 == p => *c += 1,
            _ => f.push((p as i32, 1)),
        }
    }
    let mut nprimes: u32 = f.iter().map(|x| x.1).sum();
    let mut nn = n;
    let mut chosen: Vec<i32> = Vec::with_capacity(k);
    // Large primes (those whose square exceeds what is left) first.
    while f.len() > 1 && chosen.len() < k - 1 {
        let (val, cnt) = *f.last().unwrap();
        if cnt == 1 && val.wrapping_mul(val) > nn {
            chosen.push(val);
            f.pop();
            nn /= val;
            nprimes -= 1;
        } else {
            break;
        }
    }
    let next = chosen.len();
    let left = k - next;
    let done = |mut v: Vec<i32>| -> Vec<u64> {
        v.resize(k, 1);
        v.into_iter().map(|x| x as u64).collect()
    };
    if nprimes as usize + next <= k {
        // Every prime its own dimension, largest first.
        for &(val, cnt) in f.iter().rev() {
            chosen.extend(std::iter::repeat(val).take(cnt as usize));
        }
        return done(chosen);
    }
    if left == 1 {
        chosen.push(nn);
        return done(chosen);
    }
    if f.len() == 1 {
        // Powers of one prime, dealt round robin.
        let (val, cnt) = f[0];
        let mut rest = vec![1i32; left];
        for i in 0..cnt as usize {
            rest[i % left] = rest[i % left].wrapping_mul(val);
        }
        chosen.extend(rest);
        return done(chosen);
    }
    if f.iter().all(|&(_, c)| c as usize % left == 0) {
        let mut val = 1i32;
        for &(p, c) in &f {
            for _ in 0..c as usize / left {
                val = val.wrapping_mul(p);
            }
        }
        chosen.extend(std::iter::repeat(val).take(left));
        return done(chosen);
    }
    // Divisors other than 1 and nn, ascending.
    let mut divs: Vec<i32> = vec![1];
    for &(p, c) in &f {
        let base = divs.clone();
        let mut pk = 1i32;
        for _ in 0..c {
            pk = pk.wrapping_mul(p);
            divs.extend(base.iter().map(|d| d.wrapping_mul(pk)));
        }
    }
    divs.sort_unstable();
    divs.retain(|&d| d != 1 && d != nn);
    // First guess: the largest primes first, each to the last dimension it
    // fits without passing the one before it.
    let mut guess = vec![1i32; left];
    let mut placed = 0;
    for &(val, cnt) in f.iter().rev() {
        for _ in 0..cnt {
            if placed < left {
                guess[placed] = val;
                placed += 1;
            } else {
                let mut kk = left - 1;
                while kk > 0 && guess[kk].wrapping_mul(val) > guess[kk - 1] {
                    kk -= 1;
                }
                guess[kk] = guess[kk].wrapping_mul(val);
            }
        }
    }
    chosen.extend(guess);
    // As MPICH: the balance starts from the first chosen value overall.
    let mut curbal = chosen[0].wrapping_sub(chosen[k - 1]);
    let mut trydims = vec![0i32; left];
    trydims[left - 1] = divs.first().copied().unwrap_or(1);
    let mut opt: Vec<i32> = chosen[next..].to_vec();
    optbalance(
        nn,
        left - 1,
        left,
        &divs,
        &mut trydims,
        &mut curbal,
        &mut opt,
    );
    chosen.truncate(next);
    chosen.extend(opt);
    done(chosen)
}

/// MPICH's recursive balance search: places a divisor at `idx` (counting down
/// to 0, the largest), keeping in `opt` the best decomposition (ties go to the
/// later one).
fn optbalance(
    n: i32,
    idx: usize,
    nd: usize,
    divs: &[i32],
    trydims: &mut [i32],
    curbal: &mut i32,
    opt: &mut [i32],
) {
    let min = trydims[nd - 1];
    if idx > 1 {
        for k in 0..divs.len() {
            let f = divs[k];
            if idx < nd - 1 && f.wrapping_sub(min) > *curbal {
                break;
            }
            let q = n / f;
            let mut newdivs: Vec<i32> = Vec::new();
            let sf = if q % f == 0 {
                newdivs.push(f);
                f
            } else if k + 1 < divs.len() {
                divs[k + 1]
            } else {
                break;
            };
            if idx < nd - 1 && sf.wrapping_sub(min) > *curbal {
                break;
            }
            let mut ff = sf.wrapping_mul(sf);
            let mut ii = idx - 1;
            while ii > 0 && ff <= q {
                ff = ff.wrapping_mul(sf);
                ii -= 1;
            }
            if ii > 0 {
                break;
            }
            trydims[idx] = f;
            for &g in &divs[k + 1..] {
                if g.wrapping_mul(g) > q {
                    break;
                }
                if q % g == 0 {
                    newdivs.push(g);
                }
            }
            if !newdivs.is_empty() {
                optbalance(q, idx - 1, nd, &newdivs, trydims, curbal, opt);
            }
        }
    } else if idx == 1 {
        // Two left: the pair (q >= f) with the smallest q.
        let mut qprev = -1;
        let mut k = 1;
        while k < divs.len() {
            let q = n / divs[k];
            if q < divs[k] {
                break;
            }
            qprev = q;
            k += 1;
        }
        let f = divs[k - 1];
        let q = if qprev > 0 { qprev } else { n / f };
        if q < f {
            return;
        }
        let testbal = if nd == 2 { q - f } else { q.wrapping_sub(min) };
        if testbal <= *curbal {
            opt[2..nd].copy_from_slice(&trydims[2..nd]);
            opt[0] = q;
            opt[1] = f;
            *curbal = q.wrapping_sub(min);
        }
    } else if n.wrapping_sub(min) <= *curbal {
        opt[1..nd].copy_from_slice(&trydims[1..nd]);
        opt[0] = n;
        *curbal = n.wrapping_sub(min);
    }
}

/// Prime factors of `n`, with multiplicity, ascending.
fn prime_factors(mut n: u64) -> Vec<u64> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            f.push(p);
            n /= p;
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if n > 1 {
        f.push(n);
    }
    f
}

/// The largest `r` with `r^m <= x` (`m >= 1`).
fn iroot(x: u64, m: usize) -> u64 {
    if m == 1 || x <= 1 {
        return x;
    }
    let pow_le = |r: u64| -> bool {
        let mut acc: u64 = 1;
        for _ in 0..m {
            match acc.checked_mul(r) {
                Some(v) if v <= x => acc = v,
                _ => return false,
            }
        }
        true
    };
    let mut r = (x as f64).powf(1.0 / m as f64).round() as u64;
    while r > 0 && !pow_le(r) {
        r -= 1;
    }
    while pow_le(r + 1) {
        r += 1;
    }
    r
}

/// `n` as a product of `k` factors in non-increasing order minimising
/// (largest - smallest); among equally balanced choices the lexicographically
/// largest one, as MPICH picks (10x6x6 rather than 9x8x5 for 360: the
/// largest smallest factor).
pub(super) fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    debug_assert!(n >= 1 && k >= 1);
    let primes = prime_factors(n);
    if primes.len() <= k {
        // Every factor > 1 takes at least one prime: the primes themselves, padded
        // with ones, are optimal.
        let mut v: Vec<u64> = primes.into_iter().rev().collect();
        v.resize(k, 1);
        return v;
    }
    // Divisors of n, ascending.
    let mut divs = vec![1u64];
    let mut i = 0;
    while i < primes.len() {
        let p = primes[i];
        let mut e = 0;
        while i < primes.len() && primes[i] == p {
            e += 1;
            i += 1;
        }
        let base = divs.clone();
        let mut pk = 1;
        for _ in 0..e {
            pk *= p;
            divs.extend(base.iter().map(|d| d * pk));
        }
    }
    divs.sort_unstable();

    // A first guess to prune against: largest primes first onto the smallest slot.
    let mut guess = vec![1u64; k];
    for &p in primes.iter().rev() {
        let j = (0..k).min_by_key(|&j| guess[j]).unwrap();
        guess[j] *= p;
    }
    guess.sort_unstable_by(|a, b| b.cmp(a));

    struct Search<'a> {
        divs: &'a [u64],
        best: Vec<u64>,
        best_diff: u64,
        cur: Vec<u64>,
    }
    impl Search<'_> {
        /// Chooses the next factor (at most `max`) of `rem` for `m` remaining slots.
        fn go(&mut self, rem: u64, m: usize, max: u64) {
            if m == 1 {
                if rem > max {
                    return;
                }
                self.cur.push(rem);
                let diff = self.cur[0] - rem;
                if diff < self.best_diff || (diff == self.best_diff && self.cur > self.best) {
                    self.best_diff = diff;
                    self.best = self.cur.clone();
                }
                self.cur.pop();
                return;
            }
            // The factor placed now is the largest of the remaining ones, so it is at
            // least the m-th root of `rem`.
            let lo = {
                let r = iroot(rem, m);
                if pow_at_least(r, m, rem) {
                    r
                } else {
                    r + 1
                }
            };
            let start = self.divs.partition_point(|&d| d < lo);
            for idx in start..self.divs.len() {
                let f = self.divs[idx];
                if f > max || f > rem {
                    break;
                }
                if rem % f != 0 {
                    continue;
                }
                let first = if self.cur.is_empty() { f } else { self.cur[0] };
                // The smallest factor is at most the (m-1)-th root of what is left.
                let min_bound = iroot(rem / f, m - 1);
                if first - min_bound.min(first) > self.best_diff {
                    if self.cur.is_empty() {
                        break; // a larger first factor is only worse
                    }
                    continue;
                }
                self.cur.push(f);
                self.go(rem / f, m - 1, f);
                self.cur.pop();
            }
        }
    }
    fn pow_at_least(r: u64, m: usize, x: u64) -> bool {
        let mut acc: u64 = 1;
        for _ in 0..m {
            acc = acc.saturating_mul(r);
        }
        acc >= x
    }

    let best_diff = guess[0] - guess[k - 1];
    let mut s = Search {
        divs: &divs,
        best: guess,
        best_diff,
        cur: Vec::with_capacity(k),
    };
    s.go(n, k, n);
    s.best
}
