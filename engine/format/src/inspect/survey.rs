//! One survey of a file, shared by the page map and the statistics: the walk of every bucket,
//! the free set, and from them what each page below the high-water mark is used for.
//!
//! Every set here is kept as runs, so the pages below the high-water mark are described as
//! [`Survey::segments`], stretches of one use: a file that claims 2^31 pages, almost all of them
//! free, is a few segments, not 2^31 steps.

use super::free::FreeState;
use super::walk::{walk, Visitor, Walk};
use super::Image;
use crate::error::Result;
use crate::types::{PageId, PageSpan};
use std::collections::BTreeSet;

/// What a page is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PageUse {
    Meta,
    Branch,
    Leaf,
    Freelist,
    /// Listed as free (or, without a persisted freelist, reached by no bucket).
    Free,
    /// Listed as free, but the previous commit's snapshot still uses it.
    Pending,
    /// Below the high-water mark, yet neither reached nor free: a leak or damage.
    Unreachable,
    /// Referenced by a bucket, but not a readable branch or leaf page.
    Damaged,
}

impl PageUse {
    pub fn name(self) -> &'static str {
        match self {
            PageUse::Meta => "meta",
            PageUse::Branch => "branch",
            PageUse::Leaf => "leaf",
            PageUse::Freelist => "freelist",
            PageUse::Free => "free",
            PageUse::Pending => "pending",
            PageUse::Unreachable => "unreachable",
            PageUse::Damaged => "damaged",
        }
    }
}

pub(crate) struct Survey {
    pub walk: Walk,
    pub free: FreeState,
}

impl Survey {
    pub fn take(image: &Image, visitor: &mut dyn Visitor) -> Result<Survey> {
        let mut walk = walk(image.reader(), &image.meta(), visitor)?;
        let free = FreeState::read(image, &walk.reached, &mut walk.report)?;
        Ok(Survey { walk, free })
    }

    /// The use of page `p`, unless the walk entered it: then it is a branch, leaf or overflow
    /// page, which the caller's visits tell apart.
    pub fn use_of(&self, p: u64) -> Option<PageUse> {
        if self.walk.damaged.contains_key(&p) {
            return Some(PageUse::Damaged);
        }
        let in_freelist = self
            .free
            .span
            .is_some_and(|s| s.start.0 <= p && p < s.end().0);
        if self.walk.reached.contains(PageId(p)) {
            None
        } else if p < 2 {
            Some(PageUse::Meta)
        } else if in_freelist {
            Some(PageUse::Freelist)
        } else if self.free.pending.contains(PageId(p)) {
            Some(PageUse::Pending)
        } else if self.free.listed.contains(PageId(p)) {
            Some(PageUse::Free)
        } else {
            Some(PageUse::Unreachable)
        }
    }

    /// The pages `[0, high_water)` cut where any set starts or ends, in order, each with its
    /// use ([`Survey::use_of`] is the same on every page of a segment).
    pub fn segments(&self, high_water: PageId) -> Vec<(PageSpan, Option<PageUse>)> {
        let mut cuts = BTreeSet::from([0, 2.min(high_water.0), high_water.0]);
        let mut cut_span = |s: PageSpan| {
            cuts.insert(s.start.0.min(high_water.0));
            cuts.insert(s.end().0.min(high_water.0));
        };
        self.walk.reached.runs().for_each(&mut cut_span);
        self.free.listed.runs().for_each(&mut cut_span);
        self.free.pending.runs().for_each(&mut cut_span);
        self.free.span.into_iter().for_each(&mut cut_span);
        for &p in self.walk.damaged.keys() {
            cut_span(PageSpan::new(PageId(p), 1));
        }
        let cuts: Vec<u64> = cuts.into_iter().collect();
        cuts.windows(2)
            .filter(|w| w[0] < w[1])
            .map(|w| {
                let span = PageSpan::new(PageId(w[0]), w[1] - w[0]);
                (span, self.use_of(w[0]))
            })
            .collect()
    }
}
