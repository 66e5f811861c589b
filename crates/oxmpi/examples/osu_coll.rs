//! OSU-style collective latency (`osu_bcast`, `osu_allreduce`, `osu_allgather`,
//! `osu_alltoall`, `osu_barrier` of the OSU micro-benchmarks) in one program.
//!
//! `mpiexec -n 4 target/release/examples/osu_coll bcast|allreduce|allgather|alltoall|barrier
//!  [MAX_BYTES [LOOP [LOOP_LARGE]]]`
//!
//! Methodology (as OSU). Sizes: 8, 32, 128, ... (powers of 4 from 8 B) up to MAX_BYTES
//! (default 4 MiB), plus MAX_BYTES itself if it is not one of them. For each size: a
//! barrier, then `skip + loop` times { t0 = time(); COLLECTIVE; timer += time() - t0
//! (after the `skip` warmup calls); barrier }. Each rank's latency = timer / loop; min,
//! max and sum are reduced to rank 0; "Avg Latency" = sum / nprocs.
//! `loop`/`skip` = LOOP/max(1, LOOP/5) up to 8 KiB, LOOP_LARGE/max(1, LOOP_LARGE/10) above; OSU's
//! defaults 1000/200 and 100/10 are the defaults here. Barrier (`osu_barrier`): no size,
//! no barrier between iterations; printed as size 0.
//!
//! Sizes are bytes per rank, as OSU's: bcast and allreduce move SIZE bytes (allreduce:
//! SIZE/4 `f32`, sum), allgather SIZE bytes from every rank, alltoall SIZE bytes per pair.
//!
//! After the timed loop, one more (untimed) call runs with rank-specific data and its
//! result is checked; a wrong result prints "VALIDATION FAILED" to stderr and makes the
//! program exit with status 3 after all sizes (the timings are still printed).
//!
//! Output: '#' header lines, then `size avg min max iterations` rows from rank 0.
//! The same program in C MPI is `bench/c/osu_coll.c`.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;

const LARGE_MESSAGE_SIZE: usize = 8192;
const MIN_SIZE: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Bcast,
    Allreduce,
    Allgather,
    Alltoall,
    Barrier,
}

const NAMES: [(&str, Op); 5] = [
    ("bcast", Op::Bcast),
    ("allreduce", Op::Allreduce),
    ("allgather", Op::Allgather),
    ("alltoall", Op::Alltoall),
    ("barrier", Op::Barrier),
];

fn pat(a: usize, b: usize, j: usize) -> u8 {
    ((a * 7 + b * 13 + j) & 0xff) as u8
}

struct Bench<'a, C: CommunicatorCollectives> {
    world: &'a C,
    op: Op,
    s_buf: Vec<u8>,
    r_buf: Vec<u8>,
    s_f32: Vec<f32>,
    r_f32: Vec<f32>,
}

impl<C: CommunicatorCollectives> Bench<'_, C> {
    fn run(&mut self, size: usize) {
        let n = self.world.size() as usize;
        match self.op {
            Op::Bcast => self
                .world
                .process_at_rank(0)
                .broadcast_into(&mut self.s_buf[..size]),
            Op::Allreduce => {
                let c = size / 4;
                self.world.all_reduce_into(
                    &self.s_f32[..c],
                    &mut self.r_f32[..c],
                    SystemOperation::sum(),
                )
            }
            Op::Allgather => self
                .world
                .all_gather_into(&self.s_buf[..size], &mut self.r_buf[..size * n]),
            Op::Alltoall => self
                .world
                .all_to_all_into(&self.s_buf[..size * n], &mut self.r_buf[..size * n]),
            Op::Barrier => self.world.barrier(),
        }
    }

    /// One untimed call with rank-specific data; returns the number of wrong elements here.
    fn validate(&mut self, size: usize) -> u64 {
        let (rank, n) = (self.world.rank() as usize, self.world.size() as usize);
        let mut bad = 0u64;
        match self.op {
            Op::Bcast => {
                for (j, x) in self.s_buf[..size].iter_mut().enumerate() {
                    *x = if rank == 0 { pat(1, size, j) } else { 0xee };
                }
                self.run(size);
                bad += self.s_buf[..size]
                    .iter()
                    .enumerate()
                    .filter(|&(j, &x)| x != pat(1, size, j))
                    .count() as u64;
            }
            Op::Allreduce => {
                let c = size / 4;
                for j in 0..c {
                    self.s_f32[j] = (rank + j % 11) as f32;
                    self.r_f32[j] = -1.0;
                }
                self.run(size);
                let base = n * (n - 1) / 2;
                bad += (0..c)
                    .filter(|&j| self.r_f32[j] != (base + n * (j % 11)) as f32)
                    .count() as u64;
            }
            Op::Allgather => {
                for (j, x) in self.s_buf[..size].iter_mut().enumerate() {
                    *x = pat(rank, 0, j);
                }
                self.r_buf[..size * n].fill(0xee);
                self.run(size);
                for p in 0..n {
                    for j in 0..size {
                        bad += (self.r_buf[p * size + j] != pat(p, 0, j)) as u64;
                    }
                }
            }
            Op::Alltoall => {
                for p in 0..n {
                    for j in 0..size {
                        self.s_buf[p * size + j] = pat(rank, p, j);
                    }
                }
                self.r_buf[..size * n].fill(0xee);
                self.run(size);
                for p in 0..n {
                    for j in 0..size {
                        bad += (self.r_buf[p * size + j] != pat(p, rank, j)) as u64;
                    }
                }
            }
            Op::Barrier => self.run(size),
        }
        bad
    }
}

