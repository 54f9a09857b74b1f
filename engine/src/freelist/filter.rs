//! A filter for the many "is this page free or pending?" questions one commit asks.
//!
//! Before a commit writes, it checks every page reference of every node it writes against the
//! free and pending pages (`commit::check_references`: a tree that points at a free page would
//! let the next allocation overwrite live data). A one-key Set rewrites the tree's root branch,
//! so that is a few hundred references, each a search of the pending index and of the free set:
//! 8,300 of a Set's 70,000 instructions (cachegrind, `docs/performance.md`, "Write commits").
//!
//! The filter keeps one bit per residue of a page id modulo [`BITS`], set for every free or
//! pending page. A clear bit proves the page is neither; a set bit sends the question to the
//! freelist itself, so an answer never changes, only its cost. A freelist of more than
//! [`MAX_PAGES`] pages would set most bits. When those pages lie in at most [`MAX_RUNS`] runs —
//! a database that was once large frees half a million pages in a few runs — the bits hold the
//! pending pages and the short free runs, and the filter keeps the long runs themselves,
//! searched by bisection: without it the hashmap free set answered each of a commit's
//! references with a B-tree search (17,000 of a large database's 47,000 instructions per Set,
//! callgrind, BENCHMARKS.md). The short runs go to the bits: a commit that reserves from a long
//! run's front leaves up to 16 free pages among the tree's (`commit/reserve.rs`), and bisecting
//! them too at every reference took a once-large database's Set from 26,600 instructions to
//! 34,300 (27,200 with them by residue; array free set, not synced, cachegrind). With more runs
//! than that, or too many pending pages, the filter lets every question through and
//! costs nothing to build.

use crashlab_format::types::{PageId, PageSpan};

/// Bits in the filter: page ids modulo this pick the bit.
const BITS: u64 = 1024;

/// Most free and pending pages the filter is built for (a quarter of the bits).
pub const MAX_PAGES: u64 = BITS / 4;

/// Most free runs the filter keeps when their pages are too many for the bits: a copy of at
/// most 1 KiB per commit, and six steps of bisection per question.
pub const MAX_RUNS: usize = 64;

/// The longest free run [`FreeFilter::keep_run`] keeps by residue.
const SHORT_RUN_MAX: u64 = 8;

/// One bit per residue of a page id, and how many pages were added.
pub struct Bits {
    words: [u64; (BITS / 64) as usize],
    pages: u64,
}

impl Bits {
    const EMPTY: Bits = Bits {
        words: [0; (BITS / 64) as usize],
        pages: 0,
    };

    fn add(&mut self, id: PageId) {
        self.pages += 1;
        assert!(
            self.pages <= MAX_PAGES,
            "a filter holds at most {MAX_PAGES} pages"
        );
        let bit = id.0 % BITS;
        self.words[(bit / 64) as usize] |= 1 << (bit % 64);
    }

    /// Whether `id` may be free or pending: a page of its residue was added.
    pub fn may_hold(&self, id: PageId) -> bool {
        let bit = id.0 % BITS;
        self.words[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }
}

/// The pending pages by residue, and the free runs exactly: ascending, disjoint, at most
/// [`MAX_RUNS`].
pub struct HeldRuns {
    bits: Bits,
    runs: Vec<PageSpan>,
}

impl HeldRuns {
    /// Whether `id` may be free or pending: its residue's bit, or a run holding it.
    pub fn may_hold(&self, id: PageId) -> bool {
        self.bits.may_hold(id) || self.in_run(id)
    }

    /// Whether a held run holds `id`. A once-large file's long free runs mostly lie past its
    /// tree, so most references are below the first run: one comparison answers them.
    fn in_run(&self, id: PageId) -> bool {
        let below_all = self.runs.first().is_none_or(|first| id < first.start);
        !below_all && {
            let i = self.runs.partition_point(|r| r.end() <= id);
            self.runs.get(i).is_some_and(|r| r.start <= id)
        }
    }
}

/// See the module docs. A commit matches the variant once (`commit::check_references`), so
/// the common question, a clear bit, costs one test per reference.
pub enum FreeFilter {
    /// Every free and pending page, by residue.
    Pages(Bits),
    /// Many free pages in few runs.
    Runs(HeldRuns),
    /// Too many pages in too many runs: every page may be free.
    All,
}

impl FreeFilter {
    /// A filter letting every question through.
    pub fn pass_all() -> FreeFilter {
        FreeFilter::All
    }

