//! Rank program for the engine-level data-movement collectives (bcast, gather(v),
//! scatter(v), allgather(v), alltoall(v/w)). The first argument names the
//! operation group; the program loops over roots, counts (0, 1, odd, large),
//! datatypes (contiguous MPI_INT runs vs a vector with gaps, on either side),
//! MPI_IN_PLACE and blocking vs non-blocking, and checks every byte of every
//! receive buffer, gaps included. Algorithms are forced by the launcher through
//! `OXMPI_<OP>_ALGORITHM`.

use oxmpi_core::buf::{self, RecvBuf, SendBuf};
use oxmpi_core::coll::api::{bcast, ibcast};
use oxmpi_core::coll::api_move::{self as mv, Blocks, WBlocks};
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{pt2pt, Comm, Request, Result};
use oxmpi_tests::{check, Rng};

/// Packed bytes of one "unit": 6 MPI_INTs, or one vector element.
const UNIT: usize = 24;
const SENTINEL: u8 = 0xEE;

/// A datatype and how many of its elements make one unit.
#[derive(Clone)]
struct Ty {
    dt: Datatype,
    per: usize,
}

impl Ty {
    fn int() -> Ty {
        Ty {
            dt: Datatype::predefined(Primitive::Int),
            per: 6,
        }
    }
    /// 2 blocks of 3 ints, stride 5 ints: 24 data bytes in a 32-byte extent.
    fn vec() -> Ty {
        let dt = Datatype::vector(2, 3, 5, &Datatype::predefined(Primitive::Int)).expect("vector");
        dt.commit();
        Ty { dt, per: 1 }
    }
    fn count(&self, units: usize) -> usize {
        units * self.per
    }
    fn bytes(&self, units: usize) -> usize {
        units * self.per * self.dt.extent() as usize
    }
    fn alloc(&self, units: usize) -> Vec<u8> {
        vec![SENTINEL; self.bytes(units) + 8]
    }
    /// Writes `packed` (whole units) at unit offset `at` of `buf`.
    fn place(&self, buf: &mut [u8], at: usize, packed: &[u8]) {
        let units = packed.len() / UNIT;
        let dst = RecvBuf::typed(&mut buf[self.bytes(at)..], self.count(units), &self.dt)
            .expect("the units fit");
        buf::unpack(packed, &mut 0, dst).expect("unpack");
    }
    fn send<'a>(&'a self, buf: &'a [u8], units: usize) -> SendBuf<'a, 'a> {
        SendBuf::typed(buf, self.count(units), &self.dt).expect("send buffer")
    }
    fn recv<'a>(&'a self, buf: &'a mut [u8], units: usize) -> RecvBuf<'a, 'a> {
        RecvBuf::typed(buf, self.count(units), &self.dt).expect("receive buffer")
    }
}

fn kinds() -> [Ty; 2] {
    [Ty::int(), Ty::vec()]
}

fn data(seed: u64, units: usize) -> Vec<u8> {
    let mut v = vec![0u8; units * UNIT];
    Rng::fill(seed, &mut v);
    v
}

fn seed(case: u64, a: i32, b: i32) -> u64 {
    (case << 20) ^ ((a as u64) << 10) ^ b as u64 ^ 0x5eed
}

/// Runs a collective blocking (`f(None)`), or as its non-blocking twin started in a
/// buffer scope (`f(Some(scope))`) and waited for.
fn finish<'e>(blocking: bool, f: impl FnOnce(Option<&buf::Scope<'e>>) -> Result<Option<Request>>) {
    if blocking {
        f(None).expect("blocking collective");
    } else {
        buf::scope(|sc| {
            let mut r = f(Some(sc))
                .expect("non-blocking collective")
                .expect("a request");
            pt2pt::wait(&mut r).expect("wait");
        });
    }
}

/// Runs a collective with or without a scope: `both!(sc, blocking(..), immediate(..))`.
macro_rules! both {
    ($sc:ident, $b:expr, $nb:expr) => {
        |$sc: Option<&buf::Scope<'_>>| match $sc {
            None => $b.map(|_| None),
            Some($sc) => $nb.map(Some),
        }
    };
}

struct Ctx {
    comm: Comm,
    rank: i32,
    n: i32,
    case: u64,
}

impl Ctx {
    fn next(&mut self) -> u64 {
        self.case += 1;
        self.case
    }
    fn expect(&self, what: &str, got: &[u8], want: &[u8]) {
        if got != want {
            let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            check!(
                self.rank,
                false,
                "{what} (case {}, n {}): first difference at byte {at} of {}",
                self.case,
                self.n,
                got.len()
            );
        }
    }
    /// Unit counts: 0, 1, odd, and (sometimes) large enough for ≥ 1 MiB in total.
    fn counts(&self, big: bool) -> Vec<usize> {
        let mut c = vec![0, 1, 3];
        if big {
            c.push((1 << 20) / (UNIT * self.n as usize) + 1);
        }
        c
    }
}

