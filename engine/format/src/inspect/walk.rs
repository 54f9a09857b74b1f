//! The walk every view shares: each bucket's tree, from the root bucket down, with every page
//! entered as a node at most once. A page first met inside another node's run (an overflow page,
//! or a damaged node's run covering a live page) is still entered when a branch or bucket names
//! it, so nothing below it drops out of the views.
//!
//! Damage does not stop the walk. A page that cannot be read or decoded, a reference outside
//! `[2, high-water)`, a page reached twice, a tree deeper than [`MAX_TREE_DEPTH`] or buckets
//! nested deeper than [`MAX_BUCKET_DEPTH`] becomes a [`Problem`] and the walk goes on with the
//! rest; only an I/O error stops it. The stack is explicit and [`PageSet`]s remember the pages
//! reached and entered, so a file whose references form cycles or share children costs no more
//! than one pass over its pages, and memory follows the pages read, not the high-water mark a
//! meta claims.

use crate::bucket::{decode_header, BucketRoot};
use crate::error::{Error, Result};
use crate::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crate::meta::Meta;
use crate::node::{Body, Child, LeafItem, Node};
use crate::pageset::PageSet;
use crate::problem::{e_page, reason_at, Problem, Report};
use crate::read::PageReader;
use crate::types::{PageId, PageSpan};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One bucket met by the walk. Index 0 is the root bucket (no name, nesting 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketInfo {
    /// Index of the parent bucket; `None` for the root bucket.
    pub parent: Option<usize>,
    pub name: Vec<u8>,
    /// 0 for the root bucket, 1 for a top-level bucket, and so on.
    pub nesting: usize,
    /// The root page; `None` for an inline bucket.
    pub root: Option<PageId>,
    pub sequence: u64,
    /// Levels of the tree, from its root to its deepest leaf reached (1 = the root is a leaf).
    pub depth: usize,
    /// Plain keys (sub-buckets not counted).
    pub keys: u64,
    pub sub_buckets: u64,
    /// Pages the bucket's own tree occupies, overflow included (0 for an inline bucket).
    pub pages: u64,
}

/// Every bucket of a walk, indexed as the walk met them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    list: Vec<BucketInfo>,
}

impl Buckets {
    pub fn get(&self, index: usize) -> &BucketInfo {
        &self.list[index]
    }

    pub fn iter(&self) -> impl Iterator<Item = &BucketInfo> {
        self.list.iter()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The names from the top level down to bucket `index` (empty for the root bucket).
    pub fn path(&self, index: usize) -> Vec<&[u8]> {
        let mut names = Vec::new();
        let mut at = Some(index);
        // Parents always precede their children, so this ends; nesting bounds its length.
        while let Some(i) = at {
            let b = &self.list[i];
            if b.parent.is_some() {
                names.push(b.name.as_slice());
            }
            at = b.parent;
        }
        names.reverse();
        names
    }
}

/// A branch or leaf page the walk entered.
pub struct PageVisit<'n> {
    pub span: PageSpan,
    pub node: &'n Node,
    pub bucket: usize,
}

/// What a view collects during the walk.
pub trait Visitor {
    fn page(&mut self, _visit: &PageVisit<'_>) {}
    /// A plain key of bucket `bucket`.
    fn item(&mut self, _bucket: usize, _key: &[u8], _value: &[u8]) {}
}

impl Visitor for () {}

pub struct Walk {
    pub buckets: Buckets,
    /// Branch, leaf and overflow pages entered, and damaged pages referenced.
    pub reached: PageSet,
    /// Pages a bucket references that do not read as a branch or leaf, with that bucket.
    pub damaged: BTreeMap<u64, usize>,
    pub report: Report,
    /// Pages entered as a node, read or found damaged. A page reached before only inside
    /// another node's run (a damaged node's overflow covering it) is entered once when
    /// referenced as a node, so that what lies below it is walked too (corpus/fuzz/027 showed
    /// `check` missing it).
    entered: PageSet,
}

enum Work {
    Page {
        id: PageId,
        bucket: usize,
        level: usize,
        /// The page the reference to `id` was read from.
        from: PageId,
    },
    /// An inline bucket's leaf, found in `page`.
    Inline {
        node: Arc<Node>,
        bucket: usize,
        page: PageId,
    },
}

/// Walk every bucket of the snapshot `meta` (whose high-water mark the caller checked against
/// the file length).
pub fn walk(pager: &PageReader, meta: &Meta, visitor: &mut dyn Visitor) -> Result<Walk> {
    let root = BucketInfo {
        parent: None,
        name: Vec::new(),
        nesting: 0,
        root: Some(meta.root),
        sequence: meta.sequence,
        depth: 0,
        keys: 0,
        sub_buckets: 0,
        pages: 0,
    };
    let mut w = Walk {
        buckets: Buckets { list: vec![root] },
        reached: PageSet::new(),
        damaged: BTreeMap::new(),
        report: Report::default(),
        entered: PageSet::new(),
    };
    let mut stack = vec![Work::Page {
        id: meta.root,
        bucket: 0,
        level: 0,
        from: meta.slot(),
    }];
    while let Some(work) = stack.pop() {
        match work {
            Work::Page {
                id,
                bucket,
                level,
                from,
            } => {
                w.enter(
                    pager,
                    meta.high_water,
                    (id, bucket, level, from),
                    visitor,
                    &mut stack,
                )?;
            }
            Work::Inline { node, bucket, page } => {
                w.leaf(&node, bucket, 0, page, visitor, &mut stack);
            }
        }
    }
    Ok(w)
}

impl Walk {
    fn problem(&mut self, page: PageId, message: impl Into<String>) {
        self.report.add(Some(page), message);
    }

