//! Identifier newtypes shared by every layer.
//!
//! A page id, a transaction id and a byte count never mix without a named conversion: mixing
//! them up is the classic source of off-by-a-page bugs in pagers.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A page number in the file. Byte offset = `id * page_size`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct PageId(pub u64);

impl PageId {
    /// Page id recorded in the meta's freelist field when the freelist is not persisted.
    pub const NO_FREELIST: PageId = PageId(u64::MAX);

    /// The page `n` positions after this one. Callers check the result against the high-water
    /// mark; overflow here would be a programmer error, so it saturates and the bound check fails.
    #[inline]
    pub fn plus(self, n: u64) -> PageId {
        PageId(self.0.saturating_add(n))
    }

    /// Byte offset of the page for a given page size, or `None` when it does not fit in a u64.
    pub fn offset(self, page_size: u32) -> Option<u64> {
        self.0.checked_mul(u64::from(page_size))
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A transaction id. Every committed write transaction gets the previous meta's txid + 1; a
/// read transaction carries the txid of the meta it snapshotted. Txids never wrap: past
/// [`MAX_TXID`](crate::limits::MAX_TXID) there is no next one.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct TxId(pub u64);

impl TxId {
    /// The txid after this one, or `None` when this is the last
    /// ([`MAX_TXID`](crate::limits::MAX_TXID)).
    pub fn next(self) -> Option<TxId> {
        // MAX_TXID is u64::MAX: the limit is where the integer ends.
        const _: () = assert!(crate::limits::MAX_TXID == u64::MAX);
        self.0.checked_add(1).map(TxId)
    }
}

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A run of `count` contiguous pages starting at `start` (a node and its overflow pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PageSpan {
    pub start: PageId,
    pub count: u64,
}

// Inlined: the commit's freelist and free-set code make and measure spans at every step, and
// across the crate boundary each was a call.
impl PageSpan {
    #[inline]
    pub fn new(start: PageId, count: u64) -> PageSpan {
        assert!(count >= 1, "a page span holds at least one page");
        PageSpan { start, count }
    }

    /// One past the last page of the span.
    #[inline]
    pub fn end(self) -> PageId {
        self.start.plus(self.count)
    }

    /// The header's `overflow` field for this span.
    pub fn overflow(self) -> u64 {
        self.count - 1
    }

    pub fn ids(self) -> impl Iterator<Item = PageId> {
        (self.start.0..self.start.0 + self.count).map(PageId)
    }
}