fn main() {
    let group = std::env::args().nth(1).unwrap_or_default();
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let mut cx = Ctx {
        rank: world.rank(),
        n: world.size(),
        comm: world,
        case: 0,
    };
    match group.as_str() {
        "bcast" => {
            run_bcast(&mut cx);
            run_bcast_small(&mut cx);
        }
        "gather" => {
            run_gather(&mut cx);
            run_gather_small(&mut cx);
            run_gatherv(&mut cx);
        }
        "scatter" => {
            run_scatter(&mut cx);
            run_scatter_small(&mut cx);
            run_scatterv(&mut cx);
        }
        "allgather" => {
            run_allgather(&mut cx);
            run_allgather_bytes(&mut cx);
            run_allgatherv(&mut cx);
        }
        "alltoall" => {
            run_alltoall(&mut cx);
            run_alltoallv(&mut cx);
            run_alltoallw(&mut cx);
        }
        "errors" => run_errors(&mut cx),
        "failed" => run_failed(&mut cx),
        other => {
            eprintln!("unknown group {other:?}");
            std::process::exit(2);
        }
    }
    runtime::finalize().expect("MPI_Finalize");
    if cx.rank == 0 {
        println!("{group}: ok ({} cases)", cx.case);
    }
}

fn run_bcast(cx: &mut Ctx) {
    for root in 0..cx.n {
        for (ki, kind) in kinds().iter().enumerate() {
            // The root and the others use different type maps when ki says so.
            let mine = if (cx.rank == root) == (ki == 0) {
                Ty::int()
            } else {
                kind.clone()
            };
            for units in cx.counts(root == cx.n - 1 || root == 0) {
                let case = cx.next();
                let want = data(seed(case, root, 0), units);
                let mut buf = mine.alloc(units);
                if cx.rank == root {
                    mine.place(&mut buf, 0, &want);
                }
                let mut refb = mine.alloc(units);
                mine.place(&mut refb, 0, &want);
                let (b, comm) = (mine.recv(&mut buf, units), &cx.comm);
                finish(
                    case % 2 == 0,
                    both!(sc, bcast(b, root, comm), ibcast(sc, b, root, comm)),
                );
                cx.expect("bcast", &buf, &refb);
            }
        }
    }
}

/// Bcast of byte messages from every root around the shared area's inline and
/// near broadcast buffers (24 bytes in the release line, 256 in the near buffer:
/// the last size of each and the first that misses it).
fn run_bcast_small(cx: &mut Ctx) {
    let byte = Datatype::predefined(Primitive::Byte);
    for root in 0..cx.n {
        for len in [24usize, 25, 32, 255, 256, 257] {
            let case = cx.next();
            let mut want = vec![0u8; len];
            Rng::fill(seed(case, root, 3), &mut want);
            let mut buf = if cx.rank == root {
                want.clone()
            } else {
                vec![SENTINEL; len]
            };
            bcast(
                RecvBuf::typed(&mut buf, len, &byte).expect("buf"),
                root,
                &cx.comm,
            )
            .expect("bcast of small messages");
            cx.expect("bcast of small messages", &buf, &want);
        }
    }
}

fn run_gather(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for root in 0..n {
        for sk in kinds() {
            for rk in kinds() {
                for units in cx.counts(root == (sk.per as i32) % n && rk.per == 1) {
                    for in_place in [false, true] {
                        let case = cx.next();
                        let mine = data(seed(case, rank, 0), units);
                        let mut send = sk.alloc(units);
                        sk.place(&mut send, 0, &mine);
                        let mut recv = if rank == root {
                            rk.alloc(units * n as usize)
                        } else {
                            Vec::new()
                        };
                        let mut refb = recv.clone();
                        if rank == root {
                            for i in 0..n {
                                rk.place(
                                    &mut refb,
                                    i as usize * units,
                                    &data(seed(case, i, 0), units),
                                );
                            }
                            if in_place {
                                rk.place(&mut recv, root as usize * units, &mine);
                            }
                        }
                        let sb = if in_place && rank == root {
                            None
                        } else {
                            Some(sk.send(&send, units))
                        };
                        let rb = if rank == root {
                            Some(rk.recv(&mut recv, units * n as usize))
                        } else {
                            None
                        };
                        let (comm, rc) = (&cx.comm, rk.count(units));
                        finish(
                            case % 2 == 0,
                            both!(
                                sc,
                                mv::gather(sb, rb, rc, root, comm),
                                mv::igather(sc, sb, rb, rc, root, comm)
                            ),
                        );
                        cx.expect("gather", &recv, &refb);
                    }
                }
            }
        }
    }
}

/// Per-rank unit counts and unit displacements for the v-collectives: blocks in
/// reverse rank order with a one-unit gap between them.
fn v_layout(n: i32, k: usize, salt: i32) -> (Vec<usize>, Vec<usize>, usize) {
    let counts: Vec<usize> = (0..n)
        .map(|i| {
            if k == 0 {
                (i + salt) as usize % 2
            } else {
                k + ((i + salt) % 3) as usize
            }
        })
        .collect();
    let mut displs = vec![0; n as usize];
    let mut at = 0;
    for i in (0..n as usize).rev() {
        displs[i] = at;
        at += counts[i] + 1;
    }
    (counts, displs, at)
}

