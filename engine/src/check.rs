//! `Db::check`: a full consistency check of the current snapshot.
//!
//! Every page below the high-water mark must be exactly one of: a meta page, the freelist page,
//! reachable from a bucket, or free/pending. No page may be reached twice; keys are strictly
//! ordered within a page (enforced by decoding) and lie within the bounds their parent's
//! separators give; page headers carry their own id and a branch or leaf type; the persisted
//! freelist equals the in-memory one; the meta's txid leaves room for another commit. Every
//! problem is reported, not only the first.
//!
//! A read-only database loads no freelist (a reader has no use for one), so its check takes the
//! free set from the file itself: the persisted freelist page when it decodes, else — no
//! persisted freelist, or one that does not decode (reported) — the pages the walk did not
//! reach, which is what an open's rebuild would make of them.

use crate::db::Db;
use crate::error::{Corruption, Error, Result};
use crate::freelist;
use crate::freelist::Freelist;
use crate::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crate::node::{Body, Child};
use crate::page::PageKind;
use crate::pageset::PageSet;
use crate::rebuild::bucket_roots;
use crate::types::{PageId, PageSpan};
use std::fmt;

/// One inconsistency found by [`Db::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub page: Option<PageId>,
    pub kind: ProblemKind,
    pub message: String,
}

/// What a [`Problem`] is, for the few kinds a caller acts on; the message says the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProblemKind {
    /// Two references lead to the page (two parents, two buckets, or a cycle). A commit that
    /// rewrites one path frees the page while the other still points at it (FORMAT.md §10).
    ReachedTwice,
    /// The page is reachable and also free or pending: a commit may allocate and overwrite it
    /// (FORMAT.md §10).
    ReachableFree,
    /// A reference to a page at or past the high-water mark, or a node whose run reaches past
    /// it: pages the next commits allocate, so what `target` (the page referenced, or the
    /// node) reads changes when they do (FORMAT.md §10).
    BeyondHighWater { target: PageId },
    /// The meta's txid is the last one: nothing is wrong with the pages, but no commit can follow.
    TxIdExhausted,
    /// Anything else.
    Other,
}

