//! Collectives on intercommunicators at the engine level: barrier, bcast,
//! gather(v), scatter(v), allgather(v), alltoall(v), reduce, allreduce,
//! reduce_scatter(_block), blocking and non-blocking, with checked values.
//!
//! `core_coll_inter <split>`: `mod2` splits world into evens/odds, `first` into
//! {0} and the rest, `last2` into the last two ranks and the rest.
//! Rooted operations run with every rank of both groups as root (MPI_ROOT at the
//! root, MPI_PROC_NULL at the rest of its group, the root's rank in the other
//! group), with counts 0 and > 0. Reductions use MPI_SUM and a non-commutative
//! user op (affine-map composition), checking rank order.

use oxmpi_core::buf::{self, as_bytes, as_bytes_mut, RecvBuf, SendBuf};
use oxmpi_core::coll::api_move::{self as mv, Blocks};
use oxmpi_core::coll::inter::ROOT;
use oxmpi_core::coll::{api, barrier};
use oxmpi_core::comm::{create, inter, Comm};
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::op::{Op, PredefinedOp};
use oxmpi_core::pt2pt;
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{ErrorClass, PROC_NULL};
use oxmpi_tests::check;

const SENTINEL: i32 = -777;
const P: i64 = 1_000_003;

/// Runs the blocking call, or the non-blocking one (started in a buffer scope named
/// `$sc`) and waits for it.
macro_rules! go {
    ($nb:expr, $sc:ident, $blk:expr, $nblk:expr) => {
        if $nb {
            buf::scope(|$sc| {
                let mut r = $nblk.unwrap();
                pt2pt::wait(&mut r).unwrap();
            });
        } else {
            $blk.unwrap();
        }
    };
}

/// The value element `k` contributed by rank `r` of group `g` (in test `t`).
fn val(t: i32, g: i32, r: i32, k: usize) -> i32 {
    t * 100_000 + g * 10_000 + r * 100 + k as i32
}

/// Affine map x -> a x + b (mod P), for the non-commutative op.
fn affine(t: i32, g: i32, r: i32, k: usize) -> [i64; 2] {
    let s = (t * 31 + g * 7 + r * 3) as i64 + k as i64;
    [
        2 + s % 11,
        (g as i64 * 5 + r as i64 * 13 + k as i64 * 17 + t as i64) % 97,
    ]
}

/// f o g for affine maps.
fn compose(f: [i64; 2], g: [i64; 2]) -> [i64; 2] {
    [f[0] * g[0] % P, (f[0] * g[1] + f[1]) % P]
}

/// inout = in o inout over pairs of i64 (contiguous 2 x int64 elements).
fn compose_op() -> Op {
    Op::user_packed(
        |inp: &[u8], io: &mut [u8], _count: usize, _dt: &Datatype| {
            let word =
                |b: &[u8], k: usize| i64::from_ne_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
            for (x, y) in inp.chunks_exact(16).zip(io.chunks_exact_mut(16)) {
                let c = compose([word(x, 0), word(x, 1)], [word(y, 0), word(y, 1)]);
                y[..8].copy_from_slice(&c[0].to_ne_bytes());
                y[8..].copy_from_slice(&c[1].to_ne_bytes());
            }
        },
        false,
    )
}

struct Ctx {
    ic: Comm,
    /// My group (0 or 1), the other group, my rank, local and remote sizes.
    g: i32,
    h: i32,
    me: i32,
    n: i32,
    m: i32,
    world_rank: i32,
    pair: Datatype,
    /// vector(2, 1, 2, int): two ints with a gap (non-contiguous).
    vec2: Datatype,
    sum: Op,
    comp: Op,
}

impl Ctx {
    /// `cnt` pairs of i64 (the `pair` datatype) from the start of `v`, to be read.
    fn pairs<'a>(&'a self, v: &'a [i64], cnt: usize) -> Option<SendBuf<'a, 'a>> {
        Some(SendBuf::typed(as_bytes(v), cnt, &self.pair).unwrap())
    }
    /// As [`Ctx::pairs`], to be written.
    fn pairs_mut<'a>(&'a self, v: &'a mut [i64], cnt: usize) -> RecvBuf<'a, 'a> {
        RecvBuf::typed(as_bytes_mut(v), cnt, &self.pair).unwrap()
    }
}

