//! "When can we stop?": how many behaviours — component values of the coverage signatures
//! ([`crate::signature`]) — a sweep has met, and how many new ones each window of
//! [`WINDOW_SEEDS`] seeds brought. A curve that falls to zero says that more seeds of this kind
//! are finding no new behaviour.
//!
//! Signatures are added in seed order, so the curve of a sweep is the same whatever ran it: one
//! thread or many, one process or a merge of shards.

use crate::signature::{Signature, DIMENSIONS};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Seeds per point of the curve.
pub const WINDOW_SEEDS: u64 = 1000;

/// Windows printed at each end of a long curve (the SVG has them all).
const PRINTED_ENDS: usize = 4;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Saturation {
    /// (dimension, component) pairs met.
    seen: BTreeSet<(usize, u64)>,
    /// Behaviours met per dimension.
    per_dimension: [u64; 5],
    seeds: u64,
    /// New behaviours in each window of `WINDOW_SEEDS` seeds, in order; the last may be partial.
    new_per_window: Vec<u64>,
}

impl Saturation {
    /// Add the next seed's signature; how many of its components were new.
    pub fn add(&mut self, s: &Signature) -> u64 {
        if self.seeds.is_multiple_of(WINDOW_SEEDS) {
            self.new_per_window.push(0);
        }
        self.seeds += 1;
        let mut new = 0;
        for (d, &c) in s.components.iter().enumerate() {
            if self.seen.insert((d, c)) {
                self.per_dimension[d] += 1;
                new += 1;
            }
        }
        *self.new_per_window.last_mut().expect("a window was opened") += new;
        new
    }

    /// Behaviours met so far, every dimension.
    pub fn distinct(&self) -> u64 {
        self.seen.len() as u64
    }

    pub fn seeds(&self) -> u64 {
        self.seeds
    }

    /// New behaviours per window, in order; see [`Saturation::last_window_seeds`].
    pub fn new_per_window(&self) -> &[u64] {
        &self.new_per_window
    }

    /// Seeds in the last window (`WINDOW_SEEDS` unless the sweep ended inside it).
    pub fn last_window_seeds(&self) -> u64 {
        match self.seeds % WINDOW_SEEDS {
            0 if self.seeds > 0 => WINDOW_SEEDS,
            n => n,
        }
    }

    /// The summary line: behaviours met (per dimension) and the new ones per window, the first
    /// and last few windows of a long curve.
    pub fn line(&self) -> String {
        let dims: Vec<String> = DIMENSIONS
            .iter()
            .zip(self.per_dimension)
            .map(|(d, n)| format!("{d} {n}"))
            .collect();
        let mut s = format!(
            "behaviours {} ({}) in {} seeds · new behaviour per {WINDOW_SEEDS} seeds:",
            self.distinct(),
            dims.join(", "),
            self.seeds
        );
        let w = &self.new_per_window;
        // Windows of WINDOW_SEEDS seeds; the last is printed apart when the sweep ended in it.
        let full = if self.last_window_seeds() < WINDOW_SEEDS {
            w.len().saturating_sub(1)
        } else {
            w.len()
        };
        for (i, n) in w[..full].iter().enumerate() {
            if full > 2 * PRINTED_ENDS && i == PRINTED_ENDS {
                let _ = write!(s, " …");
            }
            if full <= 2 * PRINTED_ENDS || i < PRINTED_ENDS || i >= full - PRINTED_ENDS {
                let _ = write!(s, " {n}");
            }
        }
        if full < w.len() {
            let sep = if full > 0 { " ·" } else { "" };
            let _ = write!(
                s,
                "{sep} {} in the last {} seeds",
                w[full],
                self.last_window_seeds()
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signature whose every component is `c` (each dimension counts its own).
    fn all(c: u64) -> Signature {
        Signature { components: [c; 5] }
    }

    fn of(signatures: impl IntoIterator<Item = Signature>) -> Saturation {
        let mut s = Saturation::default();
        for x in signatures {
            s.add(&x);
        }
        s
    }

    #[test]
    fn windows_count_first_sightings_per_dimension() {
        // 1000 seeds of 10 values, then 1000 of the same 10 and 5 new ones, then 500 old ones.
        let s = of((0..1000)
            .map(|i| all(i % 10))
            .chain((0..1000).map(|i| all(i % 15)))
            .chain((0..500).map(|_| all(3))));
        assert_eq!(s.new_per_window(), &[50, 25, 0]);
        assert_eq!(s.distinct(), 75);
        assert_eq!(s.seeds(), 2500);
        assert_eq!(s.last_window_seeds(), 500);
        assert_eq!(
            s.line(),
            "behaviours 75 (ops 15, faults 15, harness 15, engine 15, outcome 15) in 2500 seeds \
             · new behaviour per 1000 seeds: 50 25 · 0 in the last 500 seeds"
        );
    }

    #[test]
    fn one_new_component_is_one_new_behaviour() {
        let mut s = Saturation::default();
        assert_eq!(s.add(&all(1)), 5);
        assert_eq!(s.add(&all(1)), 0);
        let mut one_new = all(1);
        one_new.components[3] = 2;
        assert_eq!(s.add(&one_new), 1);
        // The same value in another dimension is another behaviour.
        let mut moved = all(1);
        moved.components[0] = 2;
        assert_eq!(s.add(&moved), 1);
        assert_eq!(s.distinct(), 7);
    }

    #[test]
    fn a_long_curve_prints_its_ends() {
        let s = of((0..12_000).map(|i| all(i / 1000)));
        assert_eq!(s.new_per_window().len(), 12);
        assert!(
            s.line().ends_with("seeds: 5 5 5 5 … 5 5 5 5"),
            "{}",
            s.line()
        );
        let short = of((0..10).map(all));
        assert!(short.line().ends_with("seeds: 50 in the last 10 seeds"));
        assert_eq!(of((0..1000).map(all)).last_window_seeds(), 1000);
        assert!(Saturation::default().line().ends_with("seeds:"));
    }
}
