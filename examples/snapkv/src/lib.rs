//! snapkv: a key-value store of several files that keeps its whole state in one snapshot file,
//! replaced atomically on every commit — the classic atomic-replace protocol:
//!
//! 1. create `db.tmp` (a leftover one is deleted first), size it with `set_len` and sync — the
//!    barrier that makes a file's growth durable on a disk whose data sync does not (POSIX
//!    `fdatasync`; crashlab's `own-barrier` length model) — then write the whole state to it,
//! 2. sync `db.tmp` (its data is durable before any name points at it),
//! 3. rename `db.tmp` over `db` (atomic: `db` names the old snapshot or the new one),
//! 4. sync the directory (the rename is durable), and only then acknowledge.
//!
//! **Recovery.** Open reads `db` if it exists (none: the empty store), checks its magic,
//! length and checksum, and deletes a leftover `db.tmp` (with a directory sync), so nothing of
//! an unfinished commit stays behind.
//!
//! It is crashlab's test engine for engines of several files (capability `directory`): it is
//! small enough to read at once, and its metadata ordering is the whole of its crash safety.
//! Its I/O is the [`Dir`] and [`File`] traits, implemented over crashlab's simulated directory
//! in this crate's tests.
//!
//! **The planted bug.** [`Options::debug_skip_dir_sync`] leaves step 4 out: the commit is
//! acknowledged while the rename is still pending, and a power cut may keep the old `db` — an
//! acknowledged commit lost. Only a file system that models pending renames shows it (SimFs's
//! negative control `renames_durable_at_once` hides it).
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;

/// The snapshot's name, and the name a commit writes first.
pub const DB: &str = "db";
pub const TMP: &str = "db.tmp";

/// One open file.
pub trait File {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    fn sync(&self) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    /// Grow with zeros or truncate.
    fn set_len(&self, len: u64) -> io::Result<()>;
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The directory the store keeps its files in.
pub trait Dir {
    type File: File;
    /// Open `name`; `None` when there is no such file.
    fn open(&self, name: &str) -> io::Result<Option<Self::File>>;
    /// Create `name`, which must not exist.
    fn create(&self, name: &str) -> io::Result<Self::File>;
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    fn delete(&self, name: &str) -> io::Result<()>;
    fn sync_dir(&self) -> io::Result<()>;
}

/// The store's options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// **A planted bug, for the crash tests:** a commit does not sync the directory after its
    /// rename, and is acknowledged anyway.
    pub debug_skip_dir_sync: bool,
}

/// Tables by name, each its keys in order.
pub type Tables = BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Vec<u8>>>;

#[derive(Debug)]
pub enum Error {
    Io(io::Error),
    /// `db` is not a snapshot this store wrote whole.
    Corrupt(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "snapkv: I/O error: {e}"),
            Error::Corrupt(why) => write!(f, "snapkv: corrupt snapshot {DB:?}: {why}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

mod snapshot;

/// An open store. Readers hold an [`Arc`] of the tables a commit left.
pub struct Db<D: Dir> {
    dir: D,
    options: Options,
    tables: Arc<Tables>,
    /// Commits so far (the snapshot's number).
    txid: u64,
}

impl<D: Dir> Db<D> {
    /// Open the store in `dir`: the empty store when `db` does not exist, its snapshot when it
    /// does; a leftover `db.tmp` is deleted.
    pub fn open(dir: D, options: Options) -> Result<Db<D>, Error> {
        let (txid, tables) = match dir.open(DB)? {
            Some(f) => snapshot::read(&f)?,
            None => (0, Tables::new()),
        };
        if dir.open(TMP)?.is_some() {
            dir.delete(TMP)?;
            dir.sync_dir()?;
        }
        Ok(Db {
            dir,
            options,
            tables: Arc::new(tables),
            txid,
        })
    }

    /// The tables as the last commit left them.
    pub fn snapshot(&self) -> Arc<Tables> {
        Arc::clone(&self.tables)
    }

    /// Replace the store's state with `tables`, durably (unless the planted bug is on). On an
    /// error nothing in memory changes.
    pub fn commit(&mut self, tables: Tables) -> Result<(), Error> {
        let txid = self.txid + 1;
        let bytes = snapshot::encode(txid, &tables);
        if self.dir.open(TMP)?.is_some() {
            // An earlier commit failed between its create and its rename.
            self.dir.delete(TMP)?;
        }
        let tmp = self.dir.create(TMP)?;
        // First built without this barrier, snapkv lost whole snapshots on `own-barrier`
        // disks: the rename survived, the file's length did not (0 bytes).
        tmp.set_len(bytes.len() as u64)?;
        tmp.sync()?;
        tmp.write_at(0, &bytes)?;
        tmp.sync()?;
        drop(tmp);
        self.dir.rename(TMP, DB)?;
        if !self.options.debug_skip_dir_sync {
            self.dir.sync_dir()?;
        }
        self.txid = txid;
        self.tables = Arc::new(tables);
        Ok(())
    }

    /// The store's integrity check: `db` read again gives the tables in memory.
    pub fn check(&self) -> Result<Vec<String>, Error> {
        let Some(f) = self.dir.open(DB)? else {
            return Ok(match self.txid {
                0 => Vec::new(),
                n => vec![format!("no {DB:?}, but {n} commits were made")],
            });
        };
        let (txid, tables) = snapshot::read(&f)?;
        let mut problems = Vec::new();
        if txid != self.txid {
            problems.push(format!("{DB:?} holds commit {txid}, memory {}", self.txid));
        }
        if tables != *self.tables {
            problems.push(format!("{DB:?}'s tables differ from memory's"));
        }
        Ok(problems)
    }
}
