//! The span free set (bbolt's `hashmap` type): free pages kept as maximal runs ("spans"), with
//! an index by size so allocation does not scan every span of a fragmented set.
//!
//! Allocation rule (deterministic, unlike bbolt, which picks by Go's random map order): if a
//! span of exactly `n` pages exists, take the one with the lowest start; otherwise take a span
//! of the smallest size greater than `n` (best fit), the lowest start among those, allocate its
//! first `n` pages and keep the rest as a span. Scan steps count the rule's two probes: one for
//! the exact size, one more when no span has exactly `n` pages. They count the rule, not the
//! representation, so both forms below report the same figures.
//!
//! Two forms, chosen by how many spans there are:
//!
//! * **Few** ([`FEW_MAX`] spans at most): one vector ascending by start, and a best-fit scan
//!   over all of it. Without readers holding old snapshots a small database's free set is a
//!   handful of spans; as indexes, every commit's frees and allocations were about twenty
//!   B-tree inserts and removals, 5k of a one-key Set's instructions (callgrind,
//!   `docs/performance.md`, "The fifth round"). The vector keeps its allocation.
//! * **Many**: `by_start` (first page -> size) and `by_size` (size, first page). The rule's
//!   pick is the first `by_size` entry at or after `(n, 0)`, one lookup for both probes; a
//!   span's left neighbour is the `by_start` entry before it, so bbolt's third index (by end) is
//!   not needed. The indexes go back to a vector only at [`FEW_MIN`] spans, so a set near the
//!   threshold does not switch at every call.
//!
//! Invariants: spans are non-empty, never overlap and never touch (two adjacent spans are always
//! merged into one), so each span is a maximal run of free ids; in `Many` the two indexes
//! describe the same spans and there are more than `FEW_MIN`; `Few` holds at most `FEW_MAX`;
//! `count` is the sum of the sizes; every id is >= 2.

use super::{runs_of, sorted_runs, FreeSet};
use crashlab_format::pageset::PageSet;
use crashlab_format::types::{PageId, PageSpan};
use std::collections::{BTreeMap, BTreeSet};

/// Most spans kept as a vector: a best-fit scan reads each of them.
const FEW_MAX: usize = 64;
/// Indexes that shrink to this many spans become a vector again.
const FEW_MIN: usize = FEW_MAX / 4;

#[derive(Clone, Debug, Default)]
pub(super) struct HashmapFreeSet {
    spans: Spans,
    count: u64,
}

#[derive(Clone, Debug)]
enum Spans {
    Few(Vec<PageSpan>),
    Many(Indexed),
}

impl Default for Spans {
    fn default() -> Spans {
        Spans::Few(Vec::new())
    }
}

#[derive(Clone, Debug, Default)]
struct Indexed {
    by_start: BTreeMap<PageId, u64>,
    by_size: BTreeSet<(u64, PageId)>,
}

impl FreeSet for HashmapFreeSet {
    fn init(&mut self, ids: &[PageId]) {
        self.set_runs(runs_of(ids));
    }

    fn init_spans(&mut self, free: &PageSet) {
        // A PageSet's runs are maximal, as this set's spans must be.
        self.set_runs(free.runs().collect());
    }

    fn init_runs(&mut self, runs: &[PageSpan]) {
        self.set_runs(runs.to_vec());
    }

    fn allocate(&mut self, n: u64, scan_steps: &mut u64, moved: &mut u64) -> Option<PageId> {
        assert!(n >= 1, "the caller handles n == 0");
        *scan_steps += 1;
        let fit = self.spans.fit(n);
        if fit.is_none_or(|span| span.count != n) {
            *scan_steps += 1;
        }
        let span = fit?;
        FreeSet::take_front(self, span, n, moved);
        Some(span.start)
    }

    fn take_exact(&mut self, n: u64, scan_steps: &mut u64, moved: &mut u64) -> Option<PageId> {
        assert!(n >= 1, "the caller handles n == 0");
        *scan_steps += 1;
        let span = self.spans.fit(n).filter(|span| span.count == n)?;
        self.spans.take_front(span, n);
        self.spans.settle();
        *moved += 1;
        self.count -= n;
        Some(span.start)
    }

    fn fit(&self, n: u64) -> Option<PageSpan> {
        self.spans.fit(n)
    }

    fn lowest_run_where(
        &self,
        max: usize,
        pred: &mut dyn FnMut(PageSpan) -> bool,
    ) -> Option<PageSpan> {
        match &self.spans {
            Spans::Few(runs) => runs.iter().take(max).copied().find(|&run| pred(run)),
            Spans::Many(ix) => ix
                .by_start
                .iter()
                .take(max)
                .map(|(&start, &size)| PageSpan::new(start, size))
                .find(|&run| pred(run)),
        }
    }

    fn take_front(&mut self, run: PageSpan, n: u64, moved: &mut u64) {
        assert!(run.count >= n, "the run holds {n} pages");
        self.spans.take_front(run, n);
        self.spans.settle();
        // Index entries touched: the span removed, and its remainder added.
        *moved += if run.count > n { 2 } else { 1 };
        self.count -= n;
    }

    fn merge_run(&mut self, run: PageSpan, moved: &mut u64) {
        debug_assert!(
            self.first_within(run).is_none(),
            "run at {} overlaps the free set",
            run.start
        );
        // One new span plus up to two neighbours absorbed: index entries touched.
        let before = self.run_count();
        self.spans.join(run);
        *moved += 1 + (before + 1 - self.run_count()) as u64;
        self.spans.settle();
        self.count += run.count;
    }

