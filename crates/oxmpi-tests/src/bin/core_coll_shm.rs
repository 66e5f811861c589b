//! Rank program for the shared-memory collectives (crates/oxmpi-core/src/coll/shm):
//! run with `OXMPI_<OP>_ALGORITHM=shm` (tests/core_coll_shm.rs) or without.
//! Modes (argv[1]):
//! * `bitident`: allreduce of doubles whose sum depends on the order of the
//!   additions; every rank must get the same bits (small, medium and multi-chunk
//!   counts, in place and not).
//! * `noncomm`: a non-commutative user op (2x2 matrix products mod p) through
//!   reduce (every root) and allreduce, with counts spanning several chunks.
//! * `barrier`: a barrier lets nobody out before the last rank came in.
//! * `comms`: hundreds of communicators (dup, split) each with collectives, then
//!   freed: no area, file descriptor or context id is leaked; more live
//!   communicators with areas than the per-process cap still work.
//! * `mixed`: non-blocking collectives and a rendezvous send outstanding while
//!   blocking collectives run on the same communicator.
//! * `uses_shm`: reports whether the world communicator got an area.
//! * `die`: the last rank kills itself while the others wait in a barrier.
//! * `colocated`: every rank moves itself onto one processor after start-up (the
//!   scheduler's choice that made every hand-off wait out a spin): barriers,
//!   allreduces through the area and through rendezvous schedules, and
//!   ping-pongs keep their results and end.

use oxmpi_core::buf::{self, RecvBuf, SendBuf};
use oxmpi_core::coll::{api, api_move, barrier};
use oxmpi_core::comm::{context, create};
use oxmpi_core::datatype::{Datatype, Primitive};
use oxmpi_core::op::{Op, PredefinedOp};
use oxmpi_core::pt2pt::{self, SendMode};
use oxmpi_core::{runtime, Comm};
use oxmpi_tests::{check, Rng};

const P: i64 = 1_000_003;

/// Areas mapped by this process (the memfds show in our maps).
fn areas() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("oxmpi-coll"))
        .count()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn allreduce_f64(comm: &Comm, input: Option<&[f64]>, out: &mut [f64]) {
    let op = Op::predefined(PredefinedOp::Sum);
    api::allreduce(input.map(SendBuf::slice), RecvBuf::slice(out), &op, comm).unwrap();
}

fn bcast_bytes(comm: &Comm, buf: &mut [u8], root: i32) {
    api::bcast(RecvBuf::slice(buf), root, comm).unwrap();
}