fn run_gatherv(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for root in 0..n {
        for (sk, rk) in [(Ty::int(), Ty::vec()), (Ty::vec(), Ty::int())] {
            for k in cx.counts(root == 0) {
                for in_place in [false, true] {
                    let case = cx.next();
                    let (counts, displs, total) = v_layout(n, k, root);
                    let mine = data(seed(case, rank, 0), counts[rank as usize]);
                    let mut send = sk.alloc(counts[rank as usize]);
                    sk.place(&mut send, 0, &mine);
                    let mut recv = if rank == root {
                        rk.alloc(total)
                    } else {
                        Vec::new()
                    };
                    let mut refb = recv.clone();
                    if rank == root {
                        for i in 0..n as usize {
                            rk.place(
                                &mut refb,
                                displs[i],
                                &data(seed(case, i as i32, 0), counts[i]),
                            );
                        }
                        if in_place {
                            rk.place(&mut recv, displs[root as usize], &mine);
                        }
                    }
                    let rc: Vec<usize> = counts.iter().map(|&c| rk.count(c)).collect();
                    let rd: Vec<isize> = displs.iter().map(|&d| rk.count(d) as isize).collect();
                    let sb = if in_place && rank == root {
                        None
                    } else {
                        Some(sk.send(&send, counts[rank as usize]))
                    };
                    let rb = if rank == root {
                        Some(rk.recv(&mut recv, total))
                    } else {
                        None
                    };
                    let comm = &cx.comm;
                    finish(
                        case % 2 == 0,
                        both!(
                            sc,
                            mv::gatherv(sb, rb, &rc, &rd, root, comm),
                            mv::igatherv(sc, sb, rb, &rc, &rd, root, comm)
                        ),
                    );
                    cx.expect("gatherv", &recv, &refb);
                }
            }
        }
    }
}

fn run_scatter(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for root in 0..n {
        for sk in kinds() {
            for rk in kinds() {
                for units in cx.counts(root == (rk.per as i32) % n && sk.per == 1) {
                    for in_place in [false, true] {
                        let case = cx.next();
                        let mut send = if rank == root {
                            sk.alloc(units * n as usize)
                        } else {
                            Vec::new()
                        };
                        if rank == root {
                            for i in 0..n {
                                sk.place(
                                    &mut send,
                                    i as usize * units,
                                    &data(seed(case, i, 0), units),
                                );
                            }
                        }
                        let send_ref = send.clone();
                        let mut recv = rk.alloc(units);
                        let mut refb = rk.alloc(units);
                        rk.place(&mut refb, 0, &data(seed(case, rank, 0), units));
                        let received = !(in_place && rank == root);
                        let rb = if received {
                            Some(rk.recv(&mut recv, units))
                        } else {
                            None
                        };
                        let sb = if rank == root {
                            Some(sk.send(&send, units * n as usize))
                        } else {
                            None
                        };
                        let (comm, scn) = (&cx.comm, sk.count(units));
                        finish(
                            case % 2 == 0,
                            both!(
                                sc,
                                mv::scatter(sb, scn, rb, root, comm),
                                mv::iscatter(sc, sb, scn, rb, root, comm)
                            ),
                        );
                        if received {
                            cx.expect("scatter", &recv, &refb);
                        }
                        cx.expect("scatter send buffer untouched", &send, &send_ref);
                    }
                }
            }
        }
    }
}

/// Gather of byte blocks of 1-25 bytes from every root, in place or not: the
/// sizes around the shared area's inline block (2 ranks, up to 24 bytes in the
/// release line).
fn run_gather_small(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    let byte = Datatype::predefined(Primitive::Byte);
    for root in 0..n {
        // 8 KiB - 16 KiB: a 2-rank gather's area blocks around its single
        // copies' start (`gather::DIRECT_MIN_2`).
        for blk in [1usize, 8, 23, 24, 25, 8192, 16383, 16384] {
            for in_place in [false, true] {
                let case = cx.next();
                // Every rank knows the whole result (the same seed); each sends its block.
                let mut all = vec![0u8; n as usize * blk];
                Rng::fill(seed(case, root, 2), &mut all);
                let mine = all[rank as usize * blk..(rank as usize + 1) * blk].to_vec();
                let mut recv = vec![SENTINEL; n as usize * blk];
                if rank == root {
                    // In place, the root's block is already at its place.
                    recv[rank as usize * blk..(rank as usize + 1) * blk].copy_from_slice(&mine);
                }
                let sent = !(in_place && rank == root);
                let sb = sent.then(|| SendBuf::typed(&mine, blk, &byte).expect("send"));
                let rb = (rank == root)
                    .then(|| RecvBuf::typed(&mut recv, n as usize * blk, &byte).expect("recv"));
                mv::gather(sb, rb, blk, root, &cx.comm).expect("gather of small blocks");
                if rank == root {
                    cx.expect("gather of small blocks", &recv, &all);
                }
            }
        }
    }
}

