//! One run for a commit's pages.
//!
//! A commit allocates page by page (each node as it spills, the freelist page last), and both
//! free sets hand out a single page from wherever one lies. A steady stream of one-key commits
//! then settles into two interleaved generations — each commit takes the pages the commit two
//! before freed, say 696, 698, … 704 — and writes them in one `pwrite` each, where one run
//! would take one call. So a commit first asks for as many pages as the commit before it
//! allocated, in one run, and hands its allocations out of that run while they fit; what is
//! left over goes back to the free set before the freelist page lists it.
//!
//! What it buys is the sync's time, not the calls': on ext4 a durable one-key Set took a tenth
//! to a third less, where a no_sync one, whose five calls cost no more than one, took the same
//! (`docs/performance.md`, "The ninth round").
//!
//! The run is a free run of exactly that length — the generation the commit two before wrote,
//! in the steady state — or the front of a long run when few idle free pages lie outside it.
//! Runs split anywhere left their rests behind as short runs that only page-by-page allocation
//! takes, and those slowed every free-set query (`engine/tests/reserve.rs`, the first
//! regression); but the rest of a long run is a long run, and the generations taken from its
//! front come back as runs of their commits' length. That is the once-large file: one long free
//! run beside a small tree, where commits allocating page by page settled into interleaved
//! generations at the run's front, four to six `pwrite`s a one-key Set where a fresh file
//! needs three. The short runs a growing tree leaves among its pages (about one page per
//! thousand one-key commits in the regression test) count against [`SHORT_PAGES_MAX`]: past it
//! a commit allocates page by page, as before, taking them first, so they stay about that many.
//! The array free set's first-fit scans pass over them, so the bound is small
//! (`docs/performance.md`, "The twelfth round", measures 4 to 64). Only idle pages count: the
//! short runs this commit's start released were a page-by-page commit's pages two commits
//! before, and counting them pushed the commit after it past the bound again
//! ([`takes_front_of`]). Page by page never used them up, though: the pages the next commit
//! rewrites come back two commits later. What uses them up is the full piece an append splits
//! off behind the tree's right edge, which no later commit rewrites (`spill.rs`,
//! `Place::BehindEdge`): it takes an idle short run, outside the reservation, for good.
//!
//! With no free run that long and no more free pages than it wants, as in the interleaved
//! steady state, a small reservation is taken at the high-water mark when the file already has
//! room there (it grows by doubling): the generations it leaves behind are runs, and the
//! interleaved pages stay free for commits that need single pages. With more free pages, in
//! short runs, the commit allocates page by page, which uses them: passing over them at every
//! commit of a stream of varying lengths grew the free set without bound (the second
//! regression in `engine/tests/reserve.rs`). A reservation never grows the file, and steps
//! aside where the session's guard knows damage that references a page in its reach, so only a
//! page the commit needs can refuse it (`tests/regression_015_…`). It is a choice of which
//! pages, never whether a page may be written: a page reachable from the last durable meta is
//! never reused.

use crashlab_format::types::{PageId, PageSpan};

/// The largest reservation taken at the high-water mark (when no free run holds it): enough
/// for a commit of a few keys, and a bound on the room a reservation can use past the mark.
pub(super) const HIGH_WATER_MAX: u64 = 16;

/// The shortest rest a reservation may leave of the run whose front it takes: a run that long
/// is no fragment, and only a run this much longer than a commit is split at all.
pub(super) const LONG_REST_MIN: u64 = 64;

/// The most idle free pages, beyond a commit's worth (of at most as many pages again), that may
/// lie outside the run a reservation takes the front of. With more, the commit allocates page by
/// page and uses them, so the short runs that commits of varying length leave behind stay few.
pub(super) const SHORT_PAGES_MAX: u64 = 16;

/// Whether a reservation of `want` pages takes the front of the run of `run` pages that
/// first-fit allocation would use, with `idle` free pages outside it
/// ([`Freelist::idle_outside`](crate::freelist::Freelist::idle_outside)).
///
/// Pages the commit two before wrote come back as this one begins. Counted as idle, a
/// page-by-page commit's pages, taken from the short runs, came back to push the next count
/// past the bound, so commits alternated for good (`engine/tests/reserve.rs`,
/// `reservations_do_not_fragment_a_once_large_free_set`); so pages released in runs shorter
/// than [`LONG_REST_MIN`] are not idle. A longer released run is a whole generation, as a
/// synced freelist of a once-large file is (a thousand pages a commit): page by page reuses it
/// where it lies, as before. A commit's worth beyond the bound is the generation a split leaves
/// one page short, which no reservation takes whole: circulation, not accumulation. It is
/// capped: a thousand idle pages allowed sent every commit's freelist to fresh pages of the
/// long run, which the kernel charges for page by page (`docs/performance.md`, "The thirteenth
/// round").
pub(super) fn takes_front_of(want: u64, run: u64, idle: u64) -> bool {
    assert!(run >= want, "the run fits");
    run - want >= LONG_REST_MIN && idle <= SHORT_PAGES_MAX + want.min(SHORT_PAGES_MAX)
}

