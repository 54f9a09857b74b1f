//! The format's scale thresholds, and how often a run crossed each: where bbolt's format changes
//! shape, which the default workload's universe (48 keys, 5 buckets, values ≤ 9,000 B) never
//! reaches and the `scale` profile's patterns do. The one exception is the key-limit
//! fragment's 32,768-byte key: at 512-byte pages its leaf is a node of 65 pages, an
//! `overflow-chain` crossing.
//!
//! | threshold | crossed once per | counted by |
//! |---|---|---|
//! | `freelist-escape` | freelist page written with ≥ 0xFFFF ids (count field 0xFFFF, real count in the first element) | engine counter `freelist_escaped_writes` |
//! | `freelist-pages` | freelist page written over ≥ 64 pages | `freelist_long_writes` |
//! | `overflow-chain` | node written over ≥ 64 pages (a value's overflow chain) | `overflow_long_writes` |
//! | `tree-depth` | bucket tree written with ≥ 4 levels | `deep_tree_writes` |
//! | `buckets` | acknowledged state (after a commit or a recovery) holding ≥ 1,000 buckets | the runner, from the model |
//! | `growth` | file growth to a length past 16 MiB, where growth stops doubling | `step_growths` |
//!
//! Detection costs a comparison where the engine writes (its counters, deterministic and summed
//! over the run's opens) and one walk of the model's bucket tree per acknowledged commit, so the
//! default sweep pays nothing it would notice (see docs/simulator.md for the figures).

use crashlab_engine::Counters;
use crashlab_models::{BucketModel, KvModel};
use std::fmt::Write as _;

/// Buckets in a database from which a commit counts as a `buckets` crossing.
pub const MANY_BUCKETS: u64 = 1000;

/// How often one run crossed each threshold (or, summed, a sweep's runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Thresholds {
    pub freelist_escape: u64,
    pub freelist_pages: u64,
    pub overflow_chain: u64,
    pub tree_depth: u64,
    pub buckets: u64,
    pub growth: u64,
}

impl Thresholds {
    /// A run's crossings: its engine counters (over every open) and the commits acknowledged
    /// with [`MANY_BUCKETS`] buckets or more.
    pub fn of_run(c: &Counters, many_bucket_commits: u64) -> Thresholds {
        Thresholds {
            freelist_escape: c.freelist_escaped_writes,
            freelist_pages: c.freelist_long_writes,
            overflow_chain: c.overflow_long_writes,
            tree_depth: c.deep_tree_writes,
            buckets: many_bucket_commits,
            growth: c.step_growths,
        }
    }

    /// Each threshold's name and count, in a fixed order.
    pub fn named(&self) -> [(&'static str, u64); 6] {
        [
            ("freelist-escape", self.freelist_escape),
            ("freelist-pages", self.freelist_pages),
            ("overflow-chain", self.overflow_chain),
            ("tree-depth", self.tree_depth),
            ("buckets", self.buckets),
            ("growth", self.growth),
        ]
    }

    pub fn add(&mut self, o: &Thresholds) {
        self.freelist_escape += o.freelist_escape;
        self.freelist_pages += o.freelist_pages;
        self.overflow_chain += o.overflow_chain;
        self.tree_depth += o.tree_depth;
        self.buckets += o.buckets;
        self.growth += o.growth;
    }

    /// 1 for each threshold crossed at least once, else 0: a run's contribution to the count
    /// of seeds that crossed it.
    pub fn crossed(&self) -> Thresholds {
        let one = |n: u64| u64::from(n > 0);
        Thresholds {
            freelist_escape: one(self.freelist_escape),
            freelist_pages: one(self.freelist_pages),
            overflow_chain: one(self.overflow_chain),
            tree_depth: one(self.tree_depth),
            buckets: one(self.buckets),
            growth: one(self.growth),
        }
    }
}

/// A sweep's thresholds: crossings summed, and the seeds that crossed each at least once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThresholdCoverage {
    pub crossings: Thresholds,
    pub seeds: Thresholds,
}

impl ThresholdCoverage {
    pub fn add(&mut self, run: &Thresholds) {
        self.crossings.add(run);
        self.seeds.add(&run.crossed());
    }

    /// `thresholds: freelist-escape 12 seeds (340×) · ...`: per threshold, the seeds that
    /// crossed it and how many times in all.
    pub fn line(&self) -> String {
        let mut s = String::from("thresholds:");
        for (i, ((name, seeds), (_, n))) in self
            .seeds
            .named()
            .into_iter()
            .zip(self.crossings.named())
            .enumerate()
        {
            let sep = if i == 0 { " " } else { " · " };
            let _ = write!(s, "{sep}{name} {seeds} seeds ({n}×)");
        }
        s
    }
}

/// Buckets in `m`, nested ones included, without allocating.
pub fn bucket_count(m: &KvModel) -> u64 {
    fn under(b: &BucketModel) -> u64 {
        b.buckets.values().map(|c| 1 + under(c)).sum()
    }
    under(&m.root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_counts_crossings_and_seeds() {
        let run = Thresholds {
            freelist_escape: 3,
            growth: 1,
            ..Thresholds::default()
        };
        let mut cov = ThresholdCoverage::default();
        cov.add(&run);
        cov.add(&run);
        cov.add(&Thresholds::default());
        assert_eq!(cov.crossings.freelist_escape, 6);
        assert_eq!(cov.seeds.freelist_escape, 2);
        assert_eq!(cov.seeds.growth, 2);
        assert_eq!(cov.seeds.tree_depth, 0);
        let line = cov.line();
        assert!(
            line.starts_with("thresholds: freelist-escape 2 seeds (6×) · freelist-pages 0"),
            "{line}"
        );
        assert!(line.ends_with("growth 2 seeds (2×)"), "{line}");
    }

    #[test]
    fn buckets_are_counted_at_every_depth() {
        let mut m = KvModel::new();
        for p in [&["a"][..], &["b"], &["a", "x"], &["a", "x", "y"]] {
            let path: Vec<Vec<u8>> = p.iter().map(|s| s.as_bytes().to_vec()).collect();
            m.create_bucket(&path).unwrap();
        }
        assert_eq!(bucket_count(&m), 4);
    }
}
