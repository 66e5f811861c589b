//! Process topologies (MPI-5.0 chapter "Process Topologies"): the pure,
//! communication-free part — Cartesian grids, general graphs and distributed graphs
//! as data, with the rank/coordinate arithmetic, validation and the default
//! (identity) mapping. Building the communicators (dup/split) is the caller's job:
//! this module computes what to pass to it ([`Cart::map`], [`Cart::sub_color_key`],
//! [`Graph::map`], [`DistGraph::from_edges`]).
//!
//! Error classes, chosen as MPICH does:
//! - grid/graph descriptions given to a constructor (`MPI_Cart_create`,
//!   `MPI_Graph_create`, `MPI_Dist_graph_create*`) that are malformed or larger than
//!   the communicator: `MPI_ERR_ARG` ("there is no topology yet"), except a dimension
//!   size that is not positive: `MPI_ERR_DIMS`;
//! - `MPI_Dims_create` that cannot be satisfied, negative `dims[i]`: `MPI_ERR_DIMS`;
//!   `MPI_Cart_map` on a grid larger than the communicator: `MPI_ERR_DIMS`;
//! - a process rank outside the communicator/topology (`MPI_Cart_coords`,
//!   `MPI_Graph_neighbors`, the ranks listed to `MPI_Dist_graph_create*`, ...):
//!   `MPI_ERR_RANK`;
//! - an out-of-range coordinate of a non-periodic dimension (`MPI_Cart_rank`), a
//!   `direction` that is not a dimension, array lengths that do not match `ndims`:
//!   `MPI_ERR_ARG`;
//! - a query on a communicator without the right kind of topology, `MPI_Cart_shift`
//!   on a zero-dimensional grid: `MPI_ERR_TOPOLOGY`.

// `is_multiple_of` is newer than the workspace's rust-version (1.80).
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{ErrorClass, MpiError, Result};
use crate::request::PROC_NULL;

/// The kind of a topology, as `MPI_Topo_test` reports it (the C library gives the
/// standard ABI's value by [`name`](TopologyKind::name), from abi.txt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// `MPI_CART`.
    Cart,
    /// `MPI_GRAPH`.
    Graph,
    /// `MPI_DIST_GRAPH`.
    DistGraph,
}

impl TopologyKind {
    /// Every kind.
    pub const ALL: &'static [TopologyKind] = &[TopologyKind::Cart, TopologyKind::Graph, TopologyKind::DistGraph];

    /// The C name, e.g. `MPI_CART`.
    pub const fn name(self) -> &'static str {
        match self {
            TopologyKind::Cart => "MPI_CART",
            TopologyKind::Graph => "MPI_GRAPH",
            TopologyKind::DistGraph => "MPI_DIST_GRAPH",
        }
    }
}

// ---------------------------------------------------------------------------------
// MPI_Dims_create
// ---------------------------------------------------------------------------------

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
    let factors = if free <= MPICH_MAX_DIMS { mpich_factors((n / product) as i32, free) } else { balanced_factors((n / product) as u64, free) };
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
    optbalance(nn, left - 1, left, &divs, &mut trydims, &mut curbal, &mut opt);
    chosen.truncate(next);
    chosen.extend(opt);
    done(chosen)
}

