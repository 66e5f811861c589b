//! Textbook ghost-row ("shadow point") exchange on a 12 x 12 grid split by rows over
//! the ranks (12 must divide by the size: 1, 2, 3, 4, 6 or 12 ranks). Each rank owns
//! 12/size rows plus a ghost row on each side; the owned points hold a value naming
//! the rank and the point, the ghost rows start at -1. The domain is not periodic: the
//! first rank only talks to the one above it, the last only to the one below, and their
//! outer ghost rows must stay -1.
//!
//! Variants, each checked on every point of every rank:
//! * `blocking`: `send` / `receive_into`, ordered by rank parity so no rank waits in a
//!   cycle (also run with `synchronous_send`, which cannot rely on buffering);
//! * `immediate`: `immediate_send` / `immediate_receive_into`, then wait for all;
//! * `sendrecv-shift`: two `send_receive_into` calls, the first shifting rows up
//!   (send to rank+1, receive from rank-1), the second down, with the null process past
//!   the ends;
//! * `sendrecv-pairs`: `send_receive_into` between partners, first 0<->1, 2<->3, ...
//!   then 1<->2, 3<->4, ...;
//! * `sendrecv-replace`: `send_receive_replace_into` on copies of the boundary rows.

use oxmpi::point_to_point::{send_receive_into_with_tags, send_receive_replace_into_with_tags};
use oxmpi::request::scope;
use oxmpi::topology::Process;
use oxmpi::traits::*;
use oxmpi_tests::check;

const MAXN: usize = 12;
const GHOST: f64 = -1.0;

fn cell(rank: usize, global_row: usize, col: usize) -> f64 {
    (rank * 1000 + global_row * MAXN + col) as f64
}

/// Local rows: 0 = ghost (from rank-1), 1..=rows owned, rows+1 = ghost (from rank+1).
fn fresh(rank: usize, rows: usize) -> Vec<f64> {
    let mut x = vec![GHOST; (rows + 2) * MAXN];
    for i in 1..=rows {
        for j in 0..MAXN {
            x[i * MAXN + j] = cell(rank, rank * rows + i - 1, j);
        }
    }
    x
}

