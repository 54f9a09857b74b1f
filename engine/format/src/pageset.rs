//! A set of page ids kept as maximal runs, for the sets whose size a file claims: the pages a
//! walk reached, the free pages of a rebuild, the free set `check()` compares against.
//!
//! A high-water mark is a number in a meta, not a measure of what the file holds: a sparse
//! 1 TiB file of 48 KiB on disk can claim 2^31 pages. A bitmap over it would take 256 MiB and a
//! list of its free ids 16 GiB. Runs take memory in proportion to how fragmented the set is,
//! which for a walk's reached set is at most the number of nodes actually read, and for the free
//! set (the gaps between them) one more; counting, complementing and intersecting work run by
//! run, never page by page.
//!
//! Invariants: runs are non-empty, disjoint and never adjacent (touching runs are joined), so
//! each is a maximal run; `pages` is the sum of their lengths.

use crate::types::{PageId, PageSpan};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageSet {
    /// First page → one past the last page of each run.
    runs: BTreeMap<u64, u64>,
    pages: u64,
}

impl PageSet {
    pub fn new() -> PageSet {
        PageSet::default()
    }

    /// The set of the strictly ascending `ids`.
    pub fn from_ids(ids: impl IntoIterator<Item = PageId>) -> PageSet {
        let mut set = PageSet::new();
        for id in ids {
            set.insert(id, id.plus(1));
        }
        set
    }

    /// Pages in the set.
    pub fn len(&self) -> u64 {
        self.pages
    }

    pub fn is_empty(&self) -> bool {
        self.pages == 0
    }

    /// Maximal runs in the set: what its memory grows with.
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }

    pub fn contains(&self, id: PageId) -> bool {
        self.runs
            .range(..=id.0)
            .next_back()
            .is_some_and(|(_, &end)| id.0 < end)
    }

    /// Add the pages `start..end`; returns the runs of them that were already in the set, in
    /// order (so a walk can name what it reached twice).
    pub fn insert(&mut self, start: PageId, end: PageId) -> Vec<PageSpan> {
        assert!(start < end, "empty run {start}..{end}");
        if self.runs.range(start.0..=end.0).next().is_none() {
            return self.insert_after_runs_before(start.0, end.0);
        }
        let (mut lo, mut hi) = (start.0, end.0);
        let mut overlap = Vec::new();
        // A run that starts before `start` and reaches (or touches) it.
        if let Some((&s, &e)) = self.runs.range(..start.0).next_back() {
            if e >= start.0 {
                if e > start.0 {
                    overlap.push(span(start.0, e.min(end.0)));
                }
                lo = s;
                hi = hi.max(e);
                self.remove_run(s, e);
            }
        }
        // Runs that start inside `start..=end` (touching the end included).
        while let Some((&s, &e)) = self.runs.range(start.0..=end.0).next() {
            if s < end.0 {
                overlap.push(span(s, e.min(end.0)));
            }
            hi = hi.max(e);
            self.remove_run(s, e);
        }
        self.runs.insert(lo, hi);
        self.pages += hi - lo;
        overlap
    }

    /// [`PageSet::insert`] when no run starts inside `start..=end`: extend the run before it in
    /// place if that run reaches `start` (a walk reading a node next to the last one), or add a
    /// run. One lookup instead of removing and re-inserting the run it joins.
    fn insert_after_runs_before(&mut self, start: u64, end: u64) -> Vec<PageSpan> {
        if let Some((_, run_end)) = self.runs.range_mut(..start).next_back() {
            if *run_end >= start {
                let overlap = match *run_end > start {
                    true => vec![span(start, (*run_end).min(end))],
                    false => Vec::new(),
                };
                if end > *run_end {
                    self.pages += end - *run_end;
                    *run_end = end;
                }
                return overlap;
            }
        }
        self.runs.insert(start, end);
        self.pages += end - start;
        Vec::new()
    }

    /// Add every run of `other`.
    pub fn extend(&mut self, other: &PageSet) {
        for run in other.runs() {
            self.insert(run.start, run.end());
        }
    }

    fn remove_run(&mut self, start: u64, end: u64) {
        self.runs.remove(&start);
        self.pages -= end - start;
    }

    /// The runs, ascending.
    pub fn runs(&self) -> impl Iterator<Item = PageSpan> + '_ {
        self.runs.iter().map(|(&s, &e)| span(s, e))
    }

    /// The runs of the set that lie in `lo..hi`, clipped to it, ascending.
    pub fn runs_within(&self, lo: PageId, hi: PageId) -> impl Iterator<Item = PageSpan> + '_ {
        // The run containing `lo`, if any, starts before it.
        let first = self
            .runs
            .range(..lo.0)
            .next_back()
            .filter(|(_, &e)| e > lo.0)
            .map(|(&s, &e)| (s, e));
        let rest = self.runs.range(lo.0..hi.0).map(|(&s, &e)| (s, e));
        first
            .into_iter()
            .chain(rest)
            .map(move |(s, e)| span(s.max(lo.0), e.min(hi.0)))
    }

    /// The pages of `lo..hi` not in the set, as runs, ascending.
    pub fn gaps(&self, lo: PageId, hi: PageId) -> Vec<PageSpan> {
        let mut out = Vec::new();
        let mut at = lo.0;
        for run in self.runs_within(lo, hi) {
            if run.start.0 > at {
                out.push(span(at, run.start.0));
            }
            at = run.end().0;
        }
        if at < hi.0 {
            out.push(span(at, hi.0));
        }
        out
    }

    /// The pages in both sets.
    pub fn intersection(&self, other: &PageSet) -> PageSet {
        let mut out = PageSet::new();
        for run in self.runs() {
            for both in other.runs_within(run.start, run.end()) {
                out.insert(both.start, both.end());
            }
        }
        out
    }
}

