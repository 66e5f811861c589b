//! Property tests of the derived-datatype engine: random nested types checked
//! against an independent, naive type-map walk.

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

use oxmpi_core::buf::{self, RecvBuf, SendBuf};
use oxmpi_core::datatype::{Datatype, Primitive};

/// xorshift64* — deterministic, no dependencies.
const POOL: &[Primitive] = &[
    Primitive::Int,
    Primitive::Double,
    Primitive::Char,
    Primitive::Short,
    Primitive::Float,
    Primitive::Byte,
    Primitive::LongDouble,
    Primitive::DoubleInt,
    Primitive::ShortInt,
];

/// The data bytes of one primitive, written independently of the engine.
fn prim_pieces(p: Primitive) -> Vec<(isize, usize)> {
    match p {
        Primitive::DoubleInt => vec![(0, 8), (8, 4)],
        Primitive::ShortInt => vec![(0, 2), (4, 4)],
        _ => vec![(0, p.size())],
    }
}

fn basics(p: Primitive) -> usize {
    match p {
        Primitive::DoubleInt | Primitive::ShortInt => 2,
        _ => 1,
    }
}

/// A type and its naive type map: (displacement, primitive) for one element.
struct Gen {
    dt: Datatype,
    map: Vec<(isize, Primitive)>,
}

fn replicate(child: &Gen, disp: isize, n: usize, out: &mut Vec<(isize, Primitive)>) {
    let ext = child.dt.extent();
    for k in 0..n {
        for &(o, p) in &child.map {
            out.push((disp + k as isize * ext + o, p));
        }
    }
}

fn gen(rng: &mut Rng, depth: u32) -> Gen {
    if depth == 0 || rng.below(4) == 0 {
        let p = POOL[rng.below(POOL.len() as u64) as usize];
        return Gen {
            dt: Datatype::predefined(p),
            map: vec![(0, p)],
        };
    }
    let child = gen(rng, depth - 1);
    let ext = child.dt.extent();
    let mut map = Vec::new();
    let dt = match rng.below(10) {
        0 => {
            let n = rng.range(0, 4);
            replicate(&child, 0, n as usize, &mut map);
            Datatype::contiguous(n, &child.dt).unwrap()
        }
        1 => {
            let (n, bl, st) = (rng.range(0, 4), rng.range(0, 3), rng.range(-4, 4));
            for i in 0..n {
                replicate(&child, (i * st) as isize * ext, bl as usize, &mut map);
            }
            Datatype::vector(n, bl, st, &child.dt).unwrap()
        }
        2 => {
            let (n, bl, st) = (
                rng.range(0, 4),
                rng.range(0, 3),
                rng.range(-40, 40) as isize,
            );
            for i in 0..n {
                replicate(&child, i as isize * st, bl as usize, &mut map);
            }
            Datatype::hvector(n, bl, st, &child.dt).unwrap()
        }
        3 => {
            let n = rng.range(0, 4) as usize;
            let bls: Vec<i64> = (0..n).map(|_| rng.range(0, 3)).collect();
            let ds: Vec<i64> = (0..n).map(|_| rng.range(-6, 6)).collect();
            for i in 0..n {
                replicate(&child, ds[i] as isize * ext, bls[i] as usize, &mut map);
            }
            Datatype::indexed(&bls, &ds, &child.dt).unwrap()
        }
        4 => {
            let n = rng.range(0, 4) as usize;
            let bls: Vec<i64> = (0..n).map(|_| rng.range(0, 3)).collect();
            let ds: Vec<isize> = (0..n).map(|_| rng.range(-40, 40) as isize).collect();
            for i in 0..n {
                replicate(&child, ds[i], bls[i] as usize, &mut map);
            }
            Datatype::hindexed(&bls, &ds, &child.dt).unwrap()
        }
        5 => {
            let n = rng.range(0, 4) as usize;
            let bl = rng.range(0, 3);
            let ds: Vec<i64> = (0..n).map(|_| rng.range(-6, 6)).collect();
            for &d in &ds {
                replicate(&child, d as isize * ext, bl as usize, &mut map);
            }
            Datatype::indexed_block(bl, &ds, &child.dt).unwrap()
        }
        6 => {
            let n = rng.range(0, 4) as usize;
            let bl = rng.range(0, 3);
            let ds: Vec<isize> = (0..n).map(|_| rng.range(-40, 40) as isize).collect();
            for &d in &ds {
                replicate(&child, d, bl as usize, &mut map);
            }
            Datatype::hindexed_block(bl, &ds, &child.dt).unwrap()
        }
        7 => {
            let n = rng.range(1, 4) as usize;
            let mut kids = vec![child];
            while kids.len() < n {
                kids.push(gen(rng, depth - 1));
            }
            let mut types: Vec<Datatype> = kids.iter().map(|g| g.dt.clone()).collect();
            let bls: Vec<i64> = (0..n).map(|_| rng.range(0, 3)).collect();
            let ds: Vec<isize> = (0..n).map(|_| rng.range(-40, 40) as isize).collect();
            for i in 0..n {
                replicate(&kids[i], ds[i], bls[i] as usize, &mut map);
            }
            // Occasionally add MPI-1 markers.
            let (mut bls, mut ds) = (bls, ds);
            if rng.below(3) == 0 {
                types.push(if rng.below(2) == 0 {
                    Datatype::lb_marker()
                } else {
                    Datatype::ub_marker()
                });
                bls.push(1);
                ds.push(rng.range(-48, 48) as isize);
            }
            Datatype::structure(&bls, &ds, &types).unwrap()
        }
        8 => {
            let lb = rng.range(-16, 16) as isize;
            let extent = if rng.below(8) == 0 {
                rng.range(-8, 0)
            } else {
                rng.range(0, 48)
            } as isize;
            map = child.map.clone();
            Datatype::resized(&child.dt, lb, extent).unwrap()
        }
        _ => {
            map = child.map.clone();
            Datatype::dup(&child.dt)
        }
    };
    Gen { dt, map }
}

