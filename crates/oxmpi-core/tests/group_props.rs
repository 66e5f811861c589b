//! Property tests of the group and Cartesian-topology arithmetic: random inputs
//! (deterministic seeds) checked against naive models written independently of the
//! engine.

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

use oxmpi_core::group::{Comparison, Group};
use oxmpi_core::topo::{dims_create, Cart};
use oxmpi_core::{ErrorClass, PROC_NULL};

/// xorshift64* — deterministic, no dependencies.
const CASES: u64 = 2000;

/// A random group: distinct world ranks from 0..universe, random order.
fn random_members(rng: &mut Rng, universe: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..universe).filter(|_| rng.chance(50)).collect();
    rng.shuffle(&mut v);
    v
}

// Naive models: plain Vec scans, no sets, no tables.
fn model_union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v = a.to_vec();
    for &x in b {
        if !a.contains(&x) {
            v.push(x);
        }
    }
    v
}
fn model_intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().filter(|x| b.contains(x)).collect()
}
fn model_difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().filter(|x| !b.contains(x)).collect()
}
fn model_compare(a: &[u32], b: &[u32]) -> Comparison {
    if a == b {
        Comparison::Ident
    } else if a.len() == b.len() && a.iter().all(|x| b.contains(x)) {
        Comparison::Similar
    } else {
        Comparison::Unequal
    }
}

#[test]
fn set_operations_match_the_vec_model() {
    let mut rng = Rng::new(1);
    for _ in 0..CASES {
        let universe = rng.range(0, 24) as u32;
        let (a, b) = (
            random_members(&mut rng, universe),
            random_members(&mut rng, universe),
        );
        let (ga, gb) = (
            Group::from_world_ranks(a.clone()),
            Group::from_world_ranks(b.clone()),
        );
        assert_eq!(
            ga.union(&gb).world_ranks(),
            model_union(&a, &b),
            "{a:?} ∪ {b:?}"
        );
        assert_eq!(
            ga.intersection(&gb).world_ranks(),
            model_intersection(&a, &b),
            "{a:?} ∩ {b:?}"
        );
        assert_eq!(
            ga.difference(&gb).world_ranks(),
            model_difference(&a, &b),
            "{a:?} \\ {b:?}"
        );
        assert_eq!(
            ga.compare(&gb),
            model_compare(&a, &b),
            "compare {a:?} {b:?}"
        );
        // Associativity of union and intersection (the standard says so).
        let c = random_members(&mut rng, universe);
        let gc = Group::from_world_ranks(c);
        assert_eq!(ga.union(&gb).union(&gc), ga.union(&gb.union(&gc)));
        assert_eq!(
            ga.intersection(&gb).intersection(&gc),
            ga.intersection(&gb.intersection(&gc))
        );
        // A permutation is SIMILAR (or IDENT when it is the identity).
        let mut p = a.clone();
        rng.shuffle(&mut p);
        let expect = if p == a {
            Comparison::Ident
        } else {
            Comparison::Similar
        };
        assert_eq!(ga.compare(&Group::from_world_ranks(p)), expect);
        // Ranks: group rank of each member is its position.
        for (r, &w) in a.iter().enumerate() {
            assert_eq!(ga.rank_of_world(w), Some(r as i32));
        }
    }
}

