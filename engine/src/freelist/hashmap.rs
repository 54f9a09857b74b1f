//! The span free set (bbolt's `hashmap` type): free pages kept as maximal runs ("spans"),
//! indexed three ways so allocation does not scan every free id.
//!
//! * `by_start`: first page -> size
//! * `by_end`:   one past the last page -> size (finds the left neighbour when merging)
//! * `by_size`:  size -> set of first pages (segregated by span size)
//!
//! Allocation rule (deterministic, unlike bbolt, which picks by Go's random map order): if a
//! span of exactly `n` pages exists, take the one with the lowest start; otherwise take a span
//! of the smallest size greater than `n` (best fit), the lowest start among those, allocate its
//! first `n` pages and keep the rest as a span. Each size bucket probed counts one scan step: one
//! for the exact-size probe, one more for the best-fit probe when it runs.
//!
//! Invariants: the three indexes describe the same spans; spans are non-empty, never overlap and
//! never touch (two adjacent spans are always merged into one), so each span is a maximal run of
//! free ids; `count` is the sum of the sizes; every id is >= 2.

use super::{runs_in, runs_of, FreeSet};
use crashlab_format::pageset::PageSet;
use crashlab_format::types::{PageId, PageSpan};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default)]
pub(super) struct HashmapFreeSet {
    by_start: BTreeMap<PageId, u64>,
    by_end: BTreeMap<PageId, u64>,
    by_size: BTreeMap<u64, BTreeSet<PageId>>,
    count: u64,
}

impl FreeSet for HashmapFreeSet {
    fn init(&mut self, ids: &[PageId]) {
        *self = HashmapFreeSet::default();
        for run in runs_of(ids) {
            self.add_span(run.start, run.count);
        }
    }

    fn init_spans(&mut self, free: &PageSet) {
        *self = HashmapFreeSet::default();
        // A PageSet's runs are maximal, as this set's spans must be.
        for run in free.runs() {
            self.add_span(run.start, run.count);
        }
    }

    fn init_runs(&mut self, runs: &[PageSpan]) {
        *self = HashmapFreeSet::default();
        for run in runs {
            self.add_span(run.start, run.count);
        }
    }

    fn allocate(&mut self, n: u64, scan_steps: &mut u64, moved: &mut u64) -> Option<PageId> {
        assert!(n >= 1, "the caller handles n == 0");
        *scan_steps += 1;
        if let Some(start) = self.lowest_start_of_size(n) {
            self.remove_span(start, n);
            *moved += 1;
            return Some(start);
        }
        *scan_steps += 1;
        let (&size, starts) = self.by_size.range(n + 1..).next()?;
        let start = *starts.first().expect("size buckets are never empty");
        self.remove_span(start, size);
        self.add_span(start.plus(n), size - n);
        *moved += 2;
        Some(start)
    }

    fn merge(&mut self, released: &[PageId], moved: &mut u64) {
        for run in runs_in(released.iter().copied()) {
            // One new span plus up to two neighbours absorbed: index entries touched.
            let before = self.by_start.len();
            self.merge_run(run.start, run.count);
            *moved += 1 + (before + 1 - self.by_start.len()) as u64;
        }
    }

    fn contains(&self, id: PageId) -> bool {
        self.first_within(PageSpan::new(id, 1)).is_some()
    }

    fn first_within(&self, span: PageSpan) -> Option<PageId> {
        // The span holding `span.start` starts at or before it; otherwise the first span that
        // starts inside.
        if let Some((&start, &size)) = self.by_start.range(..=span.start).next_back() {
            if span.start.0 < start.0 + size {
                return Some(span.start);
            }
        }
        self.by_start
            .range(span.start..span.end())
            .next()
            .map(|(&start, _)| start)
    }

    fn count(&self) -> u64 {
        self.count
    }

    fn for_each_run(&self, f: &mut dyn FnMut(PageSpan)) {
        for (&s, &n) in &self.by_start {
            f(PageSpan::new(s, n));
        }
    }

    fn run_count(&self) -> usize {
        self.by_start.len()
    }
}

impl HashmapFreeSet {
    fn lowest_start_of_size(&self, size: u64) -> Option<PageId> {
        self.by_size
            .get(&size)
            .and_then(|starts| starts.first().copied())
    }

    /// Add the run `start..start+size` (all of it newly free), joining the spans it touches.
    fn merge_run(&mut self, start: PageId, size: u64) {
        debug_assert!(
            (start.0..start.0 + size).all(|id| !self.contains(PageId(id))),
            "run at {start} overlaps the free set"
        );
        let (mut first, mut end) = (start, start.plus(size));
        if let Some(&left) = self.by_end.get(&first) {
            first = PageId(first.0 - left);
            self.remove_span(first, left);
        }
        if let Some(&right) = self.by_start.get(&end) {
            self.remove_span(end, right);
            end = end.plus(right);
        }
        self.add_span(first, end.0 - first.0);
    }

