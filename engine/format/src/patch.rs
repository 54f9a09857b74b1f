//! Rewriting a node's last image in place, for a commit that writes a node it changed little.
//!
//! A one-key write rewrites every node on its path, and encoding copies every key and value of
//! each again: in the benchmarks' tree a 20-item leaf and branches of 63 and 11 items, for one
//! new item and one changed child pointer per branch. When the writer still holds the image it
//! last wrote for such a node (`arena.rs` in the engine), the commit moves and rewrites only
//! what changed:
//!
//! - a branch whose keys kept their lengths: the header's page id, the child ids that changed
//!   and the one separator that did ([`Node::patch_branch_image`]);
//! - a leaf with one [`LeafEdit`]: an item inserted, one value replaced, or one item removed;
//!   the bytes after the edit move, and every element's offset moves with them
//!   ([`Node::patch_leaf_image`]).
//!
//! Either gives the bytes [`Node::encode`] gives for the node (the engine asserts it in debug
//! builds, and the tests below on random nodes and edits), so the files are the same.

use crate::corruption::Corruption;
use crate::edit::LeafEdit;
use crate::node::{leaf_element, table_end, Body, Child, Node, BUCKET_HEADER_SIZE};
use crate::page::{self, ELEMENT_SIZE, LEAF_FLAG_BUCKET};
use crate::types::PageId;

impl Node {
    /// Rewrite, in `buf` holding this branch's image as it was last encoded (the same keys but
    /// for element `rekeyed`, whose key kept its length: so the same size and offsets), the
    /// header's page id, the page ids of the children at `moved` (of every child, for `None`)
    /// and that key: all that a commit changes in a branch on a one-key write's path, where
    /// encoding would copy every key again. Refuses, as encoding does and writing nothing, a
    /// child not yet spilled among those.
    pub fn patch_branch_image(
        &self,
        buf: &mut [u8],
        id: PageId,
        moved: Option<&[usize]>,
        rekeyed: Option<usize>,
    ) -> Result<(), Corruption> {
        let Body::Branch(items) = &self.body else {
            panic!("patch_branch_image on a leaf");
        };
        assert_eq!(
            usize::from(page::read_u16(buf, 10)),
            items.len(),
            "the image is this branch's"
        );
        let all: Vec<usize>;
        let moved = match moved {
            Some(moved) => moved,
            None => {
                all = (0..items.len()).collect();
                &all
            }
        };
        let child = |i: usize| match items[i].child {
            Child::Page(child) => Ok(child),
            Child::Node(_) => Err(Corruption::ChildNotSpilled { element: i }),
        };
        for &i in moved {
            child(i)?;
        }
        page::write_u64(buf, 0, id.0);
        if let Some(i) = rekeyed {
            let elem = table_end(i);
            let key = &items[i].key;
            let at = elem + page::read_u32(buf, elem) as usize;
            assert_eq!(
                page::read_u32(buf, elem + 4) as usize,
                key.len(),
                "same key length"
            );
            buf[at..at + key.len()].copy_from_slice(key);
        }
        for &i in moved {
            page::write_u64(buf, table_end(i) + 8, child(i)?.0);
        }
        Ok(())
    }

    /// Apply `edit`, the one edit made to this leaf's items, to the leaf's last image in `buf`
    /// (`old_len` bytes long; every byte from there on zero), and give it header id `id`: the
    /// bytes after the edit move, each element's offset moves with them, and what the image
    /// shrank by is zeroed. `size` is this leaf's [`Node::size`]. The result is what
    /// [`Node::encode`] writes. Refuses, as encoding does and writing nothing, an inserted or
    /// replaced item encoding would refuse.
    pub fn patch_leaf_image(
        &self,
        buf: &mut [u8],
        id: PageId,
        (old_len, size): (usize, usize),
        edit: LeafEdit,
    ) -> Result<(), Corruption> {
        debug_assert!(self.keys_ascend(), "a leaf edit keeps the keys in order");
        debug_assert_eq!(size, self.size(), "the caller's size is the leaf's");
        let Body::Leaf(items) = &self.body else {
            panic!("patch_leaf_image on a branch");
        };
        let count = items.len();
        assert!(buf.len() >= size.max(old_len), "the run holds both images");
        let old_count = usize::from(page::read_u16(buf, 10));
        match edit {
            LeafEdit::None => assert_eq!(old_count, count, "the image is this leaf's"),
            LeafEdit::Inserted(i) => {
                assert_eq!(old_count + 1, count, "one item more");
                refuse_item(items, i)?;
                insert_item(buf, &items[i], i, old_count, old_len);
            }
            LeafEdit::Replaced(i) => {
                assert_eq!(old_count, count, "as many items");
                refuse_item(items, i)?;
                replace_value(buf, items[i].value(), i, count, old_len);
            }
            LeafEdit::Removed(i) => {
                assert_eq!(old_count, count + 1, "one item fewer");
                remove_item(buf, i, old_count, old_len);
            }
            LeafEdit::Many => panic!("a patch applies one edit"),
        }
        if size < old_len {
            buf[size..old_len].fill(0);
        }
        page::write_u64(buf, 0, id.0);
        // At most the old count plus one, and a page holds fewer than 2^16 elements.
        page::write_u16(
            buf,
            10,
            u16::try_from(count).map_err(|_| Corruption::ElementCountOverflow { count })?,
        );
        Ok(())
    }
}