#[test]
fn translate_ranks_round_trips() {
    let mut rng = Rng::new(2);
    for _ in 0..CASES {
        let universe = rng.range(1, 24) as u32;
        let (a, b) = (
            random_members(&mut rng, universe),
            random_members(&mut rng, universe),
        );
        let (ga, gb) = (
            Group::from_world_ranks(a.clone()),
            Group::from_world_ranks(b.clone()),
        );
        // Random valid ranks of a, with some MPI_PROC_NULLs mixed in.
        let ranks: Vec<i32> = (0..rng.range(0, 10))
            .map(|_| {
                if a.is_empty() || rng.chance(15) {
                    PROC_NULL
                } else {
                    rng.below(a.len() as u64) as i32
                }
            })
            .collect();
        let there = ga.translate_ranks(&ranks, &gb).unwrap();
        for (&r, &t) in ranks.iter().zip(&there) {
            if r == PROC_NULL {
                assert_eq!(t, Some(PROC_NULL));
            } else if let Some(pos) = b.iter().position(|&w| w == a[r as usize]) {
                assert_eq!(t, Some(pos as i32));
            } else {
                assert_eq!(t, None);
            }
        }
        // Back again: members of both groups return to where they started.
        let defined: Vec<i32> = there.iter().copied().flatten().collect();
        let back = gb.translate_ranks(&defined, &ga).unwrap();
        let started: Vec<i32> = ranks
            .iter()
            .zip(&there)
            .filter(|(_, t)| t.is_some())
            .map(|(&r, _)| r)
            .collect();
        assert_eq!(back, started.iter().map(|&r| Some(r)).collect::<Vec<_>>());
        // Into itself: the identity.
        assert_eq!(
            ga.translate_ranks(&ranks, &ga).unwrap(),
            ranks.iter().map(|&r| Some(r)).collect::<Vec<_>>()
        );
        // An invalid rank anywhere is MPI_ERR_RANK.
        let mut bad = ranks.clone();
        bad.insert(
            rng.below(bad.len() as u64 + 1) as usize,
            a.len() as i32 + rng.range(0, 3) as i32,
        );
        assert_eq!(
            ga.translate_ranks(&bad, &gb).unwrap_err().class,
            ErrorClass::Rank
        );
    }
}

/// The ranks a triplet list expands to, by the standard's formula (no validity
/// checks).
fn expand(triplets: &[[i32; 3]]) -> Vec<i32> {
    let mut v = Vec::new();
    for &[f, l, s] in triplets {
        let (f, l, s) = (f as i64, l as i64, s as i64);
        let mut k = 0;
        while k <= (l - f) / s {
            v.push((f + k * s) as i32);
            k += 1;
        }
    }
    v
}

#[test]
fn range_incl_equals_incl_of_the_expansion() {
    let mut rng = Rng::new(3);
    let mut ok = 0;
    for _ in 0..CASES * 2 {
        let n = rng.range(0, 20) as u32;
        let mut members: Vec<u32> = (100..100 + n).collect();
        rng.shuffle(&mut members);
        let g = Group::from_world_ranks(members);
        let triplets: Vec<[i32; 3]> = (0..rng.range(0, 4))
            .map(|_| {
                let f = rng.range(-1, n as i64) as i32;
                let l = rng.range(-1, n as i64) as i32;
                let mut s = rng.range(1, 5) as i32;
                if l < f || (l == f && rng.chance(50)) {
                    s = -s;
                }
                [f, l, s]
            })
            .collect();
        let ranks = expand(&triplets);
        let incl = g.incl(&ranks);
        let range_incl = g.range_incl(&triplets);
        match (&incl, &range_incl) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{triplets:?}");
                ok += 1;
            }
            (Err(a), Err(b)) => assert_eq!(
                (a.class, b.class),
                (ErrorClass::Rank, ErrorClass::Rank),
                "{triplets:?}"
            ),
            _ => panic!("incl {incl:?} vs range_incl {range_incl:?} for {triplets:?}"),
        }
        let excl = g.excl(&ranks);
        let range_excl = g.range_excl(&triplets);
        match (&excl, &range_excl) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{triplets:?}");
                // excl keeps exactly the members incl did not take, in group order.
                let taken = incl.as_ref().unwrap();
                let rest: Vec<u32> = g
                    .world_ranks()
                    .iter()
                    .copied()
                    .filter(|w| !taken.world_ranks().contains(w))
                    .collect();
                assert_eq!(a.world_ranks(), rest);
            }
            (Err(a), Err(b)) => {
                assert_eq!((a.class, b.class), (ErrorClass::Rank, ErrorClass::Rank))
            }
            _ => panic!("excl {excl:?} vs range_excl {range_excl:?} for {triplets:?}"),
        }
        // Zero stride and a stride pointing away from `last` are MPI_ERR_ARG.
        if n > 1 {
            let f = rng.range(0, n as i64 - 2) as i32;
            let l = rng.range(f as i64 + 1, n as i64 - 1) as i32;
            assert_eq!(
                g.range_incl(&[[f, l, 0]]).unwrap_err().class,
                ErrorClass::Arg
            );
            assert_eq!(
                g.range_incl(&[[f, l, -1]]).unwrap_err().class,
                ErrorClass::Arg
            );
            assert_eq!(
                g.range_excl(&[[l, f, 1]]).unwrap_err().class,
                ErrorClass::Arg
            );
        }
    }
    assert!(
        ok > CASES / 4,
        "too few valid cases ({ok}) to mean anything"
    );
}