/// Where a reservation's pages came from, and so where its leftover goes back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    FreeSet,
    /// At the high-water mark: a leftover that still ends at the mark lowers it again.
    HighWater,
}

/// The run a commit reserved and has not yet handed out.
#[derive(Debug)]
pub(super) struct Reservation {
    /// Pages to ask for: the last commit's allocation count.
    want: u64,
    /// The one attempt was made (or the reservation finished).
    asked: bool,
    left: Option<PageSpan>,
    source: Source,
}

impl Reservation {
    pub fn new(want: u64) -> Reservation {
        Reservation {
            want,
            asked: false,
            left: None,
            source: Source::FreeSet,
        }
    }

    /// Hand out `count` pages from the reserved run if they fit.
    pub fn take(&mut self, count: u64) -> Option<PageId> {
        let left = self.left.filter(|left| left.count >= count)?;
        self.left =
            (left.count > count).then(|| PageSpan::new(left.start.plus(count), left.count - count));
        Some(left.start)
    }

    /// How many pages to reserve before an allocation of `count`, once per commit: none when
    /// a reservation was already tried or would hold no more than this one allocation.
    pub fn ask(&mut self, count: u64) -> Option<u64> {
        let first = !std::mem::replace(&mut self.asked, true);
        (first && self.want > count).then_some(self.want)
    }

    /// Record a reservation of `pages` at `start` from `source`, its first `count` handed out
    /// at once.
    pub fn reserved(&mut self, start: PageId, pages: u64, count: u64, source: Source) {
        assert!(
            pages > count,
            "a reservation holds more than its first allocation"
        );
        self.left = Some(PageSpan::new(start.plus(count), pages - count));
        self.source = source;
    }

    /// The pages the reservation asks (or asked) for: the last commit's allocation count.
    pub fn size(&self) -> u64 {
        self.want
    }

    /// Pages reserved and not yet handed out.
    pub fn held(&self) -> u64 {
        self.left.map_or(0, |left| left.count)
    }

    /// The pages never handed out, to give back where they came from.
    pub fn finish(&mut self) -> Option<(PageSpan, Source)> {
        self.asked = true;
        self.left.take().map(|left| (left, self.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_pieces_in_order_until_one_does_not_fit() {
        let mut r = Reservation::new(5);
        assert_eq!(r.take(1), None, "nothing reserved yet");
        assert_eq!(r.ask(1), Some(5));
        r.reserved(PageId(10), 5, 1, Source::HighWater);
        assert_eq!(r.take(2), Some(PageId(11)));
        assert_eq!(r.take(3), None, "two pages left");
        assert_eq!(r.held(), 2);
        assert_eq!(r.take(1), Some(PageId(13)));
        let left = PageSpan::new(PageId(14), 1);
        assert_eq!(r.finish(), Some((left, Source::HighWater)));
        assert_eq!(r.held(), 0);
        assert_eq!(r.finish(), None, "given back once");
    }

    #[test]
    fn takes_the_front_only_of_a_long_run_with_few_idle_pages_beside_it() {
        assert!(takes_front_of(4, 4 + LONG_REST_MIN, 0));
        assert!(!takes_front_of(4, 3 + LONG_REST_MIN, 0), "short rest");
        let run = 1 << 20;
        assert!(takes_front_of(4, run, SHORT_PAGES_MAX + 4));
        assert!(
            !takes_front_of(4, run, SHORT_PAGES_MAX + 5),
            "idle short runs to use first"
        );
        assert!(
            takes_front_of(8, run, SHORT_PAGES_MAX + 8),
            "a commit's worth"
        );
        assert!(
            !takes_front_of(1000, run, 2 * SHORT_PAGES_MAX + 1),
            "a large commit's worth is capped"
        );
    }

    #[test]
    fn asks_once_and_only_for_more_than_the_first_allocation() {
        let mut r = Reservation::new(5);
        assert_eq!(
            r.ask(5),
            None,
            "a run of the allocation alone is no reservation"
        );
        assert_eq!(r.ask(1), None, "asked once per commit");
        let mut r = Reservation::new(0);
        assert_eq!(r.ask(1), None, "the first commit has no count to reserve");
        let mut r = Reservation::new(3);
        assert_eq!(r.finish(), None);
        assert_eq!(r.ask(1), None, "finished before asking");
    }
}
