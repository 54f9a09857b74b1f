//! B+tree algorithms over one bucket's tree: lookup, the materialising descent that put and
//! delete use, rebalance (merge only) and spill (split, allocate, encode).
//!
//! A write transaction holds the nodes it touches as owned [`Node`]s hanging off [`Child::Node`];
//! untouched subtrees stay [`Child::Page`] references to shared, immutable cached nodes. Every
//! descent counts its depth and fails past [`MAX_TREE_DEPTH`], so a reference cycle in a corrupt
//! file is an error, not a hang.

use crate::error::{Error, Result};
use crate::limits::MAX_TREE_DEPTH;
use crate::node::{split_points, Body, BranchItem, Child, LeafItem, Node};
use crate::pager::Pager;
use crate::types::{PageId, PageSpan};
use std::ops::Deref;
use std::sync::Arc;

/// What a transaction reads through: the shared pager and its snapshot's high-water mark (and
/// the negative controls' hooks, for the code that edits through it).
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub pager: &'a Pager,
    pub high_water: PageId,
    pub debug: crate::options::DebugHooks,
}

impl<'a> Reader<'a> {
    pub fn node(&self, id: PageId) -> Result<Arc<Node>> {
        self.pager.node(id, self.high_water)
    }
}

/// A node a reader is looking at: owned by the write transaction, or shared from the cache.
#[derive(Clone)]
pub enum NodeRef<'a> {
    Borrowed(&'a Node),
    Shared(Arc<Node>),
}

impl Deref for NodeRef<'_> {
    type Target = Node;
    fn deref(&self) -> &Node {
        match self {
            NodeRef::Borrowed(n) => n,
            NodeRef::Shared(n) => n,
        }
    }
}

impl<'a> NodeRef<'a> {
    /// The root of a tree given as a branch child.
    pub fn of_child(child: &'a Child, rd: &Reader<'_>) -> Result<NodeRef<'a>> {
        match child {
            Child::Page(id) => Ok(NodeRef::Shared(rd.node(*id)?)),
            Child::Node(n) => Ok(NodeRef::Borrowed(n)),
        }
    }

    /// Child `i` of this branch node.
    pub fn child(&self, i: usize, rd: &Reader<'_>) -> Result<NodeRef<'a>> {
        match self {
            NodeRef::Borrowed(n) => {
                let n: &'a Node = n;
                match &n.body {
                    Body::Branch(items) => NodeRef::of_child(&items[i].child, rd),
                    Body::Leaf(_) => panic!("child() on a leaf"),
                }
            }
            NodeRef::Shared(n) => match &n.body {
                Body::Branch(items) => match &items[i].child {
                    Child::Page(id) => Ok(NodeRef::Shared(rd.node(*id)?)),
                    Child::Node(_) => panic!("a shared node never points at an owned one"),
                },
                Body::Leaf(_) => panic!("child() on a leaf"),
            },
        }
    }

    /// The page this node came from, for error messages (0 for an in-memory node).
    pub fn page(&self) -> PageId {
        self.origin.map_or(PageId(0), |s| s.start)
    }
}

/// Index of the child of a branch whose subtree may hold `key`: the last element whose key is
/// ≤ `key`, or the first one.
pub fn child_index(items: &[BranchItem], key: &[u8]) -> usize {
    items
        .partition_point(|it| it.key.as_slice() <= key)
        .saturating_sub(1)
}

fn too_deep(page: PageId) -> Error {
    Error::corrupted(page, format!("tree deeper than {MAX_TREE_DEPTH} levels"))
}

fn empty_branch(page: PageId) -> Error {
    Error::corrupted(page, "branch page with no elements")
}

/// The leaf item stored under `key`, if any.
pub fn lookup(root: NodeRef<'_>, key: &[u8], rd: &Reader<'_>) -> Result<Option<LeafItem>> {
    lookup_with(root, key, rd, LeafItem::clone)
}

/// `f` applied to the leaf item stored under `key`, if any: reads that need only part of the
/// item (a value, a bucket header) copy only that part.
pub fn lookup_with<T>(
    root: NodeRef<'_>,
    key: &[u8],
    rd: &Reader<'_>,
    f: impl FnOnce(&LeafItem) -> T,
) -> Result<Option<T>> {
    let mut node = root;
    for _ in 0..MAX_TREE_DEPTH {
        match &node.body {
            Body::Branch(items) => {
                if items.is_empty() {
                    return Err(empty_branch(node.page()));
                }
                let i = child_index(items, key);
                node = node.child(i, rd)?;
            }
            Body::Leaf(items) => {
                return Ok(items
                    .binary_search_by(|it| it.key.as_slice().cmp(key))
                    .ok()
                    .map(|i| f(&items[i])));
            }
        }
    }
    Err(too_deep(node.page()))
}