/// Scatter of byte blocks of 1-25 bytes from every root, in place or not: the
/// sizes around the shared area's inline blocks (all the other ranks' blocks in
/// the release line when they fit there together: 24 bytes on 2 ranks, 12 on 3,
/// 8 on 4), whose place there skips the root's; and blocks of 85-129 bytes.
fn run_scatter_small(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    let byte = Datatype::predefined(Primitive::Byte);
    for root in 0..n {
        // 8 KiB - 16 KiB: a 2-rank scatter's area blocks around its single
        // copies' start (`gather::DIRECT_MIN_2`).
        for blk in [
            1usize, 3, 4, 8, 9, 12, 13, 24, 25, 85, 86, 128, 129, 8192, 16383, 16384,
        ] {
            for in_place in [false, true] {
                let case = cx.next();
                // Every rank knows the whole message (the same seed); the root sends it.
                let mut all = vec![0u8; n as usize * blk];
                Rng::fill(seed(case, root, 1), &mut all);
                let send = if rank == root {
                    all.clone()
                } else {
                    Vec::new()
                };
                let want = &all[rank as usize * blk..(rank as usize + 1) * blk];
                let mut recv = vec![SENTINEL; blk];
                let received = !(in_place && rank == root);
                let rb = received.then(|| RecvBuf::typed(&mut recv, blk, &byte).expect("recv"));
                let sb = (rank == root)
                    .then(|| SendBuf::typed(&send, n as usize * blk, &byte).expect("send"));
                mv::scatter(sb, blk, rb, root, &cx.comm).expect("scatter of small blocks");
                if received {
                    cx.expect("scatter of small blocks", &recv, want);
                }
            }
        }
    }
}

fn run_scatterv(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for root in 0..n {
        for (sk, rk) in [(Ty::int(), Ty::vec()), (Ty::vec(), Ty::int())] {
            for k in cx.counts(root == n - 1) {
                for in_place in [false, true] {
                    let case = cx.next();
                    let (counts, displs, total) = v_layout(n, k, root + 1);
                    let mut send = if rank == root {
                        sk.alloc(total)
                    } else {
                        Vec::new()
                    };
                    if rank == root {
                        for i in 0..n as usize {
                            sk.place(
                                &mut send,
                                displs[i],
                                &data(seed(case, i as i32, 0), counts[i]),
                            );
                        }
                    }
                    let mine = counts[rank as usize];
                    let mut recv = rk.alloc(mine);
                    let mut refb = rk.alloc(mine);
                    rk.place(&mut refb, 0, &data(seed(case, rank, 0), mine));
                    let sc: Vec<usize> = counts.iter().map(|&c| sk.count(c)).collect();
                    let sd: Vec<isize> = displs.iter().map(|&d| sk.count(d) as isize).collect();
                    let received = !(in_place && rank == root);
                    let rb = if received {
                        Some(rk.recv(&mut recv, mine))
                    } else {
                        None
                    };
                    let sb = if rank == root {
                        Some(sk.send(&send, total))
                    } else {
                        None
                    };
                    let comm = &cx.comm;
                    finish(
                        case % 2 == 0,
                        both!(
                            s,
                            mv::scatterv(sb, &sc, &sd, rb, root, comm),
                            mv::iscatterv(s, sb, &sc, &sd, rb, root, comm)
                        ),
                    );
                    if received {
                        cx.expect("scatterv", &recv, &refb);
                    }
                }
            }
        }
    }
}

fn run_allgather(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for sk in kinds() {
        for rk in kinds() {
            for units in cx.counts(sk.per != rk.per) {
                for in_place in [false, true] {
                    let case = cx.next();
                    let mine = data(seed(case, rank, 0), units);
                    let mut send = sk.alloc(units);
                    sk.place(&mut send, 0, &mine);
                    let mut recv = rk.alloc(units * n as usize);
                    let mut refb = recv.clone();
                    for i in 0..n {
                        rk.place(
                            &mut refb,
                            i as usize * units,
                            &data(seed(case, i, 0), units),
                        );
                    }
                    if in_place {
                        rk.place(&mut recv, rank as usize * units, &mine);
                    }
                    let sb = if in_place {
                        None
                    } else {
                        Some(sk.send(&send, units))
                    };
                    let (rb, comm, rc) = (
                        rk.recv(&mut recv, units * n as usize),
                        &cx.comm,
                        rk.count(units),
                    );
                    finish(
                        case % 2 == 0,
                        both!(
                            sc,
                            mv::allgather(sb, rb, rc, comm),
                            mv::iallgather(sc, sb, rb, rc, comm)
                        ),
                    );
                    cx.expect("allgather", &recv, &refb);
                }
            }
        }
    }
}

