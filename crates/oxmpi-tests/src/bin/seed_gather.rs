//! Textbook gather/scatter examples with derived datatypes, through the `oxmpi` API,
//! every received element checked (and every element that must stay untouched).
//!
//! 1. Gatherv of a column: rank i sends the first 100-i entries of column i of its
//!    100x150 `i32` array as one `vector(100-i, 1, 150)`; rank 0 places block i at a
//!    displacement that grows by a per-rank stride (>= the block length), gaps untouched.
//! 2. The same column sent as `num` elements of a type that is one `i32` stretched to a
//!    whole row (the old `MPI_UB` idiom: `structured` + `resized` to 150 ints); rank 0
//!    first gathers the per-rank `num`s, then places the blocks contiguously.
//! 3. Scatterv into a column: the inverse of (1); rank 0 sends blocks of 100-i ints
//!    from strided places of its buffer, rank i receives them into column i of a
//!    100x150 array through a vector type.
//! 4. 2-D decomposition by scatterv: rank 0 holds an n x m matrix, cut into a 2 x (p/2)
//!    grid of blocks (with 4 ranks: rank 0 the top-left quarter, 1 the bottom-left, 2 the
//!    top-right, 3 the bottom-right); one block type (a vector resized to one int, so
//!    displacements count ints) sends every block; each rank receives its block
//!    contiguously. Needs an even number of ranks (skipped otherwise).
//!
//! Needs at most 100 ranks.

use oxmpi::datatype::{MutView, Partition, PartitionMut, UserDatatype, View};
use oxmpi::traits::*;
use oxmpi_tests::check;

const R: usize = 100;
const C: usize = 150;

fn value(rank: i32, i: usize, j: usize) -> i32 {
    rank * 1_000_000 + (i * C + j) as i32
}

