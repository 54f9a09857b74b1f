//! What reads hand out: a [`Value`] stored under a key, or an [`Entry`] (a key and its value)
//! met by a cursor. Both borrow from the transaction that read them, without copying: they hold
//! the leaf they were found in (shared from the page cache, or owned by the write transaction),
//! so they cost no allocation, and live no longer than the transaction (or, in a write
//! transaction, than the borrow of the bucket they came from). `to_vec` copies when a caller
//! needs ownership.

use crate::tree::{leaf_items, NodeRef};
use crashlab_format::node::LeafItem;
use std::fmt;
use std::ops::Deref;

/// One key of a bucket, owned: a value, or a nested bucket (whose value is `None`, as in bbolt).
pub type CursorItem = (Vec<u8>, Option<Vec<u8>>);

/// An item of a leaf, borrowed: the leaf and the item's index in it.
#[derive(Clone)]
struct Held<'a> {
    leaf: NodeRef<'a>,
    index: usize,
}

impl Held<'_> {
    fn item(&self) -> &LeafItem {
        &leaf_items(&self.leaf)[self.index]
    }
}

/// The value stored under a key, borrowed from the transaction that read it. Dereferences to
/// the bytes.
#[derive(Clone)]
pub struct Value<'a>(Held<'a>);

impl<'a> Value<'a> {
    /// Item `index` of the leaf `leaf`, which must be a value (not a sub-bucket).
    pub(crate) fn new(leaf: NodeRef<'a>, index: usize) -> Value<'a> {
        let held = Held { leaf, index };
        debug_assert!(!held.item().is_bucket(), "a sub-bucket is not a value");
        Value(held)
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.item().value()
    }
}

impl Deref for Value<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Value<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for Value<'_> {
    fn eq(&self, other: &Value<'_>) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Value<'_> {}

impl PartialEq<[u8]> for Value<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes() == other
    }
}

impl PartialEq<&[u8]> for Value<'_> {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_bytes() == *other
    }
}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Value").field(&self.as_bytes()).finish()
    }
}

/// A key of a bucket and its value (none for a sub-bucket), borrowed from the transaction that
/// read it.
#[derive(Clone)]
pub struct Entry<'a>(Held<'a>);

impl<'a> Entry<'a> {
    pub(crate) fn new(leaf: NodeRef<'a>, index: usize) -> Entry<'a> {
        Entry(Held { leaf, index })
    }

    pub fn key(&self) -> &[u8] {
        self.0.item().key()
    }

    /// The value, or `None` when the key names a sub-bucket.
    pub fn value(&self) -> Option<&[u8]> {
        let it = self.0.item();
        (!it.is_bucket()).then_some(it.value())
    }

    /// Whether the key names a sub-bucket.
    pub fn is_bucket(&self) -> bool {
        self.0.item().is_bucket()
    }

    /// The key and value, copied.
    pub fn to_item(&self) -> CursorItem {
        (self.key().to_vec(), self.value().map(<[u8]>::to_vec))
    }
}

impl PartialEq for Entry<'_> {
    fn eq(&self, other: &Entry<'_>) -> bool {
        self.key() == other.key() && self.value() == other.value()
    }
}

impl Eq for Entry<'_> {}

impl fmt::Debug for Entry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key())
            .field("value", &self.value())
            .finish()
    }
}
