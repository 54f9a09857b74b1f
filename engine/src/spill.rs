//! Rewriting a bucket's tree at commit: rebalance (merge underfull nodes, collapse a root with
//! one child) and spill (write every owned node bottom-up: split, allocate, encode).
//!
//! Both build on what the write transaction read and check it first, so that a commit on a
//! damaged file fails rather than write what it could not read back or spread the damage:
//! every node taken from a page lies inside the range its parent's separators give it
//! (`tree::materialize`); every node written is in order across its pieces, inside its range and
//! encodable; a separator is not raised over a neighbour the transaction did not read, and a
//! neighbour whose range grows when an emptied child goes is checked first. Order is compared
//! pair by pair only where an edit could have broken it (a merge, a delete, a node built in
//! memory, the pieces that replace a child): decoding already proved the rest.

use crate::error::{Corruption, Error, Result};
use crate::tree::{materialize, too_deep, Range, Reader};
use crashlab_format::limits::MAX_TREE_DEPTH;
use crashlab_format::node::{split_points, Body, BranchItem, Child, LeafEdit, Node};
use crashlab_format::types::{PageId, PageSpan};

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
    /// Free the pages a rewritten node lay on (`branch`: whether it is a branch). Only a
    /// negative control tells this from [`SpillSink::free`].
    fn free_node(&mut self, span: PageSpan, branch: bool) -> Result<()> {
        let _ = branch;
        self.free(span)
    }
    /// Room for the image of the run of `pages` pages at `id`, written to the file at commit:
    /// the caller overwrites its first `len` bytes in full, and every byte from `len` on is
    /// zero (the format's unused tail). With `prior`, the page a rewritten node was read from,
    /// the run may instead hold that page's image as the last commit wrote it (the image's
    /// length is returned): the caller then rewrites what changed, and zeroes what the old
    /// image held past `len`.
    fn image(
        &mut self,
        id: PageId,
        pages: u64,
        len: usize,
        prior: Option<PageId>,
    ) -> (&mut [u8], Option<usize>);
    /// The node whose image was placed at `id` (children all pages), assembled from what was
    /// read from page `from`.
    fn emit(&mut self, id: PageId, node: Node, from: PageId);
    /// The box an owned node was taken out of, emptied: kept for a node the next write
    /// transaction takes from the page cache (`pager.rs`, `Spares`) instead of freed.
    fn spare(&mut self, shell: Box<Node>) {
        drop(shell);
    }
    fn count_split(&mut self);
    /// Allocate `count` contiguous pages for a piece an append left behind the tree's right
    /// edge ([`Place::BehindEdge`]), which later appends will not rewrite.
    fn allocate_behind_edge(&mut self, count: u64) -> Result<PageId> {
        self.allocate(count)
    }
    fn count_merge(&mut self);
    /// A leaf was spilled `depth` levels below the node its tree's spill started from.
    fn leaf_spilled_at(&mut self, depth: usize) {
        let _ = depth;
    }
    /// A tree's spill ended, its root split `root_splits` times (each adds a level above).
    fn tree_spilled(&mut self, root_splits: usize) {
        let _ = root_splits;
    }
}

