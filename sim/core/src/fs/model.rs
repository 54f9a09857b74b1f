//! Which of the pending metadata operations a power cut may keep: the directory's durability
//! semantics, one of the two models below (the fault table in [`super`] says what each models).

use std::fmt;
use std::str::FromStr;

/// What a power cut keeps of the metadata operations made since the last directory sync.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetaModel {
    /// The operations persist in the order they were made: a power cut keeps a prefix of them
    /// (any prefix, the empty one and all of them included). Like ext4 `data=ordered` or XFS,
    /// whose journal commits metadata in order; file data is independent of it, so a rename can
    /// survive while the renamed file's unsynced data does not.
    #[default]
    Ordered,
    /// Each operation may be kept or lost independently of the others, subject to consistency:
    /// the kept ones are replayed in order, and an operation whose file is not where it acted
    /// (a delete or rename of a file whose create was lost) is moot. What POSIX promises
    /// without a directory sync: nothing, beyond each operation being atomic.
    Strict,
}

impl MetaModel {
    pub const ALL: [MetaModel; 2] = [MetaModel::Ordered, MetaModel::Strict];

    pub fn name(self) -> &'static str {
        match self {
            MetaModel::Ordered => "ordered",
            MetaModel::Strict => "strict",
        }
    }
}

impl fmt::Display for MetaModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MetaModel {
    type Err = String;
    fn from_str(s: &str) -> Result<MetaModel, String> {
        MetaModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown metadata model `{s}` (expected ordered or strict)"))
    }
}
