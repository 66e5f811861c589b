//! OSU-style streaming (windows of 64 non-blocking sends, then an ack) for a fixed
//! size and many iterations, for profilers and A/B comparisons of the small-message
//! path. `mpiexec -n 2 target/release/examples/bw_loop [ITERATIONS] [BYTES]`
//! (defaults 10000 and 8); prints microseconds per message and MB/s from rank 0.
use oxmpi::request::multiple_scope;
use oxmpi::traits::*;
const WINDOW: usize = 64;
fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10000);
    let size: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(8);
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    let peer = world.process_at_rank(1 - rank);
    let s_buf = vec![b'a'; size.max(4)];
    let mut r_buf = vec![b'b'; WINDOW * size.max(4)];
    let mut ack = [0u8; 4];
    world.barrier();
    let t = oxmpi::environment::time();
    for _ in 0..iters {
        if rank == 0 {
            let msg = &s_buf[..size];
            multiple_scope(WINDOW, |scope, coll| {
                for _ in 0..WINDOW {
                    coll.add(peer.immediate_send_with_tag(scope, msg, 1));
                }
                let mut done = Vec::with_capacity(WINDOW);
                coll.wait_all(&mut done);
            });
            peer.receive_into_with_tag(&mut ack[..], 2);
        } else {
            multiple_scope(WINDOW, |scope, coll| {
                for slot in r_buf.chunks_exact_mut(size.max(1)).take(WINDOW) {
                    coll.add(peer.immediate_receive_into_with_tag(scope, &mut slot[..size], 1));
                }
                let mut done = Vec::with_capacity(WINDOW);
                coll.wait_all(&mut done);
            });
            peer.send_with_tag(&ack[..], 2);
        }
    }
    let dt = oxmpi::environment::time() - t;
    if rank == 0 {
        println!(
            "{:.3} us/msg {:.2} MB/s",
            dt * 1e6 / (iters * WINDOW) as f64,
            (size * iters * WINDOW) as f64 / dt / 1e6
        );
    }
}