fn stride(i: usize) -> i32 {
    100 + 7 * (i as i32 % 4)
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    let (meu, sizeu) = (me as usize, size as usize);
    assert!(sizeu <= R, "at most {R} ranks");
    let root = world.process_at_rank(0);
    let int = i32::equivalent_datatype();
    let sendarray: Vec<i32> = (0..R * C).map(|k| value(me, k / C, k % C)).collect();

    // ---- 1. gatherv of column `me`, varying stride at the root -----------------------
    let rcounts: Vec<i32> = (0..sizeu).map(|i| (R - i) as i32).collect();
    let displs: Vec<i32> = (0..sizeu)
        .scan(0, |off, i| {
            let d = *off;
            *off += stride(i);
            Some(d)
        })
        .collect();
    let bufsize = (displs[sizeu - 1] + rcounts[sizeu - 1]) as usize;
    let stype = UserDatatype::vector((R - meu) as i32, 1, C as i32, &int);
    check!(
        me,
        stype.size() == (R - meu) * 4,
        "column type size {}",
        stype.size()
    );
    let column = View::checked(&sendarray[meu..], 1, &stype).unwrap();
    if me == 0 {
        let mut rbuf = vec![-1i32; bufsize];
        root.gather_varcount_into_root(
            &column,
            &mut PartitionMut::new(&mut rbuf[..], &rcounts[..], &displs[..]),
        );
        for r in 0..sizeu {
            let (d, n) = (displs[r] as usize, rcounts[r] as usize);
            for k in 0..n {
                check!(
                    me,
                    rbuf[d + k] == value(r as i32, k, r),
                    "gatherv block {r} item {k}: {}",
                    rbuf[d + k]
                );
            }
            let gap_end = if r + 1 < sizeu {
                displs[r + 1] as usize
            } else {
                bufsize
            };
            check!(
                me,
                rbuf[d + n..gap_end].iter().all(|&v| v == -1),
                "gap after block {r} was written"
            );
        }
    } else {
        root.gather_varcount_into(&column);
    }

    // ---- 2. num ints of column `me` with the one-int-per-row type --------------------
    let num = 1 + ((me as usize * 37 + 11) % R) as i32;
    let one = UserDatatype::structured(&[1], &[0], &[int]);
    let row_int = UserDatatype::resized(&one, 0, (C * 4) as isize);
    check!(
        me,
        row_int.size() == 4 && row_int.extent() == (C * 4) as isize,
        "stretched int {} {}",
        row_int.size(),
        row_int.extent()
    );
    let send = View::checked(&sendarray[meu..], num, &row_int).unwrap();
    if me == 0 {
        let mut nums = vec![0i32; sizeu];
        root.gather_into_root(&num, &mut nums[..]);
        let want_nums: Vec<i32> = (0..sizeu).map(|r| 1 + ((r * 37 + 11) % R) as i32).collect();
        check!(me, nums == want_nums, "gathered nums {nums:?}");
        let d: Vec<i32> = nums
            .iter()
            .scan(0, |acc, &c| {
                let v = *acc;
                *acc += c;
                Some(v)
            })
            .collect();
        let total = nums.iter().sum::<i32>() as usize;
        let mut rbuf = vec![-1i32; total];
        root.gather_varcount_into_root(
            &send,
            &mut PartitionMut::new(&mut rbuf[..], &nums[..], &d[..]),
        );
        let mut k = 0;
        for (r, &n) in nums.iter().enumerate() {
            for i in 0..n as usize {
                check!(
                    me,
                    rbuf[k] == value(r as i32, i, r),
                    "stretched gatherv rank {r} item {i}: {}",
                    rbuf[k]
                );
                k += 1;
            }
        }
    } else {
        root.gather_into(&num);
        root.gather_varcount_into(&send);
    }

    // ---- 3. scatterv into column `me` ---------------------------------------------------
    let mut recvarray = vec![-1i32; R * C];
    {
        let rtype = UserDatatype::vector((R - meu) as i32, 1, C as i32, &int);
        let mut col = MutView::checked(&mut recvarray[meu..], 1, &rtype).unwrap();
        if me == 0 {
            let mut sendbuf = vec![-7i32; bufsize];
            for r in 0..sizeu {
                for k in 0..rcounts[r] as usize {
                    sendbuf[displs[r] as usize + k] = -(r as i32 * 1000 + k as i32) - 10;
                }
            }
            root.scatter_varcount_into_root(
                &Partition::new(&sendbuf[..], &rcounts[..], &displs[..]),
                &mut col,
            );
        } else {
            root.scatter_varcount_into(&mut col);
        }
    }
    for i in 0..R {
        for j in 0..C {
            let v = recvarray[i * C + j];
            let want = if j == meu && i < R - meu {
                -(me * 1000 + i as i32) - 10
            } else {
                -1
            };
            check!(
                me,
                v == want,
                "scatterv column at ({i},{j}): {v}, want {want}"
            );
        }
    }

    // ---- 4. 2-D block decomposition by scatterv ----------------------------------------
    if sizeu % 2 == 0 {
        let (n, m) = (12usize, 6 * sizeu / 2);
        let (pr, pc) = (2usize, sizeu / 2);
        let (bn, bm) = (n / pr, m / pc);
        let a = |i: usize, j: usize| (i * 1000 + j) as i32;
        // Rank r gets block row r % 2, block column r / 2.
        let (bi, bj) = (meu % pr, meu / pr);
        let mut block = vec![-1i32; bn * bm];
        if me == 0 {
            let matrix: Vec<i32> = (0..n * m).map(|k| a(k / m, k % m)).collect();
            let vec_t = UserDatatype::vector(bn as i32, bm as i32, m as i32, &int);
            let block_t = UserDatatype::resized(&vec_t, 0, 4);
            let counts = vec![1i32; sizeu];
            let displs: Vec<i32> = (0..sizeu)
                .map(|r| ((r % pr) * bn * m + (r / pr) * bm) as i32)
                .collect();
            // `count` covers every block start; the last block ends at the matrix's end.
            let last = *displs.iter().max().unwrap() + 1;
            let view = View::checked(&matrix[..], last, &block_t).unwrap();
            root.scatter_varcount_into_root(
                &Partition::new(&view, &counts[..], &displs[..]),
                &mut block[..],
            );
        } else {
            root.scatter_varcount_into(&mut block[..]);
        }
        for i in 0..bn {
            for j in 0..bm {
                let (gi, gj) = (bi * bn + i, bj * bm + j);
                check!(
                    me,
                    block[i * bm + j] == a(gi, gj),
                    "2-D block ({i},{j}) = {} want A({gi},{gj})",
                    block[i * bm + j]
                );
            }
        }
    }

    world.barrier();
    println!("seed_gather: rank {me} of {size} ok");
}