impl Problem {
    /// The problem `check` reports for a meta whose txid leaves no room for another commit.
    pub fn txid_exhausted(meta: &crate::meta::Meta) -> Problem {
        Problem {
            page: Some(meta.slot()),
            kind: ProblemKind::TxIdExhausted,
            message: format!("txid {} leaves no room for another commit", meta.txid),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.page {
            Some(p) => write!(f, "page {p}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// What `e` says went wrong at `page`, without repeating the page number a [`Problem`] shows.
pub(crate) fn reason_at(page: PageId, e: &Error) -> String {
    match e {
        Error::Corrupted { page: p, reason } if *p == page => reason.to_string(),
        _ => e.to_string(),
    }
}

/// The page a corruption error names.
pub(crate) fn e_page(e: &Error) -> Option<PageId> {
    match e {
        Error::Corrupted { page, .. } => Some(*page),
        _ => None,
    }
}

/// Enough problems to diagnose any file; past this the report says it stopped.
const PROBLEMS_MAX: usize = 10_000;

/// Problems found so far, at most [`PROBLEMS_MAX`] of them.
#[derive(Default)]
pub(crate) struct Report {
    problems: Vec<Problem>,
}

impl Report {
    pub fn into_problems(self) -> Vec<Problem> {
        self.problems
    }

    /// Whether the report has stopped taking problems.
    pub fn is_full(&self) -> bool {
        self.problems.len() > PROBLEMS_MAX
    }

    /// The same problem for every page of `span`, until the report is full: a run as long as a
    /// high-water mark claims costs at most [`PROBLEMS_MAX`] steps.
    pub fn add_each(&mut self, span: PageSpan, message: &str) {
        self.add_each_of(ProblemKind::Other, span, message);
    }

    pub fn add(&mut self, page: Option<PageId>, message: impl Into<String>) {
        self.push(Problem {
            page,
            kind: ProblemKind::Other,
            message: message.into(),
        });
    }

    /// [`Report::add_each`] for a problem of `kind`.
    pub fn add_each_of(&mut self, kind: ProblemKind, span: PageSpan, message: &str) {
        for p in span.ids() {
            if self.is_full() {
                return;
            }
            self.push(Problem {
                page: Some(p),
                kind,
                message: message.into(),
            });
        }
    }

    pub fn push(&mut self, problem: Problem) {
        if self.problems.len() < PROBLEMS_MAX {
            self.problems.push(problem);
        } else if self.problems.len() == PROBLEMS_MAX {
            self.problems.push(Problem {
                page: None,
                kind: ProblemKind::Other,
                message: "too many problems; stopped".into(),
            });
        }
    }
}

/// What the walk checks pages against.
struct Bounds<'a> {
    hwm: PageId,
    /// Free and pending pages.
    free: &'a PageSet,
    /// Pages not to enter.
    avoid: Option<&'a PageSet>,
}

impl Bounds<'_> {
    fn avoids(&self, span: PageSpan) -> bool {
        self.avoid
            .is_some_and(|a| a.runs_within(span.start, span.end()).next().is_some())
    }
}

/// A page to visit with the key range its parent allows: `lo <= key < hi`.
struct Visit {
    id: PageId,
    /// The page the reference to `id` was read from.
    from: PageId,
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
    level: usize,
    depth: usize,
}

impl Db {
    /// Check the whole database; an empty list means consistent. Waits for a running write
    /// transaction (do not call it while holding one on the same thread).
    pub fn check(&self) -> Result<Vec<Problem>> {
        self.check_avoiding(None)
    }

    /// [`Db::check`] of what a reader reaches without entering a page of `avoid` (a node whose
    /// run touches one is not entered either): the pages left out are not reported unreachable.
    /// With `None`, the whole check.
    pub(crate) fn check_avoiding(&self, avoid: Option<&PageSet>) -> Result<Vec<Problem>> {
        let writer = self.lock_writer();
        Ok(self.check_with(&writer.freelist, avoid)?.0)
    }

    /// [`Db::check_avoiding`] for a caller that holds the writer, whose free set is `freelist`;
    /// with whether every problem the walk of the tree found is in the list (the report may
    /// fill only after it, with unreachable pages).
    pub(crate) fn check_with(
        &self,
        freelist: &Freelist,
        avoid: Option<&PageSet>,
    ) -> Result<(Vec<Problem>, bool)> {
        let meta = self.meta();
        let hwm = meta.high_water;
        let mut report = Report::default();
        if meta.txid_exhausted() {
            // Nothing is wrong with the pages, but no commit can follow: a wrapped txid would
            // overwrite this meta and lose the commit that made it.
            report.push(Problem::txid_exhausted(&meta));
        }
        let mut reached = PageSet::new();
        reached.insert(PageId(0), PageId(2));
        let stored = match meta.has_freelist() {
            true => self.freelist_page(&meta, &mut reached, &mut report),
            false => None,
        };
        // `None`: every page the walk does not reach is free, as a rebuild would have it.
        let free = if self.options().read_only {
            stored
        } else {
            let memory = memory_free_set(freelist, hwm, &mut report);
            if let Some(listed) = stored.filter(|listed| *listed != memory) {
                let why = format!(
                    "freelist page holds {} ids, memory {}",
                    listed.len(),
                    memory.len()
                );
                report.add(Some(meta.freelist), why);
            }
            Some(memory)
        };
        let none = PageSet::new();
        let walk_free = free.as_ref().unwrap_or(&none);
        let walk = Bounds {
            hwm,
            free: walk_free,
            avoid,
        };
        self.walk_buckets(meta.root, &walk, &mut reached, &mut report);
        let walk_complete = !report.is_full();
        if let (Some(free), None) = (&free, avoid) {
            let mut accounted = reached;
            accounted.extend(free);
            for gap in accounted.gaps(PageId(2), hwm) {
                report.add_each(gap, "unreachable and not free");
            }
        }
        Ok((report.problems, walk_complete))
    }

    /// The persisted freelist page of `meta`, its pages marked reached, as the set of ids it
    /// lists; `None`, with the reason reported, when it cannot be read or decoded.
    fn freelist_page(
        &self,
        meta: &crate::meta::Meta,
        reached: &mut PageSet,
        report: &mut Report,
    ) -> Option<PageSet> {
        let id = meta.freelist;
        let buf = match self
            .pager()
            .read_span(id, meta.high_water, &[PageKind::Freelist])
        {
            Ok(b) => b,
            Err(e) => {
                let why = format!("freelist page unreadable: {}", reason_at(id, &e));
                report.add(Some(id), why);
                return None;
            }
        };
        let pages = (buf.len() / self.page_size() as usize) as u64;
        for twice in reached.insert(id, id.plus(pages)) {
            report.add_each(twice, "freelist page also reached elsewhere");
        }
        match freelist::decode_page(&buf, id, meta.high_water) {
            Ok(ids) => {
                let listed = PageSet::from_ids(ids.iter().copied());
                for run in listed.runs_within(id, id.plus(pages)) {
                    let kind = ProblemKind::ReachableFree;
                    report.add_each_of(kind, run, "freelist page lists itself as free");
                }
                Some(listed)
            }
            Err(e) => {
                report.add(Some(id), reason_at(id, &e));
                None
            }
        }
    }

    fn walk_buckets(
        &self,
        root: PageId,
        b: &Bounds<'_>,
        reached: &mut PageSet,
        report: &mut Report,
    ) {
        let (hwm, free) = (b.hwm, b.free);
        let mut stack = vec![Visit {
            id: root,
            from: self.meta().slot(),
            lo: None,
            hi: None,
            level: 0,
            depth: 1,
        }];
        let mut roots = Vec::new();
        while let Some(v) = stack.pop() {
            if b.avoids(PageSpan::new(v.id, 1)) {
                continue;
            }
            if v.level > MAX_TREE_DEPTH || v.depth > MAX_BUCKET_DEPTH {
                report.add(Some(v.id), "tree or bucket nesting too deep");
                continue;
            }
            if reached.contains(v.id) {
                // Entering it again would repeat its whole subtree: in a file whose branch
                // elements all share one child, that is fanout^depth visits (regression 005).
                let span = PageSpan::new(v.id, 1);
                report.add_each_of(ProblemKind::ReachedTwice, span, "page reached twice");
                continue;
            }
            let node = match self.pager().node(v.id, hwm, v.from) {
                Ok(n) => n,
                Err(e) => {
                    let at = e_page(&e).unwrap_or(v.id);
                    report.push(Problem {
                        page: Some(at),
                        kind: read_problem_kind(v.id, &e),
                        message: reason_at(at, &e),
                    });
                    if v.id.0 >= 2 && v.id < hwm {
                        // Referenced, so not also "unreachable"; its subtree will be.
                        let run = self.damaged_run(v.id, hwm, &e);
                        for twice in reached.insert(run.start, run.end()) {
                            let kind = ProblemKind::ReachedTwice;
                            report.add_each_of(kind, twice, "page reached twice");
                        }
                        // Damaged or not, the tree uses these pages: a commit that allocates a
                        // free one among them changes what this node reads.
                        for listed in free.runs_within(run.start, run.end()) {
                            let kind = ProblemKind::ReachableFree;
                            report.add_each_of(kind, listed, "reachable page is free");
                        }
                    }
                    continue;
                }
            };
            let span = node.origin.expect("pager nodes carry their origin");
            if b.avoids(span) {
                continue;
            }
            for twice in reached.insert(span.start, span.end()) {
                report.add_each_of(ProblemKind::ReachedTwice, twice, "page reached twice");
            }
            for run in free.runs_within(span.start, span.end()) {
                report.add_each_of(ProblemKind::ReachableFree, run, "reachable page is free");
            }
            check_bounds(&node, &v, report);
            match &node.body {
                Body::Branch(items) => {
                    if items.is_empty() {
                        report.add(Some(v.id), "branch page with no elements");
                    }
                    for (i, it) in items.iter().enumerate() {
                        let Child::Page(c) = it.child else { continue };
                        let hi = items
                            .get(i + 1)
                            .map(|n| n.key.clone())
                            .or_else(|| v.hi.clone());
                        let lo = Some(it.key.clone());
                        stack.push(Visit {
                            id: c,
                            from: v.id,
                            lo,
                            hi,
                            level: v.level + 1,
                            depth: v.depth,
                        });
                    }
                }
                Body::Leaf(items) => {
                    roots.clear();
                    // Item by item: one damaged bucket value must not hide its siblings'
                    // trees (they would all be reported unreachable).
                    for it in items.iter().filter(|it| it.is_bucket()) {
                        let one = std::slice::from_ref(it);
                        if let Err(e) = bucket_roots(one, v.id, v.depth, &mut roots) {
                            report.add(Some(v.id), reason_at(v.id, &e));
                        }
                    }
                    for &(r, d) in &roots {
                        stack.push(Visit {
                            id: r,
                            from: v.id,
                            lo: None,
                            hi: None,
                            level: 0,
                            depth: d + 1,
                        });
                    }
                }
            }
        }
    }
}

impl Db {
    /// The pages a node that failed to read with `e` still holds: the run its header claims,
    /// unless the claim itself is the damage (more pages than its contents need, or past the
    /// high-water mark or the file), in which case its first page alone.
    fn damaged_run(&self, id: PageId, hwm: PageId, e: &Error) -> PageSpan {
        let claim_is_the_damage = matches!(
            e,
            Error::Corrupted {
                reason: Corruption::OverflowBeyondContents { .. }
                    | Corruption::OverflowPastHighWater { .. }
                    | Corruption::OverflowPastEof,
                ..
            }
        );
        let claimed = match claim_is_the_damage {
            true => None,
            false => self.pager().claimed_run(id, hwm),
        };
        claimed.unwrap_or(PageSpan::new(id, 1))
    }
}

/// The kind of problem a failed read of node `id` is.
fn read_problem_kind(id: PageId, e: &Error) -> ProblemKind {
    match e {
        Error::Corrupted {
            reason: Corruption::ChildOutOfRange { child, high, .. },
            ..
        } if child >= high => ProblemKind::BeyondHighWater { target: *child },
        Error::Corrupted {
            reason: Corruption::OverflowPastHighWater { .. },
            ..
        } => ProblemKind::BeyondHighWater { target: id },
        _ => ProblemKind::Other,
    }
}

fn check_bounds(node: &crate::node::Node, v: &Visit, report: &mut Report) {
    let (first, last) = match &node.body {
        Body::Leaf(items) => (items.first().map(|i| &i.key), items.last().map(|i| &i.key)),
        Body::Branch(items) => (items.first().map(|i| &i.key), items.last().map(|i| &i.key)),
    };
    if let (Some(lo), Some(first)) = (&v.lo, first) {
        if first < lo {
            report.add(Some(v.id), "first key below its parent's separator");
        }
    }
    if let (Some(hi), Some(last)) = (&v.hi, last) {
        if last >= hi {
            report.add(Some(v.id), "last key not below the next separator");
        }
    }
}

/// The free set held in memory (free and pending pages) as runs, with what is wrong with it: a
/// page outside `[2, hwm)`, or a pending page also free.
fn memory_free_set(freelist: &Freelist, hwm: PageId, report: &mut Report) -> PageSet {
    let mut free = freelist.free_spans();
    for id in freelist.pending_ids() {
        if !free.insert(id, id.plus(1)).is_empty() {
            report.add(Some(id), "page freed twice");
        }
    }
    let outside = free
        .runs_within(PageId(0), PageId(2))
        .chain(free.runs_within(hwm, PageId(u64::MAX)));
    for run in outside {
        report.add_each(run, &format!("free page outside [2, {hwm})"));
    }
    free
}
