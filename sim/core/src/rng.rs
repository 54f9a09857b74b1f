//! The run's one source of randomness: a ChaCha8 stream seeded from the run seed. Every
//! random choice a run makes comes from here, in program order, so a seed replays exactly.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

pub struct SimRng {
    inner: ChaCha8Rng,
}

impl SimRng {
    pub fn new(seed: u64) -> SimRng {
        SimRng {
            inner: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// An independent stream for one purpose (workload, faults, ...), so adding a draw in one
    /// place does not shift every other choice.
    pub fn derive(seed: u64, purpose: &str) -> SimRng {
        let salt = purpose.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        SimRng::new(seed ^ salt.rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }

    /// One of `items`, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_purposes_differ() {
        let a: Vec<u64> = (0..4).map(|_| SimRng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut w = SimRng::derive(7, "workload");
        let mut f = SimRng::derive(7, "faults");
        assert_ne!(w.next_u64(), f.next_u64());
    }

    #[test]
    fn below_and_chance_stay_in_range() {
        let mut r = SimRng::new(1);
        assert!((0..1000).all(|_| r.below(3) < 3));
        assert!((0..1000).all(|_| (5..=9).contains(&r.range(5, 9))));
        assert!(!(0..100).any(|_| r.chance(0.0)));
        assert!((0..100).all(|_| r.chance(1.0)));
    }
}