    /// A filter holding no page yet, for at most [`MAX_PAGES`] pages.
    pub fn empty() -> FreeFilter {
        FreeFilter::Pages(Bits::EMPTY)
    }

    /// A filter holding no page yet, for at most [`MAX_PAGES`] pages by residue and `runs`
    /// runs (at most [`MAX_RUNS`]) held exactly with [`FreeFilter::hold_run`].
    pub fn for_runs(runs: usize) -> FreeFilter {
        assert!(runs <= MAX_RUNS, "a filter holds at most {MAX_RUNS} runs");
        FreeFilter::Runs(HeldRuns {
            bits: Bits::EMPTY,
            runs: Vec::with_capacity(runs),
        })
    }

    /// Hold the pages of `run` by residue.
    pub fn add_run(&mut self, run: PageSpan) {
        (run.start.0..run.end().0).for_each(|id| self.add(PageId(id)));
    }

    /// Hold page `id` by residue.
    pub fn add(&mut self, id: PageId) {
        match self {
            FreeFilter::Pages(bits) | FreeFilter::Runs(HeldRuns { bits, .. }) => bits.add(id),
            FreeFilter::All => panic!("a filter of pages, not pass_all"),
        }
    }

    /// Hold every page of `run` exactly, however many it spans: at most [`MAX_RUNS`] runs,
    /// given in ascending order, as a free set walks them.
    pub fn hold_run(&mut self, run: PageSpan) {
        let FreeFilter::Runs(HeldRuns { runs, .. }) = self else {
            panic!("runs are held by a filter made with for_runs");
        };
        assert!(
            runs.len() < MAX_RUNS,
            "a filter holds at most {MAX_RUNS} runs"
        );
        assert!(
            runs.last().is_none_or(|last| last.end() <= run.start),
            "runs ascending and disjoint"
        );
        runs.push(run);
    }

    /// Keep `run` (ascending, as [`FreeFilter::hold_run`] takes them) in a filter made with
    /// [`FreeFilter::for_runs`]: by residue when it is short and the bits have room, else
    /// exactly. The short runs a growing tree leaves among its pages would otherwise lengthen
    /// the bisection every reference pays for, where a bit costs the rare reference that shares
    /// its residue a question to the freelist.
    pub fn keep_run(&mut self, run: PageSpan) {
        let short = run.count <= SHORT_RUN_MAX;
        match self {
            FreeFilter::Runs(HeldRuns { bits, .. })
                if short && bits.pages + run.count <= MAX_PAGES =>
            {
                self.add_run(run)
            }
            // `hold_run` refuses any filter not made with `for_runs`.
            _ => self.hold_run(run),
        }
    }

    /// Whether `id` may be free or pending (`false`: it is certainly neither).
    #[cfg(test)]
    pub fn may_hold(&self, id: PageId) -> bool {
        match self {
            FreeFilter::Pages(bits) => bits.may_hold(id),
            FreeFilter::Runs(held) => held.may_hold(id),
            FreeFilter::All => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl FreeFilter {
        /// A filter for the pages of `runs` and `ids`, at most [`MAX_PAGES`] of them.
        fn of(runs: &[PageSpan], ids: impl Iterator<Item = PageId>) -> FreeFilter {
            let mut filter = FreeFilter::empty();
            runs.iter().for_each(|&run| filter.add_run(run));
            ids.for_each(|id| filter.add(id));
            filter
        }
    }

    proptest! {
        /// Never a false "certainly not": every page of the runs and ids may be held.
        #[test]
        fn every_held_page_may_be_held(
            starts in proptest::collection::btree_set(2u64..100_000, 0..20),
            ids in proptest::collection::vec(2u64..100_000, 0..40),
        ) {
            let runs: Vec<PageSpan> =
                starts.iter().map(|&s| PageSpan::new(PageId(s), 1 + s % 5)).collect();
            let filter = FreeFilter::of(&runs, ids.iter().map(|&i| PageId(i)));
            for id in runs.iter().flat_map(|r| r.start.0..r.end().0).chain(ids.iter().copied()) {
                prop_assert!(filter.may_hold(PageId(id)), "page {id} filtered out");
            }
        }
    }

    proptest! {
        /// Runs held beside the bits are answered exactly: a page is let through when a run
        /// holds it or a page of the bits shares its residue, and only then.
        #[test]
        fn held_runs_are_answered_exactly(
            starts in proptest::collection::btree_set(2u64..1_000_000, 0..=MAX_RUNS),
            lens in proptest::collection::vec(1u64..100_000, MAX_RUNS),
            pending in proptest::collection::vec(2u64..1_000_000, 0..40),
            probes in proptest::collection::vec(0u64..1_200_000, 100),
        ) {
            let starts: Vec<u64> = starts.into_iter().collect();
            let runs: Vec<PageSpan> = starts
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let next = starts.get(i + 1).copied().unwrap_or(u64::MAX);
                    PageSpan::new(PageId(s), lens[i].min(next - s))
                })
                .collect();
            let mut filter = FreeFilter::for_runs(runs.len());
            pending.iter().for_each(|&i| filter.add(PageId(i)));
            runs.iter().for_each(|&r| filter.hold_run(r));
            let edges = runs.iter().flat_map(|r| [r.start.0 - 1, r.start.0, r.end().0 - 1, r.end().0]);
            for id in probes.into_iter().chain(edges) {
                let in_run = runs.iter().any(|r| r.start.0 <= id && id < r.end().0);
                let residue = pending.iter().any(|p| p % BITS == id % BITS);
                prop_assert_eq!(filter.may_hold(PageId(id)), in_run || residue, "page {}", id);
            }
        }
    }