impl Ctx {
    /// Size of group `x`.
    fn size_of(&self, x: i32) -> i32 {
        if x == self.g {
            self.n
        } else {
            self.m
        }
    }
    /// The `root` argument of a rooted collective whose root is rank `rt` of group `rg`.
    fn root_arg(&self, rg: i32, rt: i32) -> i32 {
        if rg != self.g {
            rt
        } else if rt == self.me {
            ROOT
        } else {
            PROC_NULL
        }
    }
}

/// Where int `k` of a run of vec2 elements lives (extent 3 ints, ints 0 and 2).
fn vpos(k: usize) -> usize {
    3 * (k / 2) + 2 * (k % 2)
}

/// The descriptor of a slice, to be read.
fn sb<T: buf::Element>(v: &[T]) -> Option<SendBuf<'_, 'static>> {
    Some(SendBuf::slice(v))
}

/// The descriptor of a slice, to be written.
fn rb<T: buf::Element>(v: &mut [T]) -> RecvBuf<'_, 'static> {
    RecvBuf::slice(v)
}

fn test_barrier(c: &Ctx) {
    for nb in [false, true] {
        go!(nb, _sc, barrier::barrier(&c.ic), barrier::ibarrier(&c.ic));
    }
}

fn test_bcast(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                for count in [0usize, 5] {
                    let root = c.root_arg(rg, rt);
                    let mut buf = vec![SENTINEL; count + 1];
                    if root == ROOT {
                        for (k, x) in buf[..count].iter_mut().enumerate() {
                            *x = val(t, rg, rt, k);
                        }
                    }
                    let before = buf.clone();
                    go!(
                        nb,
                        sc,
                        api::bcast(rb(&mut buf[..count]), root, &c.ic),
                        api::ibcast(sc, rb(&mut buf[..count]), root, &c.ic)
                    );
                    if rg == c.g {
                        check!(
                            wr,
                            buf == before,
                            "bcast: root-group buffer changed (root arg {root})"
                        );
                    } else {
                        let want: Vec<i32> = (0..count)
                            .map(|k| val(t, rg, rt, k))
                            .chain([SENTINEL])
                            .collect();
                        check!(
                            wr,
                            buf == want,
                            "bcast nb={nb} root {rg}/{rt} count {count}: {buf:?} want {want:?}"
                        );
                    }
                }
            }
        }
    }
    // Non-contiguous type at both ends: 3 vec2 elements = 6 ints, stride 2.
    for rg in 0..2 {
        let root = c.root_arg(rg, 0);
        let mut buf = vec![SENTINEL; 12];
        if root == ROOT {
            for k in 0..6 {
                buf[vpos(k)] = val(t, rg, 0, k);
            }
        }
        // 3 vec2 elements (extent 3 ints) span 9 ints, within `buf`'s 12.
        api::bcast(
            RecvBuf::typed(as_bytes_mut(&mut buf), 3, &c.vec2).unwrap(),
            root,
            &c.ic,
        )
        .unwrap();
        if rg != c.g {
            let mut want = vec![SENTINEL; 12];
            for k in 0..6 {
                want[vpos(k)] = val(t, rg, 0, k);
            }
            check!(wr, buf == want, "bcast vec2: {buf:?} want {want:?}");
        }
    }
}

