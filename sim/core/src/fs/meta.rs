//! Metadata operations and the directory they act on: how a set of kept operations replays onto
//! the durable directory, which sets each [`MetaModel`] allows, and their enumeration (the crash
//! states of the metadata, for the crash-state checker).
//!
//! Replay rule (the one definition of consistency): the kept operations are applied in the
//! order they were made, each to the directory the kept ones before it left. An operation acts
//! on a file, not only on a name: a create needs its name free, a rename needs its source name
//! to hold its file, a delete needs its name to hold its file. An operation whose condition
//! fails is *moot* (a delete of a file whose create was lost). A set of kept operations is
//! *consistent* when none of them is moot; two consistent sets never give the same directory
//! by accident of a moot operation, which is why the enumeration lists consistent sets only.

use super::model::MetaModel;
use std::collections::BTreeMap;
use std::fmt;

/// A file's identity (its inode): the order of its creation in the file system, from 0. Names
/// point at files; a rename moves a name, never a file's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u64);

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file #{}", self.0)
    }
}

/// A directory: every name and the file it points at.
pub type Directory = BTreeMap<String, FileId>;

/// One metadata operation, pending until the directory is synced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetaOp {
    Create {
        name: String,
        file: FileId,
    },
    /// `to` points at `file` afterwards, whatever it pointed at before (atomic replace); `from`
    /// is gone.
    Rename {
        from: String,
        to: String,
        file: FileId,
    },
    Delete {
        name: String,
        file: FileId,
    },
}

impl MetaOp {
    /// The file the operation acts on.
    pub fn file(&self) -> FileId {
        match self {
            MetaOp::Create { file, .. }
            | MetaOp::Rename { file, .. }
            | MetaOp::Delete { file, .. } => *file,
        }
    }

    /// Apply to `dir` when the operation's condition holds there; `false` (nothing changed)
    /// when it is moot.
    pub fn apply(&self, dir: &mut Directory) -> bool {
        match self {
            MetaOp::Create { name, file } => {
                if dir.contains_key(name) {
                    return false;
                }
                dir.insert(name.clone(), *file);
            }
            MetaOp::Rename { from, to, file } => {
                if dir.get(from) != Some(file) {
                    return false;
                }
                dir.remove(from);
                dir.insert(to.clone(), *file);
            }
            MetaOp::Delete { name, file } => {
                if dir.get(name) != Some(file) {
                    return false;
                }
                dir.remove(name);
            }
        }
        true
    }
}

impl fmt::Display for MetaOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaOp::Create { name, file } => write!(f, "create {name:?} ({file})"),
            MetaOp::Rename { from, to, file } => write!(f, "rename {from:?} → {to:?} ({file})"),
            MetaOp::Delete { name, file } => write!(f, "delete {name:?} ({file})"),
        }
    }
}

/// Which pending metadata operations a power cut keeps: their indexes in the pending list,
/// ascending, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetaSubset {
    kept: Vec<usize>,
}

impl MetaSubset {
    /// The subset keeping `kept` (any order, repeats ignored).
    pub fn new(mut kept: Vec<usize>) -> MetaSubset {
        kept.sort_unstable();
        kept.dedup();
        MetaSubset { kept }
    }

    /// The first `n` operations.
    pub fn prefix(n: usize) -> MetaSubset {
        MetaSubset {
            kept: (0..n).collect(),
        }
    }

    pub fn kept(&self) -> &[usize] {
        &self.kept
    }

    /// Whether these are the first `kept().len()` operations.
    pub fn is_prefix(&self) -> bool {
        self.kept.iter().enumerate().all(|(i, &k)| i == k)
    }
}

impl fmt::Display for MetaSubset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kept.is_empty() {
            return f.write_str("none");
        }
        let words: Vec<String> = self.kept.iter().map(usize::to_string).collect();
        f.write_str(&words.join(","))
    }
}

/// Most pending operations whose `strict` crash states are enumerated exhaustively: up to
/// 2^16 sets, each replayed in a few microseconds. Past it the caller must sample.
pub const STRICT_ENUMERATION_OPS_MAX: usize = 16;

/// Replay `subset` of `pending` onto `durable`: the directory a power cut keeping exactly those
/// operations leaves. `Err` when the subset names an operation that does not exist, keeps a
/// moot one (it is not consistent), or is not one `model` allows.
pub fn replay(
    durable: &Directory,
    pending: &[MetaOp],
    subset: &MetaSubset,
    model: MetaModel,
) -> Result<Directory, String> {
    if let Some(&bad) = subset.kept.iter().find(|&&k| k >= pending.len()) {
        return Err(format!(
            "metadata operation {bad} kept, but only {} are pending",
            pending.len()
        ));
    }
    if model == MetaModel::Ordered && !subset.is_prefix() {
        return Err(format!(
            "keeping operations {subset} is not a prefix: the ordered model keeps prefixes only"
        ));
    }
    let mut dir = durable.clone();
    for &k in &subset.kept {
        if !pending[k].apply(&mut dir) {
            return Err(format!(
                "keeping operations {subset} is not consistent: operation {k} ({}) is moot",
                pending[k]
            ));
        }
    }
    Ok(dir)
}

/// Replay the operations `keep` chooses (asked once per operation, in order), dropping the moot
/// ones: the directory and the consistent subset actually kept.
pub fn replay_chosen(
    durable: &Directory,
    pending: &[MetaOp],
    keep: &mut dyn FnMut(usize) -> bool,
) -> (Directory, MetaSubset) {
    let mut dir = durable.clone();
    let mut kept = Vec::new();
    for (k, op) in pending.iter().enumerate() {
        if keep(k) && op.apply(&mut dir) {
            kept.push(k);
        }
    }
    (dir, MetaSubset { kept })
}

/// Every crash state of the metadata `model` allows: the prefixes (ordered), or every
/// consistent subset (strict), each once. `Err` when strict has more than
/// [`STRICT_ENUMERATION_OPS_MAX`] pending operations.
pub fn crash_states(
    durable: &Directory,
    pending: &[MetaOp],
    model: MetaModel,
) -> Result<Vec<MetaSubset>, String> {
    match model {
        MetaModel::Ordered => Ok((0..=pending.len()).map(MetaSubset::prefix).collect()),
        MetaModel::Strict if pending.len() > STRICT_ENUMERATION_OPS_MAX => Err(format!(
            "{} pending metadata operations: above {STRICT_ENUMERATION_OPS_MAX}, the strict \
             model's crash states are not enumerated (sample them)",
            pending.len()
        )),
        MetaModel::Strict => {
            let mut out = Vec::new();
            consistent_from(0, durable.clone(), &mut Vec::new(), pending, &mut out);
            Ok(out)
        }
    }
}

/// Depth first over operation `i..`: each one dropped, or kept when it applies; every leaf is
/// a consistent subset, and every consistent subset is one leaf.
fn consistent_from(
    i: usize,
    dir: Directory,
    kept: &mut Vec<usize>,
    pending: &[MetaOp],
    out: &mut Vec<MetaSubset>,
) {
    let Some(op) = pending.get(i) else {
        out.push(MetaSubset { kept: kept.clone() });
        return;
    };
    let mut with = dir.clone();
    if op.apply(&mut with) {
        kept.push(i);
        consistent_from(i + 1, with, kept, pending, out);
        kept.pop();
    }
    consistent_from(i + 1, dir, kept, pending, out);
}