#[test]
fn incl_then_translate_is_consistent() {
    let mut rng = Rng::new(4);
    for _ in 0..CASES {
        let n = rng.range(1, 20) as u32;
        let g = Group::from_world_ranks(
            random_members(&mut rng, 40)
                .into_iter()
                .take(n as usize)
                .collect(),
        );
        if g.size() == 0 {
            continue;
        }
        let mut ranks: Vec<i32> = (0..g.size()).filter(|_| rng.chance(60)).collect();
        rng.shuffle(&mut ranks);
        let sub = g.incl(&ranks).unwrap();
        // Rank i of the subgroup is rank ranks[i] of the group.
        let back = sub
            .translate_ranks(&(0..sub.size()).collect::<Vec<_>>(), &g)
            .unwrap();
        assert_eq!(back, ranks.iter().map(|&r| Some(r)).collect::<Vec<_>>());
        // incl and excl of the same ranks partition the group.
        let rest = g.excl(&ranks).unwrap();
        assert_eq!(sub.intersection(&rest).size(), 0);
        assert_eq!(
            sub.union(&rest).compare(&g),
            if ranks.iter().enumerate().all(|(i, &r)| i as i32 == r) {
                Comparison::Ident
            } else {
                Comparison::Similar
            }
        );
        assert_eq!(g.difference(&sub), rest);
    }
}