fn test_gather(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                for cnt in [0usize, 3] {
                    let root = c.root_arg(rg, rt);
                    let send: Vec<i32> = (0..cnt).map(|k| val(t, c.g, c.me, k)).collect();
                    let total = cnt * c.m as usize;
                    let mut recv = vec![SENTINEL; total + 1];
                    go!(
                        nb,
                        sc,
                        mv::gather(sb(&send), Some(rb(&mut recv[..total])), cnt, root, &c.ic),
                        mv::igather(
                            sc,
                            sb(&send),
                            Some(rb(&mut recv[..total])),
                            cnt,
                            root,
                            &c.ic
                        )
                    );
                    if root == ROOT {
                        for j in 0..c.m {
                            for k in 0..cnt {
                                let got = recv[j as usize * cnt + k];
                                check!(
                                    wr,
                                    got == val(t, c.h, j, k),
                                    "gather block {j} elem {k}: {got}"
                                );
                            }
                        }
                        check!(wr, recv[total] == SENTINEL, "gather overran");
                    } else {
                        check!(
                            wr,
                            recv.iter().all(|&x| x == SENTINEL),
                            "gather: non-root recvbuf written"
                        );
                    }
                }
            }
        }
    }
    // gatherv: remote rank j sends (j + t) % 3 elements; the root places them
    // in reverse order with a gap of one.
    let cnt_of = |j: i32| ((j + t) % 3) as usize;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                let root = c.root_arg(rg, rt);
                let send: Vec<i32> = (0..cnt_of(c.me)).map(|k| val(t, c.g, c.me, k)).collect();
                let counts: Vec<usize> = (0..c.m).map(cnt_of).collect();
                let mut displs = vec![0isize; c.m as usize];
                let mut at = 0;
                for j in (0..c.m as usize).rev() {
                    displs[j] = at;
                    at += counts[j] as isize + 1;
                }
                let mut recv = vec![SENTINEL; at as usize + 1];
                go!(
                    nb,
                    sc,
                    mv::gatherv(
                        sb(&send),
                        Some(rb(&mut recv[..at as usize])),
                        &counts,
                        &displs,
                        root,
                        &c.ic
                    ),
                    mv::igatherv(
                        sc,
                        sb(&send),
                        Some(rb(&mut recv[..at as usize])),
                        &counts,
                        &displs,
                        root,
                        &c.ic
                    )
                );
                if root == ROOT {
                    let mut want = vec![SENTINEL; at as usize + 1];
                    for j in 0..c.m as usize {
                        for k in 0..counts[j] {
                            want[displs[j] as usize + k] = val(t, c.h, j as i32, k);
                        }
                    }
                    check!(wr, recv == want, "gatherv: {recv:?} want {want:?}");
                } else {
                    check!(
                        wr,
                        recv.iter().all(|&x| x == SENTINEL),
                        "gatherv: non-root recvbuf written"
                    );
                }
            }
        }
    }
}

fn test_scatter(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                for cnt in [0usize, 4] {
                    let root = c.root_arg(rg, rt);
                    let send: Vec<i32> = if root == ROOT {
                        (0..cnt * c.m as usize).map(|k| val(t, rg, rt, k)).collect()
                    } else {
                        Vec::new()
                    };
                    let mut recv = vec![SENTINEL; cnt + 1];
                    go!(
                        nb,
                        sc,
                        mv::scatter(sb(&send), cnt, Some(rb(&mut recv[..cnt])), root, &c.ic),
                        mv::iscatter(sc, sb(&send), cnt, Some(rb(&mut recv[..cnt])), root, &c.ic)
                    );
                    if rg == c.g {
                        check!(
                            wr,
                            recv.iter().all(|&x| x == SENTINEL),
                            "scatter: root-group recvbuf written"
                        );
                    } else {
                        let want: Vec<i32> = (0..cnt)
                            .map(|k| val(t, rg, rt, c.me as usize * cnt + k))
                            .chain([SENTINEL])
                            .collect();
                        check!(
                            wr,
                            recv == want,
                            "scatter root {rg}/{rt}: {recv:?} want {want:?}"
                        );
                    }
                }
            }
        }
    }
    // scatterv: remote rank j gets (2j + t) % 3 elements from displacement 4j.
    let cnt_of = |j: i32| ((2 * j + t) % 3) as usize;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                let root = c.root_arg(rg, rt);
                let counts: Vec<usize> = (0..c.m).map(cnt_of).collect();
                let displs: Vec<isize> = (0..c.m as isize).map(|j| 4 * j).collect();
                let send: Vec<i32> = (0..4 * c.m as usize).map(|k| val(t, rg, rt, k)).collect();
                let mine = cnt_of(c.me);
                let mut recv = vec![SENTINEL; mine + 1];
                go!(
                    nb,
                    sc,
                    mv::scatterv(
                        sb(&send),
                        &counts,
                        &displs,
                        Some(rb(&mut recv[..mine])),
                        root,
                        &c.ic
                    ),
                    mv::iscatterv(
                        sc,
                        sb(&send),
                        &counts,
                        &displs,
                        Some(rb(&mut recv[..mine])),
                        root,
                        &c.ic
                    )
                );
                if rg != c.g {
                    let want: Vec<i32> = (0..mine)
                        .map(|k| val(t, rg, rt, 4 * c.me as usize + k))
                        .chain([SENTINEL])
                        .collect();
                    check!(wr, recv == want, "scatterv: {recv:?} want {want:?}");
                }
            }
        }
    }
}

