//! OSU-style point-to-point bandwidth (`osu_bw` of the OSU micro-benchmarks).
//!
//! `mpiexec -n 2 target/release/examples/osu_bw [MAX_BYTES]`
//!
//! Methodology (as OSU): for each size 1, 2, 4, ... MAX_BYTES (default 4 MiB), the two
//! ranks synchronise, then repeat `skip + loop` times: rank 0 posts a window of 64
//! non-blocking sends and waits for all of them, then blocks on a 4-byte ack; rank 1
//! posts 64 non-blocking receives, waits for all, and sends the ack. The clock starts
//! after the `skip` warmup windows. MB/s = size * 64 * loop / elapsed / 1e6.
//! `loop`/`skip` = 100/10 up to 8 KiB, 20/2 above.
//!
//! One deviation from OSU: OSU posts all 64 receives into the *same* buffer; Rust does
//! not allow 64 live mutable borrows of one buffer, so the receiver gives each request
//! of the window its own slot (`64 * size` bytes). `bench/c/osu_bw.c` does the same, so
//! the C and Rust programs measure exactly the same thing.
//!
//! Output: OSU's format, '#' header lines then `size MB/s` rows, from rank 0.

use oxmpi::request::multiple_scope;
use oxmpi::traits::*;

const WINDOW: usize = 64;
const LARGE_MESSAGE_SIZE: usize = 8192;
const LOOP_SMALL: usize = 100;
const SKIP_SMALL: usize = 10;
const LOOP_LARGE: usize = 20;
const SKIP_LARGE: usize = 2;
const TAG: i32 = 100;
const ACK_TAG: i32 = 101;
const SYNC_TAG: i32 = 999;

/// Two-rank barrier (zero-byte handshake), standing in for `MPI_Barrier`; not timed.
fn sync<P: Source + Destination>(rank: i32, peer: &P) {
    let empty: [u8; 0] = [];
    let mut sink: [u8; 0] = [];
    if rank == 0 {
        peer.send_with_tag(&empty[..], SYNC_TAG);
        peer.receive_into_with_tag(&mut sink[..], SYNC_TAG);
    } else {
        peer.receive_into_with_tag(&mut sink[..], SYNC_TAG);
        peer.send_with_tag(&empty[..], SYNC_TAG);
    }
}

fn main() {
    let max_size: usize = match std::env::args().nth(1) {
        None => 4 << 20,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("osu_bw: MAX_BYTES must be a number");
            std::process::exit(2)
        }),
    };

    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    if world.size() != 2 {
        if rank == 0 {
            eprintln!("This test requires exactly two processes");
        }
        std::process::exit(1);
    }
    let peer = world.process_at_rank(1 - rank);

    // Touched buffers, like OSU's memset. Rank 0 needs one send buffer, rank 1 a slot per
    // request of the window.
    let s_buf = vec![b'a'; max_size.max(4)];
    let mut r_buf = vec![
        b'b';
        if rank == 1 {
            WINDOW * max_size.max(4)
        } else {
            4
        }
    ];
    let mut ack = [0u8; 4];

    if rank == 0 {
        println!("# OSU MPI Bandwidth Test (oxmpi bench, Rust API)");
        println!("{:<10}{:>18}", "# Size", "Bandwidth (MB/s)");
    }

    let mut size = 1usize;
    while size <= max_size {
        let (iters, skip) = if size > LARGE_MESSAGE_SIZE {
            (LOOP_LARGE, SKIP_LARGE)
        } else {
            (LOOP_SMALL, SKIP_SMALL)
        };

        sync(rank, &peer);
        let mut t_start = 0.0;
        for i in 0..iters + skip {
            if i == skip {
                t_start = oxmpi::environment::time();
            }
            if rank == 0 {
                let msg = &s_buf[..size];
                multiple_scope(WINDOW, |scope, coll| {
                    for _ in 0..WINDOW {
                        coll.add(peer.immediate_send_with_tag(scope, msg, TAG));
                    }
                    let mut done = Vec::with_capacity(WINDOW);
                    coll.wait_all(&mut done);
                });
                peer.receive_into_with_tag(&mut ack[..], ACK_TAG);
            } else {
                multiple_scope(WINDOW, |scope, coll| {
                    for slot in r_buf.chunks_exact_mut(size).take(WINDOW) {
                        coll.add(peer.immediate_receive_into_with_tag(scope, slot, TAG));
                    }
                    let mut done = Vec::with_capacity(WINDOW);
                    coll.wait_all(&mut done);
                });
                peer.send_with_tag(&ack[..], ACK_TAG);
            }
        }
        let t_end = oxmpi::environment::time();

        if rank == 0 {
            let mbytes = size as f64 / 1e6 * (iters * WINDOW) as f64;
            println!("{:<10}{:>18.2}", size, mbytes / (t_end - t_start));
        }
        size *= 2;
    }
}
