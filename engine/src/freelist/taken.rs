//! The pages one commit took from the free set, asked once per page span the commit frees:
//! freeing one of them would mean the tree also uses it (regression 014).
//!
//! A one-key Set takes about five runs. Kept as a [`PageSet`] (a B-tree of runs that joins
//! neighbours and reports overlaps in a fresh vector), the inserts and probes cost 2,100 of its
//! instructions; a short list searched end to end answers the same for a few dozen. A commit
//! that takes more runs than [`FEW_MAX`] moves them into a `PageSet`, which keeps every probe
//! logarithmic however many it takes.

use crashlab_format::pageset::PageSet;
use crashlab_format::types::{PageId, PageSpan};

/// Most runs searched end to end.
const FEW_MAX: usize = 32;

#[derive(Debug, Default)]
pub(crate) struct Taken {
    /// The runs, in the order taken, while there are at most `FEW_MAX` (and `many` is `None`).
    few: Vec<PageSpan>,
    many: Option<PageSet>,
}

impl Taken {
    /// Empty it for the next commit, keeping its allocation.
    pub fn clear(&mut self) {
        self.few.clear();
        self.many = None;
    }

    pub fn insert(&mut self, run: PageSpan) {
        match &mut self.many {
            Some(set) => {
                set.insert(run.start, run.end());
            }
            None if self.few.len() == FEW_MAX => {
                let mut set = PageSet::new();
                for r in self.few.drain(..).chain([run]) {
                    set.insert(r.start, r.end());
                }
                self.many = Some(set);
            }
            None => self.few.push(run),
        }
    }

    /// The lowest page of `span` that was taken.
    pub fn first_within(&self, span: PageSpan) -> Option<PageId> {
        match &self.many {
            Some(set) => set
                .runs_within(span.start, span.end())
                .next()
                .map(|r| r.start),
            None => self
                .few
                .iter()
                .filter(|r| r.start < span.end() && span.start < r.end())
                .map(|r| r.start.max(span.start))
                .min(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Answers as the `PageSet` it replaced, below and past the switch.
        #[test]
        fn answers_as_a_pageset_does(
            runs in proptest::collection::vec((2u64..400, 1u64..4), 0..80),
            probes in proptest::collection::vec((0u64..420, 1u64..6), 1..40),
        ) {
            let mut taken = Taken::default();
            let mut model = PageSet::new();
            for (i, &(start, count)) in runs.iter().enumerate() {
                let run = PageSpan::new(PageId(start), count);
                taken.insert(run);
                model.insert(run.start, run.end());
                for &(s, n) in probes.iter().take(1 + i % 5) {
                    let span = PageSpan::new(PageId(s), n);
                    let want = model.runs_within(span.start, span.end()).next().map(|r| r.start);
                    prop_assert_eq!(taken.first_within(span), want);
                }
            }
            prop_assert_eq!(taken.many.is_some(), runs.len() > FEW_MAX);
        }
    }
}