/// Merge underfull nodes, bottom-up, and collapse a root branch with a single child.
pub fn rebalance(root: &mut Child, rd: &Reader<'_>, sink: &mut dyn SpillSink) -> Result<()> {
    let Child::Node(node) = root else {
        return Ok(());
    };
    rebalance_children(node, rd, sink, 0, Range::default())?;
    loop {
        let Child::Node(node) = root else {
            return Ok(());
        };
        let page = rd.page_of(node);
        let Body::Branch(items) = &mut node.body else {
            return Ok(());
        };
        match items.len() {
            0 => {
                if let Some(span) = node.origin {
                    sink.free(span)?;
                }
                *root = Child::Node(Box::default());
            }
            1 => {
                if let Some(span) = node.origin {
                    sink.free(span)?;
                }
                let mut only = items.remove(0).child;
                materialize(&mut only, rd, page, Range::default())?;
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

/// Rebalance below `node`, whose keys lie in `range`.
fn rebalance_children(
    node: &mut Node,
    rd: &Reader<'_>,
    sink: &mut dyn SpillSink,
    depth: usize,
    range: Range<'_>,
) -> Result<()> {
    let page = rd.page_of(node);
    if depth >= MAX_TREE_DEPTH {
        return Err(too_deep(page));
    }
    let page_size = sink.page_size();
    let Body::Branch(items) = &mut node.body else {
        return Ok(());
    };
    // A write transaction owns a few of a branch's children: each loop skips to the next one
    // in one tight scan rather than looking at every item on its own.
    let owned = |items: &[BranchItem], from: usize| {
        let at = items[from..]
            .iter()
            .position(|it| matches!(it.child, Child::Node(_)));
        at.map(|at| from + at)
    };
    let mut next = owned(items, 0);
    // Only an owned child can be underfull; when none is, the merge loop has nothing to do.
    let mut any_weak = false;
    while let Some(i) = next {
        let (head, tail) = items.split_at_mut(i + 1);
        let BranchItem { key, child } = &mut head[i];
        if let Child::Node(c) = child {
            let child_range = Range {
                lo: if i == 0 {
                    range.lo
                } else {
                    Some(key.as_slice())
                },
                hi: tail.first().map(|n| n.key.as_slice()).or(range.hi),
            };
            rebalance_children(c, rd, sink, depth + 1, child_range)?;
            any_weak |= underfull(c, page_size);
        }
        next = owned(items, i + 1);
    }
    if !any_weak {
        return Ok(());
    }
    let weak = |items: &[BranchItem], from: usize| {
        let at = items[from..]
            .iter()
            .position(|it| matches!(&it.child, Child::Node(c) if underfull(c, page_size)));
        at.map(|at| from + at)
    };
    let mut changed = false;
    let mut from = 0;
    while let Some(i) = weak(items, from) {
        changed = true;
        from = i;
        if matches!(&items[i].child, Child::Node(c) if c.is_empty()) {
            guard_neighbour(items, i, rd, (range, page))?;
            free_child(items.remove(i).child, sink)?;
            continue;
        }
        if items.len() == 1 {
            break;
        }
        let left = i.saturating_sub(1);
        merge_siblings(items, left, rd, sink, (range, page))?;
        from = left;
    }
    node.unbalanced |= changed;
    Ok(())
}

/// Before the empty child `gone` of `items` is removed, check the neighbour whose range grows
/// over the gap (the left one, or the right one when the first child goes): along its edge that
/// faces the gap, every node must hold keys inside the range it had. On a consistent tree it
/// does; a damaged one could hide keys beyond a separator there, and removing the separator
/// would bring them back — a key a transaction deleted, or never saw, reappearing.
fn guard_neighbour(
    items: &mut [BranchItem],
    gone: usize,
    rd: &Reader<'_>,
    (range, page): (Range<'_>, PageId),
) -> Result<()> {
    let (mut at, rightmost) = match gone {
        0 if items.len() > 1 => (1, false),
        0 => return Ok(()),
        _ => (gone - 1, true),
    };
    let mut edge = range.child(items, at).to_owned();
    let mut node = materialize(&mut items[at].child, rd, page, edge.range())?;
    for _ in 0..MAX_TREE_DEPTH {
        let from = rd.page_of(node);
        let Body::Branch(kids) = &mut node.body else {
            return Ok(());
        };
        if kids.is_empty() {
            return Ok(());
        }
        at = if rightmost { kids.len() - 1 } else { 0 };
        edge = edge.range().child(kids, at).to_owned();
        node = materialize(&mut kids[at].child, rd, from, edge.range())?;
    }
    Err(too_deep(page))
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
/// `parent` is the range of the branch holding `items` and the page errors about it name.
fn merge_siblings(
    items: &mut Vec<BranchItem>,
    left: usize,
    rd: &Reader<'_>,
    sink: &mut dyn SpillSink,
    (range, page): (Range<'_>, PageId),
) -> Result<()> {
    // Both children's ranges, from the separators as they are before the right one goes.
    let left_range = range.child(items, left).to_owned();
    let right_range = range.child(items, left + 1).to_owned();
    let BranchItem {
        key: right_key,
        child: mut right_child,
    } = items.remove(left + 1);
    let right_node = materialize(&mut right_child, rd, page, right_range.range())?;
    if let Some(span) = right_node.origin {
        sink.free(span)?;
    }
    let right_page = rd.page_of(right_node);
    let right_body = std::mem::replace(&mut right_node.body, Body::Leaf(Vec::new()));
    let left_node = materialize(&mut items[left].child, rd, page, left_range.range())?;
    match (&mut left_node.body, right_body) {
        (Body::Leaf(l), Body::Leaf(r)) => l.extend(r),
        (Body::Branch(l), Body::Branch(mut r)) => {
            // A branch's first separator bounds nothing (a key below it is routed to the first
            // child all the same), so it may exceed keys under it. In the merged branch it
            // becomes a lower bound: it takes the right branch's own separator, which bounds
            // every key under the right branch (regression 018; a negative control keeps the
            // old separator, `DebugHooks::merge_keeps_branch_separator`).
            if let Some(first) = r
                .first_mut()
                .filter(|_| !rd.debug.merge_keeps_branch_separator)
            {
                first.key = right_key;
            }
            l.extend(r)
        }
        _ => {
            let left = rd.page_of(left_node);
            let reason = Corruption::SiblingKindsDiffer {
                left,
                right: right_page,
            };
            return Err(Error::corrupted(page, reason));
        }
    }
    left_node.unbalanced = true;
    // Not one edit any more: encoded anew, and its order compared pair by pair.
    left_node.edit = LeafEdit::Many;
    left_node.appended_only = false;
    sink.count_merge();
    Ok(())
}

/// Write a tree back: spill every owned node bottom-up and return the root page. `anchor` is
/// the page errors about nodes built in memory name (the tree's old root, or the page that
/// references it).
pub fn spill_root(root: Child, sink: &mut dyn SpillSink, anchor: PageId) -> Result<PageId> {
    let node = match root {
        Child::Page(id) => return Ok(id),
        Child::Node(n) => unbox(n, sink),
    };
    let mut pieces = spill(node, sink, 0, Range::default(), anchor, FirstKey::Root)?;
    let mut root_splits = 0;
    loop {
        match pieces {
            Pieces::Same(id) => {
                sink.tree_spilled(root_splits);
                return Ok(id);
            }
            Pieces::One(BranchItem {
                child: Child::Page(id),
                ..
            }) => {
                sink.tree_spilled(root_splits);
                return Ok(id);
            }
            Pieces::One(_) => unreachable!("a piece is a page"),
            Pieces::Split(items) => {
                root_splits += 1;
                let parent = Node::built(Body::Branch(items));
                pieces = spill(parent, sink, 0, Range::default(), anchor, FirstKey::Root)?;
            }
        }
    }
}

/// The node in `shell`, moved out; the emptied box goes to `sink`'s spares.
fn unbox(mut shell: Box<Node>, sink: &mut dyn SpillSink) -> Node {
    let node = std::mem::take(&mut *shell);
    sink.spare(shell);
    node
}

/// What the parent of a spilled node needs of its first key, which [`write_piece`] copies only
/// when asked.
#[derive(Clone, Copy)]
enum FirstKey<'a> {
    /// The root of a tree: nothing, unless it splits (its pieces then get a parent).
    Root,
    /// A child held under this separator: a copy only when the first key differs from it.
    Under(&'a [u8]),
    /// One piece of a split: always a copy.
    Piece,
}

/// The branch items a spilled node becomes: almost always one, which then takes no list.
enum Pieces {
    /// One piece, whose first key is the separator the parent gave (no copy of it is made).
    Same(PageId),
    One(BranchItem),
    /// Two or more.
    Split(Vec<BranchItem>),
}

impl Pieces {
    fn of(mut items: Vec<BranchItem>) -> Pieces {
        match items.len() {
            1 => Pieces::One(items.pop().expect("one item")),
            n => {
                assert!(n > 1, "a node spills into at least one piece");
                Pieces::Split(items)
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Pieces::Same(_) | Pieces::One(_) => 1,
            Pieces::Split(items) => items.len(),
        }
    }
}

/// Spill one owned node whose keys must lie in `range`: its owned children first, then split
/// it, allocate and encode each piece. Returns one branch item per piece for the parent. `from`
/// is the page errors name when the node has no page of its own; `sep` what its parent holds it
/// under.
fn spill(
    node: Node,
    sink: &mut dyn SpillSink,
    depth: usize,
    range: Range<'_>,
    from: PageId,
    sep: FirstKey<'_>,
) -> Result<Pieces> {
    let page = node.read_from.unwrap_or(from);
    if depth >= MAX_TREE_DEPTH {
        return Err(too_deep(page));
    }
    if let Some(span) = node.origin {
        sink.free_node(span, matches!(node.body, Body::Branch(_)))?;
    }
    // Keys known to ascend: a node as decoded (or as a commit wrote it), edited only by
    // binary-search inserts and replacements, or by one removal, keeps them in order. A merge
    // (or more removals) marks a node unbalanced, and a node built in memory has no page:
    // those, and the pairs around every child replaced by its pieces, are compared (a damaged
    // tree can break them).
    let one_removal = matches!(node.edit, LeafEdit::Removed(_));
    let known_order = node.read_from.is_some() && (!node.unbalanced || one_removal);
    // The page whose last image this node's may be patched over: its own (an inline bucket's
    // root has none), when the node holds what that image holds but for one edit to a leaf. A
    // node decoded from the page's bytes as read back may not: they may not be what was
    // written (regression 016), so it is encoded anew.
    let own_page = node
        .origin
        .filter(|_| node.as_written)
        .map(|span| span.start);
    let edit = node.edit;
    // A leaf at the tree's right edge that grew only at its end is split full
    // ([`RIGHT_EDGE_FILL`]).
    let appended_only = node.appended_only;
    let at_edge = range.hi.is_none() && appended_only && node.is_leaf();
    let fill = if at_edge {
        sink.fill_percent().max(RIGHT_EDGE_FILL)
    } else {
        sink.fill_percent()
    };
    let (body, spliced) = match node.body {
        Body::Leaf(items) => {
            sink.leaf_spilled_at(depth);
            let unchanged = Spliced {
                ascend: true,
                keys: Rekeyed::Many,
                moved: Moved::default(),
            };
            (Body::Leaf(items), unchanged)
        }
        Body::Branch(mut items) => {
            let spliced = spill_children(&mut items, sink, depth, range, page)?;
            (Body::Branch(items), spliced)
        }
    };
    // Pair check: what is written is in order across all its pieces and inside the range its
    // parent's separators (and so `check()`) will hold it to.
    let ordered = spliced.ascend && (known_order || in_order(&body));
    if !ordered || range.breach(&body).is_some() {
        return Err(Error::corrupted(page, Corruption::CrossPageOrder));
    }
    // A node that fits one page is never split (`split_points`' first test).
    let size = node_size(&body);
    if size < sink.page_size() as usize {
        // A leaf with one edit, or a branch as it was read but for its children's pages (and
        // a separator of the same length): its last image, if the last commit wrote it, can be
        // patched (`write_piece`).
        let how = match (&body, spliced.keys) {
            (Body::Leaf(_), _) if edit != LeafEdit::Many => Some(Patching::Leaf(edit)),
            (Body::Branch(_), Rekeyed::None) => Some(Patching::Branch(None, spliced.moved)),
            (Body::Branch(_), Rekeyed::One(i)) => Some(Patching::Branch(Some(i), spliced.moved)),
            _ => None,
        };
        let patch = match (own_page, how) {
            (Some(prior), Some(how)) if known_order => Some(Patch { prior, how }),
            _ => None,
        };
        // Unsplit, it keeps its record of appends (the flag on the node the page cache hands
        // the next transaction).
        let of = PieceOf {
            page,
            place: Place::Rewritten,
            appended_only,
        };
        return Ok(match write_piece(body, size, sink, of, patch, sep)? {
            (id, None) => Pieces::Same(id),
            (id, Some(key)) => Pieces::One(BranchItem {
                key,
                child: Child::Page(id),
            }),
        });
    }
    let pieces = split_body(body, sink, fill);
    let mut out = Vec::with_capacity(pieces.len());
    let last = pieces.len() - 1;
    for (i, body) in pieces.into_iter().enumerate() {
        let size = node_size(&body);
        let place = match at_edge {
            true if i < last => Place::BehindEdge,
            _ => Place::Rewritten,
        };
        // Every piece starts a record of its own.
        let of = PieceOf {
            page,
            place,
            appended_only: true,
        };
        let (id, key) = write_piece(body, size, sink, of, None, FirstKey::Piece)?;
        let key = key.expect("no separator to compare with");
        out.push(BranchItem {
            key,
            child: Child::Page(id),
        });
    }
    Ok(Pieces::of(out))
}

/// What replacing a branch's owned children by their pieces did to its keys.
struct Spliced {
    /// The keys ascend around and across every child replaced.
    ascend: bool,
    /// Which separators changed, when every child became one piece.
    keys: Rekeyed,
    /// Where the replaced children are, when every child became one piece.
    moved: Moved,
}

/// Most replaced children a patch names one by one (a one-key write replaces one per branch).
const MOVED_MAX: usize = 4;

/// The items whose child a spill replaced, in place: up to [`MOVED_MAX`], else all of them.
#[derive(Clone, Copy, Debug, Default)]
struct Moved {
    at: [usize; MOVED_MAX],
    count: usize,
}

impl Moved {
    fn push(&mut self, i: usize) {
        if let Some(slot) = self.at.get_mut(self.count) {
            *slot = i;
        }
        self.count += 1;
    }

    /// The items, or `None` for too many to name.
    fn items(&self) -> Option<&[usize]> {
        self.at.get(..self.count)
    }
}

/// How a node rewritten little can be patched over its last image (`write_piece`).
struct Patch {
    /// The page the node was read from, which the last commit may have written.
    prior: PageId,
    how: Patching,
}

enum Patching {
    /// A leaf with this one edit.
    Leaf(LeafEdit),
    /// A branch whose children at the places named changed, and the one separator (to a key
    /// of the same length) that changed, if any.
    Branch(Option<usize>, Moved),
}

/// The separators of a branch whose owned children each became one piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rekeyed {
    /// All as they were: only child pages changed.
    None,
    /// Only that item's, to a key of the same length (a one-key delete that removes a leaf's
    /// first key changes its separator so).
    One(usize),
    /// More, or another length, or a child split: the branch is encoded anew.
    Many,
}

/// Spill every owned child of a branch's `items` (the branch read from or built under `page`,
/// its keys in `range`) and put the pieces in its place.
fn spill_children(
    items: &mut Vec<BranchItem>,
    sink: &mut dyn SpillSink,
    depth: usize,
    range: Range<'_>,
    page: PageId,
) -> Result<Spliced> {
    let mut ascend = true;
    let mut keys = Rekeyed::None;
    let mut moved = Moved::default();
    let mut i = 0;
    let mut left_unchanged = false;
    while i < items.len() {
        if matches!(items[i].child, Child::Page(_)) {
            left_unchanged = true;
            i += 1;
            continue;
        }
        let placeholder = Child::Page(PageId(0));
        let Child::Node(c) = std::mem::replace(&mut items[i].child, placeholder) else {
            unreachable!("a page child was skipped above");
        };
        // The child's range, from the separators as they were read (items after `i` are not
        // spilled yet).
        let child_range = Range {
            lo: if i == 0 {
                range.lo
            } else {
                Some(items[i].key.as_slice())
            },
            hi: items.get(i + 1).map(|n| n.key.as_slice()).or(range.hi),
        };
        let node = unbox(c, sink);
        let sep = FirstKey::Under(&items[i].key);
        let mut pieces = spill(node, sink, depth + 1, child_range, page, sep)?;
        // bbolt makes a separator its child's first key. When that key rose (the child's first
        // keys were deleted) and the left neighbour is a page this transaction did not read,
        // raising the separator would widen the neighbour's range over keys a damaged
        // neighbour may hide: keep the one that was read (still at most the child's first
        // key, so still valid).
        let (mut same_key, mut same_len) = (true, true);
        let first = match &mut pieces {
            Pieces::Same(_) => None,
            Pieces::One(item) => Some(item),
            Pieces::Split(items) => Some(&mut items[0]),
        };
        if let Some(first) = first {
            same_key = first.key == items[i].key;
            same_len = first.key.len() == items[i].key.len();
            if i > 0 && left_unchanged && first.key > items[i].key {
                first.key = std::mem::take(&mut items[i].key);
                same_key = true;
            }
        }
        let n = pieces.len();
        moved.push(i);
        keys = match (keys, n == 1 && same_key, n == 1 && same_len) {
            (keys, true, _) => keys,
            (Rekeyed::None, false, true) => Rekeyed::One(i),
            _ => Rekeyed::Many,
        };
        match pieces {
            Pieces::Same(id) => items[i].child = Child::Page(id),
            Pieces::One(piece) => items[i] = piece,
            Pieces::Split(split) => drop(items.splice(i..=i, split)),
        }
        // The pieces' keys, and each end against its neighbour (a later splice checks its own
        // left end again with the keys it brings).
        let around = &items[i.saturating_sub(1)..(i + n + 1).min(items.len())];
        ascend &= around.windows(2).all(|w| w[0].key < w[1].key);
        i += n;
        left_unchanged = false;
    }
    Ok(Spliced {
        ascend,
        keys,
        moved,
    })
}

/// The fill a split of a leaf at the right edge of its tree gives every piece but the last,
/// when only appends have grown the leaf since it was last split off: nine tenths of a page (or
/// `fill_percent`, when that is higher).
/// Ascending keys (counters, sequences) never come back to a page left of the edge, so the room
/// `fill_percent` leaves there would stay empty for good, and such a workload would write,
/// cache and keep about twice the pages it needs (bbolt's default of 0.5 does; LMDB's and
/// SQLite's appends fill their pages). The tenth kept is room for a key that arrives a little
/// late, as PostgreSQL's B-tree keeps on its rightmost split. The last piece, the new edge,
/// takes what is left and goes on filling. A leaf any other edit touched since its split (an
/// insert before its last key, a removal, a merge) splits at `fill_percent` as before, and so
/// does every branch.
const RIGHT_EDGE_FILL: f64 = 0.9;

/// Split `body` into pieces of at most `fill` of a page each (bbolt's rule, `split_points`).
fn split_body(body: Body, sink: &mut dyn SpillSink, fill: f64) -> Vec<Body> {
    let page_size = sink.page_size() as usize;
    let sizes: Vec<usize> = match &body {
        Body::Leaf(items) => items
            .iter()
            .map(crashlab_format::node::leaf_item_size)
            .collect(),
        Body::Branch(items) => items
            .iter()
            .map(crashlab_format::node::branch_item_size)
            .collect(),
    };
    let cuts = split_points(&sizes, page_size, fill);
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

/// The serialised size of a node of `body` (`Node::size`).
fn node_size(body: &Body) -> usize {
    crashlab_format::page::PAGE_HEADER_SIZE
        + match body {
            Body::Leaf(items) => items
                .iter()
                .map(crashlab_format::node::leaf_item_size)
                .sum::<usize>(),
            Body::Branch(items) => items
                .iter()
                .map(crashlab_format::node::branch_item_size)
                .sum::<usize>(),
        }
}

/// Keys of a node assembled by commit must ascend across the pieces it splits into. They always
/// do for a consistent tree; a corrupt one (a separator that disagrees with its child) can break
/// it, and that is an error about the file, not a programmer error.
fn in_order(body: &Body) -> bool {
    match body {
        Body::Leaf(items) => items.windows(2).all(|w| w[0].key() < w[1].key()),
        Body::Branch(items) => items.windows(2).all(|w| w[0].key < w[1].key),
    }
}

/// The node a piece is written for: the page errors name, where its pages are taken from, and
/// whether the node it becomes has grown only at its end so far ([`Node::appended_only`]).
#[derive(Clone, Copy)]
struct PieceOf {
    page: PageId,
    place: Place,
    appended_only: bool,
}

/// Where a piece's pages are taken from.
#[derive(Clone, Copy)]
enum Place {
    /// With the pages the next commits rewrite: the commit's reservation (`commit/reserve.rs`).
    Rewritten,
    /// A full piece an append split off behind the right edge ([`RIGHT_EDGE_FILL`]): later
    /// appends never rewrite it, so it may take an idle short free run for good.
    BehindEdge,
}

/// Allocate and encode one piece of a node of `size` bytes ([`Node::size`]) read from (or built
/// under) page `page`, its pages taken as `place` says. `patch`: the piece is a branch that may
/// be patched over its last image. Returns its page and its first key, `None` when `sep` does
/// not need it (no copy is made).
fn write_piece(
    body: Body,
    size: usize,
    sink: &mut dyn SpillSink,
    of: PieceOf,
    patch: Option<Patch>,
    sep: FirstKey<'_>,
) -> Result<(PageId, Option<Vec<u8>>)> {
    let PieceOf {
        page,
        place,
        appended_only,
    } = of;
    let mut node = Node::built(body);
    node.appended_only = appended_only;
    let page_size = sink.page_size();
    let pages = size.div_ceil(page_size as usize).max(1) as u64;
    let id = match place {
        Place::Rewritten => sink.allocate(pages)?,
        Place::BehindEdge => sink.allocate_behind_edge(pages)?,
    };
    // `encode` writes every byte up to `size`; the image's tail is zero already.
    let (buf, old_len) = sink.image(id, pages, size, patch.as_ref().map(|p| p.prior));
    // A refusal fails (and latches) the commit before any page is written. `spill` checked
    // the keys' order across every piece (naming a failure `CrossPageOrder`).
    let written = match (old_len, patch.map(|p| p.how)) {
        (Some(old_len), Some(Patching::Leaf(edit))) => {
            node.patch_leaf_image(buf, id, (old_len, size), edit)
        }
        (Some(old_len), Some(Patching::Branch(rekeyed, moved))) => {
            // Its offsets as they are: page ids and at most one key of the same length change.
            assert_eq!(old_len, size, "a branch with its keys keeps its size");
            node.patch_branch_image(buf, id, moved.items(), rekeyed)
        }
        _ => node.encode_in_order(buf, id, page_size, size),
    };
    written.map_err(|reason| Error::corrupted(page, reason))?;
    debug_assert!(
        old_len.is_none() || {
            let mut fresh = vec![0; buf.len()];
            node.encode_in_order(&mut fresh, id, page_size, size)
                .is_ok()
                && fresh == *buf
        },
        "a patched image is the image encoding gives"
    );
    node.origin = Some(PageSpan::new(id, pages));
    node.read_from = Some(id);
    // What the next commit finds in the page cache is this image's node (`spill`'s patch).
    node.as_written = true;
    let first = node.first_key().unwrap_or_default();
    let key = match sep {
        FirstKey::Root => None,
        FirstKey::Under(sep) if sep == first => None,
        FirstKey::Under(_) | FirstKey::Piece => Some(first.to_vec()),
    };
    sink.emit(id, node, page);
    Ok((id, key))
}

#[cfg(test)]
#[path = "spill_tests.rs"]
mod tests;