/// MPICH's recursive balance search: places a divisor at `idx` (counting down
/// to 0, the largest), keeping in `opt` the best decomposition (ties go to the
/// later one).
fn optbalance(n: i32, idx: usize, nd: usize, divs: &[i32], trydims: &mut [i32], curbal: &mut i32, opt: &mut [i32]) {
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
fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
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

// ---------------------------------------------------------------------------------
// Cartesian topologies
// ---------------------------------------------------------------------------------

/// A Cartesian grid: the size of each dimension and whether it wraps around.
/// Ranks are assigned in row-major order (the last dimension varies fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<i32>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// Checks a grid description; returns the number of processes it needs.
    fn validate(call: &str, dims: &[i32], periods: &[bool], comm_size: i32) -> Result<i32> {
        if dims.len() != periods.len() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "periods",
                format!(
                    "{} periods given for {} dimensions",
                    periods.len(),
                    dims.len()
                ),
            ));
        }
        if comm_size < 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "comm",
                format!("size {comm_size} is negative"),
            ));
        }
        let mut product: i64 = 1;
        for (i, &d) in dims.iter().enumerate() {
            if d <= 0 {
                return Err(MpiError::arg(
                    ErrorClass::Dims,
                    call,
                    "dims",
                    format!("dims[{i}] = {d} is not positive"),
                ));
            }
            product = (product * d as i64).min(i64::from(i32::MAX) + 1);
        }
        if product > i64::from(i32::MAX) {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                call,
                "dims",
                format!("the grid {dims:?} has more than {} nodes", i32::MAX),
            ));
        }
        Ok(product as i32)
    }

    /// `MPI_Cart_create`'s checks: `dims` positive (`MPI_ERR_DIMS`), one period per
    /// dimension, and a grid no larger than the communicator (`MPI_ERR_ARG`). Zero
    /// dimensions are allowed (a single process).
    pub fn new(dims: &[i32], periods: &[bool], comm_size: i32) -> Result<Cart> {
        const CALL: &str = "MPI_Cart_create";
        let size = Cart::validate(CALL, dims, periods, comm_size)?;
        if size > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "dims",
                format!("the grid {dims:?} has {size} nodes, the communicator only {comm_size} processes"),
            ));
        }
        Ok(Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        })
    }

    /// The number of grid points (1 for a zero-dimensional grid).
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// `MPI_Cartdim_get`.
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    fn check_rank(&self, call: &str, rank: i32) -> Result<()> {
        if (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(MpiError::arg(
                ErrorClass::Rank,
                call,
                "rank",
                format!("{rank} is not a rank of the grid (0..{})", self.size()),
            ))
        }
    }

    /// `MPI_Cart_rank`: the rank at `coords`. On a periodic dimension an out-of-range
    /// coordinate wraps into `0..dims[i]`; on a non-periodic one it is `MPI_ERR_ARG`.
    pub fn rank(&self, coords: &[i32]) -> Result<i32> {
        const CALL: &str = "MPI_Cart_rank";
        if coords.len() != self.ndims() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "coords",
                format!(
                    "{} coordinates given for {} dimensions",
                    coords.len(),
                    self.ndims()
                ),
            ));
        }
        let mut rank: i64 = 0;
        for (i, ((&c, &d), &p)) in coords.iter().zip(&self.dims).zip(&self.periods).enumerate() {
            let c = if p {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "coords",
                    format!(
                        "coords[{i}] = {c} is outside 0..{d} and dimension {i} is not periodic"
                    ),
                ));
            };
            rank = rank * d as i64 + c as i64;
        }
        Ok(rank as i32)
    }

    /// `MPI_Cart_coords`: the coordinates of `rank` (`MPI_ERR_RANK` outside the grid).
    pub fn coords(&self, rank: i32) -> Result<Vec<i32>> {
        self.check_rank("MPI_Cart_coords", rank)?;
        Ok(self.coords_unchecked(rank))
    }

    fn coords_unchecked(&self, mut rank: i32) -> Vec<i32> {
        let mut c = vec![0; self.ndims()];
        for (ci, &d) in c.iter_mut().zip(&self.dims).rev() {
            *ci = rank % d;
            rank /= d;
        }
        c
    }

    /// `MPI_Cart_shift` as seen by process `rank`: `(source, dest)` for a shift by
    /// `disp` along dimension `direction`; `MPI_PROC_NULL` where the shift leaves a
    /// non-periodic dimension. `disp` may be negative or zero.
    pub fn shift(&self, rank: i32, direction: i32, disp: i32) -> Result<(i32, i32)> {
        const CALL: &str = "MPI_Cart_shift";
        if self.ndims() == 0 {
            return Err(MpiError::new(
                ErrorClass::Topology,
                format!("{CALL}: the Cartesian topology has zero dimensions"),
            ));
        }
        let dir = usize::try_from(direction)
            .ok()
            .filter(|&d| d < self.ndims())
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "direction",
                    format!("{direction} is not a dimension (0..{})", self.ndims()),
                )
            })?;
        self.check_rank(CALL, rank)?;
        if disp == 0 {
            return Ok((rank, rank));
        }
        let coords = self.coords_unchecked(rank);
        let (d, periodic) = (self.dims[dir] as i64, self.periods[dir]);
        let at = |offset: i64| -> i32 {
            let mut c = coords.clone();
            let x = c[dir] as i64 + offset;
            c[dir] = if periodic {
                x.rem_euclid(d) as i32
            } else if (0..d).contains(&x) {
                x as i32
            } else {
                return PROC_NULL;
            };
            self.rank(&c).expect("in-range coordinates")
        };
        Ok((at(-(disp as i64)), at(disp as i64)))
    }

    fn check_remain(&self, call: &str, remain: &[bool]) -> Result<()> {
        if remain.len() != self.ndims() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "remain_dims",
                format!(
                    "{} entries given for {} dimensions",
                    remain.len(),
                    self.ndims()
                ),
            ));
        }
        Ok(())
    }

    /// `MPI_Cart_sub`: the grid of the kept dimensions (zero-dimensional when none is
    /// kept).
    pub fn sub(&self, remain: &[bool]) -> Result<Cart> {
        self.check_remain("MPI_Cart_sub", remain)?;
        let keep = |v: &[i32]| -> Vec<i32> {
            v.iter()
                .zip(remain)
                .filter(|(_, &r)| r)
                .map(|(&x, _)| x)
                .collect()
        };
        Ok(Cart {
            dims: keep(&self.dims),
            periods: self
                .periods
                .iter()
                .zip(remain)
                .filter(|(_, &r)| r)
                .map(|(&p, _)| p)
                .collect(),
        })
    }

    /// The `(color, key)` with which process `rank` splits the grid's communicator to
    /// build `MPI_Cart_sub(remain)`: the colour numbers the dropped coordinates, the
    /// key is the process's rank in its sub-grid (row-major over the kept
    /// coordinates), so the split yields the sub-grid ranks directly. `remain` must
    /// have one entry per dimension (see [`Cart::sub`]); for a `rank` outside the grid
    /// (or a `remain` of the wrong length) there is no colour (`MPI_UNDEFINED`).
    pub fn sub_color_key(&self, rank: i32, remain: &[bool]) -> (Option<i32>, i32) {
        if remain.len() != self.ndims() || !(0..self.size()).contains(&rank) {
            return (None, 0);
        }
        let coords = self.coords_unchecked(rank);
        let (mut color, mut key) = (0i32, 0i32);
        for ((&c, &d), &r) in coords.iter().zip(&self.dims).zip(remain) {
            if r {
                key = key * d + c;
            } else {
                color = color * d + c;
            }
        }
        (Some(color), key)
    }

    /// `MPI_Cart_map` with the identity mapping: the new rank of the process with
    /// rank `rank` in a communicator of `comm_size` processes — itself if it fits in
    /// the grid, `None` (`MPI_UNDEFINED`) otherwise. A grid larger than the
    /// communicator is `MPI_ERR_DIMS` (as MPICH).
    pub fn map(dims: &[i32], periods: &[bool], rank: i32, comm_size: i32) -> Result<Option<i32>> {
        const CALL: &str = "MPI_Cart_map";
        let size = Cart::validate(CALL, dims, periods, comm_size)?;
        if size > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Dims,
                CALL,
                "dims",
                format!("the grid {dims:?} has {size} nodes, the communicator only {comm_size} processes"),
            ));
        }
        check_comm_rank(CALL, rank, comm_size)?;
        Ok((rank < size).then_some(rank))
    }

    /// The neighbourhood of `rank` for neighbourhood collectives: for each dimension
    /// in order, the source then the destination of a shift by 1 (`MPI_PROC_NULL` at a
    /// non-periodic edge). The same list serves as sources and destinations.
    pub fn neighbors(&self, rank: i32) -> Result<Vec<i32>> {
        self.check_rank("MPI_Neighbor_allgather", rank)?;
        let mut v = Vec::with_capacity(2 * self.ndims());
        for d in 0..self.ndims() {
            let (s, t) = self.shift(rank, d as i32, 1)?;
            v.push(s);
            v.push(t);
        }
        Ok(v)
    }
}

fn check_comm_rank(call: &str, rank: i32, comm_size: i32) -> Result<()> {
    if (0..comm_size).contains(&rank) {
        Ok(())
    } else {
        Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            "rank",
            format!("{rank} is not a rank of the communicator (0..{comm_size})"),
        ))
    }
}

// ---------------------------------------------------------------------------------
// Graph topologies
// ---------------------------------------------------------------------------------

/// A general graph in `MPI_Graph_create`'s encoding: `index[i]` is the total number
/// of neighbours of nodes `0..=i`, `edges` lists the neighbours of node 0, then of
/// node 1, and so on. Self-loops and repeated edges are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    pub index: Vec<i32>,
    pub edges: Vec<i32>,
}

