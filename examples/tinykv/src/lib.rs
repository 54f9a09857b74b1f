//! tinykv: a small key-value store kept as an append-only log of checksummed transaction
//! records — the example engine of crashlab's guide "crash-test your engine"
//! (`docs/crash-test-your-engine.md`). It knows nothing of crashlab: its only I/O is the
//! [`Disk`] trait, implemented here for [`std::fs::File`] and, in this crate's tests, for
//! crashlab's simulated disk.
//!
//! **Commit protocol.** A transaction's changes become one record ([`record`]) appended at the
//! log's end and synced before the commit returns. Space comes from growing the file in chunks
//! with `set_len` followed directly by a sync, so a disk that makes a length change durable only
//! through its own barrier (POSIX `fdatasync`) keeps the growth; records are written only inside
//! space grown that way.
//!
//! **Recovery.** Open reads records from offset 0 while each one has the magic, fits the file,
//! carries the next txid and matches its checksum; the first that does not ends the log (a
//! power cut tore it, or it is the zeroed space past the end). The file is then cut back to the
//! log's end and synced, so everything recovered is durable before the first new commit.
//!
//! **The planted bug.** [`Options::debug_skip_checksum`] makes recovery trust a record whose
//! header looks right without checking its payload against the checksum: after a power cut that
//! kept a record's header but not all of its payload, recovery applies a torn transaction or
//! refuses to open. The crash tests in `tests/` show crashlab finding it and passing the engine
//! without it.
//!
//! ```
//! use tinykv::{Db, Options};
//! let file = tempfile::tempfile()?;
//! let mut db = Db::open(file, Options::default())?;
//! let mut tx = db.begin();
//! tx.create_table(b"fruit")?;
//! tx.put(b"fruit", b"apple", b"red")?;
//! db.commit(tx)?;
//! assert_eq!(db.get(b"fruit", b"apple"), Some(&b"red"[..]));
//! # Ok::<(), tinykv::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod record;
mod recover;
mod tx;

pub use tx::Tx;

use record::Change;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;

/// The store's only view of its file: positioned reads and writes, a sync, a length.
pub trait Disk {
    /// Read exactly `buf.len()` bytes at `offset`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Write all of `buf` at `offset`.
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Make every completed write and length change durable.
    fn sync(&self) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    /// Grow with zeros or truncate.
    fn set_len(&self, len: u64) -> io::Result<()>;

    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl Disk for std::fs::File {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, buf, offset)
    }
    fn sync(&self) -> io::Result<()> {
        self.sync_all()
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        std::fs::File::set_len(self, len)
    }
}

/// The store's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The file grows by whole chunks of this many bytes (at least one record's worth).
    pub grow_chunk: u64,
    /// **A planted bug, for the crash tests:** recovery trusts a record whose magic, length and
    /// txid look right without checking its checksum.
    pub debug_skip_checksum: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            grow_chunk: 16 << 10,
            debug_skip_checksum: false,
        }
    }
}

/// Tables by name, each its keys in order.
pub type Tables = BTreeMap<Vec<u8>, BTreeMap<Vec<u8>, Vec<u8>>>;

