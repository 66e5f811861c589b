//! The one deterministic test RNG (xorshift64*), so that every rank, test and
//! property check regenerates the same values from a seed. Included by path
//! where it is used: oxmpi-core's integration and unit tests and the rank
//! programs' helpers (`crates/oxmpi-tests/src/lib.rs`).
#![allow(dead_code)]

/// xorshift64*: deterministic, so every rank can regenerate what a peer sent.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from any seed (zero included: the state is made odd).
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

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index in `0..n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.index(i + 1);
            v.swap(i, j);
        }
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
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
