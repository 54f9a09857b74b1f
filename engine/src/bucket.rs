//! Buckets: named, nestable trees of keys.
//!
//! A bucket's header (`root` page, `sequence`) is the value of a leaf element flagged
//! [`LEAF_FLAG_BUCKET`] in its parent; the root bucket's header lives in the meta. A small
//! bucket with no sub-buckets is stored inline: `root = 0` and the value carries a leaf page
//! image after the header.
//!
//! [`Bucket`] is the read-only view used by read transactions. In a write transaction,
//! [`BucketMut`] edits a [`BucketTree`]: the bucket's tree (owned nodes where touched), its
//! sequence, and the sub-buckets opened in this transaction. Sub-bucket edits reach the parent
//! only at commit, when each dirty child is written and its new header put into the parent.

use crate::by_name::ByName;
use crate::cached::CachedNode;
use crate::cursor::Cursor;
use crate::entry::{CursorItem, Value};
use crate::error::{Corruption, Error, Result};
use crate::iter::Iter;
use crate::tree::{self, NodeRef, Reader};
use crashlab_format::bucket::{decode_header, encode_header, BucketRoot, Header};
use crashlab_format::limits::{MAX_BUCKET_DEPTH, MAX_KEY_SIZE, MAX_VALUE_SIZE};
use crashlab_format::node::{Body, Child, LeafItem, Node};
use crashlab_format::page::LEAF_FLAG_BUCKET;
use crashlab_format::types::{PageId, PageSpan};
use std::ops::{RangeBounds, RangeFull};
use std::sync::Arc;

/// `key` checked as a key or bucket name: not empty, at most `MAX_KEY_SIZE` bytes (one short
/// of it under the negative control `one_short`, see `DebugHooks`).
fn check_key(key: &[u8], one_short: bool) -> Result<()> {
    if key.is_empty() {
        return Err(Error::KeyRequired);
    }
    if key.len() > MAX_KEY_SIZE || (one_short && key.len() == MAX_KEY_SIZE) {
        return Err(Error::KeyTooLarge {
            len: key.len(),
            max: MAX_KEY_SIZE,
        });
    }
    Ok(())
}

fn incompatible(found_bucket: bool) -> Error {
    if found_bucket {
        Error::IncompatibleValue {
            found: "bucket",
            wanted: "value",
        }
    } else {
        Error::IncompatibleValue {
            found: "value",
            wanted: "bucket",
        }
    }
}

/// A read-only bucket of a snapshot.
pub struct Bucket<'a> {
    rd: Reader<'a>,
    root: NodeRef<'a>,
    sequence: u64,
}

impl<'a> Bucket<'a> {
    pub(crate) fn new(rd: Reader<'a>, root: NodeRef<'a>, sequence: u64) -> Bucket<'a> {
        Bucket { rd, root, sequence }
    }

    pub(crate) fn from_header(rd: Reader<'a>, h: Header) -> Result<Bucket<'a>> {
        let root = match h.root {
            BucketRoot::Page(id) => NodeRef::Shared(rd.node(id, h.from)?),
            BucketRoot::Inline(n) => {
                NodeRef::Shared(Arc::new(CachedNode::new(Arc::unwrap_or_clone(n))))
            }
        };
        Ok(Bucket::new(rd, root, h.sequence))
    }

    /// The value stored under `key`, borrowed for the transaction's life; `None` when absent or
    /// when the key names a sub-bucket.
    pub fn get(&self, key: &[u8]) -> Result<Option<Value<'a>>> {
        value_of(tree::find(self.root.clone(), key, &self.rd)?)
    }

    /// The sub-bucket `name`, if it exists.
    pub fn bucket(&self, name: &[u8]) -> Result<Option<Bucket<'a>>> {
        let header = tree::lookup_with(self.root.clone(), name, &self.rd, |it, page| {
            it.is_bucket().then(|| decode_header(it.value(), page))
        })?;
        match header.flatten() {
            Some(h) => Ok(Some(Bucket::from_header(self.rd, h?)?)),
            None => Ok(None),
        }
    }

    pub fn cursor(&self) -> Cursor<'a> {
        Cursor::new(self.rd, self.root.clone())
    }

    /// Every key in order (sub-buckets' values are `None`), borrowed for the transaction's life.
    pub fn iter(&self) -> Iter<'a> {
        self.range::<RangeFull>(..)
    }

    /// The keys within `range` in order, from either end: `bucket.range(&b"a"[..]..&b"m"[..])`.
    pub fn range<'k, R: RangeBounds<&'k [u8]>>(&self, range: R) -> Iter<'a> {
        Iter::new(self.cursor(), self.cursor(), range)
    }

    pub fn sequence(&self) -> u64 {
        self.sequence
    }
}