/// Naive flattened blocks of one element: every primitive piece in order, adjacent merged.
fn naive_blocks(map: &[(isize, Primitive)]) -> Vec<(isize, usize)> {
    let mut v: Vec<(isize, usize)> = Vec::new();
    for &(o, p) in map {
        for (po, pl) in prim_pieces(p) {
            let off = o + po;
            match v.last_mut() {
                Some(last) if last.0 + last.1 as isize == off => last.1 += pl,
                _ => v.push((off, pl)),
            }
        }
    }
    v
}

fn naive_sig(map: &[(isize, Primitive)]) -> Vec<(Primitive, usize)> {
    let mut v: Vec<(Primitive, usize)> = Vec::new();
    for &(_, p) in map {
        match v.last_mut() {
            Some(last) if last.0 == p => last.1 += 1,
            _ => v.push((p, 1)),
        }
    }
    v
}

const ARENA: usize = 1 << 14;
const BASE: isize = (ARENA / 2) as isize;

/// Every (memory offset, len) touched by `count` elements, in stream order; None if outside the arena.
fn touched(g: &Gen, count: usize) -> Option<Vec<(isize, usize)>> {
    let ext = g.dt.extent();
    let mut v = Vec::new();
    for i in 0..count {
        for &(o, p) in &g.map {
            for (po, pl) in prim_pieces(p) {
                let off = i as isize * ext + o + po;
                if off + BASE < 0 || off + BASE + pl as isize > ARENA as isize {
                    return None;
                }
                v.push((off, pl));
            }
        }
    }
    Some(v)
}

