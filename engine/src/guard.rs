//! What the first commit of a session learns from `check()`, so that no commit reuses a page
//! the tree still uses (FORMAT.md §8 and §10).
//!
//! A commit reads only the paths it rewrites, so by itself it cannot see three kinds of damage
//! elsewhere in the file: a live page the freelist lists as free, a page two references share,
//! and a reference past the high-water mark. Each makes a later allocation overwrite a page a
//! reader still reaches. The first commit after open therefore walks the whole file once
//! (the check's walk, `Db::check_with`) and keeps what it found for the rest of the session:
//!
//! * a live page listed free is taken out of the free set (never allocated; the next persisted
//!   freelist no longer lists it, so the damage is repaired rather than spread);
//! * a commit that would rewrite (and so free) a page two references reach is refused with
//!   [`Corruption::ReachedTwice`]: the other reference would keep the old copy, and with it
//!   share every child of the new one;
//! * an allocation at the high-water mark that covers a page something references is refused
//!   with [`Corruption::AllocatesReferencedPage`], naming the page that holds the reference
//!   (the page allocated may lie past the end of the file: corpus/fuzz/028).
//!
//! The walk costs one read of every tree page once per session, not per commit; afterwards each
//! allocation and free costs a look-up in sets the size of the damage found. A file so damaged
//! that the check's report is cut short during its walk of the tree cannot be guarded, and its
//! commits are refused (a report that fills afterwards, with unreachable pages, is complete
//! for the guard).

use crate::error::{Corruption, Error, Result};
use crashlab_format::pageset::PageSet;
use crashlab_format::problem::{Problem, ProblemKind};
use crashlab_format::types::{PageId, PageSpan};
use std::collections::BTreeMap;

/// The damage a session's commits must step around.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guard {
    /// Live pages the free set listed; taken out of it once, kept to name them.
    pub quarantined: PageSet,
    /// Pages reached by more than one reference.
    shared: PageSet,
    /// Pages at or past the high-water mark that a reference, or a node's run, reaches, each
    /// with the page that holds the reference (or is the node whose run it is): the page a
    /// refusal names, since the one reached may lie past the end of the file.
    referenced_beyond: BTreeMap<u64, PageId>,
}

impl Guard {
    /// The guard for a snapshot whose check found `problems`, at high-water mark `hwm`;
    /// `complete` says every problem its walk of the tree found is among them. `meta_page` is
    /// the slot the snapshot was read from (named when it cannot be guarded).
    pub fn of(
        problems: &[Problem],
        complete: bool,
        hwm: PageId,
        meta_page: PageId,
    ) -> Result<Guard> {
        if !complete {
            return Err(Error::corrupted(meta_page, Corruption::TooDamagedToGuard));
        }
        let mut g = Guard::default();
        for p in problems {
            let Some(page) = p.page else {
                continue;
            };
            match p.kind {
                ProblemKind::ReachableFree => {
                    g.quarantined.insert(page, page.plus(1));
                }
                ProblemKind::ReachedTwice => {
                    g.shared.insert(page, page.plus(1));
                }
                ProblemKind::BeyondHighWater { target } => {
                    // A node below the mark whose run reaches past it reads the first pages
                    // the mark hands out. Of several references to one page, the first named
                    // is kept: a refusal needs one place to point at.
                    let at = target.max(hwm);
                    g.referenced_beyond.entry(at.0).or_insert(page);
                }
                ProblemKind::TxIdExhausted | ProblemKind::Other => {}
            }
        }
        Ok(g)
    }

    /// Refuse pages `start..start+count` allocated at the high-water mark if a reference
    /// already reaches one of them.
    pub fn check_high_water(&self, start: PageId, count: u64) -> Result<()> {
        let end = start.0.saturating_add(count);
        match self.referenced_beyond.range(start.0..end).next() {
            Some((&at, &from)) => Err(Error::corrupted(
                from,
                Corruption::AllocatesReferencedPage {
                    allocated: PageId(at),
                },
            )),
            None => Ok(()),
        }
    }

    /// Refuse to free `span` if another reference still reaches a page of it: copy-on-write
    /// of a shared node leaves the other reference on the old copy, whose children the new copy
    /// then shares too, and the freed page would later be reused under it.
    pub fn check_free(&self, span: PageSpan) -> Result<()> {
        match self.shared.runs_within(span.start, span.end()).next() {
            Some(hit) => Err(Error::corrupted(
                hit.start,
                Corruption::ReachedTwice { target: hit.start },
            )),
            None => Ok(()),
        }
    }
}

/// `free` without the pages of `taken`.
pub(crate) fn minus(free: &PageSet, taken: &PageSet) -> PageSet {
    let mut out = PageSet::new();
    for run in free.runs() {
        for gap in taken.gaps(run.start, run.end()) {
            out.insert(gap.start, gap.end());
        }
    }
    out
}