fn arg(i: usize, default: usize) -> usize {
    match std::env::args().nth(i) {
        None => default,
        Some(s) => match s.parse::<usize>() {
            Ok(v) if v >= 1 => v,
            _ => {
                eprintln!("osu_coll: argument {i} ({s}) must be a positive number");
                std::process::exit(2)
            }
        },
    }
}

fn main() {
    let op = std::env::args()
        .nth(1)
        .and_then(|a| NAMES.iter().find(|(n, _)| *n == a).map(|&(_, o)| o));
    let Some(op) = op else {
        eprintln!("usage: osu_coll bcast|allreduce|allgather|alltoall|barrier [MAX_BYTES [LOOP [LOOP_LARGE]]]");
        std::process::exit(2)
    };
    let name = NAMES.iter().find(|(_, o)| *o == op).unwrap().0;
    let max_size = arg(2, 4 << 20).max(MIN_SIZE);
    let loop_small = arg(3, 1000);
    let loop_large = arg(4, 100);

    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (rank, nprocs) = (world.rank(), world.size());
    let n = nprocs as usize;
    let root = world.process_at_rank(0);

    // Buffers large enough for the biggest size; touched (non-zero), like OSU's memset,
    // so no page is faulted in while timing.
    let bytes = match op {
        Op::Barrier | Op::Allreduce => 8,
        Op::Alltoall => max_size * n,
        _ => max_size,
    };
    let r_bytes = match op {
        Op::Allgather | Op::Alltoall => max_size * n,
        _ => 8,
    };
    let floats = if op == Op::Allreduce { max_size / 4 } else { 2 };
    let mut b = Bench {
        world: &world,
        op,
        s_buf: vec![1u8; bytes],
        r_buf: vec![0u8; r_bytes],
        s_f32: vec![1.0f32; floats],
        r_f32: vec![0.0f32; floats],
    };

    if rank == 0 {
        println!("# OSU MPI {name} Latency Test (oxmpi bench, Rust API), {nprocs} processes");
        println!(
            "{:<10}{:>18}{:>18}{:>18}{:>12}",
            "# Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations"
        );
    }

    let mut failures = 0;
    let mut size = if op == Op::Barrier { 0 } else { MIN_SIZE };
    loop {
        let (iters, skip) = if size > LARGE_MESSAGE_SIZE {
            (loop_large, (loop_large / 10).max(1))
        } else {
            (loop_small, (loop_small / 5).max(1))
        };
        let mut timer = 0.0;

        world.barrier();
        for i in 0..iters + skip {
            let t0 = oxmpi::environment::time();
            b.run(size);
            let t1 = oxmpi::environment::time();
            if i >= skip {
                timer += t1 - t0;
            }
            if op != Op::Barrier {
                world.barrier();
            }
        }
        let lat = timer * 1e6 / iters as f64;
        let (mut min_t, mut max_t, mut sum_t) = (0.0f64, 0.0f64, 0.0f64);
        if rank == 0 {
            root.reduce_into_root(&lat, &mut min_t, SystemOperation::min());
            root.reduce_into_root(&lat, &mut max_t, SystemOperation::max());
            root.reduce_into_root(&lat, &mut sum_t, SystemOperation::sum());
        } else {
            root.reduce_into(&lat, SystemOperation::min());
            root.reduce_into(&lat, SystemOperation::max());
            root.reduce_into(&lat, SystemOperation::sum());
        }

        let bad = b.validate(size);
        let mut all_bad = 0u64;
        if rank == 0 {
            root.reduce_into_root(&bad, &mut all_bad, SystemOperation::sum());
        } else {
            root.reduce_into(&bad, SystemOperation::sum());
        }
        b.s_buf.fill(1); // back to the timed loop's contents
        b.s_f32.fill(1.0);

        if rank == 0 {
            println!(
                "{:<10}{:>18.2}{:>18.2}{:>18.2}{:>12}",
                size,
                sum_t / nprocs as f64,
                min_t,
                max_t,
                iters
            );
            if all_bad != 0 {
                eprintln!(
                    "osu_coll: VALIDATION FAILED: {name}, {size} B, {nprocs} ranks: {all_bad} wrong elements"
                );
                failures += 1;
            }
        }
        if op == Op::Barrier || size == max_size {
            break;
        }
        size = (size * 4).min(max_size);
    }
    drop(b);
    drop(universe);
    if failures > 0 {
        std::process::exit(3);
    }
}