fn bitident(world: &Comm) {
    let (rank, n) = (world.rank(), world.size() as usize);
    for (case, &count) in [1usize, 3, 100, 600, 5000, 20_000].iter().enumerate() {
        for in_place in [false, true] {
            let mut r = Rng::new(77 + rank as u64 * 1000 + case as u64);
            // Magnitudes from 1e-8 to 1e8: the sum's bits depend on the order.
            let input: Vec<f64> = (0..count)
                .map(|_| (r.below(2001) as f64 - 1000.0) * 10f64.powi(r.below(17) as i32 - 8))
                .collect();
            let mut out = if in_place {
                input.clone()
            } else {
                vec![0.0; count]
            };
            allreduce_f64(world, (!in_place).then_some(&input[..]), &mut out);
            let mine: Vec<u8> = out.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect();
            let mut all = vec![0u8; mine.len() * n];
            api_move::allgather(
                Some(SendBuf::bytes(&mine)),
                RecvBuf::bytes(&mut all),
                mine.len(),
                world,
            )
            .unwrap();
            for j in 0..n {
                check!(
                    rank,
                    all[j * mine.len()..(j + 1) * mine.len()] == mine[..],
                    "count {count}: rank {j}'s allreduce result differs from ours"
                );
            }
            // Close to the exact sum (any order).
            let mut exact = vec![0.0f64; count];
            for j in 0..n {
                let mut r = Rng::new(77 + j as u64 * 1000 + case as u64);
                for e in exact.iter_mut() {
                    *e += (r.below(2001) as f64 - 1000.0) * 10f64.powi(r.below(17) as i32 - 8);
                }
            }
            for (i, (a, b)) in out.iter().zip(&exact).enumerate() {
                check!(
                    rank,
                    (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                    "count {count} element {i}: {a} vs {b}"
                );
            }
        }
    }
    println!("bitident: ok");
}

fn matrix_op() -> Op {
    // inout = in * inout (2x2 matrices mod P; contiguous 4 x i64 elements).
    Op::user_packed(
        |inp: &[u8], io: &mut [u8], _count: usize, _dt: &Datatype| {
            let words = |b: &[u8]| -> Vec<i64> {
                b.chunks_exact(8)
                    .map(|w| i64::from_ne_bytes(w.try_into().unwrap()))
                    .collect()
            };
            for (x, y) in inp.chunks_exact(32).zip(io.chunks_exact_mut(32)) {
                let (a, b) = (words(x), words(y));
                let c = [
                    (a[0] * b[0] + a[1] * b[2]) % P,
                    (a[0] * b[1] + a[1] * b[3]) % P,
                    (a[2] * b[0] + a[3] * b[2]) % P,
                    (a[2] * b[1] + a[3] * b[3]) % P,
                ];
                for (k, v) in c.iter().enumerate() {
                    y[8 * k..8 * k + 8].copy_from_slice(&v.to_ne_bytes());
                }
            }
        },
        false,
    )
}

fn matrices(rank: usize, count: usize) -> Vec<i64> {
    let mut r = Rng::new(5 + rank as u64);
    (0..4 * count).map(|_| r.below(P as u64) as i64).collect()
}

fn mul(a: &[i64], b: &[i64]) -> [i64; 4] {
    [
        (a[0] * b[0] + a[1] * b[2]) % P,
        (a[0] * b[1] + a[1] * b[3]) % P,
        (a[2] * b[0] + a[3] * b[2]) % P,
        (a[2] * b[1] + a[3] * b[3]) % P,
    ]
}

fn noncomm(world: &Comm) {
    let (rank, n) = (world.rank(), world.size() as usize);
    let dt = Datatype::contiguous(4, &Datatype::predefined(Primitive::Int64)).unwrap();
    dt.commit();
    let op = matrix_op();
    for count in [1usize, 7, 2048, 2049, 5000] {
        let input = matrices(rank as usize, count);
        let mut expect = matrices(0, count);
        for j in 1..n {
            let m = matrices(j, count);
            for e in 0..count {
                let p = mul(&expect[4 * e..4 * e + 4], &m[4 * e..4 * e + 4]);
                expect[4 * e..4 * e + 4].copy_from_slice(&p);
            }
        }
        let mut out = vec![0i64; 4 * count];
        let (ib, ob) = (
            SendBuf::typed(buf::as_bytes(&input), count, &dt).unwrap(),
            RecvBuf::typed(buf::as_bytes_mut(&mut out), count, &dt).unwrap(),
        );
        api::allreduce(Some(ib), ob, &op, world).unwrap();
        check!(
            rank,
            out == expect,
            "allreduce of {count} matrices is not the rank-order product"
        );
        for root in 0..n as i32 {
            let mut out = if rank == root {
                input.clone()
            } else {
                vec![0i64; 4 * count]
            };
            let send = if rank == root && count % 2 == 1 {
                None
            } else {
                Some(SendBuf::typed(buf::as_bytes(&input), count, &dt).unwrap())
            };
            // In place at the root for odd counts.
            api::reduce(
                send,
                Some(RecvBuf::typed(buf::as_bytes_mut(&mut out), count, &dt).unwrap()),
                &op,
                root,
                world,
            )
            .unwrap();
            if rank == root {
                check!(
                    rank,
                    out == expect,
                    "reduce of {count} matrices to {root} is not the rank-order product"
                );
            }
        }
    }
    small_noncomm(world);
    println!("noncomm: ok");
}

/// inout = in ∘ inout for affine maps x -> a x + b mod P (an element: 2 x i64,
/// 16 bytes): associative, not commutative. The small chunks of a crowded
/// host's allreduce (one fold by the last arrival, or, with the gather
/// variant off, one block per rank) must give the rank-order composition
/// a0 ∘ a1 ∘ ... on every rank, as the matrices above do for larger ones.
fn small_noncomm(world: &Comm) {
    let (rank, n) = (world.rank(), world.size() as usize);
    let dt = Datatype::contiguous(2, &Datatype::predefined(Primitive::Int64)).unwrap();
    dt.commit();
    let compose = |f: &[i64], g: &[i64]| [(f[0] * g[0]) % P, (f[0] * g[1] + f[1]) % P];
    let op = Op::user_packed(
        move |inp: &[u8], io: &mut [u8], _count: usize, _dt: &Datatype| {
            let word =
                |b: &[u8], k: usize| i64::from_ne_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
            for (x, y) in inp.chunks_exact(16).zip(io.chunks_exact_mut(16)) {
                let c = compose(&[word(x, 0), word(x, 1)], &[word(y, 0), word(y, 1)]);
                y[..8].copy_from_slice(&c[0].to_ne_bytes());
                y[8..].copy_from_slice(&c[1].to_ne_bytes());
            }
        },
        false,
    );
    let maps = |j: usize, count: usize| -> Vec<i64> {
        let mut r = Rng::new(31 + j as u64);
        (0..2 * count)
            .map(|_| 1 + r.below(P as u64 - 1) as i64)
            .collect()
    };
    for count in [1usize, 2] {
        for in_place in [false, true] {
            let mut expect = maps(0, count);
            for j in 1..n {
                let m = maps(j, count);
                for e in 0..count {
                    let c = compose(&expect[2 * e..2 * e + 2], &m[2 * e..2 * e + 2]);
                    expect[2 * e..2 * e + 2].copy_from_slice(&c);
                }
            }
            let input = maps(rank as usize, count);
            let mut out = if in_place {
                input.clone()
            } else {
                vec![0i64; 2 * count]
            };
            let send =
                (!in_place).then(|| SendBuf::typed(buf::as_bytes(&input), count, &dt).unwrap());
            let recv = RecvBuf::typed(buf::as_bytes_mut(&mut out), count, &dt).unwrap();
            api::allreduce(send, recv, &op, world).unwrap();
            check!(
                rank,
                out == expect,
                "allreduce of {count} affine maps (in place: {in_place}) is not the rank-order composition"
            );
        }
    }
}

fn barrier_order(world: &Comm) {
    let (rank, n) = (world.rank(), world.size());
    for round in 0..(3 * n) {
        let late = round % n;
        if rank == late {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let entered = runtime::wtime();
        barrier::barrier(world).unwrap();
        let left = runtime::wtime();
        let mut t = entered.to_bits().to_le_bytes();
        bcast_bytes(world, &mut t, late);
        let late_entered = f64::from_bits(u64::from_le_bytes(t));
        check!(rank, left >= late_entered, "round {round}: left the barrier at {left} before rank {late} entered at {late_entered}");
    }
    println!("barrier: ok");
}

fn collectives_on(c: &Comm, salt: u64) {
    let (rank, n) = (c.rank(), c.size() as usize);
    barrier::barrier(c).unwrap();
    let mut sum = [0.0f64];
    allreduce_f64(c, Some(&[rank as f64 + salt as f64]), &mut sum);
    let want = (0..n).map(|r| r as f64 + salt as f64).sum::<f64>();
    check!(
        rank,
        sum[0] == want,
        "allreduce on a new communicator: {} vs {want}",
        sum[0]
    );
    let mut b = [0u8; 100];
    if rank == 0 {
        Rng::fill(salt, &mut b);
    }
    bcast_bytes(c, &mut b, 0);
    let mut want = [0u8; 100];
    Rng::fill(salt, &mut want);
    check!(rank, b == want, "bcast on a new communicator");
}

fn comms(world: &Comm) {
    let rank = world.rank();
    collectives_on(world, 1);
    let (fds, maps, ctx) = (open_fds(), areas(), context::in_use());
    for i in 0..300u64 {
        let d = create::dup(world).unwrap();
        collectives_on(&d, i);
        drop(d);
        let s = create::split(world, Some(rank % 2), -rank)
            .unwrap()
            .unwrap();
        collectives_on(&s, i + 1000);
        drop(s);
    }
    check!(
        rank,
        open_fds() == fds,
        "file descriptors leaked: {fds} -> {}",
        open_fds()
    );
    check!(rank, areas() == maps, "areas leaked: {maps} -> {}", areas());
    check!(rank, context::in_use() == ctx, "context ids leaked");
    // More live communicators with collectives than the per-process cap.
    let live: Vec<Comm> = (0..200).map(|_| create::dup(world).unwrap()).collect();
    for (i, c) in live.iter().enumerate() {
        collectives_on(c, i as u64);
        collectives_on(c, i as u64 + 7);
    }
    check!(
        rank,
        areas() <= oxmpi_core::coll::shm::MAX_AREAS,
        "{} areas mapped",
        areas()
    );
    drop(live);
    check!(
        rank,
        open_fds() == fds,
        "file descriptors leaked: {fds} -> {}",
        open_fds()
    );
    check!(rank, areas() == maps, "areas leaked: {maps} -> {}", areas());
    println!("comms: ok");
}

fn mixed(world: &Comm) {
    let (rank, n) = (world.rank(), world.size());
    let next = (rank + 1) % n;
    let prev = (rank + n - 1) % n;
    for round in 0..20u64 {
        // A rendezvous-sized message to the next rank, received only after the
        // blocking collectives: they must keep the engine going.
        let big: Vec<u8> = (0..1usize << 20)
            .map(|i| (i as u64 * 7 + round + rank as u64) as u8)
            .collect();
        let mut got = vec![0u8; 1 << 20];
        let mut nb = vec![0u8; 4096];
        if rank == 0 {
            Rng::fill(round, &mut nb);
        }
        let input = [rank as f64; 16];
        let mut nsum = [0.0f64; 16];
        let op = Op::predefined(PredefinedOp::Sum);
        let mut sum = [0.0f64; 16];
        let mut b = vec![0u8; 1000];
        buf::scope(|sc| {
            let mut sreq =
                pt2pt::isend(sc, world, SendBuf::bytes(&big), next, 9, SendMode::Standard).unwrap();
            let mut breq = api::ibcast(sc, RecvBuf::slice(&mut nb), 0, world).unwrap();
            let mut bar = barrier::ibarrier(world).unwrap();
            let mut areq = api::iallreduce(
                sc,
                Some(SendBuf::slice(&input)),
                RecvBuf::slice(&mut nsum),
                &op,
                world,
            )
            .unwrap();
            // Blocking collectives in between.
            barrier::barrier(world).unwrap();
            allreduce_f64(world, Some(&input), &mut sum);
            if rank == n - 1 {
                Rng::fill(round + 99, &mut b);
            }
            bcast_bytes(world, &mut b, n - 1);
            pt2pt::recv(world, &mut got, prev, 9).unwrap();
            pt2pt::wait(&mut sreq).unwrap();
            pt2pt::wait(&mut breq).unwrap();
            pt2pt::wait(&mut bar).unwrap();
            pt2pt::wait(&mut areq).unwrap();
        });
        let tot = (0..n).map(|r| r as f64).sum::<f64>();
        check!(
            rank,
            sum.iter().chain(nsum.iter()).all(|&x| x == tot),
            "allreduce sums"
        );
        let mut want = vec![0u8; 4096];
        Rng::fill(round, &mut want);
        check!(rank, nb == want, "ibcast data");
        let mut want = vec![0u8; 1000];
        Rng::fill(round + 99, &mut want);
        check!(rank, b == want, "bcast data");
        check!(
            rank,
            got.iter()
                .enumerate()
                .all(|(i, &x)| x == (i as u64 * 7 + round + prev as u64) as u8),
            "rendezvous data"
        );
    }
    println!("mixed: ok");
}

/// The first processor this process may run on (from `/proc/self/status`).
fn first_allowed_cpu() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim();
    list.split([',', '-']).next()?.parse().ok()
}

fn colocated(world: &Comm) {
    let (rank, n) = (world.rank(), world.size() as usize);
    // All ranks onto one processor with `taskset` (no `unsafe` affinity call in
    // a test program), after start-up: the library still counts a processor per
    // rank, as when the scheduler puts two ranks together on its own.
    if let Some(cpu) = first_allowed_cpu() {
        let moved = std::process::Command::new("taskset")
            .args(["-pc", &cpu.to_string(), &std::process::id().to_string()])
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !moved {
            eprintln!("rank {rank}: taskset unavailable; running unpinned");
        }
    }
    let nn = n as i64;
    for iter in 0..200i64 {
        barrier::barrier(world).unwrap();
        // 8 bytes (the area's fold by every rank): sum of rank + iter.
        let mine = [rank as i64 + iter, 1];
        let mut out = [0i64; 2];
        let op = Op::predefined(PredefinedOp::Sum);
        api::allreduce(
            Some(SendBuf::slice(&mine)),
            RecvBuf::slice(&mut out),
            &op,
            world,
        )
        .unwrap();
        let want = nn * (nn - 1) / 2 + nn * iter;
        check!(
            rank,
            out == [want, nn],
            "8 B allreduce {iter}: {out:?}, want [{want}, {nn}]"
        );
        // 32 KiB and, every 20th time, 512 KiB (the rendezvous schedules on 2 ranks).
        let count = if iter % 20 == 0 { 65_536 } else { 4096 };
        let input: Vec<f64> = (0..count).map(|i| (i % 97) as f64 + rank as f64).collect();
        let mut sum = vec![0.0f64; count];
        allreduce_f64(world, Some(&input), &mut sum);
        for (i, &x) in sum.iter().enumerate() {
            let want = (i % 97) as f64 * n as f64 + (nn * (nn - 1) / 2) as f64;
            check!(
                rank,
                x == want,
                "allreduce of {count} at {i}, iteration {iter}: {x} != {want}"
            );
        }
        // A ping-pong between the first two ranks.
        if n >= 2 && rank < 2 {
            let peer = 1 - rank;
            let mut b = [0u8; 8];
            if rank == 0 {
                pt2pt::send(world, &iter.to_le_bytes(), peer, 9, SendMode::Standard).unwrap();
                pt2pt::recv(world, &mut b, peer, 10).unwrap();
                check!(
                    rank,
                    i64::from_le_bytes(b) == iter + 1,
                    "pong {iter}: {b:?}"
                );
            } else {
                pt2pt::recv(world, &mut b, peer, 9).unwrap();
                let v = i64::from_le_bytes(b) + 1;
                pt2pt::send(world, &v.to_le_bytes(), peer, 10, SendMode::Standard).unwrap();
            }
        }
    }
    println!("colocated: ok");
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    runtime::init(runtime::ThreadLevel::Single).expect("MPI_Init");
    let world = runtime::engine().unwrap().world().clone();
    let rank = world.rank();
    match mode.as_str() {
        "bitident" => bitident(&world),
        "noncomm" => noncomm(&world),
        "barrier" => barrier_order(&world),
        "comms" => comms(&world),
        "mixed" => mixed(&world),
        "colocated" => colocated(&world),
        "die" => {
            // The last rank dies hard while the others wait in shared-memory collectives.
            for _ in 0..4 {
                barrier::barrier(&world).unwrap();
            }
            if rank == world.size() - 1 {
                std::thread::sleep(std::time::Duration::from_millis(200));
                oxmpi_tests::signal(std::process::id(), "KILL");
            }
            barrier::barrier(&world).unwrap();
        }
        "uses_shm" => {
            for _ in 0..4 {
                barrier::barrier(&world).unwrap();
            }
            println!("areas: {}", areas());
        }
        other => {
            eprintln!("unknown mode {other:?}");
            std::process::exit(2);
        }
    }
    let _ = rank;
    runtime::finalize().expect("MPI_Finalize");
}