    fn contains(&self, id: PageId) -> bool {
        self.first_within(PageSpan::new(id, 1)).is_some()
    }

    fn first_within(&self, span: PageSpan) -> Option<PageId> {
        match &self.spans {
            Spans::Few(runs) => sorted_runs::first_within(runs, span),
            Spans::Many(ix) => ix.first_within(span),
        }
    }

    fn count(&self) -> u64 {
        self.count
    }

    fn for_each_run(&self, f: &mut dyn FnMut(PageSpan)) {
        match &self.spans {
            Spans::Few(runs) => runs.iter().copied().for_each(f),
            Spans::Many(ix) => {
                for (&start, &size) in &ix.by_start {
                    f(PageSpan::new(start, size));
                }
            }
        }
    }

    fn run_count(&self) -> usize {
        match &self.spans {
            Spans::Few(runs) => runs.len(),
            Spans::Many(ix) => ix.by_start.len(),
        }
    }
}

impl HashmapFreeSet {
    fn set_runs(&mut self, runs: Vec<PageSpan>) {
        self.count = sorted_runs::checked_count(&runs);
        self.spans = if runs.len() <= FEW_MAX {
            Spans::Few(runs)
        } else {
            Spans::Many(Indexed::of(&runs))
        };
    }
}

impl Spans {
    /// The span the allocation rule picks for `n` pages.
    fn fit(&self, n: u64) -> Option<PageSpan> {
        match self {
            Spans::Few(runs) => {
                let mut best: Option<PageSpan> = None;
                for &run in runs {
                    if run.count == n {
                        // Ascending by start: the first exact fit has the lowest start.
                        return Some(run);
                    }
                    if run.count > n && best.is_none_or(|b| run.count < b.count) {
                        best = Some(run);
                    }
                }
                best
            }
            Spans::Many(ix) => {
                let &(size, start) = ix.by_size.range((n, PageId(0))..).next()?;
                Some(PageSpan::new(start, size))
            }
        }
    }

    /// Allocate the first `n` pages of `span`, one of the spans.
    fn take_front(&mut self, span: PageSpan, n: u64) {
        let rest = (span.count > n).then(|| PageSpan::new(span.start.plus(n), span.count - n));
        match self {
            Spans::Few(runs) => {
                let i = runs.partition_point(|r| r.start < span.start);
                assert_eq!(runs.get(i), Some(&span), "span at {} not held", span.start);
                match rest {
                    // Still between the same neighbours: the order holds.
                    Some(rest) => runs[i] = rest,
                    None => {
                        runs.remove(i);
                    }
                }
            }
            Spans::Many(ix) => {
                ix.remove(span);
                if let Some(rest) = rest {
                    ix.add(rest);
                }
            }
        }
    }

    /// Add `run` (all of it newly free), joining the spans it touches.
    fn join(&mut self, run: PageSpan) {
        match self {
            Spans::Few(runs) => {
                sorted_runs::join(runs, run);
            }
            Spans::Many(ix) => ix.join(run),
        }
    }

    /// Switch form when the span count crossed a threshold.
    fn settle(&mut self) {
        match self {
            Spans::Few(runs) if runs.len() > FEW_MAX => *self = Spans::Many(Indexed::of(runs)),
            Spans::Many(ix) if ix.by_start.len() <= FEW_MIN => {
                let runs = ix.by_start.iter().map(|(&s, &n)| PageSpan::new(s, n));
                *self = Spans::Few(runs.collect());
            }
            _ => {}
        }
    }
}

impl Indexed {
    fn of(runs: &[PageSpan]) -> Indexed {
        Indexed {
            by_start: runs.iter().map(|r| (r.start, r.count)).collect(),
            by_size: runs.iter().map(|r| (r.count, r.start)).collect(),
        }
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

    fn join(&mut self, run: PageSpan) {
        assert!(run.start.0 >= 2, "span at meta page {}", run.start);
        let (mut first, mut end) = (run.start, run.end());
        // The span starting nearest below is the only one that can end where this run starts.
        let left = self.by_start.range(..first).next_back();
        if let Some((&start, &size)) = left.filter(|(s, n)| s.plus(**n) == first) {
            self.remove(PageSpan::new(start, size));
            first = start;
        }
        if let Some(&size) = self.by_start.get(&end) {
            self.remove(PageSpan::new(end, size));
            end = end.plus(size);
        }
        self.add(PageSpan::new(first, end.0 - first.0));
    }

    fn add(&mut self, span: PageSpan) {
        assert!(span.count >= 1, "empty span at {}", span.start);
        let fresh = self.by_start.insert(span.start, span.count).is_none();
        assert!(fresh, "span at {} already present", span.start);
        self.by_size.insert((span.count, span.start));
    }

    fn remove(&mut self, span: PageSpan) {
        let removed = self.by_start.remove(&span.start);
        assert_eq!(
            removed,
            Some(span.count),
            "span at {} not indexed with size {}",
            span.start,
            span.count
        );
        let sized = self.by_size.remove(&(span.count, span.start));
        assert!(sized, "size index matches start index at {}", span.start);
    }
}

#[cfg(test)]
#[path = "hashmap_tests.rs"]
mod tests;