/// The value a lookup found, unless the key names a sub-bucket.
fn value_of(found: Option<(NodeRef<'_>, usize)>) -> Result<Option<Value<'_>>> {
    Ok(found
        .filter(|(leaf, i)| !tree::leaf_items(leaf)[*i].is_bucket())
        .map(|(leaf, i)| Value::new(leaf, i)))
}

/// The tree of a sub-bucket at nesting level `depth` whose header `value` was read from `page`.
fn open_child(value: &[u8], page: PageId, depth: usize) -> Result<BucketTree> {
    if depth > MAX_BUCKET_DEPTH {
        return Err(Error::corrupted(page, Corruption::BucketsTooDeep));
    }
    Ok(BucketTree::from_header(decode_header(value, page)?, depth))
}

/// A bucket's state inside a write transaction.
pub(crate) struct BucketTree {
    pub root: Child,
    pub sequence: u64,
    /// This bucket's own tree or sequence changed.
    pub dirty: bool,
    /// Sub-buckets opened in this transaction, by name.
    pub children: ByName<BucketTree>,
    /// Nesting level (the root bucket is 0).
    pub depth: usize,
    /// The page the bucket's header was read from, which references `root` (for a bucket
    /// created in this transaction, its parent's).
    pub home: PageId,
    /// Where this transaction's last put or delete went down the tree.
    pub hint: tree::PathHint,
    /// A delete went down this tree in this transaction. Only a removal makes a node
    /// underfull or empties one (a node a commit wrote, or one decoded, is not marked
    /// unbalanced), so commit rebalances only such a tree: bbolt too rebalances only the nodes
    /// a delete marked, and a one-key insert's commit then skips a pass over its branches.
    pub removed: bool,
}

impl BucketTree {
    pub fn from_header(h: Header, depth: usize) -> BucketTree {
        let root = match h.root {
            BucketRoot::Page(id) => Child::Page(id),
            BucketRoot::Inline(n) => Child::Node(Box::new(Node::clone(&n))),
        };
        BucketTree {
            root,
            sequence: h.sequence,
            dirty: false,
            children: ByName::default(),
            depth,
            home: h.from,
            hint: tree::PathHint::default(),
            removed: false,
        }
    }

    fn new_empty(depth: usize, home: PageId) -> BucketTree {
        BucketTree {
            root: Child::Node(Box::default()),
            sequence: 0,
            dirty: true,
            children: ByName::default(),
            depth,
            home,
            hint: tree::PathHint::default(),
            removed: false,
        }
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty || self.children.values().any(BucketTree::is_dirty)
    }
}

/// A bucket being edited by a write transaction.
pub struct BucketMut<'a> {
    rd: Reader<'a>,
    tree: &'a mut BucketTree,
    freed: &'a mut Vec<PageSpan>,
}

impl<'a> BucketMut<'a> {
    pub(crate) fn new(
        rd: Reader<'a>,
        tree: &'a mut BucketTree,
        freed: &'a mut Vec<PageSpan>,
    ) -> BucketMut<'a> {
        BucketMut { rd, tree, freed }
    }

    fn root_ref(&self) -> Result<NodeRef<'_>> {
        NodeRef::of_child(&self.tree.root, &self.rd, self.tree.home)
    }

    /// Whether `key` is stored here as a sub-bucket (`Some(true)`) or a value (`Some(false)`):
    /// read from the item where it lies, without copying its key and value (a Delete's check
    /// copied the item into an allocation of its own, one per delete).
    fn stored_as_bucket(&self, key: &[u8]) -> Result<Option<bool>> {
        tree::lookup_with(self.root_ref()?, key, &self.rd, |it, _| it.is_bucket())
    }

    /// The item under `key` and the leaf page it was found in.
    fn lookup_at(&self, key: &[u8]) -> Result<Option<(LeafItem, PageId)>> {
        tree::lookup_with(self.root_ref()?, key, &self.rd, |it, page| {
            (it.clone(), page)
        })
    }

    /// The value stored under `key`, including this transaction's own writes, borrowed until
    /// the bucket is next changed.
    pub fn get(&self, key: &[u8]) -> Result<Option<Value<'_>>> {
        value_of(tree::find(self.root_ref()?, key, &self.rd)?)
    }

    /// Insert or replace `key`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        check_key(key, self.rd.debug.key_limit_one_short)?;
        if value.len() > MAX_VALUE_SIZE {
            return Err(Error::ValueTooLarge {
                len: value.len(),
                max: MAX_VALUE_SIZE,
            });
        }
        if self.tree.depth == 0 {
            // The root bucket holds only buckets, as in bbolt.
            return Err(Error::IncompatibleValue {
                found: "root bucket",
                wanted: "bucket",
            });
        }
        self.put_item(key, value, 0)
    }

    fn put_item(&mut self, key: &[u8], value: &[u8], flags: u32) -> Result<()> {
        let put_over_bucket = self.rd.debug.put_over_bucket;
        let BucketTree {
            root, home, hint, ..
        } = &mut *self.tree;
        tree::with_leaf(root, *home, key, &self.rd, hint, |items, _| {
            match items.search(key) {
                // A negative control takes a plain value over a bucket (see `DebugHooks`).
                Ok(i) if items.get(i).flags != flags && !(flags == 0 && put_over_bucket) => {
                    Err(incompatible(items.get(i).is_bucket()))
                }
                Ok(i) => {
                    items.set_value(i, value);
                    Ok(())
                }
                Err(i) => {
                    items.insert(i, LeafItem::new(flags, key, value));
                    Ok(())
                }
            }
        })?;
        self.tree.dirty = true;
        Ok(())
    }

    /// Remove `key`; returns whether it existed. Deleting a sub-bucket's key is an error (use
    /// [`BucketMut::delete_bucket`]).
    pub fn delete(&mut self, key: &[u8]) -> Result<bool> {
        match self.stored_as_bucket(key)? {
            // A negative control answers `true` here (see `DebugHooks`).
            None => Ok(self.rd.debug.delete_answers_existed),
            Some(true) => Err(incompatible(true)),
            Some(false) => {
                self.remove_item(key)?;
                Ok(true)
            }
        }
    }

    fn remove_item(&mut self, key: &[u8]) -> Result<()> {
        // Marked before the descent: whatever it reaches, commit rebalances this tree.
        self.tree.removed = true;
        let BucketTree {
            root, home, hint, ..
        } = &mut *self.tree;
        tree::with_leaf(root, *home, key, &self.rd, hint, |items, _| {
            if let Ok(i) = items.search(key) {
                items.remove(i);
            }
            Ok(())
        })?;
        self.tree.dirty = true;
        Ok(())
    }

    pub fn cursor(&self) -> Result<Cursor<'_>> {
        Ok(Cursor::new(self.rd, self.root_ref()?))
    }

    /// Every key in order, including this transaction's own writes.
    pub fn iter(&self) -> Result<Iter<'_>> {
        self.range::<RangeFull>(..)
    }

    /// The keys within `range` in order, including this transaction's own writes.
    pub fn range<'k, R: RangeBounds<&'k [u8]>>(&self, range: R) -> Result<Iter<'_>> {
        Ok(Iter::new(self.cursor()?, self.cursor()?, range))
    }

    /// Every key and value in order (sub-buckets have `None` values), copied: for a caller that
    /// keeps them past the bucket's next change.
    pub fn items(&self) -> Result<Vec<CursorItem>> {
        self.iter()?.map(|e| e.map(|e| e.to_item())).collect()
    }

    pub fn sequence(&self) -> u64 {
        self.tree.sequence
    }

    pub fn set_sequence(&mut self, sequence: u64) {
        self.tree.sequence = sequence;
        // A negative control (see `DebugHooks::sequence_skips_dirty`) forgets to mark it.
        if !self.rd.debug.sequence_skips_dirty {
            self.tree.dirty = true;
        }
    }

    /// Increment the sequence and return the new value.
    pub fn next_sequence(&mut self) -> u64 {
        self.set_sequence(self.tree.sequence.wrapping_add(1));
        self.tree.sequence
    }

    fn reborrow(&mut self) -> BucketMut<'_> {
        BucketMut {
            rd: self.rd,
            tree: &mut *self.tree,
            freed: &mut *self.freed,
        }
    }

    /// Open sub-bucket `name` for editing.
    pub fn bucket_mut(&mut self, name: &[u8]) -> Result<Option<BucketMut<'_>>> {
        self.reborrow().bucket_mut_owned(name)
    }

    /// Create sub-bucket `name`; fails if the key exists.
    pub fn create_bucket(&mut self, name: &[u8]) -> Result<BucketMut<'_>> {
        self.reborrow().create_bucket_owned(name)
    }

    /// Open sub-bucket `name`, creating it when missing.
    pub fn create_bucket_if_missing(&mut self, name: &[u8]) -> Result<BucketMut<'_>> {
        self.reborrow().create_bucket_if_missing_owned(name)
    }

    pub(crate) fn bucket_mut_owned(self, name: &[u8]) -> Result<Option<BucketMut<'a>>> {
        if !self.tree.children.contains_key(name) {
            // The header is read where it lies: no copy of the item's key and value.
            let depth = self.tree.depth + 1;
            let found = tree::lookup_with(self.root_ref()?, name, &self.rd, |it, page| {
                it.is_bucket().then(|| open_child(it.value(), page, depth))
            })?;
            let Some(Some(child)) = found else {
                return Ok(None);
            };
            self.tree.children.insert(name.to_vec(), child?);
        }
        let BucketMut { rd, tree, freed } = self;
        Ok(tree
            .children
            .get_mut(name)
            .map(|tree| BucketMut { rd, tree, freed }))
    }

    pub(crate) fn create_bucket_owned(mut self, name: &[u8]) -> Result<BucketMut<'a>> {
        if name.is_empty() {
            return Err(Error::BucketNameRequired);
        }
        check_key(name, self.rd.debug.key_limit_one_short)?;
        if let Some(is_bucket) = self.stored_as_bucket(name)? {
            return Err(if is_bucket {
                Error::BucketExists
            } else {
                incompatible(false)
            });
        }
        let depth = self.tree.depth + 1;
        if depth > MAX_BUCKET_DEPTH {
            return Err(Error::BucketTooDeep {
                max: MAX_BUCKET_DEPTH,
            });
        }
        // A placeholder (an empty inline bucket) makes the name visible to lookups and cursors
        // now; commit replaces it with the bucket's real header.
        let placeholder = encode_header(PageId(0), 0, Some(&Node::empty_leaf()))
            .map_err(|reason| Error::corrupted(self.tree.home, reason))?;
        self.put_item(name, &placeholder, LEAF_FLAG_BUCKET)?;
        let BucketMut { rd, tree, freed } = self;
        let home = tree.home;
        let child = tree
            .children
            .get_or_insert_with(name, || BucketTree::new_empty(depth, home));
        Ok(BucketMut {
            rd,
            tree: child,
            freed,
        })
    }

    pub(crate) fn create_bucket_if_missing_owned(self, name: &[u8]) -> Result<BucketMut<'a>> {
        let exists =
            self.tree.children.contains_key(name) || self.stored_as_bucket(name)? == Some(true);
        if !exists {
            return self.create_bucket_owned(name);
        }
        match self.bucket_mut_owned(name)? {
            Some(b) => Ok(b),
            None => Err(Error::BucketNotFound),
        }
    }

    /// Delete sub-bucket `name` and everything in it; its pages become pending at commit.
    pub fn delete_bucket(&mut self, name: &[u8]) -> Result<()> {
        let (it, page) = match self.lookup_at(name)? {
            None => return Err(Error::BucketNotFound),
            Some((it, _)) if !it.is_bucket() => return Err(incompatible(false)),
            Some(found) => found,
        };
        // Collect first: a read error halfway must not leave pages of a live bucket marked
        // freed.
        let mut spans = Vec::new();
        match self.tree.children.get(name) {
            Some(child) => free_tree(child, &self.rd, &mut spans)?,
            None => {
                free_stored_bucket(it.value(), page, &self.rd, &mut spans, self.tree.depth + 1)?;
            }
        }
        self.remove_item(name)?;
        self.tree.children.remove(name);
        self.freed.extend(spans);
        Ok(())
    }
}