/// Turn a page reference into an owned node (taken from the cache or copied, remembering its
/// origin so spill frees it) and return it.
pub fn materialize<'c>(child: &'c mut Child, rd: &Reader<'_>) -> Result<&'c mut Node> {
    if let Child::Page(id) = *child {
        let node = rd.pager.node_for_update(id, rd.high_water)?;
        *child = Child::Node(Box::new(node));
    }
    match child {
        Child::Node(n) => Ok(n),
        Child::Page(_) => unreachable!("materialized just above"),
    }
}

/// Descend from `root` to the leaf that holds (or would hold) `key`, materialising every node
/// on the way, and run `at_leaf` on the leaf's items.
pub fn with_leaf<T>(
    root: &mut Child,
    key: &[u8],
    rd: &Reader<'_>,
    at_leaf: impl FnOnce(&mut Vec<LeafItem>, &mut bool) -> Result<T>,
) -> Result<T> {
    let mut node = materialize(root, rd)?;
    for _ in 0..MAX_TREE_DEPTH {
        match &mut node.body {
            Body::Branch(items) => {
                if items.is_empty() {
                    return Err(empty_branch(PageId(0)));
                }
                let i = child_index(items, key);
                node = materialize(&mut items[i].child, rd)?;
            }
            Body::Leaf(items) => return at_leaf(items, &mut node.unbalanced),
        }
    }
    Err(too_deep(PageId(0)))
}

/// Everything commit needs while it rewrites trees: where pages come from, where freed pages
/// go, and where encoded pages are collected.
pub trait SpillSink {
    fn page_size(&self) -> u32;
    fn fill_percent(&self) -> f64;
    /// Allocate `count` contiguous pages.
    fn allocate(&mut self, count: u64) -> Result<PageId>;
    /// Pages no longer reachable after this commit. Fails when a page is already free or
    /// pending, which only a corrupt tree (a page referenced twice) can cause.
    fn free(&mut self, span: PageSpan) -> Result<()>;
    /// An encoded page run and the node it holds (children all pages).
    fn emit(&mut self, id: PageId, bytes: Vec<u8>, node: Arc<Node>);
    fn count_split(&mut self);
    fn count_merge(&mut self);
}

/// Merge underfull nodes, bottom-up, and collapse a root branch with a single child.
pub fn rebalance(root: &mut Child, rd: &Reader<'_>, sink: &mut dyn SpillSink) -> Result<()> {
    let Child::Node(node) = root else {
        return Ok(());
    };
    rebalance_children(node, rd, sink, 0)?;
    loop {
        let Child::Node(node) = root else {
            return Ok(());
        };
        let Body::Branch(items) = &mut node.body else {
            return Ok(());
        };
        match items.len() {
            0 => {
                if let Some(span) = node.origin {
                    sink.free(span)?;
                }
                *root = Child::Node(Box::new(Node::empty_leaf()));
            }
            1 => {
                if let Some(span) = node.origin {
                    sink.free(span)?;
                }
                let mut only = items.remove(0).child;
                materialize(&mut only, rd)?;
                *root = only;
            }
            _ => return Ok(()),
        }
    }
}

fn underfull(n: &Node, page_size: u32) -> bool {
    if n.is_empty() {
        return true;
    }
    let min_keys = if n.is_leaf() { 1 } else { 2 };
    n.unbalanced && (n.size() <= page_size as usize / 4 || n.len() <= min_keys)
}

fn rebalance_children(
    node: &mut Node,
    rd: &Reader<'_>,
    sink: &mut dyn SpillSink,
    depth: usize,
) -> Result<()> {
    if depth >= MAX_TREE_DEPTH {
        return Err(too_deep(PageId(0)));
    }
    let page_size = sink.page_size();
    let Body::Branch(items) = &mut node.body else {
        return Ok(());
    };
    for it in items.iter_mut() {
        if let Child::Node(c) = &mut it.child {
            rebalance_children(c, rd, sink, depth + 1)?;
        }
    }
    let mut changed = false;
    let mut i = 0;
    while i < items.len() {
        let weak = matches!(&items[i].child, Child::Node(c) if underfull(c, page_size));
        if !weak {
            i += 1;
            continue;
        }
        changed = true;
        if matches!(&items[i].child, Child::Node(c) if c.is_empty()) {
            free_child(items.remove(i).child, sink)?;
            continue;
        }
        if items.len() == 1 {
            break;
        }
        let left = i.saturating_sub(1);
        merge_siblings(items, left, rd, sink)?;
        i = left;
    }
    node.unbalanced |= changed;
    Ok(())
}

fn free_child(child: Child, sink: &mut dyn SpillSink) -> Result<()> {
    if let Child::Node(n) = child {
        if let Some(span) = n.origin {
            sink.free(span)?;
        }
    }
    Ok(())
}