    proptest! {
        /// Runs kept by residue or exactly are never filtered out, and only a long run, or one
        /// the bits had no room for, is held exactly.
        #[test]
        fn kept_runs_are_never_filtered_out(
            lens in proptest::collection::vec(1u64..40, 1..=MAX_RUNS),
            pending in proptest::collection::vec(2u64..1_000_000, 0..40),
        ) {
            let mut start = 2;
            let runs: Vec<PageSpan> = lens
                .iter()
                .map(|&len| {
                    let run = PageSpan::new(PageId(start), len);
                    start += len + 1 + len % 7;
                    run
                })
                .collect();
            let mut filter = FreeFilter::for_runs(runs.len());
            pending.iter().for_each(|&i| filter.add(PageId(i)));
            runs.iter().for_each(|&r| filter.keep_run(r));
            let pages = runs.iter().flat_map(|r| r.start.0..r.end().0);
            for id in pages.chain(pending.iter().copied()) {
                prop_assert!(filter.may_hold(PageId(id)), "page {id} filtered out");
            }
            let FreeFilter::Runs(held) = &filter else { unreachable!() };
            // A run held exactly is long, or came when the bits had no room for it.
            let long_or_no_room = |r: &PageSpan| {
                r.count > SHORT_RUN_MAX || held.bits.pages + r.count > MAX_PAGES
            };
            prop_assert!(held.runs.iter().all(long_or_no_room));
        }
    }

    #[test]
    fn a_short_run_goes_to_the_bits_and_a_long_one_is_held() {
        let mut filter = FreeFilter::for_runs(2);
        filter.keep_run(PageSpan::new(PageId(10), 2));
        filter.keep_run(PageSpan::new(PageId(100), SHORT_RUN_MAX + 1));
        let FreeFilter::Runs(held) = &filter else {
            unreachable!()
        };
        assert_eq!(held.runs, [PageSpan::new(PageId(100), SHORT_RUN_MAX + 1)]);
        assert_eq!(held.bits.pages, 2);
        assert!(filter.may_hold(PageId(11)) && filter.may_hold(PageId(100 + SHORT_RUN_MAX)));
        assert!(!filter.may_hold(PageId(12)) && !filter.may_hold(PageId(101 + SHORT_RUN_MAX)));
    }

    #[test]
    #[should_panic(expected = "at most 64 runs")]
    fn more_runs_than_the_limit_panic() {
        let mut filter = FreeFilter::for_runs(MAX_RUNS);
        (0..=MAX_RUNS as u64).for_each(|i| filter.hold_run(PageSpan::new(PageId(10 + 2 * i), 1)));
    }

    #[test]
    fn a_page_on_another_residue_is_filtered_out() {
        let filter = FreeFilter::of(&[PageSpan::new(PageId(10), 3)], [PageId(40)].into_iter());
        assert!(filter.may_hold(PageId(11)));
        assert!(
            filter.may_hold(PageId(40 + BITS)),
            "same residue as a pending page"
        );
        assert!(!filter.may_hold(PageId(13)));
        assert!(!filter.may_hold(PageId(39)));
        assert!(FreeFilter::pass_all().may_hold(PageId(13)));
    }
}
