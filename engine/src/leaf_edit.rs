//! A leaf's items as a write transaction edits them: every insert, value replacement and removal
//! goes through here and is recorded in the node ([`LeafEdit`]), so that a commit that finds the
//! leaf changed by one edit can apply it to the leaf's last image instead of encoding every item
//! again (`crashlab_format`'s `patch.rs`, `spill::write_piece`). Every method is inlined: a
//! 100-key write calls them per key, and as calls they cost it 4,000 instructions.

use crashlab_format::node::{Body, LeafEdit, LeafItem, Node};

/// The items of a leaf node being edited.
pub struct LeafItems<'a> {
    node: &'a mut Node,
}

impl<'a> LeafItems<'a> {
    /// The items of `node`, a leaf.
    #[inline]
    pub fn of(node: &'a mut Node) -> LeafItems<'a> {
        assert!(node.is_leaf(), "LeafItems of a branch");
        LeafItems { node }
    }

    #[inline]
    fn items(&self) -> &Vec<LeafItem> {
        match &self.node.body {
            Body::Leaf(items) => items,
            Body::Branch(_) => unreachable!("checked a leaf"),
        }
    }

    #[inline]
    fn items_mut(&mut self) -> &mut Vec<LeafItem> {
        match &mut self.node.body {
            Body::Leaf(items) => items,
            Body::Branch(_) => unreachable!("checked a leaf"),
        }
    }

    #[inline]
    fn record(&mut self, edit: LeafEdit) {
        self.node.edit = self.node.edit.then(edit);
    }

    /// Where `key` is (`Ok`), or where it would go (`Err`).
    #[inline]
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        self.items()
            .binary_search_by(|it| it.key.as_slice().cmp(key))
    }

    #[inline]
    pub fn get(&self, i: usize) -> &LeafItem {
        &self.items()[i]
    }

    /// Insert `item` at `i`, where [`LeafItems::search`] placed its key.
    #[inline]
    pub fn insert(&mut self, i: usize, item: LeafItem) {
        self.items_mut().insert(i, item);
        self.record(LeafEdit::Inserted(i));
    }

    /// Replace item `i`'s value (its key and flags stay).
    #[inline]
    pub fn set_value(&mut self, i: usize, value: Vec<u8>) {
        self.items_mut()[i].value = value;
        self.record(LeafEdit::Replaced(i));
    }

    /// Remove item `i`; the leaf may now be underfull (commit considers merging it).
    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.items_mut().remove(i);
        self.node.unbalanced = true;
        self.record(LeafEdit::Removed(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &[u8]) -> LeafItem {
        LeafItem {
            flags: 0,
            key: key.to_vec(),
            value: b"v".to_vec(),
        }
    }

    #[test]
    fn one_edit_is_recorded_and_a_second_makes_many() {
        let mut n = Node::empty_leaf();
        let mut items = LeafItems::of(&mut n);
        let at = items.search(b"b").unwrap_err();
        items.insert(at, item(b"b"));
        assert_eq!(n.edit, LeafEdit::Inserted(0));
        let mut items = LeafItems::of(&mut n);
        items.set_value(0, b"w".to_vec());
        assert_eq!(n.edit, LeafEdit::Many);
        n.edit = LeafEdit::None;
        LeafItems::of(&mut n).remove(0);
        assert_eq!(
            (n.edit, n.unbalanced, n.len()),
            (LeafEdit::Removed(0), true, 0)
        );
    }
}