/// What encoding would refuse about item `i` of a leaf (its key order is the caller's).
fn refuse_item(items: &[crate::node::LeafItem], i: usize) -> Result<(), Corruption> {
    let it = &items[i];
    if it.flags & !LEAF_FLAG_BUCKET != 0 {
        let flags = it.flags;
        return Err(Corruption::LeafFlags { element: i, flags });
    }
    if it.is_bucket() && it.value().len() < BUCKET_HEADER_SIZE {
        return Err(Corruption::BucketValueTooShort { element: i });
    }
    if i == 0 && it.key().is_empty() {
        return Err(Corruption::EmptyKey { element: 0 });
    }
    Ok(())
}

/// Add `delta` to the offset to its key of each element `elements` names: the bytes its key
/// moved by, less the bytes the element itself moved by. Every result is an offset inside the
/// image, so the sum wraps back into range when `delta` is negative.
fn shift_pos(buf: &mut [u8], elements: std::ops::Range<usize>, delta: isize) {
    let table = &mut buf[table_end(elements.start)..table_end(elements.end)];
    for elem in table.chunks_exact_mut(ELEMENT_SIZE) {
        let pos = u32::from_le_bytes([elem[4], elem[5], elem[6], elem[7]]);
        elem[4..8].copy_from_slice(&pos.wrapping_add(delta as u32).to_le_bytes());
    }
}

/// Where element `j`'s key starts.
fn key_at(buf: &[u8], j: usize) -> usize {
    table_end(j) + page::read_u32(buf, table_end(j) + 4) as usize
}

/// Insert `it` as element `i` of a leaf image of `old_count` elements and `old_len` bytes.
fn insert_item(
    buf: &mut [u8],
    it: &crate::node::LeafItem,
    i: usize,
    old_count: usize,
    old_len: usize,
) {
    let (k, v) = (it.key().len(), it.value().len());
    let old_table = table_end(old_count);
    // Where the new item's bytes go, before anything moves: the old item `i`'s key, or the end.
    let at = if i < old_count {
        key_at(buf, i)
    } else {
        old_len
    };
    // Right to left, so nothing is overwritten before it moved: the bytes after the new
    // item's, the bytes before it (past the grown table), then the elements after it.
    buf.copy_within(at..old_len, at + ELEMENT_SIZE + k + v);
    buf.copy_within(old_table..at, old_table + ELEMENT_SIZE);
    buf.copy_within(table_end(i)..old_table, table_end(i + 1));
    let data = at + ELEMENT_SIZE;
    let elem = table_end(i);
    buf[elem..elem + ELEMENT_SIZE].copy_from_slice(&leaf_element(it.flags, data - elem, k, v));
    buf[data..data + k + v].copy_from_slice(it.bytes());
    // Elements before it stayed, their bytes moved past the new element; those after it moved
    // one element, their bytes one element and the new item.
    shift_pos(buf, 0..i, ELEMENT_SIZE as isize);
    shift_pos(buf, i + 1..old_count + 1, (k + v) as isize);
}

/// Replace element `i`'s value (of a leaf image of `count` elements and `old_len` bytes) by
/// `value`.
fn replace_value(buf: &mut [u8], value: &[u8], i: usize, count: usize, old_len: usize) {
    let elem = table_end(i);
    let k = page::read_u32(buf, elem + 8) as usize;
    let old_v = page::read_u32(buf, elem + 12) as usize;
    let start = key_at(buf, i) + k;
    buf.copy_within(start + old_v..old_len, start + value.len());
    buf[start..start + value.len()].copy_from_slice(value);
    page::write_u32(buf, elem + 12, value.len() as u32);
    shift_pos(buf, i + 1..count, value.len() as isize - old_v as isize);
}

/// Remove element `i` of a leaf image of `old_count` elements and `old_len` bytes.
fn remove_item(buf: &mut [u8], i: usize, old_count: usize, old_len: usize) {
    let elem = table_end(i);
    let gone = (page::read_u32(buf, elem + 8) + page::read_u32(buf, elem + 12)) as usize;
    let key = key_at(buf, i);
    let old_table = table_end(old_count);
    // Left to right: the elements after it, the bytes before its (into the shrunk table), the
    // bytes after its.
    buf.copy_within(table_end(i + 1)..old_table, elem);
    buf.copy_within(old_table..key, old_table - ELEMENT_SIZE);
    buf.copy_within(key + gone..old_len, key - ELEMENT_SIZE);
    shift_pos(buf, 0..i, -(ELEMENT_SIZE as isize));
    shift_pos(buf, i..old_count - 1, -(gone as isize));
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
