//! `Db::check`: a full consistency check of the current snapshot.
//!
//! Every page below the high-water mark must be exactly one of: a meta page, the freelist page,
//! reachable from a bucket, or free/pending. No page may be reached twice; keys are strictly
//! ordered within a page (enforced by decoding) and lie within the bounds their parent's
//! separators give; page headers carry their own id and a branch or leaf type; the persisted
//! freelist equals the in-memory one; the meta's txid leaves room for another commit. Every
//! problem is reported, not only the first.

use crate::db::Db;
use crate::error::{Error, Result};
use crate::freelist::Freelist;
use crate::rebuild::bucket_roots;
use crate::shared::Shared;
use crashlab_format::freelist;
use crashlab_format::inspect::{self, Image};
use crashlab_format::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crashlab_format::meta::Meta;
use crashlab_format::node::{Body, Child};
use crashlab_format::page::PageKind;
use crashlab_format::pageset::PageSet;
use crashlab_format::problem::{Problem, Report};
use crashlab_format::types::PageId;

/// What `e` says went wrong at `page`, without repeating the page number a [`Problem`] shows.
fn reason_at(page: PageId, e: &Error) -> String {
    match e {
        Error::Corrupted { page: p, reason } if *p == page => reason.to_string(),
        _ => e.to_string(),
    }
}

/// The page a corruption error names.
fn e_page(e: &Error) -> Option<PageId> {
    match e {
        Error::Corrupted { page, .. } => Some(*page),
        _ => None,
    }
}

/// Reading errors into a [`Report`]: damage is a problem; an I/O error leaves the check
/// incomplete and is returned instead (see [`Report::into_result`]).
trait AddError {
    fn add_error(&mut self, page: PageId, context: &str, e: Error);
}

impl AddError for Report {
    fn add_error(&mut self, page: PageId, context: &str, e: Error) {
        match e {
            Error::Io { op, source } => self.unreadable(op, source),
            e => self.add(Some(page), format!("{context}{}", reason_at(page, &e))),
        }
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
    /// consistent). The file is opened read-only. A damaged freelist page, or (without a
    /// persisted freelist) a tree the rebuild cannot walk, would fail a normal open; here the
    /// free set is then taken from the inspection's tolerant walk instead, so the check runs and
    /// lists that damage with everything else.
    pub fn check_image(image: &Image) -> Result<Vec<Problem>> {
        let free_pages = |meta: &Meta| -> Result<PageSet> {
            let w = inspect::walk(image.reader(), meta, &mut ())?;
            Ok(inspect::unreached(&w.reached, meta.high_water))
        };
        let db = Db::open_for_check(image.storage(), &free_pages)?;
        db.check()
    }

    /// Check the whole database; an empty list means consistent. Waits for a running write
    /// transaction (do not call it while holding one on the same thread). A page the storage
    /// cannot read fails the check with that I/O error, after every readable page was checked:
    /// an unread page is no evidence of damage.
    pub fn check(&self) -> Result<Vec<Problem>> {
        let writer = self.lock_writer();
        let meta = self.meta();
        let hwm = meta.high_water;
        let mut report = Report::default();
        if meta.txid_exhausted() {
            // Nothing is wrong with the pages, but no commit can follow: a wrapped txid would
            // overwrite this meta and lose the commit that made it.
            let why = format!("txid {} leaves no room for another commit", meta.txid);
            report.add(Some(meta.slot()), why);
        }
        let mut reached = PageSet::new();
        reached.insert(PageId(0), PageId(2));
        let free = memory_free_set(&writer.freelist, hwm, &mut report);
        if meta.has_freelist() {
            self.check_freelist_page(&meta, &free, &mut reached, &mut report);
        }
        self.shared
            .walk_buckets(meta.root, hwm, &free, &mut reached, &mut report);
        let mut accounted = reached;
        accounted.extend(&free);
        for gap in accounted.gaps(PageId(2), hwm) {
            report.add_each(gap, "unreachable and not free");
        }
        Ok(report.into_result()?)
    }

    fn check_freelist_page(
        &self,
        meta: &Meta,
        memory: &PageSet,
        reached: &mut PageSet,
        report: &mut Report,
    ) {
        let id = meta.freelist;
        let buf = match self
            .pager()
            .read_span(id, meta.high_water, &[PageKind::Freelist])
        {
            Ok(b) => b,
            Err(e) => return report.add_error(id, "freelist page unreadable: ", e),
        };
        let pages = (buf.len() / self.page_size() as usize) as u64;
        for twice in reached.insert(id, id.plus(pages)) {
            report.add_each(twice, "freelist page also reached elsewhere");
        }
        match freelist::decode_page(&buf, id, meta.high_water) {
            Ok(ids) => {
                let listed = PageSet::from_ids(ids.iter().copied());
                if listed != *memory {
                    let why = format!(
                        "freelist page holds {} ids, memory {}",
                        ids.len(),
                        memory.len()
                    );
                    report.add(Some(id), why);
                }
            }
            Err(e) => report.add_error(id, "", e.into()),
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
        self.walk_buckets(root, hwm, &PageSet::new(), &mut reached, &mut report);
        let twice = |p: &Problem| p.page == Some(page) && p.message == "page reached twice";
        report.into_problems().iter().any(twice)
    }

    pub(crate) fn walk_buckets(
        &self,
        root: PageId,
        hwm: PageId,
        free: &PageSet,
        reached: &mut PageSet,
        report: &mut Report,
    ) {
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
        while let Some(v) = stack.pop() {
            if v.level > MAX_TREE_DEPTH || v.depth > MAX_BUCKET_DEPTH {
                report.add(Some(v.id), "tree or bucket nesting too deep");
                continue;
            }
            if reached.contains(v.id) {
                // Entering it again would repeat its whole subtree: in a file whose branch
                // elements all share one child, that is fanout^depth visits (regression 005).
                report.add(Some(v.id), "page reached twice");
                continue;
            }
            let node = match self.pager().node(v.id, hwm, v.from) {
                Ok(n) => n,
                Err(e) => {
                    let at = e_page(&e).unwrap_or(v.id);
                    report.add_error(at, "", e);
                    if v.id.0 >= 2 && v.id < hwm {
                        // Referenced, so not also "unreachable"; its subtree will be.
                        reached.insert(v.id, v.id.plus(1));
                    }
                    continue;
                }
            };
            let span = node.origin.expect("pager nodes carry their origin");
            for twice in reached.insert(span.start, span.end()) {
                report.add_each(twice, "page reached twice");
            }
            for run in free.runs_within(span.start, span.end()) {
                report.add_each(run, "reachable page is free");
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

fn check_bounds(node: &crashlab_format::node::Node, v: &Visit, report: &mut Report) {
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