/// Allgather and allgatherv (an allgather's layout) of byte blocks around the
/// 2-rank shared-memory limit (`allgather::SHM_MAX_2`, 8 KiB) and the old one
/// (2 KiB), and around the crowded host's (`SHM_MAX_CROWDED`, 128 KiB; 3 or
/// more ranks on a 2-core host: the area up to it, the schedules above), in
/// place or not.
fn run_allgather_bytes(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    let byte = Datatype::predefined(Primitive::Byte);
    for blk in [2048usize, 2049, 8192, 8193, 65537, 131072, 131073] {
        for (in_place, v) in [(false, false), (true, false), (false, true), (true, true)] {
            let case = cx.next();
            let mut all = vec![0u8; n as usize * blk];
            Rng::fill(seed(case, 0, 4), &mut all);
            let mine = all[rank as usize * blk..(rank as usize + 1) * blk].to_vec();
            let mut recv = vec![SENTINEL; n as usize * blk];
            if in_place {
                recv[rank as usize * blk..(rank as usize + 1) * blk].copy_from_slice(&mine);
            }
            let sb = (!in_place).then(|| SendBuf::typed(&mine, blk, &byte).expect("send"));
            let rb = RecvBuf::typed(&mut recv, n as usize * blk, &byte).expect("recv");
            if v {
                let counts = vec![blk; n as usize];
                let displs: Vec<isize> = (0..n as isize).map(|i| i * blk as isize).collect();
                mv::allgatherv(sb, rb, &counts, &displs, &cx.comm).expect("allgatherv of bytes");
            } else {
                mv::allgather(sb, rb, blk, &cx.comm).expect("allgather of bytes");
            }
            cx.expect("allgather of byte blocks", &recv, &all);
        }
    }
}

fn run_allgatherv(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for (sk, rk) in [
        (Ty::int(), Ty::vec()),
        (Ty::vec(), Ty::int()),
        (Ty::int(), Ty::int()),
    ] {
        for k in cx.counts(sk.per == 1) {
            // Uniform: equal counts at the displacements of an allgather (a path of its own).
            for (in_place, uniform) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let case = cx.next();
                let (counts, displs, total) = if uniform {
                    let n = n as usize;
                    (vec![k; n], (0..n).map(|i| i * k).collect(), n * k)
                } else {
                    v_layout(n, k, 2)
                };
                let mine = data(seed(case, rank, 0), counts[rank as usize]);
                let mut send = sk.alloc(counts[rank as usize]);
                sk.place(&mut send, 0, &mine);
                let mut recv = rk.alloc(total);
                let mut refb = recv.clone();
                for i in 0..n as usize {
                    rk.place(
                        &mut refb,
                        displs[i],
                        &data(seed(case, i as i32, 0), counts[i]),
                    );
                }
                if in_place {
                    rk.place(&mut recv, displs[rank as usize], &mine);
                }
                let rc: Vec<usize> = counts.iter().map(|&c| rk.count(c)).collect();
                let rd: Vec<isize> = displs.iter().map(|&d| rk.count(d) as isize).collect();
                let sb = if in_place {
                    None
                } else {
                    Some(sk.send(&send, counts[rank as usize]))
                };
                let (rb, comm) = (rk.recv(&mut recv, total), &cx.comm);
                finish(
                    case % 2 == 0,
                    both!(
                        sc,
                        mv::allgatherv(sb, rb, &rc, &rd, comm),
                        mv::iallgatherv(sc, sb, rb, &rc, &rd, comm)
                    ),
                );
                cx.expect("allgatherv", &recv, &refb);
            }
        }
    }
}

fn run_alltoall(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for sk in kinds() {
        for rk in kinds() {
            for units in cx.counts(sk.per != rk.per) {
                for in_place in [false, true] {
                    let case = cx.next();
                    let mut send = sk.alloc(units * n as usize);
                    let mut recv = rk.alloc(units * n as usize);
                    let mut refb = recv.clone();
                    for j in 0..n {
                        let out = data(seed(case, rank, j), units);
                        if in_place {
                            rk.place(&mut recv, j as usize * units, &out);
                        } else {
                            sk.place(&mut send, j as usize * units, &out);
                        }
                        rk.place(
                            &mut refb,
                            j as usize * units,
                            &data(seed(case, j, rank), units),
                        );
                    }
                    let sb = if in_place {
                        None
                    } else {
                        Some(sk.send(&send, units * n as usize))
                    };
                    let rb = rk.recv(&mut recv, units * n as usize);
                    let (comm, scn, rc) = (&cx.comm, sk.count(units), rk.count(units));
                    finish(
                        case % 2 == 0,
                        both!(
                            sc,
                            mv::alltoall(sb, scn, rb, rc, comm),
                            mv::ialltoall(sc, sb, scn, rb, rc, comm)
                        ),
                    );
                    cx.expect("alltoall", &recv, &refb);
                }
            }
        }
    }
}