fn check_one(rng: &mut Rng, g: &Gen) -> bool {
    let dt = &g.dt;
    // (b) flattening equals the naive walk; signature too.
    assert_eq!(dt.blocks(), naive_blocks(&g.map).as_slice(), "{dt:?}");
    assert_eq!(dt.signature(), naive_sig(&g.map).as_slice(), "{dt:?}");
    // (d) sizes and bounds.
    let size: usize = dt.blocks().iter().map(|b| b.1).sum();
    assert_eq!(dt.size(), size);
    assert_eq!(dt.extent(), dt.ub() - dt.lb());
    if size > 0 {
        let lo = g.map.iter().map(|&(o, _)| o).min().unwrap();
        let hi = g
            .map
            .iter()
            .flat_map(|&(o, p)| {
                prim_pieces(p)
                    .into_iter()
                    .map(move |(po, pl)| o + po + pl as isize)
            })
            .max()
            .unwrap();
        assert_eq!((dt.true_lb(), dt.true_extent()), (lo, hi - lo), "{dt:?}");
        let nb: usize = g.map.iter().map(|&(_, p)| basics(p)).sum();
        assert_eq!(dt.get_elements(3 * size), Some(3 * nb));
        assert_eq!(dt.get_count(3 * size), Some(3));
        if dt.single_primitive().is_none() {
            assert!(g.map.windows(2).any(|w| w[0].1 != w[1].1));
        }
    }
    assert!(dt.same_signature(2, &Datatype::contiguous(2, dt).unwrap(), 1));
    if dt.is_contiguous() && size > 0 {
        assert_eq!(dt.blocks().len(), 1);
        assert_eq!(dt.extent(), size as isize);
    }

    let count = rng.below(4) as usize;
    let Some(touch) = touched(g, count) else {
        return false;
    };
    let total = size * count;
    let src: Vec<u8> = (0..ARENA).map(|_| (rng.next_u64() | 1) as u8).collect();
    let mut packed = vec![0u8; total];
    // SAFETY: `touched` checked every byte of the type map lies in the arena.
    unsafe { dt.pack(src.as_ptr().offset(BASE), count, &mut packed) };
    // The packed stream is exactly the naive walk's bytes.
    let naive: Vec<u8> = touch
        .iter()
        .flat_map(|&(o, l)| src[(BASE + o) as usize..][..l].iter().copied())
        .collect();
    assert_eq!(packed, naive, "{dt:?}");

    // (a) unpack into a zeroed arena: covered bytes reproduced, others untouched.
    let mut dst = vec![0u8; ARENA];
    // SAFETY: as above.
    unsafe { dt.unpack(&packed, dst.as_mut_ptr().offset(BASE), count) };
    let mut covered = vec![false; ARENA];
    for &(o, l) in &touch {
        covered[(BASE + o) as usize..][..l]
            .iter_mut()
            .for_each(|c| *c = true);
    }
    for i in 0..ARENA {
        assert_eq!(
            dst[i],
            if covered[i] { src[i] } else { 0 },
            "byte {i} of {dt:?}"
        );
    }

    // (c) pack_range / unpack_range over arbitrary chunkings.
    let mut again = vec![0u8; total];
    let mut dst2 = vec![0u8; ARENA];
    let mut from = 0;
    while from < total {
        let end = (from + 1 + rng.below(total as u64 + 3) as usize).min(total);
        let extra = rng.below(3) as usize; // ask for more than remains sometimes
        let mut buf = vec![0u8; end - from + if end == total { extra } else { 0 }];
        // SAFETY: as above.
        let n = unsafe { dt.pack_range(src.as_ptr().offset(BASE), count, from, &mut buf) };
        assert_eq!(n, end - from);
        again[from..end].copy_from_slice(&buf[..n]);
        // SAFETY: as above.
        unsafe {
            dt.unpack_range(
                &packed[from..end],
                dst2.as_mut_ptr().offset(BASE),
                count,
                from,
            )
        };
        from = end;
    }
    assert_eq!(again, packed);
    assert!(dst2 == dst);

    // Truncated unpack writes only the prefix's bytes.
    if total > 0 {
        let cut = rng.below(total as u64) as usize;
        let mut dst3 = vec![0u8; ARENA];
        // SAFETY: as above.
        unsafe { dt.unpack(&packed[..cut], dst3.as_mut_ptr().offset(BASE), count) };
        let mut expect = vec![0u8; ARENA];
        let mut left = cut;
        for &(o, l) in &touch {
            let t = l.min(left);
            let at = (BASE + o) as usize;
            expect[at..at + t].copy_from_slice(&src[at..at + t]);
            left -= t;
        }
        assert!(dst3 == expect, "truncated unpack of {dt:?}");
    }

    // MPI_Pack / MPI_Unpack over descriptors with an offset position.
    let mut outbuf = vec![0u8; total + 5];
    let mut pos = 3;
    // SAFETY: as above.
    let from = unsafe { SendBuf::from_raw(src.as_ptr().offset(BASE), count, Some(dt)) };
    buf::pack(from, &mut outbuf, &mut pos).unwrap();
    assert_eq!(pos, 3 + total);
    assert_eq!(&outbuf[3..3 + total], packed.as_slice());
    let mut dst4 = vec![0u8; ARENA];
    let mut pos = 3;
    // SAFETY: as above.
    let to = unsafe { RecvBuf::from_raw(dst4.as_mut_ptr().offset(BASE), count, Some(dt)) };
    buf::unpack(&outbuf, &mut pos, to).unwrap();
    assert_eq!(pos, 3 + total);
    assert!(dst4 == dst);
    true
}

