//! Textbook reduction exercises through the `oxmpi` API, every result checked against a
//! serial computation on the same deterministic data. Any size.
//!
//! 1. Dot product of two distributed vectors (local sums, then `reduce` / `all_reduce`).
//! 2. Matrix-vector product: rank 0 makes the matrix and the vector, broadcasts the
//!    vector, scatters the rows (uneven counts allowed), every rank computes its part of
//!    the result, rank 0 gathers it.
//! 3. The column-distributed variant: each rank holds a slice of the vector and the
//!    matching rows of the matrix, computes partial sums of every result element, and
//!    a sum reduction (to rank 0, and to everyone) finishes the product.
//! 4. MAXLOC: each rank has 30 doubles; for each of the 30 positions find the largest
//!    value and the lowest rank holding it (many ties on purpose).
//! 5. MINLOC: each rank has a non-empty array of floats (its length differs per rank);
//!    find the global minimum, the rank holding it and its local index, encoded as
//!    `rank * LEN + index` as the textbook does.
//! 6. MAXLOC over an array distributed evenly: the largest value and its global index
//!    (ties to the lowest index), on every rank.
//!
//! The `oxmpi` API has no `MPI_MAXLOC`/`MPI_MINLOC` system operation and no
//! value-index pair datatypes, so (4)-(6) use `UserOperation`s on `#[derive(Equivalence)]`
//! pairs. (4) is also repeated with the engine's predefined `MPI_MAXLOC` on
//! `MPI_DOUBLE_INT` reached through `oxmpi::core_engine`, and the two must agree.

use oxmpi::collective::{Operation, SystemOperation, UserOperation};
use oxmpi::datatype::{DatatypeRef, MutView, Partition, PartitionMut, View};
use oxmpi::traits::*;
use oxmpi_tests::{check, Rng};

/// `counts`/`displs` of `total` items split in contiguous blocks, the first ranks
/// taking one more when it does not divide.
fn blocks(total: usize, size: usize) -> (Vec<i32>, Vec<i32>) {
    let (base, extra) = (total / size, total % size);
    let counts: Vec<i32> = (0..size)
        .map(|r| (base + usize::from(r < extra)) as i32)
        .collect();
    let displs = counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    (counts, displs)
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct DoubleInt {
    val: f64,
    rank: i32,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct FloatInt {
    value: f32,
    index: i32,
}

/// MAXLOC on (f64, i32): the larger value wins, on a tie the lower index.
fn maxloc_f64() -> UserOperation<'static> {
    UserOperation::commutative(|a, b| {
        let a: &[DoubleInt] = a.downcast().unwrap();
        let b: &mut [DoubleInt] = b.downcast().unwrap();
        for (x, y) in a.iter().zip(b) {
            if x.val > y.val || (x.val == y.val && x.rank < y.rank) {
                *y = *x;
            }
        }
    })
}

/// MINLOC on (f32, i32): the smaller value wins, on a tie the lower index.
fn minloc_f32() -> UserOperation<'static> {
    UserOperation::commutative(|a, b| {
        let a: &[FloatInt] = a.downcast().unwrap();
        let b: &mut [FloatInt] = b.downcast().unwrap();
        for (x, y) in a.iter().zip(b) {
            if x.value < y.value || (x.value == y.value && x.index < y.index) {
                *y = *x;
            }
        }
    })
}