fn test_allgather(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for cnt in [0usize, 1, 3] {
            let send: Vec<i32> = (0..cnt).map(|k| val(t, c.g, c.me, k)).collect();
            let total = cnt * c.m as usize;
            let mut recv = vec![SENTINEL; total + 1];
            go!(
                nb,
                sc,
                mv::allgather(sb(&send), rb(&mut recv[..total]), cnt, &c.ic),
                mv::iallgather(sc, sb(&send), rb(&mut recv[..total]), cnt, &c.ic)
            );
            let want: Vec<i32> = (0..c.m)
                .flat_map(|j| (0..cnt).map(move |k| val(t, c.h, j, k)))
                .chain([SENTINEL])
                .collect();
            check!(
                wr,
                recv == want,
                "allgather nb={nb} cnt {cnt}: {recv:?} want {want:?}"
            );
        }
    }
    // Non-contiguous receive type: 2 vec2 (= 4 ints) per remote rank.
    {
        let send: Vec<i32> = (0..4).map(|k| val(t, c.g, c.me, k)).collect();
        let mut recv = vec![SENTINEL; 8 * c.m as usize];
        // 2 vec2 (6 ints' span) per remote rank fit in `recv`'s 8 per rank.
        let r = RecvBuf::typed(as_bytes_mut(&mut recv), 2 * c.m as usize, &c.vec2).unwrap();
        mv::allgather(sb(&send), r, 2, &c.ic).unwrap();
        // vec2 extent is 3 ints (0 and 2 used): element e at 3e.
        for j in 0..c.m as usize {
            for k in 0..4 {
                let (e, i) = (2 * j + k / 2, k % 2);
                let got = recv[3 * e + 2 * i];
                check!(
                    wr,
                    got == val(t, c.h, j as i32, k),
                    "allgather vec2 remote {j} elem {k}: {got}"
                );
            }
        }
    }
    // allgatherv: rank r of either group sends (r + t) % 3 elements.
    let cnt_of = |j: i32| ((j + t) % 3) as usize;
    for nb in [false, true] {
        let send: Vec<i32> = (0..cnt_of(c.me)).map(|k| val(t, c.g, c.me, k)).collect();
        let counts: Vec<usize> = (0..c.m).map(cnt_of).collect();
        let mut displs = Vec::new();
        let mut at = 0isize;
        for &x in &counts {
            displs.push(at);
            at += x as isize + 2;
        }
        let mut recv = vec![SENTINEL; at as usize];
        go!(
            nb,
            sc,
            mv::allgatherv(sb(&send), rb(&mut recv), &counts, &displs, &c.ic),
            mv::iallgatherv(sc, sb(&send), rb(&mut recv), &counts, &displs, &c.ic)
        );
        let mut want = vec![SENTINEL; at as usize];
        for j in 0..c.m as usize {
            for k in 0..counts[j] {
                want[displs[j] as usize + k] = val(t, c.h, j as i32, k);
            }
        }
        check!(wr, recv == want, "allgatherv: {recv:?} want {want:?}");
    }
}