#[test]
fn cart_rank_and_coords_are_inverse() {
    let mut rng = Rng::new(5);
    for _ in 0..CASES {
        let ndims = rng.range(0, 4) as usize;
        let dims: Vec<i32> = (0..ndims).map(|_| rng.range(1, 5) as i32).collect();
        let periods: Vec<bool> = (0..ndims).map(|_| rng.chance(50)).collect();
        let size: i32 = dims.iter().product();
        let cart = Cart::new(&dims, &periods, size + rng.range(0, 3) as i32).unwrap();
        assert_eq!(cart.size(), size);
        for r in 0..size {
            let c = cart.coords(r).unwrap();
            assert!(c.iter().zip(&dims).all(|(&x, &d)| (0..d).contains(&x)));
            assert_eq!(cart.rank(&c).unwrap(), r);
        }
        // Row-major: the naive weighted sum.
        let coords: Vec<i32> = dims
            .iter()
            .map(|&d| rng.range(0, d as i64 - 1) as i32)
            .collect();
        let naive = coords
            .iter()
            .zip(&dims)
            .fold(0, |acc, (&c, &d)| acc * d + c);
        assert_eq!(cart.rank(&coords).unwrap(), naive);
        // Periodic wrap-around: shifting a periodic coordinate by a multiple of its
        // size changes nothing; out of range on a non-periodic one is MPI_ERR_ARG.
        if ndims > 0 {
            let i = rng.below(ndims as u64) as usize;
            let mut moved = coords.clone();
            moved[i] +=
                dims[i] * rng.range(-3, 3) as i32 + if rng.chance(50) { 0 } else { dims[i] };
            if periods[i] {
                assert_eq!(cart.rank(&moved).unwrap(), naive);
            } else if !(0..dims[i]).contains(&moved[i]) {
                assert_eq!(cart.rank(&moved).unwrap_err().class, ErrorClass::Arg);
            }
            // shift: dest of r is the rank one step along i; source is the inverse.
            let disp = rng.range(-4, 4) as i32;
            let (src, dst) = cart.shift(naive, i as i32, disp).unwrap();
            let step = |delta: i32| -> i32 {
                let mut c = coords.clone();
                let x = c[i] + delta;
                if periods[i] {
                    c[i] = x.rem_euclid(dims[i]);
                } else if (0..dims[i]).contains(&x) {
                    c[i] = x;
                } else {
                    return PROC_NULL;
                }
                c.iter().zip(&dims).fold(0, |acc, (&c, &d)| acc * d + c)
            };
            assert_eq!(
                (src, dst),
                (step(-disp), step(disp)),
                "{dims:?} {periods:?} {coords:?} dir {i} disp {disp}"
            );
            if dst != PROC_NULL {
                assert_eq!(cart.shift(dst, i as i32, disp).unwrap().0, naive);
            }
        }
        // sub_color_key: processes share a colour iff they agree on the dropped
        // coordinates, and the key is the row-major rank over the kept ones.
        let remain: Vec<bool> = (0..ndims).map(|_| rng.chance(50)).collect();
        let sub = cart.sub(&remain).unwrap();
        for r in 0..size {
            let (color, key) = cart.sub_color_key(r, &remain);
            let c = cart.coords(r).unwrap();
            let kept: Vec<i32> = c
                .iter()
                .zip(&remain)
                .filter(|(_, &k)| k)
                .map(|(&x, _)| x)
                .collect();
            assert_eq!(sub.rank(&kept).unwrap(), key);
            // Pairwise (quadratic): only on small grids.
            for r2 in (0..size).filter(|_| size <= 64) {
                let c2 = cart.coords(r2).unwrap();
                let same = c
                    .iter()
                    .zip(&c2)
                    .zip(&remain)
                    .all(|((a, b), &k)| k || a == b);
                assert_eq!(cart.sub_color_key(r2, &remain).0 == color, same);
            }
        }
    }
}

#[test]
fn dims_create_fills_a_valid_grid() {
    let mut rng = Rng::new(6);
    for _ in 0..CASES {
        let nnodes = rng.range(1, 5000) as i32;
        let ndims = rng.range(1, 5) as usize;
        let mut dims: Vec<i32> = (0..ndims)
            .map(|_| {
                if rng.chance(25) {
                    rng.range(1, 6) as i32
                } else {
                    0
                }
            })
            .collect();
        let given = dims.clone();
        let fixed: i64 = given
            .iter()
            .filter(|&&d| d > 0)
            .map(|&d| d as i64)
            .product();
        let free = given.iter().filter(|&&d| d == 0).count();
        match dims_create(nnodes, &mut dims) {
            Ok(()) => {
                assert_eq!(
                    dims.iter().map(|&d| d as i64).product::<i64>(),
                    nnodes as i64,
                    "{given:?} -> {dims:?}"
                );
                let filled: Vec<i32> = dims
                    .iter()
                    .zip(&given)
                    .filter(|(_, &g)| g == 0)
                    .map(|(&d, _)| d)
                    .collect();
                assert!(
                    filled.windows(2).all(|w| w[0] >= w[1]),
                    "{nnodes} {given:?} -> {dims:?}"
                );
                for (d, g) in dims.iter().zip(&given) {
                    if *g > 0 {
                        assert_eq!(d, g);
                    }
                }
            }
            Err(e) => {
                assert_eq!(e.class, ErrorClass::Dims);
                assert!(
                    nnodes as i64 % fixed != 0 || (free == 0 && fixed != nnodes as i64),
                    "{nnodes} {given:?}"
                );
            }
        }
    }
}
