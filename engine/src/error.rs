//! The engine's one error type.
//!
//! Errors for the world (I/O, corrupt bytes, misuse reachable from the public API) are values;
//! programmer errors are assertions. Every corruption error names the page whose bytes showed
//! the damage and a typed [`Corruption`] reason (which names any other page involved). What the
//! format layer reports ([`FormatError`]: I/O, damage, metas, length, limits) is one variant,
//! [`Error::Format`], with the format's own texts; the rest is the engine's (misuse, latching,
//! batches, invariants).

pub use crashlab_format::corruption::{Corruption, RangeEdge};
use crashlab_format::limits::MAX_TXID;
use crashlab_format::types::{PageId, TxId};
pub use crashlab_format::Error as FormatError;
use std::io;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing the format failed: the storage (`Io`; the database latches it, and
    /// refuses writes until it is reopened), damaged bytes (`Corrupted`, naming the page), a meta
    /// that does not validate, a file too short for what it describes, or a one-id-per-page limit
    /// passed. Its texts are the format's own: the simulator hashes error texts into trace hashes.
    #[error(transparent)]
    Format(#[from] FormatError),

    /// A previous write failed; the in-memory state may not match the disk any more.
    #[error("database refused writes after an earlier failure (reopen to recover): {0}")]
    Latched(String),

    #[error("bucket not found")]
    BucketNotFound,
    #[error("bucket already exists")]
    BucketExists,
    /// A bucket would nest deeper than `max` (a top-level bucket is at depth 1).
    #[error("buckets may nest at most {max} deep")]
    BucketTooDeep { max: usize },
    #[error("bucket name required")]
    BucketNameRequired,
    #[error("key required")]
    KeyRequired,
    #[error("key too large: {len} bytes (max {max})")]
    KeyTooLarge { len: usize, max: usize },
    #[error("value too large: {len} bytes (max {max})")]
    ValueTooLarge { len: usize, max: usize },
    /// A key names a sub-bucket where a value was expected, or the other way round.
    #[error("incompatible value: the key holds a {found}, not a {wanted}")]
    IncompatibleValue {
        found: &'static str,
        wanted: &'static str,
    },
    /// The shared commit of a batch failed; every call in the batch gets this.
    #[error("batch commit failed: {0}")]
    BatchCommitFailed(String),
    /// A write batch's bytes do not decode.
    #[error("{0}")]
    MalformedBatch(String),
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    #[error("transaction {0} is not writable")]
    TxNotWritable(TxId),
    /// The meta in use carries the last transaction id: another commit would wrap it and
    /// overwrite the meta it builds on. Refused before anything is written.
    #[error("transaction id {txid} leaves no room for another commit (the last is {MAX_TXID})")]
    TxIdExhausted { txid: TxId },
    /// The engine broke one of its own in-memory invariants: a bug in the engine, not damage in
    /// the file (which is [`Error::Corrupted`]). The database latches as after any failed
    /// commit; nothing of the failed commit reached the disk's meta.
    #[error("engine invariant broken in memory: {0}")]
    Invariant(Invariant),
}

/// Which in-memory invariant the engine broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Invariant {
    /// The commit of `txid` freed `page` twice although the file references it once: the
    /// engine's own bookkeeping (its merge of freed spans) counted the page twice.
    #[error("the commit of tx {txid} freed page {page} twice")]
    FreedTwice { txid: TxId, page: PageId },
}

impl Error {
    pub(crate) fn io(op: &'static str, source: io::Error) -> Error {
        Error::Format(FormatError::io(op, source))
    }

    pub(crate) fn corrupted(page: PageId, reason: Corruption) -> Error {
        Error::Format(FormatError::corrupted(page, reason))
    }

    /// The corruption reason, when this is a corruption error.
    pub fn corruption(&self) -> Option<&Corruption> {
        match self {
            Error::Format(e) => e.corruption(),
            _ => None,
        }
    }

    /// The page a corruption error names.
    pub fn corrupted_page(&self) -> Option<PageId> {
        match self {
            Error::Format(e) => e.page(),
            _ => None,
        }
    }

    /// The format's error, when this is one.
    pub fn format(&self) -> Option<&FormatError> {
        match self {
            Error::Format(e) => Some(e),
            _ => None,
        }
    }
}