fn test_alltoall(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    // Block for remote rank j from rank r of group g: val(t, g, r, 10 j + k).
    for nb in [false, true] {
        for cnt in [0usize, 2] {
            let send: Vec<i32> = (0..c.m as usize)
                .flat_map(|j| (0..cnt).map(move |k| val(t, c.g, c.me, 10 * j + k)))
                .collect();
            let mut recv = vec![SENTINEL; cnt * c.m as usize + 1];
            go!(
                nb,
                sc,
                mv::alltoall(
                    sb(&send),
                    cnt,
                    rb(&mut recv[..cnt * c.m as usize]),
                    cnt,
                    &c.ic
                ),
                mv::ialltoall(
                    sc,
                    sb(&send),
                    cnt,
                    rb(&mut recv[..cnt * c.m as usize]),
                    cnt,
                    &c.ic
                )
            );
            let me = c.me as usize;
            let want: Vec<i32> = (0..c.m)
                .flat_map(|j| (0..cnt).map(move |k| val(t, c.h, j, 10 * me + k)))
                .chain([SENTINEL])
                .collect();
            check!(
                wr,
                recv == want,
                "alltoall nb={nb} cnt {cnt}: {recv:?} want {want:?}"
            );
        }
    }
    // alltoallv: group-0 rank a sends group-1 rank b cnt0(a, b) elements, and
    // b sends a cnt1(b, a); displacements with gaps, reversed on the receive side.
    let cnt0 = |a: i32, b: i32| ((a + 2 * b + t) % 3) as usize;
    let cnt1 = |b: i32, a: i32| ((2 * a + b + 1 + t) % 3) as usize;
    let cnt_to = |from_g: i32, from: i32, to: i32| {
        if from_g == 0 {
            cnt0(from, to)
        } else {
            cnt1(from, to)
        }
    };
    for nb in [false, true] {
        let m = c.m as usize;
        let scounts: Vec<usize> = (0..c.m).map(|j| cnt_to(c.g, c.me, j)).collect();
        let rcounts: Vec<usize> = (0..c.m).map(|j| cnt_to(c.h, j, c.me)).collect();
        let sdispls: Vec<isize> = (0..m as isize).map(|j| 3 * j).collect();
        let rdispls: Vec<isize> = (0..m as isize).map(|j| 3 * (m as isize - 1 - j)).collect();
        let mut send = vec![0i32; 3 * m];
        for j in 0..m {
            for k in 0..scounts[j] {
                send[3 * j + k] = val(t, c.g, c.me, 10 * j + k);
            }
        }
        let mut recv = vec![SENTINEL; 3 * m];
        go!(
            nb,
            sc,
            mv::alltoallv(
                sb(&send),
                Blocks {
                    counts: &scounts,
                    displs: &sdispls
                },
                rb(&mut recv),
                Blocks {
                    counts: &rcounts,
                    displs: &rdispls
                },
                &c.ic
            ),
            mv::ialltoallv(
                sc,
                sb(&send),
                Blocks {
                    counts: &scounts,
                    displs: &sdispls
                },
                rb(&mut recv),
                Blocks {
                    counts: &rcounts,
                    displs: &rdispls
                },
                &c.ic
            )
        );
        let mut want = vec![SENTINEL; 3 * m];
        for j in 0..m {
            for k in 0..rcounts[j] {
                want[rdispls[j] as usize + k] = val(t, c.h, j as i32, 10 * c.me as usize + k);
            }
        }
        check!(wr, recv == want, "alltoallv: {recv:?} want {want:?}");
    }
}

/// The expected sum over group `x`'s ranks of val(t, x, r, k).
fn sum_of(c: &Ctx, t: i32, x: i32, k: usize) -> i32 {
    (0..c.size_of(x))
        .map(|r| val(t, x, r, k))
        .fold(0i32, |a, v| a.wrapping_add(v))
}

/// The expected composition f0 o f1 o ... over group `x`'s ranks.
fn comp_of(c: &Ctx, t: i32, x: i32, k: usize) -> [i64; 2] {
    let mut acc = affine(t, x, 0, k);
    for r in 1..c.size_of(x) {
        acc = compose(acc, affine(t, x, r, k));
    }
    acc
}

fn pairs(c: &Ctx, t: i32, cnt: usize) -> Vec<i64> {
    (0..cnt).flat_map(|k| affine(t, c.g, c.me, k)).collect()
}

