//! The error of reading or writing the format.
//!
//! Its texts are the engine's (`crashlab_engine::Error` has the same variants and converts
//! from this one): the simulator hashes error texts into trace hashes, so they stay stable.

use crate::corruption::Corruption;
use crate::types::PageId;
use std::io;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The storage failed.
    #[error("I/O error during {op}: {source}")]
    Io {
        op: &'static str,
        #[source]
        source: io::Error,
    },

    /// Bytes read from disk do not form a valid structure: `page` is the page whose bytes were
    /// being read (or, for a node about to be written, the page it was read from).
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

    /// A structure that holds one entry per free page (a freelist page, the array freelist)
    /// would pass its limit (see `limits::MAX_FREE_IDS`).
    #[error("{what} of {count} page ids exceeds the limit of {max}")]
    TooManyFreeIds {
        what: &'static str,
        count: u64,
        max: u64,
    },
}

impl Error {
    pub fn io(op: &'static str, source: io::Error) -> Error {
        Error::Io { op, source }
    }

    pub fn corrupted(page: PageId, reason: Corruption) -> Error {
        Error::Corrupted { page, reason }
    }

    /// The corruption reason, when this is a corruption error.
    pub fn corruption(&self) -> Option<&Corruption> {
        match self {
            Error::Corrupted { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// The page a corruption error names.
    pub fn page(&self) -> Option<PageId> {
        match self {
            Error::Corrupted { page, .. } => Some(*page),
            _ => None,
        }
    }
}
