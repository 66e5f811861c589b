use oxmpi::traits::*;
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1_000_000);
    let size: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(8);
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let rank = world.rank();
    let peer = world.process_at_rank(1 - rank);
    let s = vec![1u8; size];
    let mut r = vec![0u8; size];
    let t = oxmpi::environment::time();
    for _ in 0..n {
        if rank == 0 { peer.send(&s[..]); peer.receive_into(&mut r[..]); }
        else { peer.receive_into(&mut r[..]); peer.send(&s[..]); }
    }
    let dt = oxmpi::environment::time() - t;
    if rank == 0 { println!("{:.3} us", dt * 1e6 / (2.0 * n as f64)); }
}