fn test_reduce(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for rg in 0..2 {
            for rt in 0..c.size_of(rg) {
                let root = c.root_arg(rg, rt);
                for cnt in [0usize, 4] {
                    let send: Vec<i32> = (0..cnt).map(|k| val(t, c.g, c.me, k)).collect();
                    let mut recv = vec![SENTINEL; cnt + 1];
                    go!(
                        nb,
                        sc,
                        api::reduce(sb(&send), Some(rb(&mut recv[..cnt])), &c.sum, root, &c.ic),
                        api::ireduce(
                            sc,
                            sb(&send),
                            Some(rb(&mut recv[..cnt])),
                            &c.sum,
                            root,
                            &c.ic
                        )
                    );
                    let want: Vec<i32> = if root == ROOT {
                        (0..cnt)
                            .map(|k| sum_of(c, t, c.h, k))
                            .chain([SENTINEL])
                            .collect()
                    } else {
                        vec![SENTINEL; cnt + 1]
                    };
                    check!(
                        wr,
                        recv == want,
                        "reduce sum root {rg}/{rt} cnt {cnt}: {recv:?} want {want:?}"
                    );
                }
                // Non-commutative: the remote group's maps composed in rank order.
                let cnt = 3;
                let send = pairs(c, t, cnt);
                let mut recv = vec![-1i64; 2 * cnt];
                go!(
                    nb,
                    sc,
                    api::reduce(
                        c.pairs(&send, cnt),
                        Some(c.pairs_mut(&mut recv, cnt)),
                        &c.comp,
                        root,
                        &c.ic
                    ),
                    api::ireduce(
                        sc,
                        c.pairs(&send, cnt),
                        Some(c.pairs_mut(&mut recv, cnt)),
                        &c.comp,
                        root,
                        &c.ic
                    )
                );
                let want: Vec<i64> = if root == ROOT {
                    (0..cnt).flat_map(|k| comp_of(c, t, c.h, k)).collect()
                } else {
                    vec![-1; 2 * cnt]
                };
                check!(
                    wr,
                    recv == want,
                    "reduce compose root {rg}/{rt}: {recv:?} want {want:?}"
                );
            }
        }
    }
}

fn test_allreduce(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    for nb in [false, true] {
        for cnt in [0usize, 1, 5] {
            let send: Vec<i32> = (0..cnt).map(|k| val(t, c.g, c.me, k)).collect();
            let mut recv = vec![SENTINEL; cnt + 1];
            go!(
                nb,
                sc,
                api::allreduce(sb(&send), rb(&mut recv[..cnt]), &c.sum, &c.ic),
                api::iallreduce(sc, sb(&send), rb(&mut recv[..cnt]), &c.sum, &c.ic)
            );
            let want: Vec<i32> = (0..cnt)
                .map(|k| sum_of(c, t, c.h, k))
                .chain([SENTINEL])
                .collect();
            check!(
                wr,
                recv == want,
                "allreduce sum nb={nb} cnt {cnt}: {recv:?} want {want:?}"
            );
        }
        let cnt = 4;
        let send = pairs(c, t, cnt);
        let mut recv = vec![-1i64; 2 * cnt];
        go!(
            nb,
            sc,
            api::allreduce(
                c.pairs(&send, cnt),
                c.pairs_mut(&mut recv, cnt),
                &c.comp,
                &c.ic
            ),
            api::iallreduce(
                sc,
                c.pairs(&send, cnt),
                c.pairs_mut(&mut recv, cnt),
                &c.comp,
                &c.ic
            )
        );
        let want: Vec<i64> = (0..cnt).flat_map(|k| comp_of(c, t, c.h, k)).collect();
        check!(
            wr,
            recv == want,
            "allreduce compose: {recv:?} want {want:?}"
        );
    }
    // Non-contiguous type: 2 vec2 elements (4 ints with gaps), sum.
    {
        let mut send = vec![SENTINEL; 6];
        for k in 0..4 {
            send[3 * (k / 2) + 2 * (k % 2)] = val(t, c.g, c.me, k);
        }
        let mut recv = vec![SENTINEL; 6];
        // 2 vec2 elements span 6 ints, the length of `send` and `recv`.
        let s = SendBuf::typed(as_bytes(&send), 2, &c.vec2).unwrap();
        api::allreduce(
            Some(s),
            RecvBuf::typed(as_bytes_mut(&mut recv), 2, &c.vec2).unwrap(),
            &c.sum,
            &c.ic,
        )
        .unwrap();
        for k in 0..4 {
            let got = recv[3 * (k / 2) + 2 * (k % 2)];
            check!(
                wr,
                got == sum_of(c, t, c.h, k),
                "allreduce vec2 elem {k}: {got}"
            );
        }
        check!(
            wr,
            recv[1] == SENTINEL && recv[4] == SENTINEL,
            "allreduce vec2 wrote a gap: {recv:?}"
        );
    }
}