    fn enter(
        &mut self,
        pager: &PageReader,
        high_water: PageId,
        (id, bucket, level, from): (PageId, usize, usize, PageId),
        visitor: &mut dyn Visitor,
        stack: &mut Vec<Work>,
    ) -> Result<()> {
        if level >= MAX_TREE_DEPTH {
            self.problem(id, format!("tree deeper than {MAX_TREE_DEPTH} levels"));
            return Ok(());
        }
        if self.reached.contains(id) {
            self.problem(id, "page reached twice");
            // Entering again would repeat whole subtrees: the walk's bound (regression 005).
            if self.entered.contains(id) {
                return Ok(());
            }
        }
        if id < high_water {
            // Read or found damaged, it is entered: a second reference does not read it again.
            self.entered.insert(id, id.plus(1));
        }
        let node = match pager.node(id, high_water, from) {
            Ok(node) => Arc::new(node),
            Err(e @ Error::Io { .. }) => return Err(e),
            Err(e) => {
                let at = e_page(&e).unwrap_or(id);
                self.problem(at, reason_at(at, &e));
                if id.0 >= 2 && id < high_water {
                    self.reached.insert(id, id.plus(1));
                    self.damaged.insert(id.0, bucket);
                }
                return Ok(());
            }
        };
        let span = node.origin.expect("pager nodes carry their origin");
        self.reached.insert(id, id.plus(1));
        if span.count > 1 {
            for twice in self.reached.insert(id.plus(1), span.end()) {
                self.report.add_each(twice, "overflow page reached twice");
            }
        }
        self.buckets.list[bucket].pages += span.count;
        visitor.page(&PageVisit {
            span,
            node: &node,
            bucket,
        });
        match &node.body {
            Body::Branch(items) => {
                if items.is_empty() {
                    self.problem(id, "branch page with no elements");
                }
                // Reversed, so the stack pops the children in key order.
                for it in items.iter().rev() {
                    if let Child::Page(child) = it.child {
                        let level = level + 1;
                        stack.push(Work::Page {
                            id: child,
                            bucket,
                            level,
                            from: id,
                        });
                    }
                }
            }
            Body::Leaf(_) => self.leaf(&node, bucket, level, id, visitor, stack),
        }
        Ok(())
    }

    fn leaf(
        &mut self,
        node: &Node,
        bucket: usize,
        level: usize,
        page: PageId,
        visitor: &mut dyn Visitor,
        stack: &mut Vec<Work>,
    ) {
        let Body::Leaf(items) = &node.body else {
            return; // decode_header only gives leaves for inline buckets
        };
        let b = &mut self.buckets.list[bucket];
        b.depth = b.depth.max(level + 1);
        for it in items {
            if it.is_bucket() {
                self.sub_bucket(it, bucket, page, stack);
            } else {
                self.buckets.list[bucket].keys += 1;
                visitor.item(bucket, it.key(), it.value());
            }
        }
    }

    fn sub_bucket(&mut self, it: &LeafItem, parent: usize, page: PageId, stack: &mut Vec<Work>) {
        let nesting = self.buckets.list[parent].nesting + 1;
        if nesting > MAX_BUCKET_DEPTH {
            let why = format!("buckets nested deeper than {MAX_BUCKET_DEPTH}");
            return self.problem(page, why);
        }
        let header = match decode_header(it.value(), page) {
            Ok(h) => h,
            Err(e) => return self.problem(page, reason_at(page, &e)),
        };
        self.buckets.list[parent].sub_buckets += 1;
        let bucket = self.buckets.list.len();
        let (root, work) = match header.root {
            BucketRoot::Page(id) => {
                let (level, from) = (0, page);
                let work = Work::Page {
                    id,
                    bucket,
                    level,
                    from,
                };
                (Some(id), work)
            }
            BucketRoot::Inline(node) => (None, Work::Inline { node, bucket, page }),
        };
        self.buckets.list.push(BucketInfo {
            parent: Some(parent),
            name: it.key().to_vec(),
            nesting,
            root,
            sequence: header.sequence,
            depth: 0,
            keys: 0,
            sub_buckets: 0,
            pages: 0,
        });
        stack.push(work);
    }

    pub fn into_problems(self) -> Vec<Problem> {
        self.report.into_problems()
    }
}

/// Pages in `[2, high_water)` not in `reached`, as runs.
pub fn unreached(reached: &PageSet, high_water: PageId) -> PageSet {
    let mut out = PageSet::new();
    for gap in reached.gaps(PageId(2), high_water) {
        out.insert(gap.start, gap.end());
    }
    out
}
