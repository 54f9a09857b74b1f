//! B+tree algorithms over one bucket's tree: lookup, and the materialising descent that put and
//! delete use, with the key ranges separators give. Commit's rewriting of a tree (rebalance and
//! spill) is in `spill.rs`.
//!
//! A write transaction holds the nodes it touches as owned [`Node`]s hanging off [`Child::Node`];
//! untouched subtrees stay [`Child::Page`] references to shared, immutable cached nodes. Every
//! descent counts its depth and fails past [`MAX_TREE_DEPTH`], so a reference cycle in a corrupt
//! file is an error, not a hang.
//!
//! What a write builds on is checked against what it read, so a commit never writes a tree it
//! could not read back, nor one `check()` finds worse than before: every node the write
//! transaction takes from a page must hold keys inside the [`Range`] its parent's separators
//! give it (a key routed by a damaged separator would otherwise land among keys it does not
//! belong with, and a merge would build an out-of-order node), and spill checks every node it
//! writes again — in order, inside its range, encodable — before a byte of it is written.

use crate::cached::{self, CachedNode};
use crate::error::{Corruption, Error, RangeEdge, Result};
use crate::leaf_edit::LeafItems;
use crate::pager::Pager;
use crashlab_format::limits::MAX_TREE_DEPTH;
use crashlab_format::node::{Body, BranchItem, Child, LeafItem, Node};
use crashlab_format::types::PageId;
use std::ops::Deref;
use std::sync::Arc;

/// What a transaction reads through: the shared pager and its snapshot's high-water mark (and
/// the negative controls' hooks, for the code that edits through it).
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub pager: &'a Pager,
    pub high_water: PageId,
    /// The root page of the snapshot's root bucket: what errors about a node built in memory
    /// (which has no page of its own, and whose bytes came from no page) name.
    pub root: PageId,
    pub debug: crate::options::DebugHooks,
    /// Whether a search of a cached node builds its key index when it has none (a read
    /// transaction's, whose nodes stay cached for later readers), or searches the keys
    /// directly (a write transaction's, which is about to take the nodes it searches out of the
    /// cache: a Delete's lookup built three indexes per commit, 9,200 of its 69,300
    /// instructions, and threw them away).
    pub build_indexes: bool,
}

impl<'a> Reader<'a> {
    /// The node at `id`, referenced from page `from`.
    pub fn node(&self, id: PageId, from: PageId) -> Result<Arc<CachedNode>> {
        self.pager.node(id, self.high_water, from)
    }

    /// The page errors about `node` name.
    pub fn page_of(&self, node: &Node) -> PageId {
        node.read_from.unwrap_or(self.root)
    }
}

/// A node a reader is looking at: owned by the write transaction, or shared from the cache
/// (with its key index).
#[derive(Clone)]
pub enum NodeRef<'a> {
    Borrowed(&'a Node),
    Shared(Arc<CachedNode>),
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

impl NodeRef<'_> {
    /// How many keys are below `key` (`inclusive`: at or below it), through the cached node's
    /// key index when it has one or `build` asks for it.
    pub fn rank(&self, key: &[u8], inclusive: bool, build: bool) -> usize {
        match self {
            NodeRef::Shared(n) if build || n.is_indexed() => n.rank(key, inclusive),
            _ => cached::rank_by_search(self, key, inclusive),
        }
    }

    /// Index of the child of this branch whose subtree may hold `key` (see [`child_index`]).
    pub fn child_index(&self, key: &[u8], build: bool) -> usize {
        self.rank(key, true, build).saturating_sub(1)
    }

    /// The index of `key` in this leaf, if it is there (the index as in [`NodeRef::rank`]).
    pub fn position(&self, key: &[u8], build: bool) -> Option<usize> {
        match self {
            NodeRef::Shared(n) if build || n.is_indexed() => n.position(key),
            _ => match &self.body {
                Body::Leaf(items) => items.binary_search_by(|it| it.key().cmp(key)).ok(),
                Body::Branch(_) => panic!("position() on a branch"),
            },
        }
    }
}

impl<'a> NodeRef<'a> {
    /// The root of a tree given as a branch child, referenced from page `from`.
    pub fn of_child(child: &'a Child, rd: &Reader<'_>, from: PageId) -> Result<NodeRef<'a>> {
        match child {
            Child::Page(id) => Ok(NodeRef::Shared(rd.node(*id, from)?)),
            Child::Node(n) => Ok(NodeRef::Borrowed(n)),
        }
    }

    /// Child `i` of this branch node.
    pub fn child(&self, i: usize, rd: &Reader<'_>) -> Result<NodeRef<'a>> {
        let from = rd.page_of(self);
        match self {
            NodeRef::Borrowed(n) => {
                let n: &'a Node = n;
                match &n.body {
                    Body::Branch(items) => NodeRef::of_child(&items[i].child, rd, from),
                    Body::Leaf(_) => panic!("child() on a leaf"),
                }
            }
            NodeRef::Shared(n) => match &n.body {
                Body::Branch(items) => match &items[i].child {
                    Child::Page(id) => Ok(NodeRef::Shared(rd.node(*id, from)?)),
                    Child::Node(_) => panic!("a shared node never points at an owned one"),
                },
                Body::Leaf(_) => panic!("child() on a leaf"),
            },
        }
    }
}