/// Units rank `i` sends rank `j` in the alltoallv/w cases (symmetric, as MPI_IN_PLACE needs).
fn a2a_units(i: i32, j: i32, k: usize) -> usize {
    if k == 0 {
        ((i + j) % 2) as usize
    } else {
        k + ((i + j) % 3) as usize
    }
}

/// Unit displacements of per-peer blocks: reverse order when `rev`, one-unit gaps.
fn a2a_layout(counts: &[usize], rev: bool) -> (Vec<usize>, usize) {
    let mut d = vec![0; counts.len()];
    let mut at = 0;
    let order: Vec<usize> = if rev {
        (0..counts.len()).rev().collect()
    } else {
        (0..counts.len()).collect()
    };
    for i in order {
        d[i] = at;
        at += counts[i] + 1;
    }
    (d, at)
}

fn run_alltoallv(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    for (sk, rk) in [(Ty::int(), Ty::vec()), (Ty::vec(), Ty::int())] {
        for k in cx.counts(sk.per == 1) {
            for in_place in [false, true] {
                let case = cx.next();
                let sc: Vec<usize> = (0..n).map(|j| a2a_units(rank, j, k)).collect();
                let rc: Vec<usize> = (0..n).map(|i| a2a_units(i, rank, k)).collect();
                let (sd, stot) = a2a_layout(&sc, true);
                let (rd, rtot) = a2a_layout(&rc, false);
                let mut send = sk.alloc(stot);
                let mut recv = rk.alloc(rtot);
                let mut refb = recv.clone();
                for j in 0..n as usize {
                    let out = data(seed(case, rank, j as i32), sc[j]);
                    if in_place {
                        rk.place(&mut recv, rd[j], &out);
                    } else {
                        sk.place(&mut send, sd[j], &out);
                    }
                    rk.place(&mut refb, rd[j], &data(seed(case, j as i32, rank), rc[j]));
                }
                let scn: Vec<usize> = sc.iter().map(|&c| sk.count(c)).collect();
                let sdn: Vec<isize> = sd.iter().map(|&d| sk.count(d) as isize).collect();
                let rcn: Vec<usize> = rc.iter().map(|&c| rk.count(c)).collect();
                let rdn: Vec<isize> = rd.iter().map(|&d| rk.count(d) as isize).collect();
                let sb = if in_place {
                    None
                } else {
                    Some(sk.send(&send, stot))
                };
                let (rb, comm) = (rk.recv(&mut recv, rtot), &cx.comm);
                let (s_b, r_b) = (
                    || Blocks {
                        counts: &scn,
                        displs: &sdn,
                    },
                    || Blocks {
                        counts: &rcn,
                        displs: &rdn,
                    },
                );
                finish(
                    case % 2 == 0,
                    both!(
                        sc,
                        mv::alltoallv(sb, s_b(), rb, r_b(), comm),
                        mv::ialltoallv(sc, sb, s_b(), rb, r_b(), comm)
                    ),
                );
                cx.expect("alltoallv", &recv, &refb);
            }
        }
    }
}

fn run_alltoallw(cx: &mut Ctx) {
    let (rank, n) = (cx.rank, cx.n);
    // Every block of both buffers has the same extent per unit (32 bytes: the
    // vector's extent, and 8 ints' worth of room for the int runs).
    const SLOT: usize = 32;
    for k in cx.counts(true) {
        for in_place in [false, true] {
            let case = cx.next();
            let ty = |a: i32, b: i32| {
                if (a + b + case as i32) % 2 == 0 {
                    Ty::vec()
                } else {
                    Ty::int()
                }
            };
            let sc: Vec<usize> = (0..n).map(|j| a2a_units(rank, j, k)).collect();
            let rc: Vec<usize> = (0..n).map(|i| a2a_units(i, rank, k)).collect();
            let (sd, stot) = a2a_layout(&sc, true);
            let (rd, rtot) = a2a_layout(&rc, false);
            let st: Vec<Ty> = (0..n).map(|j| ty(rank, j)).collect();
            // In place, the receive types describe the data sent as well.
            let rt: Vec<Ty> = (0..n)
                .map(|i| {
                    if in_place {
                        ty(rank, i)
                    } else {
                        ty(rank + 1, i)
                    }
                })
                .collect();
            let mut send = vec![SENTINEL; stot * SLOT + 8];
            let mut recv = vec![SENTINEL; rtot * SLOT + 8];
            let mut refb = recv.clone();
            // Places `units` units of `t` at byte offset `at` of `buf`.
            let put = |t: &Ty, buf: &mut [u8], at: usize, p: &[u8]| t.place(&mut buf[at..], 0, p);
            for j in 0..n as usize {
                let out = data(seed(case, rank, j as i32), sc[j]);
                if in_place {
                    put(&rt[j], &mut recv, rd[j] * SLOT, &out);
                } else {
                    put(&st[j], &mut send, sd[j] * SLOT, &out);
                }
                put(
                    &rt[j],
                    &mut refb,
                    rd[j] * SLOT,
                    &data(seed(case, j as i32, rank), rc[j]),
                );
            }
            let scn: Vec<usize> = (0..n as usize).map(|j| st[j].count(sc[j])).collect();
            let sdb: Vec<isize> = sd.iter().map(|&d| (d * SLOT) as isize).collect();
            let rcn: Vec<usize> = (0..n as usize).map(|i| rt[i].count(rc[i])).collect();
            let rdb: Vec<isize> = rd.iter().map(|&d| (d * SLOT) as isize).collect();
            let std: Vec<Datatype> = st.iter().map(|t| t.dt.clone()).collect();
            let rtd: Vec<Datatype> = rt.iter().map(|t| t.dt.clone()).collect();
            let sb = if in_place {
                None
            } else {
                Some(SendBuf::bytes(&send))
            };
            let (rb, comm) = (RecvBuf::bytes(&mut recv), &cx.comm);
            let s_b = || WBlocks {
                counts: &scn,
                displs: &sdb,
                types: &std,
            };
            let r_b = || WBlocks {
                counts: &rcn,
                displs: &rdb,
                types: &rtd,
            };
            finish(
                case % 2 == 0,
                both!(
                    sc,
                    mv::alltoallw(sb, s_b(), rb, r_b(), comm),
                    mv::ialltoallw(sc, sb, s_b(), rb, r_b(), comm)
                ),
            );
            cx.expect("alltoallw", &recv, &refb);
        }
    }
}