fn verify(x: &[f64], rank: usize, size: usize, rows: usize, variant: &str) {
    let me = rank;
    for i in 0..rows + 2 {
        for j in 0..MAXN {
            let want = if i == 0 {
                if rank > 0 {
                    cell(rank - 1, rank * rows - 1, j)
                } else {
                    GHOST
                }
            } else if i == rows + 1 {
                if rank + 1 < size {
                    cell(rank + 1, (rank + 1) * rows, j)
                } else {
                    GHOST
                }
            } else {
                cell(rank, rank * rows + i - 1, j)
            };
            let got = x[i * MAXN + j];
            check!(
                me,
                got == want,
                "{variant}: local ({i},{j}) = {got}, want {want}"
            );
        }
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank() as usize, world.size() as usize);
    assert!(
        MAXN % size == 0,
        "{MAXN} rows must split evenly over {size} ranks"
    );
    let rows = MAXN / size;
    let below: Option<Process> = (me > 0).then(|| world.process_at_rank(me as i32 - 1));
    let above: Option<Process> = (me + 1 < size).then(|| world.process_at_rank(me as i32 + 1));
    let null = world.null_process();
    let first = 1..2; // local row 1
    let last = rows..rows + 1; // local row `rows`
    let row = |r: std::ops::Range<usize>| r.start * MAXN..r.end * MAXN;

    // --- blocking, standard and synchronous mode ---
    for synchronous in [false, true] {
        let mut x = fresh(me, rows);
        let send = |p: &Process, buf: &[f64], tag: i32| {
            if synchronous {
                p.synchronous_send_with_tag(buf, tag)
            } else {
                p.send_with_tag(buf, tag)
            }
        };
        // Up: our last row to rank+1, rank-1's last row into ghost 0. Even ranks send
        // first, odd ranks receive first.
        for phase in 0..2 {
            if (me % 2 == 0) == (phase == 0) {
                if let Some(p) = &above {
                    send(p, &x[row(last.clone())], 1);
                }
            } else if let Some(p) = &below {
                p.receive_into_with_tag(&mut x[row(0..1)], 1);
            }
        }
        // Down: our first row to rank-1, rank+1's first row into ghost rows+1.
        for phase in 0..2 {
            if (me % 2 == 0) == (phase == 0) {
                if let Some(p) = &below {
                    send(p, &x[row(first.clone())], 2);
                }
            } else if let Some(p) = &above {
                p.receive_into_with_tag(&mut x[row(rows + 1..rows + 2)], 2);
            }
        }
        verify(
            &x,
            me,
            size,
            rows,
            if synchronous {
                "blocking (synchronous)"
            } else {
                "blocking"
            },
        );
    }

    // --- immediate ---
    {
        let mut x = fresh(me, rows);
        let (ghost_lo, rest) = x.split_at_mut(MAXN);
        let (owned, ghost_hi) = rest.split_at_mut(rows * MAXN);
        let (first_row, last_row) = (&owned[..MAXN], &owned[(rows - 1) * MAXN..]);
        scope(|s| {
            let mut reqs = Vec::new();
            if let Some(p) = &below {
                reqs.push(p.immediate_receive_into_with_tag(s, &mut *ghost_lo, 1));
            }
            if let Some(p) = &above {
                reqs.push(p.immediate_receive_into_with_tag(s, &mut *ghost_hi, 2));
            }
            let mut sends = Vec::new();
            if let Some(p) = &above {
                sends.push(p.immediate_send_with_tag(s, last_row, 1));
            }
            if let Some(p) = &below {
                sends.push(p.immediate_send_with_tag(s, first_row, 2));
            }
            for r in reqs {
                r.wait();
            }
            for r in sends {
                r.wait();
            }
        });
        verify(&x, me, size, rows, "immediate");
    }

    // --- sendrecv, shift up then down ---
    {
        let mut x = fresh(me, rows);
        let up = above.unwrap_or(null);
        let down = below.unwrap_or(null);
        let (ghost_lo, rest) = x.split_at_mut(MAXN);
        send_receive_into_with_tags(
            &rest[(rows - 1) * MAXN..rows * MAXN],
            &up,
            1,
            ghost_lo,
            &down,
            1,
        );
        let (owned, ghost_hi) = x.split_at_mut((rows + 1) * MAXN);
        send_receive_into_with_tags(&owned[MAXN..2 * MAXN], &down, 2, ghost_hi, &up, 2);
        verify(&x, me, size, rows, "sendrecv-shift");
    }

    // --- sendrecv between partners: (0,1),(2,3),... then (1,2),(3,4),... ---
    {
        let mut x = fresh(me, rows);
        for phase in 0..2 {
            // In phase 0 even ranks pair with the rank above; in phase 1 odd ranks do.
            let partner_above = me % 2 == phase;
            let partner = if partner_above { above } else { below };
            let Some(p) = partner else { continue };
            if partner_above {
                let (owned, ghost_hi) = x.split_at_mut((rows + 1) * MAXN);
                send_receive_into_with_tags(&owned[rows * MAXN..], &p, 3, ghost_hi, &p, 3);
            } else {
                let (ghost_lo, rest) = x.split_at_mut(MAXN);
                send_receive_into_with_tags(&rest[..MAXN], &p, 3, ghost_lo, &p, 3);
            }
        }
        verify(&x, me, size, rows, "sendrecv-pairs");
    }

    // --- sendrecv-replace: each boundary row is copied into its ghost slot, then
    // replaced by the neighbour's ---
    {
        let mut x = fresh(me, rows);
        let up = above.unwrap_or(null);
        let down = below.unwrap_or(null);
        // Up: ghost 0 starts as a copy of our last row, leaves for rank+1 and is
        // replaced by rank-1's last row. Ends must keep -1: at the ends the copy is not
        // made (the null process neither sends nor overwrites).
        if above.is_some() {
            x.copy_within(row(last.clone()), 0);
        }
        send_receive_replace_into_with_tags(&mut x[row(0..1)], &up, 4, &down, 4);
        if below.is_none() && above.is_some() {
            // rank 0 sent its copy but received nothing: restore the ghost value
            x[row(0..1)].fill(GHOST);
        }
        if below.is_some() {
            x.copy_within(row(first.clone()), (rows + 1) * MAXN);
        }
        send_receive_replace_into_with_tags(&mut x[row(rows + 1..rows + 2)], &down, 5, &up, 5);
        if above.is_none() && below.is_some() {
            x[row(rows + 1..rows + 2)].fill(GHOST);
        }
        verify(&x, me, size, rows, "sendrecv-replace");
    }

    world.barrier();
    println!("seed_halo: rank {me} of {size} ok");
}
