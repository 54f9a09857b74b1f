//! What a commit on a damaged file may change when the damage is of the kinds FORMAT.md §10
//! says a commit cannot see without walking the whole file: a page reached twice (two parents,
//! two buckets, a cycle), a reachable page that the freelist lists as free, and a reference (or
//! a node's run) reaching past the high-water mark. A commit may free such a page by rewriting
//! one of the paths to it, or allocate it, and so overwrite what the other path reads.
//!
//! So when `check()` before the commits names such a page, the oracle scopes its guarantee to
//! what does not lie at or below one (the pages at risk: the named pages and every page
//! reachable before only through one): every key the tolerant walk reads *without entering* a
//! named page must still be there after, unchanged, and `check()` of what a reader reaches
//! without entering a page at risk ([`inspect::check_avoiding`]) may find no more problems
//! after than before, plus one for each problem before at a page at risk (a commit that
//! rewrites such a page copies its other damage clear of the risk). Keys at risk may change, and
//! what the pages at risk now hold may point anywhere. The commit's own puts must read back and the file must open as before, wherever
//! they are. Without such a problem the full oracle applies.

use crashlab_engine::inspect::{self, Dump, Image};
use crashlab_engine::{PageId, PageSet, Problem, ProblemKind, Result};

/// The damage `check()` named before the commits, and what it puts at risk.
pub(super) struct Scope {
    /// The problems that name a page reached twice, reachable and free, or reaching past the
    /// high-water mark.
    pub named: Vec<Problem>,
    /// Those pages and every page reachable before only through one of them.
    pub at_risk: PageSet,
    /// What the tolerant walk read before without entering a named page.
    pub safe: Dump,
    /// `check()` before, clear of the pages at risk.
    pub clear_before: Vec<Problem>,
    /// Problems `check()` found before at pages at risk. A commit that rewrites such a page
    /// copies what else is wrong with it (a damaged inline bucket, a bad element) to a page
    /// clear of risk, so each may show there after.
    pub movable: usize,
}

/// The file after the commits, seen clear of the pages at risk.
pub(super) struct Clear {
    pub problems: Vec<Problem>,
    /// What the tolerant walk reads without entering a page at risk. The full dump can miss a
    /// key this one has: a page at risk that a commit overwrote may now point at another
    /// bucket's pages, and the walk, entering them from there first, files their keys there.
    pub dump: Dump,
}

impl Scope {
    /// The scope `problems` (inspect's `check` of `image`) call for; `None` when they name no
    /// page reached twice and no reachable free page.
    pub fn of(image: &Image, problems: &[Problem]) -> Result<Option<Scope>> {
        let named: Vec<Problem> = problems
            .iter()
            .filter(|p| unseen_by_a_commit(p).is_some())
            .cloned()
            .collect();
        if named.is_empty() {
            return Ok(None);
        }
        let mut pages = PageSet::new();
        // (Page 2^64 - 1 is never allocated: a high-water mark cannot pass it.)
        for id in named.iter().filter_map(unseen_by_a_commit) {
            if id.0 < u64::MAX {
                pages.insert(id, id.plus(1));
            }
        }
        let (_, all) = inspect::dump_avoiding(image, &PageSet::new())?;
        let (safe, outside) = inspect::dump_avoiding(image, &pages)?;
        let mut at_risk = minus(&all, &outside);
        at_risk.extend(&pages);
        let clear_before = inspect::check_avoiding(image, &at_risk)?;
        let movable = problems
            .iter()
            .filter(|p| p.page.is_some_and(|id| at_risk.contains(id)))
            .count();
        Ok(Some(Scope {
            named,
            at_risk,
            safe,
            clear_before,
            movable,
        }))
    }

    /// Problems clear of risk the file may show after the commits: those it showed before, and
    /// one for each problem at a page at risk, which a rewrite of that page carries clear of it.
    pub fn clear_allowed(&self) -> usize {
        self.clear_before.len() + self.movable
    }

    /// `image` (the file after the commits), clear of the pages at risk.
    pub fn clear(&self, image: &Image) -> Result<Clear> {
        Ok(Clear {
            problems: inspect::check_avoiding(image, &self.at_risk)?,
            dump: inspect::dump_avoiding(image, &self.at_risk)?.0,
        })
    }

    /// The damage, for a failure report: "page 8: reachable page is free (and 2 more)".
    pub fn describe(&self) -> String {
        let first = &self.named[0];
        match self.named.len() {
            1 => first.to_string(),
            n => format!("{first} (and {} more)", n - 1),
        }
    }
}

/// The page whose contents a commit may change under a reader, for the kinds of damage
/// FORMAT.md §10 leaves to `check()`: the page reached twice or free, or the page past the
/// high-water mark (not the page holding the reference: a commit copies that reference on).
fn unseen_by_a_commit(p: &Problem) -> Option<PageId> {
    match p.kind {
        ProblemKind::ReachedTwice | ProblemKind::ReachableFree => p.page,
        ProblemKind::BeyondHighWater { target } => Some(target),
        ProblemKind::TxIdExhausted | ProblemKind::Other => None,
    }
}

/// The pages of `a` not in `b`, run by run.
fn minus(a: &PageSet, b: &PageSet) -> PageSet {
    let mut out = PageSet::new();
    for run in a.runs() {
        for gap in b.gaps(run.start, run.end()) {
            out.insert(gap.start, gap.end());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::minus;
    use crashlab_engine::{PageId, PageSet};

    #[test]
    fn minus_keeps_what_the_second_set_lacks() {
        let mut a = PageSet::new();
        a.insert(PageId(2), PageId(10));
        a.insert(PageId(20), PageId(22));
        let mut b = PageSet::new();
        b.insert(PageId(4), PageId(6));
        b.insert(PageId(20), PageId(22));
        let runs: Vec<(u64, u64)> = minus(&a, &b)
            .runs()
            .map(|r| (r.start.0, r.end().0))
            .collect();
        assert_eq!(runs, vec![(2, 4), (6, 10)]);
    }
}
