//! The fuzzer's one source of randomness: a ChaCha8 stream per purpose, seeded from the
//! campaign seed and the input's index, so every input replays from `(seed, index)` alone and
//! inputs do not depend on each other or on how many workers ran them.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

pub struct FuzzRng {
    inner: ChaCha8Rng,
}

/// FNV-1a of a purpose name: a salt that separates the streams of one seed.
fn salt(purpose: &str) -> u64 {
    purpose.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl FuzzRng {
    pub fn new(seed: u64) -> FuzzRng {
        FuzzRng {
            inner: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The stream for `purpose` of input `index` of the campaign `seed`.
    pub fn derive(seed: u64, index: u64, purpose: &str) -> FuzzRng {
        let mixed = seed.rotate_left(29) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        FuzzRng::new(mixed ^ salt(purpose).rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Uniform index into a collection of `len > 0` elements.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "range({lo}, {hi})");
        if hi - lo == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn ratio(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One of `items`, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// An index into `weights`, each chosen in proportion to its weight.
    pub fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        unreachable!("x < total")
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }

    /// Random bytes, `lo..=hi` of them.
    pub fn bytes_in(&mut self, lo: usize, hi: usize) -> Vec<u8> {
        let len = self.range(lo as u64, hi as u64) as usize;
        self.bytes(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_replay_and_differ_by_index_and_purpose() {
        let a = FuzzRng::derive(7, 3, "mutate").next_u64();
        assert_eq!(a, FuzzRng::derive(7, 3, "mutate").next_u64());
        assert_ne!(a, FuzzRng::derive(7, 4, "mutate").next_u64());
        assert_ne!(a, FuzzRng::derive(7, 3, "plan").next_u64());
        assert_ne!(a, FuzzRng::derive(8, 3, "mutate").next_u64());
    }

    #[test]
    fn draws_stay_in_range() {
        let mut r = FuzzRng::new(1);
        assert!((0..1000).all(|_| r.below(3) < 3));
        assert!((0..1000).all(|_| (5..=9).contains(&r.range(5, 9))));
        let w: Vec<usize> = (0..1000).map(|_| r.weighted(&[0, 1, 0, 3])).collect();
        assert!(w.iter().all(|&i| i == 1 || i == 3));
        assert!(w.contains(&1) && w.contains(&3));
        let _ = r.range(0, u64::MAX);
    }
}