fn span(start: u64, end: u64) -> PageSpan {
    PageSpan::new(PageId(start), end - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(runs: &[(u64, u64)]) -> PageSet {
        let mut s = PageSet::new();
        for &(a, b) in runs {
            s.insert(PageId(a), PageId(b));
        }
        s
    }

    fn runs(s: &PageSet) -> Vec<(u64, u64)> {
        s.runs().map(|r| (r.start.0, r.end().0)).collect()
    }

    #[test]
    fn inserts_join_touching_runs_and_report_overlap() {
        let mut s = set(&[(2, 4), (10, 12)]);
        assert_eq!(
            s.insert(PageId(4), PageId(6)),
            vec![],
            "touching, not overlapping"
        );
        assert_eq!(runs(&s), vec![(2, 6), (10, 12)]);
        let overlap = s.insert(PageId(5), PageId(11));
        let overlap: Vec<_> = overlap.iter().map(|r| (r.start.0, r.end().0)).collect();
        assert_eq!(overlap, vec![(5, 6), (10, 11)]);
        assert_eq!(runs(&s), vec![(2, 12)]);
        assert_eq!(s.len(), 10);
        assert!(s.contains(PageId(11)) && !s.contains(PageId(12)) && !s.contains(PageId(1)));
    }

    /// Seeded inserts against a set of page ids: the same pages, maximal runs, the overlap
    /// reported exactly as the pages that were already there, and the count kept.
    #[test]
    fn inserts_match_a_set_of_ids() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let (mut s, mut model) = (PageSet::new(), std::collections::BTreeSet::new());
            for _ in 0..60 {
                let start = next(120);
                let end = start + 1 + next(6);
                let already: Vec<u64> = (start..end).filter(|p| model.contains(p)).collect();
                let overlap = s.insert(PageId(start), PageId(end));
                let reported: Vec<u64> =
                    overlap.iter().flat_map(|r| r.start.0..r.end().0).collect();
                assert_eq!(reported, already, "insert {start}..{end}");
                model.extend(start..end);
                let ids: Vec<u64> = s.runs().flat_map(|r| r.start.0..r.end().0).collect();
                assert_eq!(ids, model.iter().copied().collect::<Vec<_>>());
                assert_eq!(s.len(), model.len() as u64);
                let r = runs(&s);
                assert!(r.windows(2).all(|w| w[0].1 < w[1].0), "maximal runs: {r:?}");
            }
        }
    }

    #[test]
    fn gaps_and_intersections_work_by_run() {
        let s = set(&[(3, 5), (8, 9), (1 << 40, (1 << 40) + 2)]);
        let gaps: Vec<_> = s
            .gaps(PageId(2), PageId(1 << 41))
            .iter()
            .map(|r| (r.start.0, r.end().0))
            .collect();
        assert_eq!(
            gaps,
            vec![(2, 3), (5, 8), (9, 1 << 40), ((1 << 40) + 2, 1 << 41)]
        );
        let within: Vec<_> = s
            .runs_within(PageId(4), PageId(9))
            .map(|r| (r.start.0, r.end().0))
            .collect();
        assert_eq!(within, vec![(4, 5), (8, 9)]);
        let other = set(&[(4, 1 << 40), ((1 << 40) + 1, 1 << 41)]);
        assert_eq!(
            runs(&s.intersection(&other)),
            vec![(4, 5), (8, 9), ((1 << 40) + 1, (1 << 40) + 2)]
        );
        assert_eq!(s.run_count(), 3);
        let ids = PageSet::from_ids([2, 3, 4, 9].map(PageId));
        assert_eq!(runs(&ids), vec![(2, 5), (9, 10)]);
    }
}