impl Graph {
    /// Checks an `index` array (non-negative, non-decreasing) and returns the number
    /// of edges it describes — how long `edges` must be. For C bindings, which must
    /// know that before they can look at `edges`.
    pub fn edge_count(call: &str, index: &[i32]) -> Result<usize> {
        let mut prev = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "index",
                    format!("index[{i}] = {x} is negative"),
                ));
            }
            if x < prev {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    call,
                    "index",
                    format!("index[{i}] = {x} is smaller than index[{}] = {prev}", i - 1),
                ));
            }
            prev = x;
        }
        Ok(prev as usize)
    }

    fn validate(
        call: &str,
        nnodes: i32,
        index: &[i32],
        edges: &[i32],
        comm_size: i32,
    ) -> Result<()> {
        if nnodes < 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "nnodes",
                format!("{nnodes} is negative"),
            ));
        }
        if nnodes > comm_size {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "nnodes",
                format!("{nnodes} nodes, but the communicator has only {comm_size} processes"),
            ));
        }
        if index.len() != nnodes as usize {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "index",
                format!("{} entries given for {nnodes} nodes", index.len()),
            ));
        }
        let nedges = Graph::edge_count(call, index)?;
        if edges.len() != nedges {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "edges",
                format!("{} edges given, index describes {nedges}", edges.len()),
            ));
        }
        if let Some((i, &e)) = edges
            .iter()
            .enumerate()
            .find(|(_, &e)| !(0..nnodes).contains(&e))
        {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                "edges",
                format!("edges[{i}] = {e} is not a node of the graph (0..{nnodes})"),
            ));
        }
        Ok(())
    }

    /// `MPI_Graph_create`'s checks (all `MPI_ERR_ARG`): `0 <= nnodes <= comm_size`,
    /// `index` of length `nnodes`, non-negative and non-decreasing, `edges` of length
    /// `index[nnodes-1]` naming nodes `0..nnodes`.
    pub fn new(nnodes: i32, index: &[i32], edges: &[i32], comm_size: i32) -> Result<Graph> {
        Graph::validate("MPI_Graph_create", nnodes, index, edges, comm_size)?;
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    /// `MPI_Graphdims_get`'s `nnodes`.
    pub fn nnodes(&self) -> i32 {
        self.index.len() as i32
    }

    /// `MPI_Graphdims_get`'s `nedges`.
    pub fn nedges(&self) -> i32 {
        self.edges.len() as i32
    }

    fn range_of(&self, call: &str, rank: i32) -> Result<std::ops::Range<usize>> {
        let r = usize::try_from(rank)
            .ok()
            .filter(|&r| r < self.index.len())
            .ok_or_else(|| {
                MpiError::arg(
                    ErrorClass::Rank,
                    call,
                    "rank",
                    format!("{rank} is not a node of the graph (0..{})", self.nnodes()),
                )
            })?;
        let start = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        Ok(start..self.index[r] as usize)
    }

    /// `MPI_Graph_neighbors`: the neighbours of node `rank`, in `edges` order.
    pub fn neighbors(&self, rank: i32) -> Result<&[i32]> {
        let r = self.range_of("MPI_Graph_neighbors", rank)?;
        Ok(&self.edges[r])
    }

    /// `MPI_Graph_neighbors_count`.
    pub fn neighbors_count(&self, rank: i32) -> Result<i32> {
        Ok(self.range_of("MPI_Graph_neighbors_count", rank)?.len() as i32)
    }

    /// `MPI_Graph_map` with the identity mapping: `rank` if it is a node of the
    /// graph, `MPI_UNDEFINED` otherwise; the graph is checked as by `MPI_Graph_create`.
    pub fn map(
        nnodes: i32,
        index: &[i32],
        edges: &[i32],
        rank: i32,
        comm_size: i32,
    ) -> Result<Option<i32>> {
        const CALL: &str = "MPI_Graph_map";
        Graph::validate(CALL, nnodes, index, edges, comm_size)?;
        check_comm_rank(CALL, rank, comm_size)?;
        Ok((rank < nnodes).then_some(rank))
    }
}

// ---------------------------------------------------------------------------------
// Distributed graph topologies
// ---------------------------------------------------------------------------------

/// One process's view of a distributed graph: the processes it receives from
/// (`sources`) and sends to (`destinations`), with weights unless the graph is
/// unweighted (`None` = `MPI_UNWEIGHTED`). Repeated edges and self-loops are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Option<Vec<i32>>,
    pub destinations: Vec<i32>,
    pub dest_weights: Option<Vec<i32>>,
}

fn check_ranks(call: &str, what: &str, ranks: &[i32], comm_size: i32) -> Result<()> {
    match ranks
        .iter()
        .enumerate()
        .find(|(_, &r)| !(0..comm_size).contains(&r))
    {
        Some((i, &r)) => Err(MpiError::arg(
            ErrorClass::Rank,
            call,
            what,
            format!("{what}[{i}] = {r} is not a rank of the communicator (0..{comm_size})"),
        )),
        None => Ok(()),
    }
}

fn check_weights(call: &str, what: &str, weights: Option<&[i32]>, n: usize) -> Result<()> {
    if let Some(w) = weights {
        if w.len() != n {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                what,
                format!("{} weights given for {n} edges", w.len()),
            ));
        }
        if let Some((i, &x)) = w.iter().enumerate().find(|(_, &x)| x < 0) {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                call,
                what,
                format!("{what}[{i}] = {x} is negative"),
            ));
        }
    }
    Ok(())
}

