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