/// Move every item of `items[left + 1]`'s node into `items[left]`'s node and drop the right one.
fn merge_siblings(
    items: &mut Vec<BranchItem>,
    left: usize,
    rd: &Reader<'_>,
    sink: &mut dyn SpillSink,
) -> Result<()> {
    let right = items.remove(left + 1);
    let mut right_child = right.child;
    let right_node = materialize(&mut right_child, rd)?;
    if let Some(span) = right_node.origin {
        sink.free(span)?;
    }
    let right_body = std::mem::replace(&mut right_node.body, Body::Leaf(Vec::new()));
    let left_node = materialize(&mut items[left].child, rd)?;
    match (&mut left_node.body, right_body) {
        (Body::Leaf(l), Body::Leaf(r)) => l.extend(r),
        (Body::Branch(l), Body::Branch(r)) => l.extend(r),
        _ => {
            return Err(Error::corrupted(
                PageId(0),
                "sibling pages of different types",
            ))
        }
    }
    left_node.unbalanced = true;
    sink.count_merge();
    Ok(())
}

/// Write a tree back: spill every owned node bottom-up and return the root page.
pub fn spill_root(root: Child, sink: &mut dyn SpillSink) -> Result<PageId> {
    let node = match root {
        Child::Page(id) => return Ok(id),
        Child::Node(n) => *n,
    };
    let mut pieces = spill(node, sink, 0)?;
    while pieces.len() > 1 {
        let parent = Node {
            origin: None,
            unbalanced: false,
            body: Body::Branch(pieces),
        };
        pieces = spill(parent, sink, 0)?;
    }
    match pieces.pop() {
        Some(BranchItem {
            child: Child::Page(id),
            ..
        }) => Ok(id),
        _ => unreachable!("spill returns at least one page"),
    }
}

/// Spill one owned node: its owned children first, then split it, allocate and encode each
/// piece. Returns one branch item per piece for the parent.
fn spill(node: Node, sink: &mut dyn SpillSink, depth: usize) -> Result<Vec<BranchItem>> {
    if depth >= MAX_TREE_DEPTH {
        return Err(too_deep(PageId(0)));
    }
    if let Some(span) = node.origin {
        sink.free(span)?;
    }
    let body = match node.body {
        Body::Leaf(items) => Body::Leaf(items),
        Body::Branch(items) => {
            let mut out = Vec::with_capacity(items.len());
            for it in items {
                match it.child {
                    Child::Page(_) => out.push(it),
                    Child::Node(c) => out.extend(spill(*c, sink, depth + 1)?),
                }
            }
            Body::Branch(out)
        }
    };
    let pieces = split_body(body, sink);
    let mut out = Vec::with_capacity(pieces.len());
    for body in pieces {
        out.push(write_piece(body, sink)?);
    }
    Ok(out)
}

fn split_body(body: Body, sink: &mut dyn SpillSink) -> Vec<Body> {
    let sizes: Vec<usize> = match &body {
        Body::Leaf(items) => items.iter().map(crate::node::leaf_item_size).collect(),
        Body::Branch(items) => items.iter().map(crate::node::branch_item_size).collect(),
    };
    let cuts = split_points(&sizes, sink.page_size() as usize, sink.fill_percent());
    if cuts.is_empty() {
        return vec![body];
    }
    fn cut<T>(mut items: Vec<T>, cuts: &[usize]) -> Vec<Vec<T>> {
        let mut out = Vec::with_capacity(cuts.len() + 1);
        for &at in cuts.iter().rev() {
            out.push(items.split_off(at));
        }
        out.push(items);
        out.reverse();
        out
    }
    for _ in &cuts {
        sink.count_split();
    }
    match body {
        Body::Leaf(items) => cut(items, &cuts).into_iter().map(Body::Leaf).collect(),
        Body::Branch(items) => cut(items, &cuts).into_iter().map(Body::Branch).collect(),
    }
}

/// Keys of a node assembled by commit must ascend. They always do for a consistent tree; a
/// corrupt one (a separator that disagrees with its child) can break it, and that is an error
/// about the file, not a programmer error.
fn check_order(body: &Body) -> Result<()> {
    let ordered = match body {
        Body::Leaf(items) => items.windows(2).all(|w| w[0].key < w[1].key),
        Body::Branch(items) => items.windows(2).all(|w| w[0].key < w[1].key),
    };
    if ordered {
        Ok(())
    } else {
        Err(Error::corrupted(
            PageId(0),
            "keys out of order across pages: a separator disagrees with its child",
        ))
    }
}

fn write_piece(body: Body, sink: &mut dyn SpillSink) -> Result<BranchItem> {
    check_order(&body)?;
    let mut node = Node {
        origin: None,
        unbalanced: false,
        body,
    };
    let page_size = sink.page_size() as usize;
    let pages = node.size().div_ceil(page_size).max(1) as u64;
    let id = sink.allocate(pages)?;
    let mut buf = vec![0u8; pages as usize * page_size];
    node.encode(&mut buf, id, page_size as u32);
    node.origin = Some(PageSpan::new(id, pages));
    let key = node.first_key().map(<[u8]>::to_vec).unwrap_or_default();
    sink.emit(id, buf, Arc::new(node));
    Ok(BranchItem {
        key,
        child: Child::Page(id),
    })
}
