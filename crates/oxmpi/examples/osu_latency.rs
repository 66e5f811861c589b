//! OSU-style point-to-point latency (`osu_latency` of the OSU micro-benchmarks).
//!
//! `mpiexec -n 2 target/release/examples/osu_latency [MAX_BYTES]`
//!
//! Methodology (as OSU): for each size 0, 1, 2, 4, ... MAX_BYTES (default 4 MiB), the
//! two ranks synchronise, then run `skip + loop` ping-pongs with blocking send/receive
//! (rank 0 sends then receives, rank 1 receives then sends); the clock starts after the
//! `skip` warmup round trips. Latency = elapsed / (2 * loop), in microseconds.
//! `loop`/`skip` = 10000/100 up to 8 KiB, 1000/10 above.
//!
//! Output: OSU's format, '#' header lines then `size latency(us)` rows, from rank 0.
//! The same program in C MPI is `bench/c/osu_latency.c`.

use oxmpi::traits::*;

const LARGE_MESSAGE_SIZE: usize = 8192;
const LOOP_SMALL: usize = 10_000;
const SKIP_SMALL: usize = 100;
const LOOP_LARGE: usize = 1_000;
const SKIP_LARGE: usize = 10;
const TAG: i32 = 1;
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
            eprintln!("osu_latency: MAX_BYTES must be a number");
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

    // Touched (non-zero) buffers, like OSU's memset, so no page is faulted in while timing.
    let s_buf = vec![b'a'; max_size.max(1)];
    let mut r_buf = vec![b'b'; max_size.max(1)];

    if rank == 0 {
        println!("# OSU MPI Latency Test (oxmpi bench, Rust API)");
        println!("{:<10}{:>18}", "# Size", "Latency (us)");
    }

    let mut size = 0usize;
    while size <= max_size {
        let (iters, skip) = if size > LARGE_MESSAGE_SIZE {
            (LOOP_LARGE, SKIP_LARGE)
        } else {
            (LOOP_SMALL, SKIP_SMALL)
        };
        let s = &s_buf[..size];
        let r = &mut r_buf[..size];

        sync(rank, &peer);
        let mut t_start = 0.0;
        for i in 0..iters + skip {
            if i == skip {
                t_start = oxmpi::environment::time();
            }
            if rank == 0 {
                peer.send_with_tag(s, TAG);
                peer.receive_into_with_tag(&mut *r, TAG);
            } else {
                peer.receive_into_with_tag(&mut *r, TAG);
                peer.send_with_tag(s, TAG);
            }
        }
        let t_end = oxmpi::environment::time();

        if rank == 0 {
            let latency = (t_end - t_start) * 1e6 / (2.0 * iters as f64);
            println!("{:<10}{:>18.2}", size, latency);
        }
        size = if size == 0 { 1 } else { size * 2 };
    }
}
