//! Ping-pong latency and bandwidth between ranks 0 and 1 (other ranks idle).
//!
//! `mpiexec -n 2 target/release/examples/pingpong [--min BYTES] [--max BYTES] [--iters N]`
//!
//! Latency is half the round-trip time; bandwidth is bytes / latency. Without `--iters`
//! the iteration count adapts to the message size.

use oxmpi::traits::*;

fn arg(args: &[String], name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    match args.get(i + 1).and_then(|v| v.parse().ok()) {
        Some(v) => Some(v),
        None => {
            eprintln!("pingpong: {name} needs a number");
            std::process::exit(2)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let min = arg(&args, "--min").unwrap_or(0);
    let max = arg(&args, "--max").unwrap_or(16 << 20);
    let iters = arg(&args, "--iters");

    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    if world.size() < 2 {
        if rank == 0 {
            eprintln!("pingpong: needs at least 2 ranks");
        }
        return;
    }
    if rank > 1 {
        return;
    }
    let peer = world.process_at_rank(1 - rank);

    let mut sizes = Vec::new();
    if min == 0 {
        sizes.push(0);
    }
    let mut s = min.max(1);
    while s <= max {
        sizes.push(s);
        s *= 2;
    }

    let mut buf = vec![0u8; max.max(1)];
    if rank == 0 {
        println!(
            "{:>10} {:>8} {:>14} {:>14}",
            "bytes", "iters", "latency(us)", "bandwidth(MB/s)"
        );
    }
    for &size in &sizes {
        let n = iters.unwrap_or_else(|| {
            // ~ 1 GiB moved per size at most, between 10 and 10000 round trips.
            ((1usize << 30) / size.max(1)).clamp(10, 10_000)
        });
        let warmup = (n / 10).max(1);
        let msg = &mut buf[..size];
        let mut t0 = 0.0;
        for i in 0..warmup + n {
            if i == warmup {
                t0 = oxmpi::environment::time();
            }
            if rank == 0 {
                peer.send(&msg[..]);
                peer.receive_into(&mut msg[..]);
            } else {
                peer.receive_into(&mut msg[..]);
                peer.send(&msg[..]);
            }
        }
        let elapsed = oxmpi::environment::time() - t0;
        if rank == 0 {
            let lat = elapsed / n as f64 / 2.0;
            let bw = if size == 0 {
                0.0
            } else {
                size as f64 / lat / 1e6
            };
            println!("{:>10} {:>8} {:>14.2} {:>14.1}", size, n, lat * 1e6, bw);
        }
    }
}