/// The key range a parent's separators give a child: `lo <= key < hi`, `None` for unbounded.
/// Child `i > 0` starts at its own separator; child 0 takes its parent's lower bound, since a
/// descent routes every key below the first separator to it too.
#[derive(Clone, Copy, Debug, Default)]
pub struct Range<'k> {
    pub lo: Option<&'k [u8]>,
    pub hi: Option<&'k [u8]>,
}

impl<'k> Range<'k> {
    /// The range of child `i` of a branch whose items are `items` and whose own range is `self`.
    pub fn child(self, items: &'k [BranchItem], i: usize) -> Range<'k> {
        Range {
            lo: if i == 0 {
                self.lo
            } else {
                Some(items[i].key.as_slice())
            },
            hi: items.get(i + 1).map(|n| n.key.as_slice()).or(self.hi),
        }
    }

    /// The bound the keys of `body` break, if any. Its keys ascend (decoding and encoding check
    /// that), so the first and last decide.
    pub fn breach(self, body: &Body) -> Option<RangeEdge> {
        let (first, last) = (body.first_key(), body.last_key());
        if matches!((self.lo, first), (Some(lo), Some(f)) if f < lo) {
            return Some(RangeEdge::Below);
        }
        if matches!((self.hi, last), (Some(hi), Some(l)) if l >= hi) {
            return Some(RangeEdge::AtOrAbove);
        }
        None
    }

    pub(crate) fn to_owned(self) -> OwnedRange {
        OwnedRange {
            lo: self.lo.map(<[u8]>::to_vec),
            hi: self.hi.map(<[u8]>::to_vec),
        }
    }
}

/// A [`Range`] that outlives the items it was taken from (merges and spill consume them).
#[derive(Clone, Debug, Default)]
pub struct OwnedRange {
    pub(crate) lo: Option<Vec<u8>>,
    pub(crate) hi: Option<Vec<u8>>,
}

impl OwnedRange {
    pub(crate) fn range(&self) -> Range<'_> {
        Range {
            lo: self.lo.as_deref(),
            hi: self.hi.as_deref(),
        }
    }
}

/// Index of the child of a branch whose subtree may hold `key`: the last element whose key is
/// ≤ `key`, or the first one.
pub fn child_index(items: &[BranchItem], key: &[u8]) -> usize {
    items
        .partition_point(|it| it.key.as_slice() <= key)
        .saturating_sub(1)
}

/// Whether [`child_index`] gives `i` for `key`: the separators around `i` enclose it (the first
/// child also takes every key below its own separator). Two comparisons where the search makes
/// one per halving, and exact, since a branch's keys ascend.
fn routes_to(items: &[BranchItem], i: usize, key: &[u8]) -> bool {
    let Some(item) = items.get(i) else {
        return false;
    };
    (i == 0 || item.key.as_slice() <= key)
        && items
            .get(i + 1)
            .is_none_or(|next| key < next.key.as_slice())
}

/// Levels of a descent a [`PathHint`] remembers; deeper levels search as before.
const HINT_LEVELS: usize = 4;

/// Where a write transaction's last descent into one tree went: the child taken at each branch
/// level and where the leaf's last search landed. Within a transaction a tree's branches do not
/// change until commit (puts and deletes edit leaves only), so the next key bound for the same
/// leaf — the next of a run of appends, a batch of neighbouring keys — is routed by checking
/// the two separators around each remembered child instead of binary-searching every branch
/// again (Set100 made 24 key comparisons per put). Every use is checked against the keys it
/// routes by, so a stale or wrong hint costs two comparisons and never a wrong route.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathHint {
    children: [u32; HINT_LEVELS],
    levels: u8,
    leaf: Option<usize>,
}

impl PathHint {
    fn child(&self, level: usize) -> Option<usize> {
        (level < usize::from(self.levels)).then(|| self.children[level] as usize)
    }

    fn set_child(&mut self, level: usize, i: usize) {
        match u32::try_from(i) {
            Ok(i) if level < HINT_LEVELS => {
                self.children[level] = i;
                // Deeper levels stay: they are tried only below children the hint named.
                self.levels = self.levels.max(level as u8 + 1);
            }
            // Too deep or too wide to remember: the levels above stay, none below.
            _ => self.levels = self.levels.min(level as u8),
        }
    }
}

pub(crate) fn too_deep(page: PageId) -> Error {
    Error::corrupted(page, Corruption::TreeTooDeep)
}

fn empty_branch(page: PageId) -> Error {
    Error::corrupted(page, Corruption::EmptyBranch)
}