/// Blocks that reach outside their descriptors: every rank's own check fails before
/// any communication (so no rank waits for another), with the class the call names.
fn run_errors(cx: &mut Ctx) {
    use oxmpi_core::ErrorClass;
    let (rank, n, comm) = (cx.rank, cx.n as usize, &cx.comm);
    let int = Ty::int();
    let expect = |what: &str, r: Result<()>, class: ErrorClass| {
        let e = r.expect_err(what);
        check!(
            rank,
            e.class == class,
            "{what}: {:?} is not {class:?}: {}",
            e.class,
            e.message
        );
    };
    let send = vec![0u8; int.bytes(1)];
    let mut recv = vec![0u8; int.bytes(n)];
    // allgather: n blocks of 2 units do not fit in n units.
    expect(
        "allgather",
        mv::allgather(
            Some(int.send(&send, 1)),
            int.recv(&mut recv, n),
            int.count(2),
            comm,
        ),
        ErrorClass::Buffer,
    );
    // allgatherv: the last block one element past the end.
    let counts = vec![int.count(1); n];
    let mut displs: Vec<isize> = (0..n).map(|i| int.count(i) as isize).collect();
    displs[n - 1] += 1;
    let r = mv::allgatherv(
        Some(int.send(&send, 1)),
        int.recv(&mut recv, n),
        &counts,
        &displs,
        comm,
    );
    expect("allgatherv past the end", r, ErrorClass::Buffer);
    displs[n - 1] = -1;
    let r = mv::allgatherv(
        Some(int.send(&send, 1)),
        int.recv(&mut recv, n),
        &counts,
        &displs,
        comm,
    );
    expect("allgatherv negative displacement", r, ErrorClass::Buffer);
    // Arrays shorter than the group.
    let r = mv::allgatherv(
        Some(int.send(&send, 1)),
        int.recv(&mut recv, n),
        &counts[..n - 1],
        &displs,
        comm,
    );
    expect("allgatherv short counts", r, ErrorClass::Arg);
    // alltoall: the send buffer holds one block, not n (n > 1), or too few for 2 units each.
    let big = vec![0u8; int.bytes(n)];
    let r = mv::alltoall(
        Some(int.send(&big, n)),
        int.count(2),
        int.recv(&mut recv, n),
        int.count(1),
        comm,
    );
    expect("alltoall send", r, ErrorClass::Buffer);
    // alltoallw: a datatype with gaps has no byte span.
    let v = Ty::vec();
    let w = |t: &Ty| vec![t.dt.clone(); n];
    let (zc, zd) = (vec![0usize; n], vec![0isize; n]);
    let (vt, it) = (w(&v), w(&int));
    let r = mv::alltoallw(
        Some(SendBuf::bytes(&big)),
        WBlocks {
            counts: &zc,
            displs: &zd,
            types: &it,
        },
        v.recv(&mut recv, 0),
        WBlocks {
            counts: &zc,
            displs: &zd,
            types: &vt,
        },
        comm,
    );
    expect("alltoallw gaps", r, ErrorClass::Buffer);
    // reduce_scatter_block: the input holds n * 1 elements, not n * 2.
    let op = oxmpi_core::op::Op::predefined(oxmpi_core::op::PredefinedOp::Sum);
    let r = mv::reduce_scatter_block(
        Some(int.send(&big, n)),
        int.recv(&mut recv, n),
        int.count(2),
        &op,
        comm,
    );
    expect("reduce_scatter_block", r, ErrorClass::Buffer);
    // The root's receive buffer is required at the root (each rank is its own root
    // on its self communicator here).
    let me = oxmpi_core::comm::create::split(comm, Some(rank), 0)
        .unwrap()
        .unwrap();
    expect(
        "gather without a receive buffer",
        mv::gather(Some(int.send(&send, 1)), None, int.count(1), 0, &me),
        ErrorClass::Buffer,
    );
    expect(
        "scatter without a send buffer",
        mv::scatter(None, int.count(1), Some(int.recv(&mut recv, 1)), 0, &me),
        ErrorClass::Buffer,
    );
    let r = mv::gatherv(
        Some(int.send(&send, 1)),
        Some(int.recv(&mut recv, 1)),
        &[int.count(1)],
        &[1],
        0,
        &me,
    );
    expect("gatherv past the end at the root", r, ErrorClass::Buffer);
    cx.case += 10;
}

