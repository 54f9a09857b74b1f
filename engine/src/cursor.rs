//! Ordered iteration over one bucket: first, last, seek, next, prev. Each step hands out an
//! [`Entry`] that borrows the leaf it is in (no copy, no allocation); `iter.rs` wraps a cursor
//! as an `Iterator` over a key range.
//!
//! A cursor keeps the path from the root to its current leaf position as a stack. It sees the
//! transaction's own uncommitted writes (owned nodes) and the snapshot's pages alike. Empty
//! leaves, which only exist in memory before a commit rebalances them, are skipped.
//! The stack never grows past [`MAX_TREE_DEPTH`].

use crate::entry::Entry;
use crate::error::{Corruption, Error, Result};
use crate::tree::{NodeRef, Reader};
use crashlab_format::limits::MAX_TREE_DEPTH;
use crashlab_format::node::Body;
use std::cmp::Ordering;

pub struct Cursor<'a> {
    rd: Reader<'a>,
    root: NodeRef<'a>,
    stack: Vec<(NodeRef<'a>, usize)>,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(rd: Reader<'a>, root: NodeRef<'a>) -> Cursor<'a> {
        Cursor {
            rd,
            root,
            stack: Vec::new(),
        }
    }

    /// The key the cursor sits on, if it sits on one.
    pub(crate) fn key(&self) -> Option<&[u8]> {
        let (node, idx) = self.stack.last()?;
        match &node.body {
            Body::Leaf(items) => items.get(*idx).map(|it| it.key()),
            Body::Branch(_) => None,
        }
    }

    /// The smallest key.
    pub fn first(&mut self) -> Result<Option<Entry<'a>>> {
        self.stack.clear();
        self.push(self.root.clone(), 0)?;
        self.descend(false)?;
        self.settle_forward()
    }

    /// The largest key.
    pub fn last(&mut self) -> Result<Option<Entry<'a>>> {
        self.stack.clear();
        let root = self.root.clone();
        let last = root.len().saturating_sub(1);
        self.push(root, last)?;
        self.descend(true)?;
        self.settle_backward()
    }

    /// The first key ≥ `key`.
    pub fn seek(&mut self, key: &[u8]) -> Result<Option<Entry<'a>>> {
        self.stack.clear();
        let mut node = self.root.clone();
        loop {
            match &node.body {
                Body::Branch(items) => {
                    let i = node.child_index(key, self.rd.build_indexes);
                    let child = if items.is_empty() {
                        None
                    } else {
                        Some(node.child(i, &self.rd)?)
                    };
                    self.push(node.clone(), i)?;
                    match child {
                        Some(c) => node = c,
                        None => return self.settle_forward(),
                    }
                }
                Body::Leaf(_) => {
                    let i = node.rank(key, false, self.rd.build_indexes);
                    self.push(node.clone(), i)?;
                    return self.settle_forward();
                }
            }
        }
    }

    /// The key after the current one.
    #[expect(
        clippy::should_implement_trait,
        reason = "a cursor step is fallible and repositions; bbolt's name is the one users know"
    )]
    pub fn next(&mut self) -> Result<Option<Entry<'a>>> {
        let from = self.stack.last().cloned();
        if let Some(top) = self.stack.last_mut() {
            top.1 += 1;
        }
        let item = self.settle_forward()?;
        self.check_order(from, &item, Ordering::Greater)?;
        Ok(item)
    }

    /// The key before the current one.
    pub fn prev(&mut self) -> Result<Option<Entry<'a>>> {
        let from = self.stack.last().cloned();
        let item = self.step_back()?;
        self.check_order(from, &item, Ordering::Less)?;
        Ok(item)
    }

    /// A step must move past the key it started from. On a valid tree it always does; a crafted
    /// file whose branches share a child would otherwise walk that child once per path to it —
    /// `fanout ^ depth` leaves from a file of a few pages — so a key out of order is an error.
    fn check_order(
        &self,
        from: Option<(NodeRef<'a>, usize)>,
        item: &Option<Entry<'a>>,
        expected: Ordering,
    ) -> Result<()> {
        let (Some((node, idx)), Some(entry), Some((now, _))) = (from, item, self.stack.last())
        else {
            return Ok(());
        };
        let Body::Leaf(items) = &node.body else {
            return Ok(());
        };
        match items.get(idx) {
            Some(before) if entry.key().cmp(before.key()) != expected => Err(Error::corrupted(
                self.rd.page_of(now),
                Corruption::CursorOrder,
            )),
            _ => Ok(()),
        }
    }

    fn step_back(&mut self) -> Result<Option<Entry<'a>>> {
        loop {
            let Some((_, idx)) = self.stack.last_mut() else {
                return Ok(None);
            };
            if *idx > 0 {
                *idx -= 1;
                break;
            }
            self.stack.pop();
            // Step the parent back one child and descend to that child's last leaf entry.
            let Some((_, pidx)) = self.stack.last_mut() else {
                return Ok(None);
            };
            if *pidx == 0 {
                continue;
            }
            *pidx -= 1;
            self.descend(true)?;
            if self.rd.pager.prev_skips_leaf_end() {
                // A negative control (see `DebugHooks`): land one key short of the leaf's end.
                if let Some((_, idx)) = self.stack.last_mut() {
                    *idx = idx.saturating_sub(1);
                }
            }
            return self.settle_backward();
        }
        self.settle_backward()
    }

    fn push(&mut self, node: NodeRef<'a>, idx: usize) -> Result<()> {
        if self.stack.len() >= MAX_TREE_DEPTH {
            return Err(Error::corrupted(
                self.rd.page_of(&node),
                Corruption::CursorTooDeep,
            ));
        }
        self.stack.push((node, idx));
        Ok(())
    }

    /// From a branch on top of the stack, follow its current child down to a leaf, taking the
    /// first (or last) child at each level below.
    fn descend(&mut self, to_last: bool) -> Result<()> {
        loop {
            let Some((node, idx)) = self.stack.last() else {
                return Ok(());
            };
            if node.is_leaf() {
                return Ok(());
            }
            if *idx >= node.len() {
                return Ok(()); // empty branch: settle will move on
            }
            let child = node.child(*idx, &self.rd)?;
            let start = if to_last {
                child.len().saturating_sub(1)
            } else {
                0
            };
            self.push(child, start)?;
        }
    }

    /// Make the top of the stack point at a real leaf entry, moving forward across leaves.
    fn settle_forward(&mut self) -> Result<Option<Entry<'a>>> {
        loop {
            let Some((node, idx)) = self.stack.last() else {
                return Ok(None);
            };
            if let Body::Leaf(items) = &node.body {
                // A negative control: an emptied leaf ends the walk (see `DebugHooks`).
                if items.is_empty() && self.rd.debug.empty_leaf_ends_scan {
                    return Ok(None);
                }
                if *idx < items.len() {
                    return Ok(Some(Entry::new(node.clone(), *idx)));
                }
            }
            // Past the end of this node: pop to the nearest ancestor with a next child.
            loop {
                self.stack.pop();
                let Some((node, idx)) = self.stack.last_mut() else {
                    return Ok(None);
                };
                if *idx + 1 < node.len() {
                    *idx += 1;
                    break;
                }
            }
            self.descend(false)?;
        }
    }

    /// Like `settle_forward`, moving backward.
    fn settle_backward(&mut self) -> Result<Option<Entry<'a>>> {
        loop {
            let Some((node, idx)) = self.stack.last() else {
                return Ok(None);
            };
            if let Body::Leaf(items) = &node.body {
                // A negative control: an emptied leaf ends the backward walk (see `DebugHooks`).
                if items.is_empty() && self.rd.debug.empty_leaf_ends_reverse_scan {
                    return Ok(None);
                }
                if *idx < items.len() {
                    return Ok(Some(Entry::new(node.clone(), *idx)));
                }
            }
            loop {
                self.stack.pop();
                let Some((_, idx)) = self.stack.last_mut() else {
                    return Ok(None);
                };
                if *idx > 0 {
                    *idx -= 1;
                    break;
                }
            }
            self.descend(true)?;
        }
    }
}
