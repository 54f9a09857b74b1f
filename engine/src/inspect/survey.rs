//! One survey of a file, shared by the page map and the statistics: the walk of every bucket,
//! the free set, and from them what each page below the high-water mark is used for.

use super::free::FreeState;
use super::walk::{walk, Visitor, Walk};
use super::Image;
use crate::error::Result;

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
        let mut walk = walk(image.pager(), &image.meta(), visitor)?;
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
        if self.walk.reached.get(p) {
            None
        } else if p < 2 {
            Some(PageUse::Meta)
        } else if in_freelist {
            Some(PageUse::Freelist)
        } else if self.free.pending.get(p) {
            Some(PageUse::Pending)
        } else if self.free.listed.get(p) {
            Some(PageUse::Free)
        } else {
            Some(PageUse::Unreachable)
        }
    }
}