#[derive(Debug)]
pub enum Error {
    Io(io::Error),
    /// The log holds a record that verified but does not make sense.
    Corrupt {
        offset: u64,
        reason: String,
    },
    NoSuchTable,
    TableExists,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "tinykv: I/O error: {e}"),
            Error::Corrupt { offset, reason } => {
                write!(f, "tinykv: corrupt record at byte {offset}: {reason}")
            }
            Error::NoSuchTable => f.write_str("tinykv: no such table"),
            Error::TableExists => f.write_str("tinykv: table exists"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// An open store. Readers hold an [`Arc`] of the tables a commit left; a commit replaces it.
pub struct Db<D: Disk> {
    disk: D,
    options: Options,
    tables: Arc<Tables>,
    /// Where the next record goes: the end of the last valid record.
    end: u64,
    /// The file's length, grown by `set_len` and a sync: records are written below it only.
    capacity: u64,
    next_txid: u64,
}

impl<D: Disk> Db<D> {
    /// Open the store in `disk`, creating it when the file is empty and recovering it after a
    /// crash.
    pub fn open(disk: D, options: Options) -> Result<Db<D>, Error> {
        assert!(
            options.grow_chunk >= record::HEADER_LEN as u64,
            "grow_chunk {} is below a record header",
            options.grow_chunk
        );
        let log = recover::scan(&disk, options.debug_skip_checksum)?;
        let shrink = disk.len()? > log.end;
        if shrink {
            // The torn record or the unused space past the end goes, durably: the next commit
            // then grows the file from the log's end with its own barrier.
            disk.set_len(log.end)?;
        }
        if shrink || log.end > 0 {
            // After a reopen without a crash, what was read may still be only in the page
            // cache (a commit whose sync failed): make it durable before building on it.
            disk.sync()?;
        }
        Ok(Db {
            disk,
            options,
            tables: Arc::new(log.tables),
            end: log.end,
            capacity: log.end,
            next_txid: log.next_txid,
        })
    }

    /// The tables as the last commit left them; a snapshot that later commits do not change.
    pub fn snapshot(&self) -> Arc<Tables> {
        Arc::clone(&self.tables)
    }

    pub fn get(&self, table: &[u8], key: &[u8]) -> Option<&[u8]> {
        self.tables.get(table)?.get(key).map(Vec::as_slice)
    }

    /// A write transaction on the current tables; dropping it rolls back.
    pub fn begin(&self) -> Tx {
        Tx::new(Tables::clone(&self.tables))
    }

    /// Append `tx` as one record and sync it. On an error nothing in memory changes (the
    /// record may or may not survive a crash, as with any commit that did not return).
    pub fn commit(&mut self, tx: Tx) -> Result<(), Error> {
        let (tables, changes) = tx.into_parts();
        if changes.is_empty() {
            // Nothing to write: open and every earlier commit left the tables durable.
            return Ok(());
        }
        let rec = record::encode(self.next_txid, &changes);
        let rec_end = self.end + rec.len() as u64;
        if rec_end > self.capacity {
            let capacity = rec_end.div_ceil(self.options.grow_chunk) * self.options.grow_chunk;
            self.disk.set_len(capacity)?;
            self.disk.sync()?;
            self.capacity = capacity;
        }
        self.disk.write_at(self.end, &rec)?;
        self.disk.sync()?;
        self.end = rec_end;
        self.next_txid += 1;
        self.tables = Arc::new(tables);
        Ok(())
    }

    /// The store's integrity check: the log read again from the disk gives the tables in
    /// memory and ends where memory says. Every problem found; empty when clean.
    pub fn check(&self) -> Result<Vec<String>, Error> {
        let log = recover::scan(&self.disk, self.options.debug_skip_checksum)?;
        let mut problems = Vec::new();
        if log.end != self.end {
            problems.push(format!(
                "the log ends at {}, memory says {}",
                log.end, self.end
            ));
        }
        if log.next_txid != self.next_txid {
            problems.push(format!(
                "the log's next txid is {}, memory says {}",
                log.next_txid, self.next_txid
            ));
        }
        if log.tables != *self.tables {
            problems.push("the log's tables differ from memory's".to_string());
        }
        Ok(problems)
    }
}

/// Apply one change to `tables`: the store's rules for tables and keys.
pub(crate) fn apply(tables: &mut Tables, change: &Change) -> Result<(), Error> {
    match change {
        Change::CreateTable(t) => {
            if tables.contains_key(t) {
                return Err(Error::TableExists);
            }
            tables.insert(t.clone(), BTreeMap::new());
        }
        Change::DropTable(t) => {
            tables.remove(t).ok_or(Error::NoSuchTable)?;
        }
        Change::Put { table, key, value } => {
            let t = tables.get_mut(table).ok_or(Error::NoSuchTable)?;
            t.insert(key.clone(), value.clone());
        }
        Change::Delete { table, key } => {
            let t = tables.get_mut(table).ok_or(Error::NoSuchTable)?;
            t.remove(key);
        }
    }
    Ok(())
}
