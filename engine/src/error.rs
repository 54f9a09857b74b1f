//! The engine's one error type.
//!
//! Errors for the world (I/O, corrupt bytes, misuse reachable from the public API) are values;
//! programmer errors are assertions. Every corruption error names the page whose bytes showed
//! the damage and a typed [`Corruption`] reason (which names any other page involved). The format
//! layer's errors (`crashlab_format::Error`) convert into this one variant for variant, with the
//! same texts.

pub use crashlab_format::corruption::{Corruption, RangeEdge};
use crashlab_format::limits::MAX_TXID;
use crashlab_format::types::{PageId, TxId};
use std::io;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The storage failed. The database latches this: writes are refused until it is reopened.
    #[error("I/O error during {op}: {source}")]
    Io {
        op: &'static str,
        #[source]
        source: io::Error,
    },

    /// Bytes read from disk do not form a valid structure: `page` is the page whose bytes were
    /// being read (or, for a node commit would write, the page it was read from).
    #[error("corrupted page {page}: {reason}")]
    Corrupted { page: PageId, reason: Corruption },

    /// A meta page failed its FNV-1a checksum.
    #[error(
        "meta page {page}: checksum mismatch (stored {stored:#018x}, computed {computed:#018x})"
    )]
    ChecksumMismatch {
        page: PageId,
        stored: u64,
        computed: u64,
    },

    /// Neither meta page validates; the file cannot be opened.
    #[error("no valid meta page: page 0: {meta0}; page 1: {meta1}")]
    NoValidMeta {
        meta0: Box<Error>,
        meta1: Box<Error>,
    },

    /// The file is shorter than the structures it describes.
    #[error("file too short: {len} bytes, need at least {needed}")]
    Truncated { len: u64, needed: u64 },

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
    /// A structure that holds one entry per free page (the array freelist, a freelist page)
    /// would pass its limit (see `limits::MAX_FREE_IDS`).
    #[error("{what} of {count} page ids exceeds the limit of {max}")]
    TooManyFreeIds {
        what: &'static str,
        count: u64,
        max: u64,
    },
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
        Error::Io { op, source }
    }

    pub(crate) fn corrupted(page: PageId, reason: Corruption) -> Error {
        Error::Corrupted { page, reason }
    }

    /// The corruption reason, when this is a corruption error.
    pub fn corruption(&self) -> Option<&Corruption> {
        match self {
            Error::Corrupted { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

impl From<crashlab_format::Error> for Error {
    fn from(e: crashlab_format::Error) -> Error {
        use crashlab_format::Error as F;
        match e {
            F::Io { op, source } => Error::Io { op, source },
            F::Corrupted { page, reason } => Error::Corrupted { page, reason },
            F::ChecksumMismatch {
                page,
                stored,
                computed,
            } => Error::ChecksumMismatch {
                page,
                stored,
                computed,
            },
            F::NoValidMeta { meta0, meta1 } => Error::NoValidMeta {
                meta0: Box::new(Error::from(*meta0)),
                meta1: Box::new(Error::from(*meta1)),
            },
            F::Truncated { len, needed } => Error::Truncated { len, needed },
            F::TooManyFreeIds { what, count, max } => Error::TooManyFreeIds { what, count, max },
        }
    }
}
