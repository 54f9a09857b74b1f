//! `Db::check`: a full consistency check of the current snapshot.
//!
//! Every page below the high-water mark must be exactly one of: a meta page, the freelist page,
//! reachable from a bucket, or free/pending. No page may be reached twice; keys are strictly
//! ordered within a page (enforced by decoding) and lie within the bounds their parent's
//! separators give; page headers carry their own id and a branch or leaf type; the persisted
//! freelist equals the in-memory one; the meta's txid leaves room for another commit; an inline
//! bucket holds no sub-bucket (bbolt's rule, which its free-page rebuild relies on) and fits in a
//! quarter page (the rule's size half). Every problem is reported, not only the first.
//!
//! A read-only database loads no freelist (a reader has no use for one), so its check takes the
//! free set from the file itself: the persisted freelist page when it decodes, else — no
//! persisted freelist, or one that does not decode (reported) — the pages the walk did not
//! reach, which is what an open's rebuild would make of them.

use crate::db::Db;
use crate::error::{Corruption, Error, FormatError, Result};
use crate::freelist::Freelist;
use crate::rebuild::bucket_roots;
use crate::shared::Shared;
use crashlab_format::bucket::{decode_header, BucketRoot, Header};
use crashlab_format::freelist;
use crashlab_format::inspect::Image;
use crashlab_format::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crashlab_format::meta::Meta;
use crashlab_format::node::{Body, Child, LeafItem};
use crashlab_format::page::PageKind;
use crashlab_format::pageset::PageSet;
use crashlab_format::problem::{Problem, ProblemKind, Report};
use crashlab_format::types::{PageId, PageSpan};

/// What `e` says went wrong at `page`, without repeating the page number a [`Problem`] shows.
fn reason_at(page: PageId, e: &Error) -> String {
    match e {
        Error::Format(FormatError::Corrupted { page: p, reason }) if *p == page => {
            reason.to_string()
        }
        _ => e.to_string(),
    }
}

/// Reading errors into a [`Report`]: damage is a problem; an I/O error leaves the check
/// incomplete and is returned instead (see [`Report::into_result`]).
trait AddError {
    fn add_error(&mut self, page: PageId, kind: ProblemKind, context: &str, e: Error);
}