impl DistGraph {
    /// `MPI_Dist_graph_create_adjacent`'s checks: every listed process a rank of the
    /// communicator (`MPI_ERR_RANK`), weights (non-negative) for every edge or for
    /// none — `MPI_UNWEIGHTED` on both sides or on neither (`MPI_ERR_ARG`).
    /// `MPI_WEIGHTS_EMPTY` for a side with no edges is `Some(&[])`.
    pub fn adjacent(
        sources: &[i32],
        source_weights: Option<&[i32]>,
        destinations: &[i32],
        dest_weights: Option<&[i32]>,
        comm_size: i32,
    ) -> Result<DistGraph> {
        const CALL: &str = "MPI_Dist_graph_create_adjacent";
        check_ranks(CALL, "sources", sources, comm_size)?;
        check_ranks(CALL, "destinations", destinations, comm_size)?;
        check_weights(CALL, "sourceweights", source_weights, sources.len())?;
        check_weights(CALL, "destweights", dest_weights, destinations.len())?;
        if source_weights.is_some() != dest_weights.is_some() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                if source_weights.is_none() { "sourceweights" } else { "destweights" },
                "MPI_UNWEIGHTED must be given for both sourceweights and destweights or for neither",
            ));
        }
        Ok(DistGraph {
            sources: sources.to_vec(),
            source_weights: source_weights.map(<[i32]>::to_vec),
            destinations: destinations.to_vec(),
            dest_weights: dest_weights.map(<[i32]>::to_vec),
        })
    }

    /// `MPI_Dist_graph_neighbors_count`'s `indegree`.
    pub fn indegree(&self) -> i32 {
        self.sources.len() as i32
    }

    /// `MPI_Dist_graph_neighbors_count`'s `outdegree`.
    pub fn outdegree(&self) -> i32 {
        self.destinations.len() as i32
    }

    /// `MPI_Dist_graph_neighbors_count`'s `weighted`.
    pub fn is_weighted(&self) -> bool {
        self.source_weights.is_some()
    }

    /// `MPI_Dist_graph_create`'s redistribution, given every process's arguments
    /// (`contributions[r]` from rank `r`, one per process of the communicator): each
    /// process's in- and out-lists. An edge appears in its source's `destinations`
    /// and its destination's `sources`; both lists are ordered by contributing rank,
    /// then by position in that rank's arguments. The graph is weighted if the
    /// contributions that carry edges give weights; mixing weighted and unweighted
    /// contributions is `MPI_ERR_ARG`.
    pub fn from_edges(comm_size: i32, contributions: &[DistGraphEdges]) -> Result<Vec<DistGraph>> {
        const CALL: &str = "MPI_Dist_graph_create";
        if comm_size < 0 || contributions.len() != comm_size as usize {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "comm_old",
                format!(
                    "{} contributions for {comm_size} processes",
                    contributions.len()
                ),
            ));
        }
        let mut weighted: Option<bool> = None;
        for (r, c) in contributions.iter().enumerate() {
            c.validate(comm_size)?;
            if !c.destinations.is_empty() {
                let w = c.weights.is_some();
                if *weighted.get_or_insert(w) != w {
                    return Err(MpiError::arg(
                        ErrorClass::Arg,
                        CALL,
                        "weights",
                        format!(
                            "rank {r} gives {} but an earlier rank did not",
                            if w { "weights" } else { "MPI_UNWEIGHTED" }
                        ),
                    ));
                }
            }
        }
        let weighted =
            weighted.unwrap_or_else(|| contributions.iter().any(|c| c.weights.is_some()));
        let n = comm_size as usize;
        let mut out: Vec<DistGraph> = (0..n)
            .map(|_| DistGraph {
                sources: Vec::new(),
                source_weights: weighted.then(Vec::new),
                destinations: Vec::new(),
                dest_weights: weighted.then(Vec::new),
            })
            .collect();
        for c in contributions {
            for (s, d, w) in c.edges() {
                let (s, d) = (s as usize, d as usize);
                out[s].destinations.push(d as i32);
                out[d].sources.push(s as i32);
                if weighted {
                    let w = w.unwrap_or(1);
                    out[s].dest_weights.as_mut().unwrap().push(w);
                    out[d].source_weights.as_mut().unwrap().push(w);
                }
            }
        }
        Ok(out)
    }
}

/// One process's arguments to `MPI_Dist_graph_create`: for each `sources[i]`,
/// `degrees[i]` edges from it to the next `degrees[i]` entries of `destinations`,
/// with `weights` (`None` = `MPI_UNWEIGHTED`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DistGraphEdges {
    pub sources: Vec<i32>,
    pub degrees: Vec<i32>,
    pub destinations: Vec<i32>,
    pub weights: Option<Vec<i32>>,
}

impl DistGraphEdges {
    /// Checks one process's arguments: one degree per source, non-negative
    /// (`MPI_ERR_ARG`), as many destinations as the degrees add up to (`MPI_ERR_ARG`),
    /// all processes ranks of the communicator (`MPI_ERR_RANK`), a weight per edge.
    pub fn validate(&self, comm_size: i32) -> Result<()> {
        const CALL: &str = "MPI_Dist_graph_create";
        if self.degrees.len() != self.sources.len() {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "degrees",
                format!(
                    "{} degrees given for {} sources",
                    self.degrees.len(),
                    self.sources.len()
                ),
            ));
        }
        let mut total: usize = 0;
        for (i, &d) in self.degrees.iter().enumerate() {
            if d < 0 {
                return Err(MpiError::arg(
                    ErrorClass::Arg,
                    CALL,
                    "degrees",
                    format!("degrees[{i}] = {d} is negative"),
                ));
            }
            total += d as usize;
        }
        if self.destinations.len() != total {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                CALL,
                "destinations",
                format!(
                    "{} destinations given, the degrees add up to {total}",
                    self.destinations.len()
                ),
            ));
        }
        check_ranks(CALL, "sources", &self.sources, comm_size)?;
        check_ranks(CALL, "destinations", &self.destinations, comm_size)?;
        check_weights(CALL, "weights", self.weights.as_deref(), total)
    }

    /// The edges `(source, destination, weight)` in argument order (assumes
    /// [`DistGraphEdges::validate`] passed).
    pub fn edges(&self) -> impl Iterator<Item = (i32, i32, Option<i32>)> + '_ {
        let mut starts = Vec::with_capacity(self.sources.len());
        let mut at = 0usize;
        for &d in &self.degrees {
            starts.push(at);
            at += d.max(0) as usize;
        }
        self.sources
            .iter()
            .zip(&self.degrees)
            .zip(starts)
            .flat_map(move |((&s, &deg), start)| {
                (start..start + deg.max(0) as usize)
                    .map(move |j| (s, self.destinations[j], self.weights.as_ref().map(|w| w[j])))
            })
    }
}

// ---------------------------------------------------------------------------------
// The topology attached to a communicator
// ---------------------------------------------------------------------------------

/// The topology cached on a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

impl Topology {
    /// `MPI_CART`, `MPI_GRAPH` or `MPI_DIST_GRAPH`.
    pub fn kind(&self) -> TopologyKind {
        match self {
            Topology::Cart(_) => TopologyKind::Cart,
            Topology::Graph(_) => TopologyKind::Graph,
            Topology::DistGraph(_) => TopologyKind::DistGraph,
        }
    }

    /// `MPI_Topo_test`: the kind of the communicator's topology, `None` (C:
    /// `MPI_UNDEFINED`) if it has none.
    pub fn topo_test(topo: Option<&Topology>) -> Option<TopologyKind> {
        topo.map(Topology::kind)
    }

