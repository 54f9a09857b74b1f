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
//! [`MAX_PAGES`] pages would set most bits, so the filter then lets every question through
//! and costs nothing to build.

use crashlab_format::types::{PageId, PageSpan};

/// Bits in the filter: page ids modulo this pick the bit.
const BITS: u64 = 1024;

/// Most free and pending pages the filter is built for (a quarter of the bits).
pub const MAX_PAGES: u64 = BITS / 4;

/// See the module docs.
pub struct FreeFilter {
    /// `None`: too many pages; every page may be free.
    bits: Option<[u64; (BITS / 64) as usize]>,
    /// Pages added so far, at most [`MAX_PAGES`].
    pages: u64,
}

impl FreeFilter {
    /// A filter letting every question through.
    pub fn pass_all() -> FreeFilter {
        FreeFilter {
            bits: None,
            pages: 0,
        }
    }

    /// A filter holding no page yet, for at most [`MAX_PAGES`] pages.
    pub fn empty() -> FreeFilter {
        FreeFilter {
            bits: Some([0; (BITS / 64) as usize]),
            pages: 0,
        }
    }

    /// Hold the pages of `run`.
    pub fn add_run(&mut self, run: PageSpan) {
        (run.start.0..run.end().0).for_each(|id| self.add(PageId(id)));
    }

    /// Hold page `id`.
    pub fn add(&mut self, id: PageId) {
        self.pages += 1;
        assert!(
            self.pages <= MAX_PAGES,
            "a filter holds at most {MAX_PAGES} pages"
        );
        let bits = self.bits.as_mut().expect("a filter of pages, not pass_all");
        let bit = id.0 % BITS;
        bits[(bit / 64) as usize] |= 1 << (bit % 64);
    }

    /// Whether `id` may be free or pending (`false`: it is certainly neither).
    pub fn may_hold(&self, id: PageId) -> bool {
        match &self.bits {
            None => true,
            Some(bits) => {
                let bit = id.0 % BITS;
                bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0
            }
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
