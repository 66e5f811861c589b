//! A long ping-pong between ranks 0 and 1, for profilers (`perf record`) and A/B
//! comparisons of the point-to-point hot path: one-way latency over N round trips.
//!
//! `mpiexec -n 2 target/release/examples/pp_loop [ROUND_TRIPS] [BYTES]` (defaults
//! 1000000 and 8); prints `<us> us` (one-way) from rank 0.
use oxmpi::traits::*;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let size: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(8);
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    let peer = world.process_at_rank(1 - rank);
    let s = vec![1u8; size];
    let mut r = vec![0u8; size];
    let t = oxmpi::environment::time();
    for _ in 0..n {
        if rank == 0 {
            peer.send(&s[..]);
            peer.receive_into(&mut r[..]);
        } else {
            peer.receive_into(&mut r[..]);
            peer.send(&s[..]);
        }
    }
    let dt = oxmpi::environment::time() - t;
    if rank == 0 {
        println!("{:.3} us", dt * 1e6 / (2.0 * n as f64));
    }
}
