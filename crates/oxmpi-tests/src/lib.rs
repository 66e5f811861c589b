//! Helpers shared by the rank programs in `src/bin`: a tiny deterministic RNG
//! and checks that end the job with a clear message.

#[path = "../../oxmpi-core/tests/common/rng.rs"]
mod rng;
pub use rng::Rng;

/// Asserts with the rank in the message, so a failing rank names itself.
#[macro_export]
macro_rules! check {
    ($rank:expr, $cond:expr, $($fmt:tt)+) => {
        if !$cond {
            eprintln!("rank {}: check failed: {}: {}", $rank, stringify!($cond), format!($($fmt)+));
            std::process::exit(3);
        }
    };
}

/// Sends signal `sig` (a name: `TERM`, `KILL`) to process `pid` with the shell's
/// `kill` (no `unsafe` libc call for what a test harness needs), waiting for it.
pub fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("sh")
        .args(["-c", &format!("kill -{sig} {pid}")])
        .status();
}

/// Whether this process runs as root (its effective uid, from `/proc/self/status`).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// The `(index, edges)` of a star graph of `n` nodes around node 0 (`MPI_Graph_create`'s
/// arrays): node 0's neighbours are 1..n in order, every other node's is 0.
pub fn star_graph(n: i32) -> (Vec<i32>, Vec<i32>) {
    let mut index = Vec::new();
    let mut edges = Vec::new();
    for r in 0..n {
        if r == 0 {
            edges.extend(1..n);
        } else {
            edges.push(0);
        }
        index.push(edges.len() as i32);
    }
    (index, edges)
}