/// The engine's predefined `MPI_MAXLOC`, which the `oxmpi` API does not name.
struct EngineMaxloc;
impl Operation for EngineMaxloc {
    fn as_core_op(&self) -> oxmpi::core_engine::op::Op {
        oxmpi::core_engine::op::Op::predefined(oxmpi::core_engine::op::PredefinedOp::Maxloc)
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let (meu, sizeu) = (me as usize, size as usize);
    let root = world.process_at_rank(0);

    // ---- 1. dot product ----------------------------------------------------------------
    // Small integers in f64: every partial sum is exact, so any order gives the same sum.
    const N: usize = 1000;
    let a_full: Vec<f64> = (0..N).map(|i| (i % 7) as f64 - 3.0).collect();
    let b_full: Vec<f64> = (0..N).map(|i| (i % 5) as f64 + 1.0).collect();
    let want_dot: f64 = a_full.iter().zip(&b_full).map(|(x, y)| x * y).sum();
    let (counts, displs) = blocks(N, sizeu);
    let mut a = vec![0f64; counts[meu] as usize];
    let mut b = vec![0f64; counts[meu] as usize];
    if me == 0 {
        root.scatter_varcount_into_root(
            &Partition::new(&a_full[..], &counts[..], &displs[..]),
            &mut a[..],
        );
        root.scatter_varcount_into_root(
            &Partition::new(&b_full[..], &counts[..], &displs[..]),
            &mut b[..],
        );
    } else {
        root.scatter_varcount_into(&mut a[..]);
        root.scatter_varcount_into(&mut b[..]);
    }
    let off = displs[meu] as usize;
    check!(
        me,
        a[..] == a_full[off..off + a.len()] && b[..] == b_full[off..off + b.len()],
        "scattered slices"
    );
    let local: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    if me == 0 {
        let mut dot = 0f64;
        root.reduce_into_root(&local, &mut dot, SystemOperation::sum());
        check!(me, dot == want_dot, "dot product {dot} != {want_dot}");
    } else {
        root.reduce_into(&local, SystemOperation::sum());
    }
    let mut dot_all = 0f64;
    world.all_reduce_into(&local, &mut dot_all, SystemOperation::sum());
    check!(
        me,
        dot_all == want_dot,
        "all_reduce dot product {dot_all} != {want_dot}"
    );

    // ---- 2. matrix-vector product, rows scattered ------------------------------------------
    const ROWS: usize = 10;
    const COLS: usize = 7;
    let mat = |i: usize, j: usize| ((i * 3 + j * 5) % 11) as f64 - 5.0;
    let vec_x = |j: usize| (j % 4) as f64 + 0.5;
    let want_y: Vec<f64> = (0..ROWS)
        .map(|i| (0..COLS).map(|j| mat(i, j) * vec_x(j)).sum())
        .collect();
    let mut x = vec![0f64; COLS];
    if me == 0 {
        x = (0..COLS).map(vec_x).collect();
    }
    root.broadcast_into(&mut x[..]);
    check!(
        me,
        x.iter().enumerate().all(|(j, &v)| v == vec_x(j)),
        "broadcast vector {x:?}"
    );
    let (rcounts, rdispls) = blocks(ROWS, sizeu);
    let ecounts: Vec<i32> = rcounts.iter().map(|c| c * COLS as i32).collect();
    let edispls: Vec<i32> = rdispls.iter().map(|d| d * COLS as i32).collect();
    let my_rows = rcounts[meu] as usize;
    let mut block = vec![0f64; my_rows * COLS];
    if me == 0 {
        let full: Vec<f64> = (0..ROWS * COLS).map(|k| mat(k / COLS, k % COLS)).collect();
        root.scatter_varcount_into_root(
            &Partition::new(&full[..], &ecounts[..], &edispls[..]),
            &mut block[..],
        );
    } else {
        root.scatter_varcount_into(&mut block[..]);
    }
    let part: Vec<f64> = block
        .chunks(COLS)
        .map(|row| row.iter().zip(&x).map(|(m, v)| m * v).sum())
        .collect();
    if me == 0 {
        let mut y = vec![f64::NAN; ROWS];
        root.gather_varcount_into_root(
            &part[..],
            &mut PartitionMut::new(&mut y[..], &rcounts[..], &rdispls[..]),
        );
        check!(me, y == want_y, "matrix-vector product {y:?} != {want_y:?}");
    } else {
        root.gather_varcount_into(&part[..]);
    }

    // ---- 3. column-distributed matrix-vector product (reduce / all_reduce) ---------------
    // Rank r holds entries `lo..hi` of the vector and rows `lo..hi` of a COLS2 x M matrix
    // b (so c = x^T b); partial sums of every column are added up across ranks.
    const M: usize = 23;
    const COLS2: usize = 6;
    let (mc, md) = blocks(M, sizeu);
    let (lo, hi) = (md[meu] as usize, (md[meu] + mc[meu]) as usize);
    let bm = |i: usize, j: usize| ((i + 2 * j) % 9) as f64 - 4.0;
    let av = |i: usize| (i % 3) as f64 + 1.0;
    let sums: Vec<f64> = (0..COLS2)
        .map(|j| (lo..hi).map(|i| av(i) * bm(i, j)).sum())
        .collect();
    let want_c: Vec<f64> = (0..COLS2)
        .map(|j| (0..M).map(|i| av(i) * bm(i, j)).sum())
        .collect();
    if me == 0 {
        let mut c = vec![0f64; COLS2];
        root.reduce_into_root(&sums[..], &mut c[..], SystemOperation::sum());
        check!(me, c == want_c, "reduce product {c:?} != {want_c:?}");
    } else {
        root.reduce_into(&sums[..], SystemOperation::sum());
    }
    let mut c_all = vec![0f64; COLS2];
    world.all_reduce_into(&sums[..], &mut c_all[..], SystemOperation::sum());
    check!(
        me,
        c_all == want_c,
        "all_reduce product {c_all:?} != {want_c:?}"
    );

    // ---- 4. MAXLOC over 30 positions ---------------------------------------------------
    let ain = |r: i32, i: usize| ((r as usize * 7 + i * 3) % 5) as f64 * 1.5;
    let input: Vec<DoubleInt> = (0..30)
        .map(|i| DoubleInt {
            val: ain(me, i),
            rank: me,
        })
        .collect();
    let want: Vec<DoubleInt> = (0..30)
        .map(|i| {
            let mut best = DoubleInt {
                val: ain(0, i),
                rank: 0,
            };
            for r in 1..size {
                if ain(r, i) > best.val {
                    best = DoubleInt {
                        val: ain(r, i),
                        rank: r,
                    };
                }
            }
            best
        })
        .collect();
    let op = maxloc_f64();
    if me == 0 {
        let mut out = vec![DoubleInt::default(); 30];
        root.reduce_into_root(&input[..], &mut out[..], &op);
        let aout: Vec<f64> = out.iter().map(|p| p.val).collect();
        let ind: Vec<i32> = out.iter().map(|p| p.rank).collect();
        check!(me, out == want, "maxloc {aout:?} at {ind:?}");
        if size > 1 {
            check!(
                me,
                want.iter().any(|p| p.rank > 0),
                "the data should make another rank win somewhere"
            );
        }
    } else {
        root.reduce_into(&input[..], &op);
    }
    // The same with the engine's MPI_MAXLOC on MPI_DOUBLE_INT (not reachable through the
    // safe API): same layout as DoubleInt (value at 0, index at 8, extent 16).
    let double_int = oxmpi::core_engine::datatype::Datatype::predefined(
        oxmpi::core_engine::datatype::Primitive::DoubleInt,
    );
    let di = DatatypeRef::from_core(&double_int);
    check!(
        me,
        di.extent() as usize == std::mem::size_of::<DoubleInt>(),
        "MPI_DOUBLE_INT extent {}",
        di.extent()
    );
    // SAFETY: MPI_DOUBLE_INT's extent is DoubleInt's size (checked above), so 30 elements are exactly `input`'s 30 values.
    let send = unsafe { View::with_count_and_datatype(&input[..], 30, &di) };
    let mut engine_out = vec![DoubleInt::default(); 30];
    {
        // SAFETY: as above for `engine_out`; the type writes only the f64 and i32 fields, for which any bits are valid.
        let mut recv = unsafe { MutView::with_count_and_datatype(&mut engine_out[..], 30, &di) };
        world.all_reduce_into(&send, &mut recv, EngineMaxloc);
    }
    check!(me, engine_out == want, "engine MPI_MAXLOC {engine_out:?}");

    // ---- 5. MINLOC with rank * LEN + index ---------------------------------------------
    const LEN: i32 = 1000;
    let local_vals = |r: i32| -> Vec<f32> {
        let mut g = Rng::new(500 + r as u64);
        let count = 1 + (r as usize * 37) % 50;
        (0..count)
            .map(|_| (g.below(2000) as f32) / 8.0 - 100.0)
            .collect()
    };
    let vals = local_vals(me);
    let mut inp = FloatInt {
        value: vals[0],
        index: 0,
    };
    for (i, &v) in vals.iter().enumerate().skip(1) {
        if inp.value > v {
            inp = FloatInt {
                value: v,
                index: i as i32,
            };
        }
    }
    inp.index += me * LEN;
    // serial answer: the first occurrence of the smallest value in rank order
    let mut best = (f32::INFINITY, -1, -1);
    for r in 0..size {
        for (i, &v) in local_vals(r).iter().enumerate() {
            if v < best.0 {
                best = (v, r, i as i32);
            }
        }
    }
    let op = minloc_f32();
    if me == 0 {
        let mut out = FloatInt::default();
        root.reduce_into_root(&inp, &mut out, &op);
        let (minval, minrank, minindex) = (out.value, out.index / LEN, out.index % LEN);
        check!(
            me,
            (minval, minrank, minindex) == best,
            "minloc ({minval}, {minrank}, {minindex}) != {best:?}"
        );
    } else {
        root.reduce_into(&inp, &op);
    }

    // ---- 6. max and its index in an evenly distributed array -----------------------------
    const PER_RANK: usize = 25;
    let global: Vec<f64> = {
        let mut g = Rng::new(77);
        let mut v: Vec<f64> = (0..PER_RANK * sizeu).map(|_| g.below(40) as f64).collect();
        // a tie with the last element, which the lower index must win
        let top = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        *v.last_mut().unwrap() = top;
        v
    };
    let mut mine = [0f64; PER_RANK];
    if me == 0 {
        root.scatter_into_root(&global[..], &mut mine[..]);
    } else {
        root.scatter_into(&mut mine[..]);
    }
    let mut lmax = DoubleInt {
        val: f64::NEG_INFINITY,
        rank: -1,
    };
    for (i, &v) in mine.iter().enumerate() {
        if v > lmax.val {
            lmax = DoubleInt {
                val: v,
                rank: (meu * PER_RANK + i) as i32,
            };
        }
    }
    let mut gmax = DoubleInt::default();
    world.all_reduce_into(&lmax, &mut gmax, maxloc_f64());
    let want_max = global.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let want_idx = global.iter().position(|&v| v == want_max).unwrap() as i32;
    check!(
        me,
        gmax == DoubleInt {
            val: want_max,
            rank: want_idx
        },
        "max {gmax:?} != ({want_max}, {want_idx})"
    );

    world.barrier();
    println!("seed_reduce: rank {me} of {size} ok");
}