/// `f` applied to the leaf item stored under `key` and the page errors about that leaf name, if
/// the key is there: reads that need only part of the item (a value, a bucket header) copy only
/// that part.
pub fn lookup_with<T>(
    root: NodeRef<'_>,
    key: &[u8],
    rd: &Reader<'_>,
    f: impl FnOnce(&LeafItem, PageId) -> T,
) -> Result<Option<T>> {
    Ok(find(root, key, rd)?.map(|(leaf, i)| {
        let page = rd.page_of(&leaf);
        f(&leaf_items(&leaf)[i], page)
    }))
}

/// The leaf that holds `key` and its index there, if the key is there: what a read borrows
/// from (a [`NodeRef`] keeps a cached leaf alive without copying it).
pub fn find<'a>(
    root: NodeRef<'a>,
    key: &[u8],
    rd: &Reader<'_>,
) -> Result<Option<(NodeRef<'a>, usize)>> {
    let mut node = root;
    for _ in 0..MAX_TREE_DEPTH {
        match &node.body {
            Body::Branch(items) => {
                if items.is_empty() {
                    return Err(empty_branch(rd.page_of(&node)));
                }
                let i = node.child_index(key, rd.build_indexes);
                debug_assert_eq!(i, child_index(items, key));
                node = node.child(i, rd)?;
            }
            Body::Leaf(items) => {
                if rd.debug.get_compares_16_bytes {
                    // A negative control (see `DebugHooks::get_compares_16_bytes`).
                    let head = |k: &[u8]| k.len().min(16);
                    let same = |k: &[u8]| k[..head(k)] == key[..head(key)];
                    let found = items.iter().position(|it| same(it.key()));
                    return Ok(found.map(|i| (node, i)));
                }
                let found = node.position(key, rd.build_indexes);
                return Ok(found.map(|i| (node, i)));
            }
        }
    }
    Err(too_deep(rd.page_of(&node)))
}

/// The items of a leaf node (a programmer error on a branch).
pub fn leaf_items(node: &Node) -> &[LeafItem] {
    match &node.body {
        Body::Leaf(items) => items,
        Body::Branch(_) => panic!("leaf_items on a branch"),
    }
}

/// Turn a page reference read from page `from` into an owned node (taken from the cache or
/// copied, remembering its origin so spill frees it) and return it. A node taken from a page
/// must hold keys inside `range`, the range its parent's separators give it: a write built on
/// a child that disagrees with its separators would mix up keys across pages.
pub fn materialize<'c>(
    child: &'c mut Child,
    rd: &Reader<'_>,
    from: PageId,
    range: Range<'_>,
) -> Result<&'c mut Node> {
    if let Child::Page(id) = *child {
        let node = rd.pager.node_for_update(id, rd.high_water, from)?;
        if let Some(edge) = range.breach(&node.body) {
            let reason = Corruption::ChildOutsideSeparators { child: id, edge };
            return Err(Error::corrupted(from, reason));
        }
        *child = Child::Node(node);
    }
    match child {
        Child::Node(n) => Ok(n),
        Child::Page(_) => unreachable!("materialized just above"),
    }
}

/// Descend from `root` (referenced from page `from`) to the leaf that holds (or would hold)
/// `key`, materialising every node on the way, and run `at_leaf` on the leaf's items (which
/// record the edit made) and the page errors about it name.
pub fn with_leaf<T>(
    root: &mut Child,
    from: PageId,
    key: &[u8],
    rd: &Reader<'_>,
    hint: &mut PathHint,
    at_leaf: impl FnOnce(&mut LeafItems<'_>, PageId) -> Result<T>,
) -> Result<T> {
    let mut node = materialize(root, rd, from, Range::default())?;
    let mut range = Range::default();
    // The hint holds while every level so far took the child it names.
    let mut on_hint = true;
    for level in 0..MAX_TREE_DEPTH {
        let page = rd.page_of(node);
        if node.is_leaf() {
            let mut items = LeafItems::of(node).near(hint.leaf.filter(|_| on_hint));
            let out = at_leaf(&mut items, page);
            hint.leaf = items.last_found();
            return out;
        }
        let Body::Branch(items) = &mut node.body else {
            unreachable!("a node that is no leaf is a branch");
        };
        if items.is_empty() {
            return Err(empty_branch(page));
        }
        let hinted = hint
            .child(level)
            .filter(|&h| on_hint && routes_to(items, h, key));
        let i = hinted.unwrap_or_else(|| child_index(items, key));
        debug_assert_eq!(i, child_index(items, key));
        on_hint = hinted.is_some();
        hint.set_child(level, i);
        let (head, tail) = items.split_at_mut(i + 1);
        let BranchItem { key: sep, child } = &mut head[i];
        let sep: &Vec<u8> = sep;
        range = Range {
            lo: if i == 0 {
                range.lo
            } else {
                Some(sep.as_slice())
            },
            hi: tail.first().map(|n| n.key.as_slice()).or(range.hi),
        };
        node = materialize(child, rd, page, range)?;
    }
    Err(too_deep(rd.page_of(node)))
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