impl AddError for Report {
    fn add_error(&mut self, page: PageId, kind: ProblemKind, context: &str, e: Error) {
        match e {
            Error::Format(FormatError::Io { op, source }) => self.unreadable(op, source),
            e => self.push(Problem {
                page: Some(page),
                kind,
                message: format!("{context}{}", reason_at(page, &e)),
            }),
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
    /// Every problem [`Db::check`] finds in the snapshot of the meta `image` uses (none:
    /// consistent). The file is opened read-only, which loads no freelist: a damaged freelist
    /// page, or (without a persisted freelist) a tree the rebuild could not walk, does not fail
    /// the open, and the check lists that damage with everything else.
    pub fn check_image(image: &Image) -> Result<Vec<Problem>> {
        let options = crate::Options {
            read_only: true,
            ..crate::Options::default()
        };
        Db::open(image.storage(), options)?.check()
    }

    /// Check the whole database; an empty list means consistent. Waits for a running write
    /// transaction (do not call it while holding one on the same thread). A page the storage
    /// cannot read fails the check with that I/O error, after every readable page was checked:
    /// an unread page is no evidence of damage.
    pub fn check(&self) -> Result<Vec<Problem>> {
        self.shared.check_avoiding(None)
    }
}

impl Shared {
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
        Ok((report.into_result()?, walk_complete))
    }

    /// The persisted freelist page of `meta`, its pages marked reached, as the set of ids it
    /// lists; `None`, with the reason reported, when it cannot be read or decoded.
    fn freelist_page(
        &self,
        meta: &Meta,
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
                report.add_error(id, ProblemKind::Other, "freelist page unreadable: ", e);
                return None;
            }
        };
        let pages = (buf.len() / self.pager().page_size() as usize) as u64;
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
                report.add_error(id, ProblemKind::Other, "", e.into());
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
            // The root bucket's depth, as the writer counts (a top-level bucket is at 1).
            depth: 0,
        }];
        let mut roots = Vec::new();
        // Pages entered as a node: a page reached before only inside another node's run (a
        // damaged node's overflow covering it) is entered once when referenced as a node, so
        // that what lies below it is checked too (corpus/fuzz/027).
        let mut entered = PageSet::new();
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
                if entered.contains(v.id) {
                    continue;
                }
            }
            if v.id < hwm {
                entered.insert(v.id, v.id.plus(1));
            }
            let node = match self.pager().node(v.id, hwm, v.from) {
                Ok(n) => n,
                Err(e) => {
                    let at = e.corrupted_page().unwrap_or(v.id);
                    let kind = read_problem_kind(v.id, &e);
                    let run = self.damaged_run(v.id, hwm, &e);
                    report.add_error(at, kind, "", e);
                    if v.id.0 >= 2 && v.id < hwm {
                        // Referenced, so not also "unreachable"; its subtree will be.
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
                        check_inline_conforms(it, v.id, self.pager().page_size(), report);
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

impl Shared {
    /// Whether the file's tree under `root` (pages below `hwm`) reaches `page` by more than one
    /// reference: what tells a commit that freed `page` twice because the file references it
    /// twice (damage on disk) from one whose own bookkeeping did (a bug in the engine).
    pub(crate) fn file_reaches_twice(&self, root: PageId, hwm: PageId, page: PageId) -> bool {
        let mut report = Report::default();
        let mut reached = PageSet::new();
        reached.insert(PageId(0), PageId(2));
        let none = PageSet::new();
        let walk = Bounds {
            hwm,
            free: &none,
            avoid: None,
        };
        self.walk_buckets(root, &walk, &mut reached, &mut report);
        let twice = |p: &Problem| p.page == Some(page) && p.kind == ProblemKind::ReachedTwice;
        report.into_problems().iter().any(twice)
    }

    /// The pages a node that failed to read with `e` still holds: the run its header claims,
    /// unless the claim itself is the damage (more pages than its contents need, or past the
    /// high-water mark or the file), in which case its first page alone.
    fn damaged_run(&self, id: PageId, hwm: PageId, e: &Error) -> PageSpan {
        let claim_is_the_damage = matches!(
            e,
            Error::Format(FormatError::Corrupted {
                reason: Corruption::OverflowBeyondContents { .. }
                    | Corruption::OverflowPastHighWater { .. }
                    | Corruption::OverflowPastEof,
                ..
            })
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
        Error::Format(FormatError::Corrupted {
            reason: Corruption::ChildOutOfRange { child, high, .. },
            ..
        }) if child >= high => ProblemKind::BeyondHighWater { target: *child },
        Error::Format(FormatError::Corrupted {
            reason: Corruption::OverflowPastHighWater { .. },
            ..
        }) => ProblemKind::BeyondHighWater { target: id },
        _ => ProblemKind::Other,
    }
}

fn check_bounds(node: &crashlab_format::node::Node, v: &Visit, report: &mut Report) {
    let (first, last) = (node.body.first_key(), node.body.last_key());
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

/// bbolt stores a bucket inline only when it holds no sub-bucket and its page image fits in a
/// quarter page. Its rebuild of the free pages (`NoFreelistSync`) does not look inside inline
/// buckets: under bbolt, the pages of a sub-bucket kept in an inline bucket count as free and
/// are handed out again. A larger inline bucket loses nothing, but no bbolt writes one, so it
/// is a writer that breaks the format's rule (a threshold computed wrong), and the size that
/// every value copy of the bucket's parent carries grows with it. This engine reads such files,
/// so only this check tells them from conforming ones. A header that does not decode is
/// reported by the walk already.
fn check_inline_conforms(it: &LeafItem, page: PageId, page_size: u32, report: &mut Report) {
    let Ok(Header {
        root: BucketRoot::Inline(node),
        ..
    }) = decode_header(it.value(), page)
    else {
        return;
    };
    if let Body::Leaf(inner) = &node.body {
        if inner.iter().any(LeafItem::is_bucket) {
            let name = it.key().escape_ascii();
            let why = "bbolt stores only a bucket without sub-buckets inline";
            let message = format!("inline bucket \"{name}\" holds a sub-bucket ({why})");
            report.add(Some(page), message);
        }
    }
    let (size, limit) = (node.size(), page_size as usize / 4);
    if size > limit {
        let name = it.key().escape_ascii();
        let message = format!(
            "inline bucket \"{name}\" takes {size} bytes, more than a quarter page ({limit}): \
             bbolt stores only a bucket that fits a quarter page inline"
        );
        report.add(Some(page), message);
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
