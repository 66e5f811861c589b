//! Jacobi iteration for Laplace's equation on an N x N grid, distributed by rows.
//!
//! `mpiexec -n 4 target/release/examples/jacobi [--n N] [--max-iter M] [--print]`
//!
//! * The boundary (rows 0 and N-1, columns 0 and N-1) is fixed at -1. Every interior
//!   point starts at the rank of the process that owns its row.
//! * The N-2 interior rows are split over the ranks in contiguous blocks; when they do
//!   not divide evenly the first ranks get one row more (ranks beyond N-2 get none).
//! * Each step exchanges one ghost row with each neighbour (`send_receive_into`, with
//!   the null process past the ends), replaces every interior point by the mean of its
//!   four neighbours, and sums the squared changes over all ranks (`all_reduce_into`,
//!   sum); `diffnorm` is the square root of that sum. The loop stops when
//!   `diffnorm < 1e-2` or after 100 steps (`--max-iter` changes that cap).
//! * The final grid is gathered on rank 0 (`gather_varcount_into_root`), which repeats
//!   the whole computation serially and checks that both grids are bit-for-bit equal
//!   (each point is computed by the same expression in the same order, so they must be)
//!   and that the step count matches. It exits non-zero on any mismatch.

use oxmpi::collective::SystemOperation;
use oxmpi::datatype::PartitionMut;
use oxmpi::point_to_point::send_receive_into_with_tags;
use oxmpi::traits::*;

const TOLERANCE: f64 = 1.0e-2;
const DEFAULT_MAX_ITERATIONS: usize = 100;
const BOUNDARY: f64 = -1.0;

/// Interior rows owned by each rank: (first global row, number of rows).
fn distribution(n: usize, size: usize) -> Vec<(usize, usize)> {
    let interior = n - 2;
    let (base, extra) = (interior / size, interior % size);
    let mut first = 1;
    (0..size)
        .map(|r| {
            let rows = base + usize::from(r < extra);
            let part = (first, rows);
            first += rows;
            part
        })
        .collect()
}

/// The starting grid (row-major, n x n): -1 on the boundary, the owner's rank inside.
fn initial_grid(n: usize, parts: &[(usize, usize)]) -> Vec<f64> {
    let mut g = vec![BOUNDARY; n * n];
    for (rank, &(first, rows)) in parts.iter().enumerate() {
        for i in first..first + rows {
            for j in 1..n - 1 {
                g[i * n + j] = rank as f64;
            }
        }
    }
    g
}

/// One Jacobi sweep over rows `1..=rows` of `x` (a block of `rows + 2` rows of width
/// `n`, with a ghost or boundary row above and below). Writes `xnew` and returns the
/// local sum of squared changes. Used by both the parallel and the serial code, so the
/// arithmetic is the same expression in the same order.
fn sweep(x: &[f64], xnew: &mut [f64], rows: usize, n: usize) -> f64 {
    let mut diff = 0.0;
    for i in 1..=rows {
        for j in 1..n - 1 {
            let v = (x[(i + 1) * n + j] + x[(i - 1) * n + j] + x[i * n + j + 1] + x[i * n + j - 1])
                / 4.0;
            let d = v - x[i * n + j];
            diff += d * d;
            xnew[i * n + j] = v;
        }
    }
    diff
}

/// The same iteration on one process: returns (grid, iterations, diffnorm). The squared
/// changes are summed per owner block and the block sums added in rank order.
fn serial(n: usize, parts: &[(usize, usize)], max_iterations: usize) -> (Vec<f64>, usize, f64) {
    let mut x = initial_grid(n, parts);
    let mut xnew = x.clone();
    let mut it = 0;
    loop {
        let mut total = 0.0;
        for &(first, rows) in parts {
            if rows == 0 {
                continue;
            }
            let lo = (first - 1) * n;
            let hi = (first + rows + 1) * n;
            let mut block_new = xnew[lo..hi].to_vec();
            total += sweep(&x[lo..hi], &mut block_new, rows, n);
            xnew[lo + n..hi - n].copy_from_slice(&block_new[n..block_new.len() - n]);
        }
        x.copy_from_slice(&xnew);
        it += 1;
        let norm = total.sqrt();
        if norm < TOLERANCE || it >= max_iterations {
            return (x, it, norm);
        }
    }
}

fn usage() -> ! {
    eprintln!("usage: jacobi [--n N] [--max-iter M] [--print]   (N >= 3, M >= 1)");
    std::process::exit(2);
}