#[test]
fn random_nested_types_match_the_naive_type_map() {
    let mut rng = Rng::new(1);
    let mut checked = 0;
    for _ in 0..3000 {
        let depth = 1 + rng.below(3) as u32;
        let g = gen(&mut rng, depth);
        if g.map.len() > 4000 {
            continue;
        }
        if check_one(&mut rng, &g) {
            checked += 1;
        }
    }
    eprintln!("checked {checked} random types");
    assert!(checked > 1000, "only {checked} types fitted the arena");
}

#[test]
fn struct_bounds_follow_marker_and_padding_rules() {
    // Independent bound computation for structs of predefined types (no markers):
    // lb = min disp, ub = max(disp + (bl-1)*extent + extent), padded to max alignment.
    let mut rng = Rng::new(12345);
    for _ in 0..500 {
        let n = rng.range(1, 4) as usize;
        let ps: Vec<Primitive> = (0..n)
            .map(|_| POOL[rng.below(POOL.len() as u64) as usize])
            .collect();
        let bls: Vec<i64> = (0..n).map(|_| rng.range(1, 3)).collect();
        let ds: Vec<isize> = (0..n).map(|_| rng.range(-40, 40) as isize).collect();
        let types: Vec<Datatype> = ps.iter().map(|&p| Datatype::predefined(p)).collect();
        let s = Datatype::structure(&bls, &ds, &types).unwrap();
        let lb = ds.iter().copied().min().unwrap();
        let mut ub = (0..n)
            .map(|i| ds[i] + bls[i] as isize * ps[i].extent() as isize)
            .max()
            .unwrap();
        let align = ps.iter().map(|p| p.align()).max().unwrap() as isize;
        let r = (ub - lb) % align;
        if r != 0 {
            ub += align - r;
        }
        assert_eq!((s.lb(), s.ub()), (lb, ub), "{ps:?} {bls:?} {ds:?}");
        // With an UB marker the bound is exactly the marker.
        let mut t2 = types.clone();
        t2.push(Datatype::ub_marker());
        let mut b2 = bls.clone();
        b2.push(1);
        let mut d2 = ds.clone();
        d2.push(200);
        let m = Datatype::structure(&b2, &d2, &t2).unwrap();
        assert_eq!((m.lb(), m.ub()), (lb, 200));
    }
}
