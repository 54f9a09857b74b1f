//! Maximal runs of free pages in a vector ascending by start: the array set's whole
//! representation, and the span set's while it holds few spans. The two kinds count their work
//! differently, so these helpers only change the vector and say what they did.
//!
//! Invariant kept: runs are non-empty, ascending, disjoint and never touch.

use crashlab_format::types::{PageId, PageSpan};

/// The pages in `runs`, which a set is about to be replaced with: checked to hold no meta page
/// (and, in debug builds, to be ascending, disjoint and maximal; the callers build them so).
pub(super) fn checked_count(runs: &[PageSpan]) -> u64 {
    if let Some(first) = runs.first() {
        assert!(first.start.0 >= 2, "run at meta page {}", first.start);
    }
    debug_assert!(
        runs.windows(2).all(|w| w[0].end() < w[1].start),
        "runs must be ascending, disjoint and maximal"
    );
    runs.iter().map(|r| r.count).sum()
}

/// The lowest page of `span` in `runs`.
pub(super) fn first_within(runs: &[PageSpan], span: PageSpan) -> Option<PageId> {
    // The first run that ends after the span starts: the only one that can hold its start.
    let i = runs.partition_point(|r| r.end() <= span.start);
    let run = runs.get(i)?;
    (run.start < span.end()).then(|| run.start.max(span.start))
}

/// Add `run` (all of it newly free), joining the runs it touches; the index of the run that holds
/// it now. Panics if it overlaps a run: a page released while already free.
#[inline(always)]
pub(super) fn join(runs: &mut Vec<PageSpan>, run: PageSpan) -> usize {
    assert!(run.start.0 >= 2, "run at meta page {}", run.start);
    // Runs before `i` end at or before `run` starts.
    let i = runs.partition_point(|r| r.end() <= run.start);
    if let Some(next) = runs.get(i) {
        assert!(
            next.start >= run.end(),
            "page {} released while already free",
            next.start.max(run.start)
        );
    }
    let left = i > 0 && runs[i - 1].end() == run.start;
    let right = runs.get(i).is_some_and(|r| r.start == run.end());
    match (left, right) {
        (true, true) => {
            let after = runs.remove(i);
            runs[i - 1].count += run.count + after.count;
        }
        (true, false) => runs[i - 1].count += run.count,
        (false, true) => runs[i] = PageSpan::new(run.start, run.count + runs[i].count),
        (false, false) => runs.insert(i, run),
    }
    if left {
        i - 1
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, count: u64) -> PageSpan {
        PageSpan::new(PageId(start), count)
    }

    #[test]
    fn join_covers_the_four_cases() {
        let mut runs = vec![span(3, 2), span(10, 2)];
        assert_eq!(join(&mut runs, span(7, 1)), 1, "touching neither");
        assert_eq!(runs, vec![span(3, 2), span(7, 1), span(10, 2)]);
        assert_eq!(join(&mut runs, span(5, 2)), 0, "3..5 + 5..7 + 7..8");
        assert_eq!(runs, vec![span(3, 5), span(10, 2)]);
        assert_eq!(join(&mut runs, span(12, 1)), 1, "joining the left one");
        assert_eq!(runs, vec![span(3, 5), span(10, 3)]);
        assert_eq!(join(&mut runs, span(9, 1)), 1, "joining the right one");
        assert_eq!(runs, vec![span(3, 5), span(9, 4)]);
    }

    #[test]
    #[should_panic(expected = "page 4 released while already free")]
    fn join_refuses_an_overlap() {
        join(&mut vec![span(3, 2)], span(4, 3));
    }

    #[test]
    fn first_within_finds_the_lowest_page() {
        let runs = [span(3, 2), span(10, 2)];
        assert_eq!(first_within(&runs, span(4, 10)), Some(PageId(4)));
        assert_eq!(
            first_within(&runs, span(5, 5)),
            None,
            "5..10 falls in the gap"
        );
        assert_eq!(first_within(&runs, span(5, 6)), Some(PageId(10)));
        assert_eq!(first_within(&runs, span(12, 3)), None);
    }
}