fn main() {
    let mut n = 12usize;
    let mut print = false;
    let mut max_iterations = DEFAULT_MAX_ITERATIONS;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--n" | "-n" => {
                n = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--max-iter" => {
                max_iterations = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--print" => print = true,
            _ => usage(),
        }
    }
    if n < 3 || max_iterations == 0 {
        usage();
    }

    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let parts = distribution(n, size);
    let (first, rows) = parts[rank];

    // Local block: ghost/boundary row, `rows` owned rows, ghost/boundary row.
    let init = initial_grid(n, &parts);
    let mut x = if rows > 0 {
        init[(first - 1) * n..(first + rows + 1) * n].to_vec()
    } else {
        Vec::new()
    };
    let mut xnew = x.clone();

    // Neighbours: `down` is rank-1 (the rows numbered just before ours), `up` is rank+1
    // (the rows just after). Ranks with no rows, and the ends, use the null process.
    let down = if rows > 0 && rank > 0 {
        world.process_at_rank(rank as i32 - 1)
    } else {
        world.null_process()
    };
    let up = if rows > 0 && rank + 1 < size && parts[rank + 1].1 > 0 {
        world.process_at_rank(rank as i32 + 1)
    } else {
        world.null_process()
    };

    let mut iterations = 0;
    let mut diffnorm;
    loop {
        let mut local = 0.0;
        if rows > 0 {
            // Our first row goes to `down`; `up`'s first row lands in the ghost row
            // after our last one.
            let (body, ghost_hi) = x.split_at_mut((rows + 1) * n);
            send_receive_into_with_tags(&body[n..2 * n], &down, 1, ghost_hi, &up, 1);
            // Our last row goes to `up`; `down`'s last row lands in the ghost row
            // before our first one.
            let (ghost_lo, body) = x.split_at_mut(n);
            send_receive_into_with_tags(
                &body[(rows - 1) * n..rows * n],
                &up,
                2,
                ghost_lo,
                &down,
                2,
            );

            local = sweep(&x, &mut xnew, rows, n);
            x[n..(rows + 1) * n].copy_from_slice(&xnew[n..(rows + 1) * n]);
        }
        let mut total = 0.0;
        world.all_reduce_into(&local, &mut total, SystemOperation::sum());
        diffnorm = f64::sqrt(total);
        iterations += 1;
        if diffnorm < TOLERANCE || iterations >= max_iterations {
            break;
        }
    }

    // Gather the owned rows into the whole grid on rank 0.
    let mine = if rows > 0 {
        &x[n..(rows + 1) * n]
    } else {
        &x[..0]
    };
    let root = world.process_at_rank(0);
    if rank != 0 {
        root.gather_varcount_into(mine);
        return;
    }
    let counts: Vec<i32> = parts.iter().map(|&(_, r)| (r * n) as i32).collect();
    let displs: Vec<i32> = parts.iter().map(|&(f, _)| (f * n) as i32).collect();
    let mut grid = init.clone();
    {
        let mut part = PartitionMut::new(&mut grid[..], &counts[..], &displs[..]);
        root.gather_varcount_into_root(mine, &mut part);
    }

    let converged = diffnorm < TOLERANCE;
    println!(
        "jacobi: {n}x{n} grid on {size} ranks: {} after {iterations} iterations, diffnorm = {diffnorm:.6e}",
        if converged { "converged" } else { "stopped without converging" }
    );
    if print {
        for row in grid.chunks(n) {
            let line: Vec<String> = row.iter().map(|v| format!("{v:7.4}")).collect();
            println!("{}", line.join(" "));
        }
    }

    let (reference, ref_iterations, ref_norm) = serial(n, &parts, max_iterations);
    let mut bad = 0usize;
    for (k, (a, b)) in grid.iter().zip(&reference).enumerate() {
        if a.to_bits() != b.to_bits() {
            if bad < 5 {
                eprintln!(
                    "jacobi: MISMATCH at ({}, {}): parallel {a:e}, serial {b:e}",
                    k / n,
                    k % n
                );
            }
            bad += 1;
        }
    }
    // The global sum may be added in another order than the serial one: compare the
    // norms to a relative 1e-12, the grids exactly.
    let norm_ok = (diffnorm - ref_norm).abs() <= 1e-12 * ref_norm.abs().max(f64::MIN_POSITIVE);
    if bad > 0 || iterations != ref_iterations || !norm_ok {
        eprintln!(
            "jacobi: WRONG: {bad} grid points differ; iterations {iterations} vs serial {ref_iterations}; diffnorm {diffnorm:e} vs serial {ref_norm:e}"
        );
        world.abort(2);
    }
    println!(
        "jacobi: gathered grid equals the serial computation exactly ({} points)",
        n * n
    );
}
