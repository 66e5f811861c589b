//! Helpers shared by the rank programs in `src/bin`: a tiny deterministic RNG
//! and checks that end the job with a clear message.

/// xorshift64*: deterministic, so every rank can regenerate what a peer sent.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// Fills `buf` with bytes derived from `seed` (the payload check).
    pub fn fill(seed: u64, buf: &mut [u8]) {
        let mut r = Rng::new(seed);
        for chunk in buf.chunks_mut(8) {
            let v = r.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

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