/// Free every page of a bucket opened in this transaction (and of its sub-buckets).
fn free_tree(t: &BucketTree, rd: &Reader<'_>, freed: &mut Vec<PageSpan>) -> Result<()> {
    // (child, tree level, the page that references the child)
    let mut stack: Vec<(&Child, usize, PageId)> = vec![(&t.root, 0, t.home)];
    while let Some((child, depth, from)) = stack.pop() {
        let node: &Node = match child {
            Child::Page(id) => {
                let root = (*id, from);
                free_stored_subtree(root, rd, freed, t.depth, Some(&t.children))?;
                continue;
            }
            Child::Node(n) => n,
        };
        let page = rd.page_of(node);
        if depth > crashlab_format::limits::MAX_TREE_DEPTH {
            return Err(Error::corrupted(page, Corruption::TreeTooDeep));
        }
        // A negative control: an emptied root is taken for a new inline bucket's (see
        // `DebugHooks::emptied_bucket_leaks`).
        let emptied = depth == 0 && matches!(&node.body, Body::Leaf(items) if items.is_empty());
        if emptied && rd.debug.emptied_bucket_leaks {
            continue;
        }
        freed.extend(node.origin);
        match &node.body {
            Body::Branch(items) => {
                stack.extend(items.iter().map(|i| (&i.child, depth + 1, page)));
            }
            // A negative control forgets the sub-buckets stored in a leaf this transaction
            // edited (see `DebugHooks`).
            Body::Leaf(_) if rd.debug.delete_leaks_sub_buckets => {}
            Body::Leaf(items) => {
                for it in items.iter().filter(|it| it.is_bucket()) {
                    if !t.children.contains_key(it.key()) {
                        free_stored_bucket(it.value(), page, rd, freed, t.depth + 1)?;
                    }
                }
            }
        }
    }
    for child in t.children.values() {
        free_tree(child, rd, freed)?;
    }
    Ok(())
}