fn test_reduce_scatter(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    // Both groups reduce `total` elements; each scatters the other's result by
    // its own counts (spread over the local group, some ranks getting 0).
    for nb in [false, true] {
        for total in [0usize, 7] {
            let n = c.n as usize;
            let mut counts: Vec<usize> = (0..n)
                .map(|r| total / n + usize::from(r < total % n))
                .collect();
            // With 3+ ranks, rank 1's share goes to rank 0 (rank 1 gets nothing).
            if n >= 3 {
                counts[0] += counts[1];
                counts[1] = 0;
            }
            let disp: usize = counts[..c.me as usize].iter().sum();
            let mine = counts[c.me as usize];
            let send: Vec<i32> = (0..total).map(|k| val(t, c.g, c.me, k)).collect();
            let mut recv = vec![SENTINEL; mine + 1];
            go!(
                nb,
                sc,
                mv::reduce_scatter(sb(&send), rb(&mut recv[..mine]), &counts, &c.sum, &c.ic),
                mv::ireduce_scatter(sc, sb(&send), rb(&mut recv[..mine]), &counts, &c.sum, &c.ic)
            );
            let want: Vec<i32> = (disp..disp + mine)
                .map(|k| sum_of(c, t, c.h, k))
                .chain([SENTINEL])
                .collect();
            check!(
                wr,
                recv == want,
                "reduce_scatter nb={nb} total {total}: {recv:?} want {want:?}"
            );
            // Non-commutative.
            let send = pairs(c, t, total);
            let mut recv = vec![-1i64; 2 * mine + 2];
            go!(
                nb,
                sc,
                mv::reduce_scatter(
                    c.pairs(&send, total),
                    c.pairs_mut(&mut recv, mine),
                    &counts,
                    &c.comp,
                    &c.ic
                ),
                mv::ireduce_scatter(
                    sc,
                    c.pairs(&send, total),
                    c.pairs_mut(&mut recv, mine),
                    &counts,
                    &c.comp,
                    &c.ic
                )
            );
            let want: Vec<i64> = (disp..disp + mine)
                .flat_map(|k| comp_of(c, t, c.h, k))
                .chain([-1, -1])
                .collect();
            check!(
                wr,
                recv == want,
                "reduce_scatter compose total {total}: {recv:?} want {want:?}"
            );
        }
        // reduce_scatter_block: n * recvcount must agree in both groups.
        let rc = if c.n == c.m { 2 } else { 0 };
        let total = rc * c.n as usize;
        let send: Vec<i32> = (0..total).map(|k| val(t, c.g, c.me, k)).collect();
        let mut recv = vec![SENTINEL; rc + 1];
        go!(
            nb,
            sc,
            mv::reduce_scatter_block(sb(&send), rb(&mut recv[..rc]), rc, &c.sum, &c.ic),
            mv::ireduce_scatter_block(sc, sb(&send), rb(&mut recv[..rc]), rc, &c.sum, &c.ic)
        );
        let at = rc * c.me as usize;
        let want: Vec<i32> = (at..at + rc)
            .map(|k| sum_of(c, t, c.h, k))
            .chain([SENTINEL])
            .collect();
        check!(
            wr,
            recv == want,
            "reduce_scatter_block rc {rc}: {recv:?} want {want:?}"
        );
    }
}

fn test_errors(c: &Ctx) {
    let wr = c.world_rank;
    let mut buf = [0i32; 2];
    // A root outside the remote group, and MPI_IN_PLACE: rejected before any
    // communication, so no rank waits on the others.
    let e = api::bcast(rb(&mut buf[..1]), c.m, &c.ic).unwrap_err();
    check!(wr, e.class == ErrorClass::Root, "bcast bad root: {e}");
    let e = api::allreduce(None, rb(&mut buf[..1]), &c.sum, &c.ic).unwrap_err();
    check!(wr, e.class == ErrorClass::Buffer, "allreduce in place: {e}");
    let e = api::scan(sb(&[1i32]), rb(&mut buf[..1]), &c.sum, &c.ic).unwrap_err();
    check!(
        wr,
        e.class == ErrorClass::UnsupportedOperation || e.class == ErrorClass::Comm,
        "scan on an intercommunicator: {e}"
    );
}