    /// The Cartesian topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_cart<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a Cart> {
        match topo {
            Some(Topology::Cart(c)) => Ok(c),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no Cartesian topology"),
            )),
        }
    }

    /// The graph topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_graph<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a Graph> {
        match topo {
            Some(Topology::Graph(g)) => Ok(g),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no graph topology"),
            )),
        }
    }

    /// The distributed graph topology, or `MPI_ERR_TOPOLOGY` naming `call`.
    pub fn require_dist_graph<'a>(topo: Option<&'a Topology>, call: &str) -> Result<&'a DistGraph> {
        match topo {
            Some(Topology::DistGraph(g)) => Ok(g),
            _ => Err(MpiError::new(
                ErrorClass::Topology,
                format!("{call}: the communicator has no distributed graph topology"),
            )),
        }
    }

    /// The (sources, destinations) of process `rank` for neighbourhood collectives.
    /// For a distributed graph the topology already is this process's view, and
    /// `rank` is not consulted.
    pub fn neighborhood(&self, rank: i32) -> Result<(Vec<i32>, Vec<i32>)> {
        match self {
            Topology::Cart(c) => {
                let v = c.neighbors(rank)?;
                Ok((v.clone(), v))
            }
            Topology::Graph(g) => {
                let v = g.neighbors(rank)?.to_vec();
                Ok((v.clone(), v))
            }
            Topology::DistGraph(d) => Ok((d.sources.clone(), d.destinations.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class<T: std::fmt::Debug>(r: Result<T>) -> ErrorClass {
        r.expect_err("expected an error").class
    }

    fn dc(nnodes: i32, dims: &[i32]) -> Result<Vec<i32>> {
        let mut d = dims.to_vec();
        dims_create(nnodes, &mut d).map(|_| d)
    }

    #[test]
    fn dims_create_examples_from_the_standard() {
        assert_eq!(dc(6, &[0, 0]).unwrap(), vec![3, 2]);
        assert_eq!(dc(7, &[0, 0]).unwrap(), vec![7, 1]);
        assert_eq!(dc(6, &[0, 3, 0]).unwrap(), vec![2, 3, 1]);
        assert_eq!(class(dc(7, &[0, 3, 0])), ErrorClass::Dims);
    }

    #[test]
    fn dims_create_balances() {
        assert_eq!(dc(12, &[0, 0]).unwrap(), vec![4, 3]);
        assert_eq!(dc(12, &[0, 0, 0]).unwrap(), vec![3, 2, 2]);
        assert_eq!(dc(16, &[0, 0]).unwrap(), vec![4, 4]);
        assert_eq!(dc(100, &[0, 0, 0]).unwrap(), vec![5, 5, 4]);
        assert_eq!(dc(1, &[0, 0, 0]).unwrap(), vec![1, 1, 1]);
        assert_eq!(dc(8, &[0; 5]).unwrap(), vec![2, 2, 2, 1, 1]);
        assert_eq!(dc(36, &[0, 0, 0]).unwrap(), vec![4, 3, 3]);
        assert_eq!(dc(90, &[0, 0]).unwrap(), vec![10, 9]);
        assert_eq!(dc(64, &[0, 0, 0]).unwrap(), vec![4, 4, 4]);
        assert_eq!(
            dc(1_000_000_000, &[0, 0, 0]).unwrap(),
            vec![1000, 1000, 1000]
        );
        assert_eq!(dc(2_147_483_647, &[0, 0]).unwrap(), vec![2_147_483_647, 1]); // prime
        assert_eq!(dc(24, &[0, 2, 0]).unwrap(), vec![4, 2, 3]);
        assert_eq!(dc(5, &[0]).unwrap(), vec![5]);
        assert_eq!(dc(6, &[2, 3]).unwrap(), vec![2, 3]);
        // Large highly composite numbers stay fast.
        let d = dc(735_134_400, &[0; 6]).unwrap();
        assert_eq!(d.iter().map(|&x| x as i64).product::<i64>(), 735_134_400);
        assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
    }

    #[test]
    fn dims_create_breaks_ties_as_mpich() {
        // MPICH 4's answers where several grids are equally balanced.
        assert_eq!(dc(360, &[0, 0, 0]).unwrap(), vec![10, 6, 6]);
        assert_eq!(dc(3696, &[0, 0, 0]).unwrap(), vec![22, 14, 12]);
        assert_eq!(dc(2160, &[0; 4]).unwrap(), vec![10, 6, 6, 6]);
        assert_eq!(dc(2520, &[0; 4]).unwrap(), vec![10, 7, 6, 6]);
        assert_eq!(dc(2880, &[0; 4]).unwrap(), vec![10, 8, 6, 6]);
        assert_eq!(dc(168, &[0; 4]).unwrap(), vec![7, 4, 3, 2]);
        assert_eq!(dc(720, &[0, 2, 0, 0]).unwrap(), vec![10, 2, 6, 6]);
    }

    #[test]
    fn dims_create_errors() {
        assert_eq!(class(dc(-1, &[0])), ErrorClass::Arg);
        assert_eq!(class(dc(6, &[-2, 0])), ErrorClass::Dims);
        assert_eq!(class(dc(6, &[4, 0])), ErrorClass::Dims);
        assert_eq!(class(dc(8, &[2, 2])), ErrorClass::Dims);
        assert_eq!(class(dc(0, &[0, 0])), ErrorClass::Dims);
        assert_eq!(class(dc(6, &[i32::MAX, i32::MAX, 0])), ErrorClass::Dims);
        assert!(dc(5, &[]).unwrap().is_empty());
        let e = dc(7, &[0, 3, 0]).unwrap_err();
        assert!(
            e.message.contains("MPI_Dims_create") && e.message.contains("dims"),
            "{e}"
        );
    }

    #[test]
    fn balanced_factors_is_optimal_for_small_inputs() {
        // Against brute force over all non-increasing factorisations.
        fn all(n: u64, k: usize, max: u64, cur: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
            if k == 0 {
                if n == 1 {
                    out.push(cur.clone());
                }
                return;
            }
            for f in (1..=max.min(n)).rev() {
                if n % f == 0 {
                    cur.push(f);
                    all(n / f, k - 1, f, cur, out);
                    cur.pop();
                }
            }
        }
        for n in 1..=400u64 {
            for k in 1..=5 {
                let mut v = Vec::new();
                all(n, k, n, &mut Vec::new(), &mut v);
                let best = v.iter().map(|f| f[0] - f[k - 1]).min().unwrap();
                let got = balanced_factors(n, k);
                assert_eq!(got.iter().product::<u64>(), n);
                assert!(got.windows(2).all(|w| w[0] >= w[1]), "{n} {k} {got:?}");
                assert_eq!(got[0] - got[k - 1], best, "n={n} k={k} got {got:?}");
            }
        }
    }

    #[test]
    fn cart_create_checks() {
        let c = Cart::new(&[3, 4], &[false, true], 12).unwrap();
        assert_eq!(c.size(), 12);
        assert_eq!(c.ndims(), 2);
        assert_eq!(Cart::new(&[3, 4], &[false, true], 20).unwrap(), c);
        assert_eq!(
            class(Cart::new(&[3, 4], &[false, true], 11)),
            ErrorClass::Arg
        );
        assert_eq!(
            class(Cart::new(&[3, 0], &[false, true], 12)),
            ErrorClass::Dims
        );
        assert_eq!(
            class(Cart::new(&[3, -1], &[false, true], 12)),
            ErrorClass::Dims
        );
        assert_eq!(class(Cart::new(&[3, 4], &[false], 12)), ErrorClass::Arg);
        assert_eq!(
            class(Cart::new(&[65536, 65536], &[false, false], i32::MAX)),
            ErrorClass::Dims
        );
        let z = Cart::new(&[], &[], 4).unwrap();
        assert_eq!((z.size(), z.ndims()), (1, 0));
        assert_eq!(z.rank(&[]).unwrap(), 0);
        assert_eq!(z.coords(0).unwrap(), Vec::<i32>::new());
        assert_eq!(class(Cart::new(&[], &[], 0)), ErrorClass::Arg);
        let e = Cart::new(&[3, 4], &[false, true], 11).unwrap_err();
        assert!(e.message.contains("MPI_Cart_create"), "{e}");
    }

    #[test]
    fn cart_rank_and_coords() {
        let c = Cart::new(&[2, 3, 4], &[false, true, false], 24).unwrap();
        assert_eq!(c.rank(&[0, 0, 0]).unwrap(), 0);
        assert_eq!(c.rank(&[0, 0, 1]).unwrap(), 1);
        assert_eq!(c.rank(&[0, 1, 0]).unwrap(), 4);
        assert_eq!(c.rank(&[1, 2, 3]).unwrap(), 23);
        assert_eq!(c.coords(23).unwrap(), vec![1, 2, 3]);
        assert_eq!(c.coords(13).unwrap(), vec![1, 0, 1]);
        // Periodic dimension 1 wraps both ways.
        assert_eq!(c.rank(&[1, 3, 3]).unwrap(), c.rank(&[1, 0, 3]).unwrap());
        assert_eq!(c.rank(&[1, -1, 3]).unwrap(), 23);
        assert_eq!(c.rank(&[0, -7, 0]).unwrap(), c.rank(&[0, 2, 0]).unwrap());
        assert_eq!(
            c.rank(&[0, i32::MIN, 0]).unwrap(),
            c.rank(&[0, i32::MIN.rem_euclid(3), 0]).unwrap()
        );
        // Non-periodic dimensions do not.
        assert_eq!(class(c.rank(&[2, 0, 0])), ErrorClass::Arg);
        assert_eq!(class(c.rank(&[-1, 0, 0])), ErrorClass::Arg);
        assert_eq!(class(c.rank(&[0, 0, 4])), ErrorClass::Arg);
        assert_eq!(class(c.rank(&[0, 0])), ErrorClass::Arg);
        assert_eq!(class(c.coords(24)), ErrorClass::Rank);
        assert_eq!(class(c.coords(-1)), ErrorClass::Rank);
        let e = c.rank(&[2, 0, 0]).unwrap_err();
        assert!(
            e.message.contains("MPI_Cart_rank") && e.message.contains("coords"),
            "{e}"
        );
        for r in 0..24 {
            assert_eq!(c.rank(&c.coords(r).unwrap()).unwrap(), r);
        }
    }

    #[test]
    fn cart_shift_at_both_ends() {
        // A 1-D ring of 4 and a 1-D line of 4.
        let ring = Cart::new(&[4], &[true], 4).unwrap();
        let line = Cart::new(&[4], &[false], 4).unwrap();
        assert_eq!(ring.shift(0, 0, 1).unwrap(), (3, 1));
        assert_eq!(ring.shift(3, 0, 1).unwrap(), (2, 0));
        assert_eq!(ring.shift(0, 0, -1).unwrap(), (1, 3));
        assert_eq!(ring.shift(1, 0, 6).unwrap(), (3, 3));
        assert_eq!(ring.shift(2, 0, 0).unwrap(), (2, 2));
        assert_eq!(line.shift(0, 0, 1).unwrap(), (PROC_NULL, 1));
        assert_eq!(line.shift(3, 0, 1).unwrap(), (2, PROC_NULL));
        assert_eq!(line.shift(0, 0, -1).unwrap(), (1, PROC_NULL));
        assert_eq!(line.shift(3, 0, -1).unwrap(), (PROC_NULL, 2));
        assert_eq!(line.shift(1, 0, 5).unwrap(), (PROC_NULL, PROC_NULL));
        assert_eq!(line.shift(1, 0, i32::MIN).unwrap(), (PROC_NULL, PROC_NULL));
        assert_eq!(
            ring.shift(1, 0, i32::MAX).unwrap().1,
            ((1 + i32::MAX as i64) % 4) as i32
        );
        // 2-D: rows non-periodic, columns periodic.
        let g = Cart::new(&[3, 4], &[false, true], 12).unwrap();
        assert_eq!(g.shift(0, 0, 1).unwrap(), (PROC_NULL, 4));
        assert_eq!(g.shift(8, 0, 1).unwrap(), (4, PROC_NULL));
        assert_eq!(g.shift(4, 1, 1).unwrap(), (7, 5));
        assert_eq!(g.shift(7, 1, 1).unwrap(), (6, 4));
        assert_eq!(class(g.shift(0, 2, 1)), ErrorClass::Arg);
        assert_eq!(class(g.shift(0, -1, 1)), ErrorClass::Arg);
        assert_eq!(class(g.shift(12, 0, 1)), ErrorClass::Rank);
        let z = Cart::new(&[], &[], 1).unwrap();
        assert_eq!(class(z.shift(0, 0, 1)), ErrorClass::Topology);
        assert_eq!(g.neighbors(5).unwrap(), vec![1, 9, 4, 6]);
        assert_eq!(g.neighbors(0).unwrap(), vec![PROC_NULL, 4, 3, 1]);
    }

    #[test]
    fn cart_sub_and_split_keys() {
        let c = Cart::new(&[2, 3, 4], &[true, false, true], 24).unwrap();
        assert_eq!(
            c.sub(&[true, false, true]).unwrap(),
            Cart {
                dims: vec![2, 4],
                periods: vec![true, true]
            }
        );
        assert_eq!(
            c.sub(&[false, false, false]).unwrap(),
            Cart {
                dims: vec![],
                periods: vec![]
            }
        );
        assert_eq!(class(c.sub(&[true])), ErrorClass::Arg);
        // Keeping dimension 1: colour = (c0, c2) numbered row-major, key = c1.
        let remain = [false, true, false];
        let sub = c.sub(&remain).unwrap();
        for r in 0..24 {
            let co = c.coords(r).unwrap();
            let (color, key) = c.sub_color_key(r, &remain);
            assert_eq!(color, Some(co[0] * 4 + co[2]));
            assert_eq!(key, co[1]);
            assert_eq!(sub.coords(key).unwrap(), vec![co[1]]);
        }
        // Keeping everything: one colour, key = rank. Keeping nothing: key 0.
        for r in 0..24 {
            assert_eq!(c.sub_color_key(r, &[true, true, true]), (Some(0), r));
            assert_eq!(c.sub_color_key(r, &[false, false, false]), (Some(r), 0));
        }
        assert_eq!(c.sub_color_key(24, &remain), (None, 0));
        assert_eq!(c.sub_color_key(0, &[true]), (None, 0));
    }

    #[test]
    fn cart_map_is_the_identity() {
        assert_eq!(Cart::map(&[2, 3], &[false, false], 5, 8).unwrap(), Some(5));
        assert_eq!(
            Cart::map(&[2, 3], &[false, false], 6, 8).unwrap(),
            None
        );
        assert_eq!(Cart::map(&[], &[], 0, 3).unwrap(), Some(0));
        assert_eq!(Cart::map(&[], &[], 1, 3).unwrap(), None);
        assert_eq!(
            class(Cart::map(&[3, 3], &[false, false], 0, 8)),
            ErrorClass::Dims
        );
        assert_eq!(
            class(Cart::map(&[2, 0], &[false, false], 0, 8)),
            ErrorClass::Dims
        );
        assert_eq!(class(Cart::map(&[2, 3], &[false], 0, 8)), ErrorClass::Arg);
        assert_eq!(
            class(Cart::map(&[2, 3], &[false, false], 8, 8)),
            ErrorClass::Rank
        );
        assert_eq!(
            class(Cart::map(&[2, 3], &[false, false], -1, 8)),
            ErrorClass::Rank
        );
    }

    /// The seed's shuffle-exchange graph for n = 3 (SCOPE.md section 7).
    #[test]
    fn shuffle_exchange_table() {
        let table = [
            [1, 0, 0],
            [0, 2, 4],
            [3, 4, 1],
            [2, 6, 5],
            [5, 1, 2],
            [4, 3, 6],
            [7, 5, 3],
            [6, 7, 7],
        ];
        let index: Vec<i32> = (1..=8).map(|i| 3 * i).collect();
        let edges: Vec<i32> = table.iter().flatten().copied().collect();
        let g = Graph::new(8, &index, &edges, 8).unwrap();
        assert_eq!(g.nnodes(), 8);
        assert_eq!(g.nedges(), 24);
        for (node, row) in table.iter().enumerate() {
            assert_eq!(g.neighbors(node as i32).unwrap(), row);
            assert_eq!(g.neighbors_count(node as i32).unwrap(), 3);
        }
        let topo = Topology::Graph(g);
        assert_eq!(
            topo.neighborhood(3).unwrap(),
            (vec![2, 6, 5], vec![2, 6, 5])
        );
    }

    #[test]
    fn graph_encoding_and_errors() {
        // The standard's 4-node example: 0-1, 0-3, 1-0, 2-3, 3-0, 3-2.
        let g = Graph::new(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4).unwrap();
        assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
        assert_eq!(g.neighbors(1).unwrap(), &[0]);
        assert_eq!(g.neighbors(2).unwrap(), &[3]);
        assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
        assert_eq!(class(g.neighbors(4)), ErrorClass::Rank);
        assert_eq!(class(g.neighbors_count(-1)), ErrorClass::Rank);
        // Nodes without neighbours, self loops, repeated edges.
        let h = Graph::new(3, &[0, 3, 3], &[1, 1, 2], 5).unwrap();
        assert_eq!(h.neighbors(0).unwrap(), &[] as &[i32]);
        assert_eq!(h.neighbors(1).unwrap(), &[1, 1, 2]);
        assert_eq!(h.neighbors_count(2).unwrap(), 0);
        let empty = Graph::new(0, &[], &[], 3).unwrap();
        assert_eq!((empty.nnodes(), empty.nedges()), (0, 0));

        assert_eq!(
            class(Graph::new(5, &[1, 2, 3, 4, 5], &[0, 0, 0, 0, 0], 4)),
            ErrorClass::Arg
        );
        assert_eq!(class(Graph::new(-1, &[], &[], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[1], &[0], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[2, 1], &[0, 1], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[-1, 1], &[0], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[1, 2], &[0], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[1, 2], &[0, 2], 4)), ErrorClass::Arg);
        assert_eq!(class(Graph::new(2, &[1, 2], &[0, -1], 4)), ErrorClass::Arg);
        assert_eq!(
            Graph::edge_count("MPI_Graph_create", &[2, 3, 4, 6]).unwrap(),
            6
        );
        assert_eq!(Graph::edge_count("MPI_Graph_create", &[]).unwrap(), 0);
        let e = Graph::new(2, &[1, 2], &[0, 2], 4).unwrap_err();
        assert!(
            e.message.contains("MPI_Graph_create") && e.message.contains("edges"),
            "{e}"
        );

        assert_eq!(
            Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 3, 6).unwrap(),
            Some(3)
        );
        assert_eq!(
            Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4, 6).unwrap(),
            None
        );
        assert_eq!(
            class(Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 6, 6)),
            ErrorClass::Rank
        );
        assert_eq!(
            class(Graph::map(4, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 0, 3)),
            ErrorClass::Arg
        );
    }

    #[test]
    fn dist_graph_adjacent() {
        let d = DistGraph::adjacent(&[1, 2], Some(&[5, 6]), &[3], Some(&[7]), 4).unwrap();
        assert_eq!((d.indegree(), d.outdegree(), d.is_weighted()), (2, 1, true));
        let u = DistGraph::adjacent(&[], None, &[0, 0], None, 1).unwrap();
        assert_eq!(
            (u.indegree(), u.outdegree(), u.is_weighted()),
            (0, 2, false)
        );
        // MPI_WEIGHTS_EMPTY on an empty side of a weighted graph.
        assert!(DistGraph::adjacent(&[], Some(&[]), &[1], Some(&[2]), 2)
            .unwrap()
            .is_weighted());
        assert_eq!(
            class(DistGraph::adjacent(&[4], None, &[], None, 4)),
            ErrorClass::Rank
        );
        assert_eq!(
            class(DistGraph::adjacent(&[], None, &[-1], None, 4)),
            ErrorClass::Rank
        );
        assert_eq!(
            class(DistGraph::adjacent(&[1], Some(&[]), &[], Some(&[]), 4)),
            ErrorClass::Arg
        );
        assert_eq!(
            class(DistGraph::adjacent(&[1], Some(&[1]), &[2], None, 4)),
            ErrorClass::Arg
        );
        assert_eq!(
            class(DistGraph::adjacent(&[1], Some(&[-1]), &[], Some(&[]), 4)),
            ErrorClass::Arg
        );
        let t = Topology::DistGraph(d);
        assert_eq!(t.neighborhood(0).unwrap(), (vec![1, 2], vec![3]));
    }

    #[test]
    fn dist_graph_from_edges() {
        // Rank 0 declares 0->1, 0->2 and 2->1; rank 1 declares 1->0; rank 2 nothing.
        let contrib = vec![
            DistGraphEdges {
                sources: vec![0, 2],
                degrees: vec![2, 1],
                destinations: vec![1, 2, 1],
                weights: None,
            },
            DistGraphEdges {
                sources: vec![1],
                degrees: vec![1],
                destinations: vec![0],
                weights: None,
            },
            DistGraphEdges::default(),
        ];
        let g = DistGraph::from_edges(3, &contrib).unwrap();
        assert_eq!(g[0].destinations, vec![1, 2]);
        assert_eq!(g[0].sources, vec![1]);
        assert_eq!(g[1].sources, vec![0, 2]);
        assert_eq!(g[1].destinations, vec![0]);
        assert_eq!(g[2].sources, vec![0]);
        assert_eq!(g[2].destinations, vec![1]);
        assert!(g.iter().all(|d| !d.is_weighted()));

        let w = vec![
            DistGraphEdges {
                sources: vec![1],
                degrees: vec![2],
                destinations: vec![0, 1],
                weights: Some(vec![10, 11]),
            },
            DistGraphEdges {
                sources: vec![],
                degrees: vec![],
                destinations: vec![],
                weights: None,
            },
        ];
        let g = DistGraph::from_edges(2, &w).unwrap();
        assert_eq!(g[1].destinations, vec![0, 1]);
        assert_eq!(g[1].dest_weights, Some(vec![10, 11]));
        assert_eq!(g[0].sources, vec![1]);
        assert_eq!(g[0].source_weights, Some(vec![10]));
        assert_eq!(g[1].source_weights, Some(vec![11]));
        assert_eq!(g[0].dest_weights, Some(vec![]));

        let mixed = vec![
            DistGraphEdges {
                sources: vec![0],
                degrees: vec![1],
                destinations: vec![1],
                weights: Some(vec![1]),
            },
            DistGraphEdges {
                sources: vec![1],
                degrees: vec![1],
                destinations: vec![0],
                weights: None,
            },
        ];
        assert_eq!(class(DistGraph::from_edges(2, &mixed)), ErrorClass::Arg);
        assert_eq!(class(DistGraph::from_edges(3, &mixed)), ErrorClass::Arg);
        let bad = |e: DistGraphEdges| DistGraph::from_edges(1, &[e]).map(|_| ());
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![0],
                degrees: vec![],
                destinations: vec![],
                weights: None
            })),
            ErrorClass::Arg
        );
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![0],
                degrees: vec![-1],
                destinations: vec![],
                weights: None
            })),
            ErrorClass::Arg
        );
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![0],
                degrees: vec![2],
                destinations: vec![0],
                weights: None
            })),
            ErrorClass::Arg
        );
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![1],
                degrees: vec![1],
                destinations: vec![0],
                weights: None
            })),
            ErrorClass::Rank
        );
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![0],
                degrees: vec![1],
                destinations: vec![3],
                weights: None
            })),
            ErrorClass::Rank
        );
        assert_eq!(
            class(bad(DistGraphEdges {
                sources: vec![0],
                degrees: vec![1],
                destinations: vec![0],
                weights: Some(vec![])
            })),
            ErrorClass::Arg
        );
    }

    #[test]
    fn topology_codes_and_kind_checks() {
        let c = Topology::Cart(Cart::new(&[2], &[false], 2).unwrap());
        let g = Topology::Graph(Graph::new(1, &[0], &[], 1).unwrap());
        let d = Topology::DistGraph(DistGraph::adjacent(&[], None, &[], None, 1).unwrap());
        assert_eq!(Topology::topo_test(Some(&c)), Some(TopologyKind::Cart));
        assert_eq!(Topology::topo_test(Some(&g)), Some(TopologyKind::Graph));
        assert_eq!(Topology::topo_test(Some(&d)), Some(TopologyKind::DistGraph));
        assert_eq!(Topology::topo_test(None), None);
        assert!(Topology::require_cart(Some(&c), "MPI_Cart_get").is_ok());
        assert_eq!(
            class(Topology::require_cart(Some(&g), "MPI_Cart_get")),
            ErrorClass::Topology
        );
        assert_eq!(
            class(Topology::require_cart(None, "MPI_Cart_get")),
            ErrorClass::Topology
        );
        assert!(Topology::require_graph(Some(&g), "MPI_Graph_get").is_ok());
        assert_eq!(
            class(Topology::require_graph(Some(&d), "MPI_Graph_get")),
            ErrorClass::Topology
        );
        assert!(Topology::require_dist_graph(Some(&d), "MPI_Dist_graph_neighbors").is_ok());
        assert_eq!(
            class(Topology::require_dist_graph(
                Some(&c),
                "MPI_Dist_graph_neighbors"
            )),
            ErrorClass::Topology
        );
        let e = Topology::require_cart(None, "MPI_Cart_shift").unwrap_err();
        assert!(e.message.contains("MPI_Cart_shift"), "{e}");
        assert_eq!(
            c.neighborhood(0).unwrap(),
            (vec![PROC_NULL, 1], vec![PROC_NULL, 1])
        );
    }
}
