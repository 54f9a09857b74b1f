//! Advisory locks, one per file, held by file handles (`flock`-like): any number of shared
//! holders or one exclusive holder. Advisory: reads and writes never look at them. A lock goes
//! with its handle (dropped or not) and with every handle at a power cut.

use super::meta::FileId;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;

/// A lock's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockKind {
    Shared,
    Exclusive,
}

/// Why a lock was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockError {
    /// Another handle holds a lock on the file that conflicts with the one asked for.
    Held {
        name: String,
        wanted: LockKind,
        held: LockKind,
    },
    /// The handle is stale: the power was cut since it was opened.
    Stale { name: String },
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Held { name, wanted, held } => write!(
                f,
                "simfs: {wanted:?} lock on {name:?} refused: another handle holds a {held:?} lock"
            ),
            LockError::Stale { name } => {
                write!(
                    f,
                    "simfs: lock on {name:?} refused: stale handle (power cut since open)"
                )
            }
        }
    }
}

impl std::error::Error for LockError {}

impl From<LockError> for io::Error {
    fn from(e: LockError) -> io::Error {
        let kind = match e {
            LockError::Held { .. } => io::ErrorKind::WouldBlock,
            LockError::Stale { .. } => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}

/// The holders of one file's lock.
#[derive(Clone, Debug)]
enum Holders {
    Shared(BTreeSet<u64>),
    Exclusive(u64),
}

/// Every file's lock, by file; holders are handle numbers.
#[derive(Clone, Debug, Default)]
pub(super) struct LockTable {
    locks: BTreeMap<FileId, Holders>,
}

impl LockTable {
    /// Give `handle` a `kind` lock on `file`, or say which lock another handle holds. A handle
    /// holding a lock may change its kind (upgrade when it is the only holder, or downgrade).
    pub(super) fn lock(
        &mut self,
        file: FileId,
        handle: u64,
        kind: LockKind,
    ) -> Result<(), LockKind> {
        let next = match (self.locks.get(&file), kind) {
            (None, LockKind::Shared) => Holders::Shared(BTreeSet::from([handle])),
            (None, LockKind::Exclusive) => Holders::Exclusive(handle),
            (Some(Holders::Exclusive(h)), _) if *h != handle => return Err(LockKind::Exclusive),
            (Some(Holders::Exclusive(_)), LockKind::Exclusive) => return Ok(()),
            (Some(Holders::Exclusive(_)), LockKind::Shared) => {
                Holders::Shared(BTreeSet::from([handle]))
            }
            (Some(Holders::Shared(set)), LockKind::Shared) => {
                let mut set = set.clone();
                set.insert(handle);
                Holders::Shared(set)
            }
            (Some(Holders::Shared(set)), LockKind::Exclusive) => {
                if set.iter().any(|&h| h != handle) {
                    return Err(LockKind::Shared);
                }
                Holders::Exclusive(handle)
            }
        };
        self.locks.insert(file, next);
        Ok(())
    }

    /// Drop whatever lock `handle` holds on `file`.
    pub(super) fn unlock(&mut self, file: FileId, handle: u64) {
        let empty = match self.locks.get_mut(&file) {
            Some(Holders::Exclusive(h)) => *h == handle,
            Some(Holders::Shared(set)) => {
                set.remove(&handle);
                set.is_empty()
            }
            None => false,
        };
        if empty {
            self.locks.remove(&file);
        }
    }

    /// The kind of lock `handle` holds on `file`, if any.
    pub(super) fn held_by(&self, file: FileId, handle: u64) -> Option<LockKind> {
        match self.locks.get(&file)? {
            Holders::Exclusive(h) if *h == handle => Some(LockKind::Exclusive),
            Holders::Shared(set) if set.contains(&handle) => Some(LockKind::Shared),
            _ => None,
        }
    }

    /// Every lock goes (the machine rebooted).
    pub(super) fn clear(&mut self) {
        self.locks.clear();
    }
}
