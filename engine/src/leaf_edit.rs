//! A leaf's items as a write transaction edits them: every insert, value replacement and removal
//! goes through here and is recorded in the node ([`LeafEdit`]), so that a commit that finds the
//! leaf changed by one edit can apply it to the leaf's last image instead of encoding every item
//! again (`crashlab_format`'s `patch.rs`, `spill::write_piece`). Every method is inlined: a
//! 100-key write calls them per key, and as calls they cost it 4,000 instructions.

use crashlab_format::node::{Body, LeafEdit, LeafItem, Node};

/// The items of a leaf node being edited.
pub struct LeafItems<'a> {
    node: &'a mut Node,
    /// Just past where the last search landed, if one did: tried first by the next search.
    near: Option<usize>,
}

impl<'a> LeafItems<'a> {
    /// The items of `node`, a leaf.
    #[inline]
    pub fn of(node: &'a mut Node) -> LeafItems<'a> {
        assert!(node.is_leaf(), "LeafItems of a branch");
        LeafItems { node, near: None }
    }

    /// These items, with `near` as the guess the next search tries first.
    #[inline]
    pub fn near(self, near: Option<usize>) -> LeafItems<'a> {
        LeafItems { near, ..self }
    }

    /// Just past where the last search landed: where the next of a run of ascending keys goes.
    #[inline]
    pub fn last_found(&self) -> Option<usize> {
        self.near
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

    /// Where `key` is (`Ok`), or where it would go (`Err`): the binary search's answer, found
    /// first at the guess when the keys around it enclose `key` (the next key of an ascending
    /// run goes just past the last one).
    #[inline(always)]
    pub fn search(&mut self, key: &[u8]) -> Result<usize, usize> {
        let items = self.items();
        let found = if let Some(at) = self.near.filter(|&at| {
            at <= items.len()
                && (at == 0 || items[at - 1].key() < key)
                && items.get(at).is_none_or(|it| key <= it.key())
        }) {
            match items.get(at) {
                Some(it) if it.key() == key => Ok(at),
                _ => Err(at),
            }
        } else {
            items.binary_search_by(|it| it.key().cmp(key))
        };
        debug_assert_eq!(found, items.binary_search_by(|it| it.key().cmp(key)));
        self.near = match found {
            Ok(i) | Err(i) => Some(i + 1),
        };
        found
    }

    #[inline]
    pub fn get(&self, i: usize) -> &LeafItem {
        &self.items()[i]
    }

    /// Insert `item` at `i`, where [`LeafItems::search`] placed its key.
    #[inline]
    pub fn insert(&mut self, i: usize, item: LeafItem) {
        self.node.appended_only &= i == self.items().len();
        self.items_mut().insert(i, item);
        self.record(LeafEdit::Inserted(i));
    }

    /// Replace item `i`'s value (its key and flags stay).
    #[inline]
    pub fn set_value(&mut self, i: usize, value: &[u8]) {
        self.items_mut()[i].set_value(value);
        self.record(LeafEdit::Replaced(i));
    }

    /// Remove item `i`; the leaf may now be underfull (commit considers merging it).
    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.items_mut().remove(i);
        self.node.unbalanced = true;
        self.node.appended_only = false;
        self.record(LeafEdit::Removed(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &[u8]) -> LeafItem {
        LeafItem::new(0, key, b"v")
    }

    #[test]
    fn one_edit_is_recorded_and_a_second_makes_many() {
        let mut n = Node::empty_leaf();
        let mut items = LeafItems::of(&mut n);
        let at = items.search(b"b").unwrap_err();
        items.insert(at, item(b"b"));
        assert_eq!(n.edit, LeafEdit::Inserted(0));
        let mut items = LeafItems::of(&mut n);
        items.set_value(0, b"w");
        assert_eq!(n.edit, LeafEdit::Many);
        n.edit = LeafEdit::None;
        LeafItems::of(&mut n).remove(0);
        assert_eq!(
            (n.edit, n.unbalanced, n.len()),
            (LeafEdit::Removed(0), true, 0)
        );
    }

    /// Commit skips the rebalance pass for a tree no delete went down (`commit::rebalance`):
    /// inserting and replacing must not mark a leaf, only removing does.
    #[test]
    fn only_a_removal_marks_the_leaf_unbalanced() {
        let mut n = Node::empty_leaf();
        let mut items = LeafItems::of(&mut n);
        items.insert(0, item(b"a"));
        items.insert(1, item(b"b"));
        items.set_value(0, b"w");
        assert!(!n.unbalanced);
        LeafItems::of(&mut n).remove(1);
        assert!(n.unbalanced);
    }

    /// A search that starts from a guess answers what the binary search answers, for every
    /// guess (right, wrong, past the end) and every probe (present, absent, between, outside),
    /// and leaves its guess just past where it landed.
    #[test]
    fn a_guessed_search_answers_as_the_binary_search() {
        let mut n = Node::empty_leaf();
        for k in [b"b", b"d", b"f", b"h"] {
            let mut items = LeafItems::of(&mut n);
            let at = items.search(k).unwrap_err();
            items.insert(at, item(k));
        }
        let probes: [&[u8]; 9] = [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"i"];
        for guess in [None, Some(0), Some(1), Some(2), Some(4), Some(5), Some(99)] {
            for probe in probes {
                let Body::Leaf(all) = &n.body else {
                    unreachable!()
                };
                let want = all.binary_search_by(|it| it.key().cmp(probe));
                let mut items = LeafItems::of(&mut n).near(guess);
                assert_eq!(items.search(probe), want, "guess {guess:?} probe {probe:?}");
                let landed = match want {
                    Ok(i) | Err(i) => i,
                };
                assert_eq!(items.last_found(), Some(landed + 1));
            }
        }
    }

    #[test]
    fn only_inserts_after_every_key_keep_the_record_of_appends() {
        let mut n = Node::empty_leaf();
        let mut items = LeafItems::of(&mut n);
        for key in [b"b", b"c"] {
            let at = items.search(key).unwrap_err();
            items.insert(at, item(key));
        }
        let at = items.search(b"c").unwrap();
        items.set_value(at, b"w");
        assert!(n.appended_only, "appends and a value replaced");
        let mut items = LeafItems::of(&mut n);
        let at = items.search(b"a").unwrap_err();
        items.insert(at, item(b"a"));
        assert!(!n.appended_only, "an insert before the last key");
        let mut m = Node::empty_leaf();
        let mut items = LeafItems::of(&mut m);
        items.insert(0, item(b"a"));
        items.remove(0);
        assert!(!m.appended_only, "a removal");
    }
}