    fn add_span(&mut self, start: PageId, size: u64) {
        assert!(size >= 1, "empty span at {start}");
        assert!(start.0 >= 2, "span at meta page {start}");
        let fresh = self.by_start.insert(start, size).is_none();
        assert!(fresh, "span at {start} already present");
        self.by_end.insert(start.plus(size), size);
        self.by_size.entry(size).or_default().insert(start);
        self.count += size;
    }

    fn remove_span(&mut self, start: PageId, size: u64) {
        let removed = self.by_start.remove(&start);
        assert_eq!(
            removed,
            Some(size),
            "span at {start} not indexed with size {size}"
        );
        self.by_end.remove(&start.plus(size));
        let bucket = self
            .by_size
            .get_mut(&size)
            .expect("size index matches start index");
        bucket.remove(&start);
        if bucket.is_empty() {
            self.by_size.remove(&size);
        }
        self.count -= size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u64]) -> Vec<PageId> {
        v.iter().copied().map(PageId).collect()
    }

    fn set(v: &[u64]) -> HashmapFreeSet {
        let mut s = HashmapFreeSet::default();
        s.init(&ids(v));
        s
    }

    #[test]
    fn bbolt_allocate_vector_with_our_rule() {
        // bbolt's TestFreelistHashmap_allocate checks only the counts 6, 4, 3, 3. Our rule also
        // fixes the ids. Init [3,4,5,6,7,9,12,13,18] gives spans 3+5, 9+1, 12+2, 18+1.
        let mut s = set(&[3, 4, 5, 6, 7, 9, 12, 13, 18]);
        let mut steps = 0;
        // alloc(3): no span of 3; smallest larger size is 5 (at 3): take 3..6, keep 6+2.
        assert_eq!(s.allocate(3, &mut steps, &mut 0), Some(PageId(3)));
        assert_eq!(s.count(), 6);
        // alloc(2): spans of 2 are at 6 and 12; lowest start is 6.
        assert_eq!(s.allocate(2, &mut steps, &mut 0), Some(PageId(6)));
        assert_eq!(s.count(), 4);
        // alloc(1): spans of 1 are at 9 and 18; lowest start is 9.
        assert_eq!(s.allocate(1, &mut steps, &mut 0), Some(PageId(9)));
        assert_eq!(s.count(), 3);
        assert_eq!(s.ids(), ids(&[12, 13, 18]));
        // 1 + 2 probes for alloc(3), 1 each for the exact fits.
        assert_eq!(steps, 4);
    }

    #[test]
    fn best_fit_prefers_smallest_larger_span_over_lower_start() {
        // Spans: 2+6 (lowest start, biggest), 20+3, 30+3, 40+4. alloc(2) has no exact fit; the
        // smallest larger size is 3, lowest start among those is 20.
        let mut s = set(&[2, 3, 4, 5, 6, 7, 20, 21, 22, 30, 31, 32, 40, 41, 42, 43]);
        let mut steps = 0;
        assert_eq!(s.allocate(2, &mut steps, &mut 0), Some(PageId(20)));
        assert_eq!(
            s.allocate(1, &mut steps, &mut 0),
            Some(PageId(22)),
            "remainder 22+1 is an exact fit"
        );
        assert_eq!(s.allocate(7, &mut steps, &mut 0), None);
        assert_eq!(s.count(), 13);
    }

    #[test]
    fn merge_joins_both_neighbours() {
        let mut s = set(&[3, 4, 8, 9]);
        s.merge(&ids(&[5, 6, 7]), &mut 0);
        assert_eq!(s.by_start.len(), 1, "3..10 is one span");
        assert_eq!(s.lowest_start_of_size(7), Some(PageId(3)));
        s.merge(&ids(&[2, 11]), &mut 0);
        assert_eq!(s.ids(), ids(&[2, 3, 4, 5, 6, 7, 8, 9, 11]));
        assert_eq!(s.by_end.get(&PageId(10)), Some(&8));
        assert_eq!(s.by_end.get(&PageId(12)), Some(&1));
        assert!(s.contains(PageId(11)));
        assert!(!s.contains(PageId(10)));
        assert!(!s.contains(PageId(1)));
    }

    #[test]
    fn init_resets_previous_state() {
        let mut s = set(&[3, 4, 5]);
        s.init(&ids(&[10]));
        assert_eq!(s.ids(), ids(&[10]));
        assert_eq!(s.count(), 1);
        assert_eq!(s.by_size.len(), 1);
    }

    #[test]
    #[should_panic(expected = "not strictly ascending")]
    fn unsorted_init_panics() {
        // bbolt: Init([25, 5]) panics.
        set(&[25, 5]);
    }
}