/// Free every page of a stored bucket, given its header value.
fn free_stored_bucket(
    value: &[u8],
    page: PageId,
    rd: &Reader<'_>,
    freed: &mut Vec<PageSpan>,
    depth: usize,
) -> Result<()> {
    if depth > MAX_BUCKET_DEPTH {
        return Err(Error::corrupted(page, Corruption::BucketsTooDeep));
    }
    match decode_header(value, page)?.root {
        BucketRoot::Page(id) => free_stored_subtree((id, page), rd, freed, depth, None),
        BucketRoot::Inline(n) => {
            let Body::Leaf(items) = &n.body else {
                return Ok(());
            };
            for it in items.iter().filter(|it| it.is_bucket()) {
                free_stored_bucket(it.value(), page, rd, freed, depth + 1)?;
            }
            Ok(())
        }
    }
}

/// Free every page reachable from stored page `root` (a bucket's tree and its sub-buckets;
/// given with the page that references it), except the sub-buckets named in `opened`: those
/// are open in this transaction and freed from their `BucketTree` (freeing them here too would
/// free their stored pages twice).
fn free_stored_subtree(
    root: (PageId, PageId),
    rd: &Reader<'_>,
    freed: &mut Vec<PageSpan>,
    depth: usize,
    opened: Option<&ByName<BucketTree>>,
) -> Result<()> {
    let is_opened = |key: &[u8]| opened.is_some_and(|o| o.contains_key(key));
    // (page, tree level, the page that references it)
    let mut stack = vec![(root.0, 0usize, root.1)];
    while let Some((id, level, from)) = stack.pop() {
        if level > crashlab_format::limits::MAX_TREE_DEPTH {
            return Err(Error::corrupted(from, Corruption::TreeTooDeep));
        }
        let node = rd.node(id, from)?;
        freed.extend(node.origin);
        match &node.body {
            Body::Branch(items) => {
                for it in items {
                    if let Child::Page(c) = it.child {
                        stack.push((c, level + 1, id));
                    }
                }
            }
            Body::Leaf(items) => {
                for it in items
                    .iter()
                    .filter(|it| it.is_bucket() && !is_opened(it.key()))
                {
                    free_stored_bucket(it.value(), id, rd, freed, depth + 1)?;
                }
            }
        }
    }
    Ok(())
}