/// A non-blocking collective that fails while one of its receives is still
/// posted (3 ranks): rank 1 sends the root two ints where one is expected
/// (MPI_ERR_TRUNCATE), rank 2 sends only after the root's wait returned. The
/// failed request must not leave the receive for rank 2 behind: the root
/// refills the buffer, lets rank 2 send, and finds the buffer untouched.
fn run_failed(cx: &mut Ctx) {
    use oxmpi_core::coll::barrier::barrier;
    use oxmpi_core::pt2pt::SendMode;
    use oxmpi_core::ErrorClass;
    cx.next();
    let (rank, comm) = (cx.rank, &cx.comm);
    check!(
        rank,
        cx.n == 3,
        "the failed group runs on 3 ranks, not {}",
        cx.n
    );
    let int = Datatype::predefined(Primitive::Int);
    let mine = [0x5A5A_5A5Au32 as i32; 2];
    let count = if rank == 1 { 2 } else { 1 };
    let sb = SendBuf::typed(buf::as_bytes(&mine), count, &int).expect("send buffer");
    if rank == 2 {
        // Only once the root's request has failed.
        pt2pt::recv(comm, &mut [0u8; 1], 0, 7).expect("go");
    }
    let mut recv = vec![SENTINEL; 3 * 4];
    let outcome = buf::scope(|sc| {
        let rb = (rank == 0).then(|| RecvBuf::typed(&mut recv, 3, &int).expect("receive buffer"));
        let mut r = mv::igatherv(sc, Some(sb), rb, &[1, 1, 1], &[0, 1, 2], 0, comm)
            .expect("igatherv starts");
        pt2pt::wait(&mut r).map(|_| ())
    });
    if rank == 0 {
        let e = outcome.expect_err("a truncated block fails the gatherv");
        check!(
            rank,
            e.class == ErrorClass::Truncate,
            "the failed igatherv: {:?}, not MPI_ERR_TRUNCATE: {}",
            e.class,
            e.message
        );
        recv.fill(SENTINEL);
        pt2pt::send(comm, &[1], 2, 7, SendMode::Standard).expect("go");
    } else {
        outcome.expect("a non-root's igatherv");
    }
    // Rank 2's block reaches the root before this barrier completes there.
    barrier(comm).expect("barrier");
    if rank == 0 {
        cx.expect("the buffer of the failed igatherv", &recv, &[SENTINEL; 12]);
    }
    run_freed(cx);
}

/// MPI_Request_free on an igatherv still in flight (the root's blocks of a
/// vector type land in the schedule's temporaries and are unpacked at the end;
/// the other ranks send only after the free): the run goes on, the buffer
/// scope's end waits for it, and every block arrives, gaps untouched.
fn run_freed(cx: &mut Ctx) {
    let case = cx.next();
    let (rank, comm) = (cx.rank, &cx.comm);
    let ty = Ty::vec();
    let mut send = ty.alloc(1);
    ty.place(&mut send, 0, &data(seed(case, rank, 0), 1));
    let mut recv = ty.alloc(3);
    if rank != 0 {
        pt2pt::recv(comm, &mut [0u8; 1], 0, 8).expect("go");
    }
    buf::scope(|sc| {
        let rb = (rank == 0).then(|| ty.recv(&mut recv, 3));
        let (c, d) = ([ty.count(1); 3], [0, 1, 2]);
        let mut r = mv::igatherv(sc, Some(ty.send(&send, 1)), rb, &c, &d, 0, comm)
            .expect("igatherv starts");
        pt2pt::request_free(&mut r).expect("MPI_Request_free");
        if rank == 0 {
            for peer in 1..3 {
                pt2pt::send(comm, &[1], peer, 8, oxmpi_core::pt2pt::SendMode::Standard)
                    .expect("go");
            }
        }
    });
    if rank == 0 {
        let mut want = ty.alloc(3);
        for i in 0..3 {
            ty.place(&mut want, i, &data(seed(case, i as i32, 0), 1));
        }
        cx.expect("the blocks of the freed igatherv", &recv, &want);
    }
}