/// Two non-blocking collectives in flight at once on the intercommunicator.
fn test_overlap(c: &Ctx, t: i32) {
    let wr = c.world_rank;
    let send: Vec<i32> = (0..3).map(|k| val(t, c.g, c.me, k)).collect();
    let mut red = vec![SENTINEL; 3];
    let mut gat = vec![SENTINEL; c.m as usize];
    buf::scope(|sc| {
        let mut r1 = api::iallreduce(sc, sb(&send), rb(&mut red), &c.sum, &c.ic).unwrap();
        // 1 int sent; `gat` holds 1 int per remote rank (`c.m`).
        let mut r2 = mv::iallgather(sc, sb(&send[..1]), rb(&mut gat), 1, &c.ic).unwrap();
        let mut r3 = barrier::ibarrier(&c.ic).unwrap();
        pt2pt::wait(&mut r3).unwrap();
        pt2pt::wait(&mut r2).unwrap();
        pt2pt::wait(&mut r1).unwrap();
    });
    let want: Vec<i32> = (0..3).map(|k| sum_of(c, t, c.h, k)).collect();
    check!(wr, red == want, "overlap allreduce {red:?} want {want:?}");
    let want: Vec<i32> = (0..c.m).map(|j| val(t, c.h, j, 0)).collect();
    check!(wr, gat == want, "overlap allgather {gat:?} want {want:?}");
}

fn main() {
    let split = std::env::args().nth(1).unwrap_or_else(|| "mod2".into());
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let (rank, size) = (world.rank(), world.size());
    check!(rank, size >= 2, "needs 2+ ranks");
    let color_of = |r: i32| -> i32 {
        match split.as_str() {
            "first" => i32::from(r >= 1),
            "last2" => i32::from(r >= size - 2),
            _ => r % 2,
        }
    };
    check!(
        rank,
        (0..size).any(|r| color_of(r) == 0) && (0..size).any(|r| color_of(r) == 1),
        "split {split} leaves a group empty on {size} ranks"
    );
    let g = color_of(rank);
    let local = create::split(&world, Some(g), rank).unwrap().unwrap();
    let remote_leader = (0..size).find(|&r| color_of(r) != g).unwrap();
    let ic = inter::intercomm_create(&local, 0, Some(&world), remote_leader, 42).unwrap();
    let int = Datatype::predefined(Primitive::Int);
    let pair = Datatype::contiguous(2, &Datatype::predefined(Primitive::Int64)).unwrap();
    pair.commit();
    let vec2 = Datatype::vector(2, 1, 2, &int).unwrap();
    vec2.commit();
    let c = Ctx {
        g,
        h: 1 - g,
        me: ic.rank(),
        n: ic.size(),
        m: ic.peer_group_size(),
        world_rank: rank,
        ic,
        pair,
        vec2,
        sum: Op::predefined(PredefinedOp::Sum),
        comp: compose_op(),
    };
    test_barrier(&c);
    test_bcast(&c, 1);
    test_gather(&c, 2);
    test_scatter(&c, 3);
    test_allgather(&c, 4);
    test_alltoall(&c, 5);
    test_reduce(&c, 6);
    test_allreduce(&c, 7);
    test_reduce_scatter(&c, 8);
    test_errors(&c);
    test_overlap(&c, 9);
    test_barrier(&c);
    // Intracommunicator collectives still work on the local group.
    api::bcast(rb(&mut [0i32]), 0, &local).unwrap();
    drop(c);
    drop(local);
    check!(
        rank,
        oxmpi_core::comm::context::in_use() == 0,
        "context ids leaked"
    );
    runtime::finalize().unwrap();
    if rank == 0 {
        println!("coll inter ({split}, {size} ranks): ok");
    }
}
