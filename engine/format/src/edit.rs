//! The one edit a write transaction made to a leaf since it was read or written: what a commit
//! needs to rewrite the leaf's last image in place (`patch.rs`) instead of encoding it anew.

/// The one edit a write transaction made to a leaf's items since the leaf was read or
/// written, which a commit may apply to its last image instead of encoding it anew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LeafEdit {
    /// None: the items are as read.
    #[default]
    None,
    /// An item inserted at this index.
    Inserted(usize),
    /// The value (not the key, nor the flags) of the item at this index replaced.
    Replaced(usize),
    /// The item at this index (before the removal) removed.
    Removed(usize),
    /// More than one edit, or a merge: the leaf is encoded anew.
    Many,
}

impl LeafEdit {
    /// This edit, then `next`.
    pub fn then(self, next: LeafEdit) -> LeafEdit {
        match self {
            LeafEdit::None => next,
            _ => LeafEdit::Many,
        }
    }
}
