//! `WriteBatch`: an encoded record buffer (as RocksDB's), and the two ways to merge batches.
//!
//! ```text
//! batch     = count:u32le  record{count}         nothing may follow the last record
//! record    = tag:u8  ncomp:u8  component{ncomp}  key  value?
//!               tag 1 = put (has a value), 2 = delete (no value); ncomp in 1..=MAX_BUCKET_DEPTH
//! component = len:u32le  bytes[len]              (top-level bucket first)
//! key       = len:u32le  bytes[len]
//! value     = len:u32le  bytes[len]              (puts only)
//! ```
//!
//! A batch with one put of `k` = `vv` in bucket `a`:
//!
//! ```text
//! off  bytes                 field
//!   0  01 00 00 00           count = 1
//!   4  01                    tag = put
//!   5  01                    ncomp = 1
//!   6  01 00 00 00  61       component len 1, "a"
//!  11  01 00 00 00  6b       key len 1, "k"
//!  16  02 00 00 00  76 76    value len 2, "vv"
//!  22                        end (22 bytes)
//! ```
//!
//! Invariants:
//! - Every `WriteBatch` holds a valid encoding whose header equals `count`: `put`/`delete`
//!   append well-formed records (they assert their preconditions), `from_bytes` validates
//!   before adopting, `merge` builds from valid batches. So `records()` never fails on a batch
//!   built here, and `merge` with `Append` can copy bytes without decoding them again (a debug
//!   build re-validates every input anyway).
//! - Decoding trusts nothing: every length is checked against the bytes that remain with checked
//!   arithmetic before it is used to slice, and decoding allocates nothing sized by the input.
//! - Key and value size limits are not checked here; the engine checks them when applying.
//!
//! Merging (docs/DESIGN.md, "Batched commits"): `Append` copies each batch's record bytes after
//! one combined header (a memcpy; BlueStore found this wins), `Rebuild` decodes every record and
//! encodes it again into a fresh batch (BlueStore found this slower than not merging). Both give
//! the same records in the same order.
//!
//! Buffers (docs/DESIGN.md, "Pre-sized buffers"): a batch's bytes live in a [`SizedBuf`], so
//! building and merging batches under a [`PresizePolicy`] counts its allocations, growths, bytes
//! copied by growth and sizing steps ([`WriteBatch::buffer_work`]).
#![deny(clippy::indexing_slicing, clippy::unwrap_used)]

use super::decode::{validate, Reader};
use super::record::{record_size, TAG_DELETE, TAG_PUT};
pub use super::record::{MalformedBatch, Record, HEADER_SIZE};
use crate::presize::{BufferWork, PresizePolicy, SizedBuf, GROW_INITIAL_CAPACITY};
use crashlab_format::limits::MAX_BUCKET_DEPTH;

/// How `WriteBatch::merge` combines batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MergeStrategy {
    /// Concatenate the encoded records (one copy).
    #[default]
    Append,
    /// Decode every record and encode it again into a fresh batch.
    Rebuild,
}

/// Work done by merging, for the engine's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeWork {
    /// Record bytes written into the merged batch (the header is not counted).
    pub bytes_copied: u64,
    pub records_decoded: u64,
    pub records_encoded: u64,
    /// What the merged batch's buffer cost (see `presize.rs`).
    pub buffer: BufferWork,
}

/// An encoded list of puts and deletes. Always holds a valid encoding (see the module header).
/// Two batches are equal when their encodings are; how their buffers grew does not matter.
#[derive(Clone, Debug)]
pub struct WriteBatch {
    /// Header then records; the header always equals `count`.
    buf: SizedBuf,
    count: u32,
}

impl PartialEq for WriteBatch {
    fn eq(&self, other: &WriteBatch) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for WriteBatch {}

impl Default for WriteBatch {
    fn default() -> WriteBatch {
        WriteBatch::new()
    }
}

impl WriteBatch {
    /// An empty batch whose buffer starts at `GROW_INITIAL_CAPACITY` bytes and doubles.
    pub fn new() -> WriteBatch {
        WriteBatch::with_capacity(GROW_INITIAL_CAPACITY)
    }

    /// An empty batch whose buffer holds `bytes` (header included) before it doubles.
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        WriteBatch::sized_by(PresizePolicy::Estimate, bytes, || (bytes, 0))
    }

    /// A batch of `records`, its buffer sized by `policy`: `Grow` starts small and doubles;
    /// `Exact` first walks the records to sum their sizes (one step per record); `Estimate`
    /// starts at `estimate_size` bytes (header included), a size the caller knows for free
    /// (e.g. a fixed record size times the count), and doubles when short.
    pub fn with_policy(
        policy: PresizePolicy,
        records: &[Record<'_>],
        estimate_size: usize,
    ) -> WriteBatch {
        let exact = || {
            let records_size: usize = records.iter().map(Record::encoded_size).sum();
            (HEADER_SIZE + records_size, records.len() as u64)
        };
        let mut batch = WriteBatch::sized_by(policy, estimate_size, exact);
        for record in records {
            batch.push_record(record);
        }
        debug_assert!(policy != PresizePolicy::Exact || batch.buffer_work().reallocations == 0);
        batch
    }

    /// An empty batch whose buffer is sized by `policy`, for callers that add records one at a
    /// time (see [`SizedBuf::for_policy`]): `estimate_size` is the size known for free (header
    /// included); `exact` is the caller's own sizing pass, run only under `Exact`, returning the
    /// exact encoded size (header included, see [`WriteBatch::put_size`]) and the items it
    /// examined. A batch whose exact size proves short grows like any other, so a wrong sizing
    /// pass costs growth, never correctness.
    pub fn sized_by(
        policy: PresizePolicy,
        estimate_size: usize,
        exact: impl FnOnce() -> (usize, u64),
    ) -> WriteBatch {
        let mut buf = SizedBuf::for_policy(policy, estimate_size.max(HEADER_SIZE), exact);
        buf.extend_from_slice(&0u32.to_le_bytes());
        WriteBatch { buf, count: 0 }
    }

    /// Bytes a put of a `key_len`-byte key and a `value_len`-byte value in the bucket at `path`
    /// adds to a batch, for sizing passes that do not build the record first.
    pub fn put_size(path: &[&[u8]], key_len: usize, value_len: usize) -> usize {
        record_size(path, key_len, Some(value_len))
    }

    /// What this batch's buffer cost so far: allocations, growths, sizing steps.
    pub fn buffer_work(&self) -> BufferWork {
        self.buf.work()
    }

    /// Append a put of `key` = `value` in the bucket at `path` (top level first).
    ///
    /// # Panics
    /// If `path` has no component or more than `MAX_BUCKET_DEPTH`, if a component, the key or
    /// the value is 4 GiB or more, or if the batch already holds `u32::MAX` records.
    pub fn put(&mut self, path: &[&[u8]], key: &[u8], value: &[u8]) {
        self.push(TAG_PUT, path, key, Some(value));
    }

    /// Append a delete of `key` in the bucket at `path` (top level first).
    ///
    /// # Panics
    /// As [`WriteBatch::put`].
    pub fn delete(&mut self, path: &[&[u8]], key: &[u8]) {
        self.push(TAG_DELETE, path, key, None);
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes of the encoding, header included.
    pub fn encoded_len(&self) -> usize {
        self.buf.len()
    }

    /// The full encoding (header and records).
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.as_slice()
    }

    /// Validate and adopt an encoding received from elsewhere. Never panics and allocates
    /// nothing: the buffer is adopted as is.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<WriteBatch, MalformedBatch> {
        let count = validate(&bytes)?;
        let buf = SizedBuf::adopt(bytes);
        Ok(WriteBatch { buf, count })
    }

    /// Decode every record in order.
    pub fn records(&self) -> Result<Vec<Record<'_>>, MalformedBatch> {
        let mut reader = Reader::after_header(self.as_bytes());
        let mut records = Vec::with_capacity(self.len());
        while !reader.is_at_end() {
            records.push(reader.raw_record()?.to_record()?);
        }
        if records.len() != self.len() {
            let reason = format!(
                "header counts {} records, {} present",
                self.count,
                records.len()
            );
            return Err(MalformedBatch {
                offset: self.buf.len(),
                reason,
            });
        }
        Ok(records)
    }

    /// Merge batches into one, in order, the merged buffer sized by `PresizePolicy::Grow`.
    /// Both strategies give the same records.
    ///
    /// `Append` copies the record bytes of each batch after one header (`bytes_copied` = record
    /// bytes appended). `Rebuild` decodes every record and encodes it into a fresh batch
    /// (`records_decoded`, `records_encoded`, `bytes_copied` = record bytes encoded).
    ///
    /// # Panics
    /// If the merged batch would hold more than `u32::MAX` records.
    pub fn merge(
        batches: &[&WriteBatch],
        strategy: MergeStrategy,
    ) -> Result<(WriteBatch, MergeWork), MalformedBatch> {
        WriteBatch::merge_with_policy(batches, strategy, PresizePolicy::Grow)
    }

    /// As [`WriteBatch::merge`], the merged buffer sized by `policy`: `Grow` starts small and
    /// doubles; `Exact` first walks every record of every batch to sum their sizes (one step
    /// per record); `Estimate` uses the sum of the batches' record bytes, known for free (and
    /// exact, since both strategies reproduce the same bytes). `MergeWork::buffer` says what
    /// the buffer cost.
    pub fn merge_with_policy(
        batches: &[&WriteBatch],
        strategy: MergeStrategy,
        policy: PresizePolicy,
    ) -> Result<(WriteBatch, MergeWork), MalformedBatch> {
        for batch in batches {
            debug_assert_eq!(
                validate(batch.as_bytes()),
                Ok(batch.count),
                "invariant: valid batch"
            );
        }
        let record_size: usize = batches.iter().map(|b| b.record_bytes().len()).sum();
        let merged =
            WriteBatch::sized_by(policy, HEADER_SIZE + record_size, || exact_size(batches));
        let (merged, mut work) = match strategy {
            MergeStrategy::Append => merge_append(batches, merged),
            MergeStrategy::Rebuild => merge_rebuild(batches, merged)?,
        };
        work.buffer = merged.buffer_work();
        Ok((merged, work))
    }

    /// The record bytes, after the header.
    fn record_bytes(&self) -> &[u8] {
        self.as_bytes().get(HEADER_SIZE..).unwrap_or_default()
    }

    fn push_record(&mut self, record: &Record<'_>) {
        match record {
            Record::Put { path, key, value } => self.put(path, key, value),
            Record::Delete { path, key } => self.delete(path, key),
        }
    }

    fn push(&mut self, tag: u8, path: &[&[u8]], key: &[u8], value: Option<&[u8]>) {
        assert!(!path.is_empty(), "a write batch record needs a bucket path");
        assert!(
            path.len() <= MAX_BUCKET_DEPTH,
            "bucket path deeper than MAX_BUCKET_DEPTH"
        );
        let count = self
            .count
            .checked_add(1)
            .expect("write batch holds u32::MAX records");
        self.buf.push(tag);
        self.buf.push(path.len() as u8);
        for component in path {
            push_with_len(&mut self.buf, component);
        }
        push_with_len(&mut self.buf, key);
        if let Some(value) = value {
            push_with_len(&mut self.buf, value);
        }
        self.set_count(count);
    }

    fn set_count(&mut self, count: u32) {
        self.count = count;
        if let Some(header) = self.buf.as_mut_slice().get_mut(..HEADER_SIZE) {
            header.copy_from_slice(&count.to_le_bytes());
        }
    }
}

fn push_with_len(buf: &mut SizedBuf, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).expect("write batch field of 4 GiB or more");
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(bytes);
}

fn total_count(batches: &[&WriteBatch]) -> u32 {
    let total = batches.iter().map(|b| u64::from(b.count)).sum::<u64>();
    u32::try_from(total).expect("merged write batch would hold more than u32::MAX records")
}

/// The exact merged size (header included) by walking every record: (bytes, records walked).
fn exact_size(batches: &[&WriteBatch]) -> (usize, u64) {
    let mut size = HEADER_SIZE;
    let mut steps = 0;
    for batch in batches {
        let mut reader = Reader::after_header(batch.as_bytes());
        while !reader.is_at_end() {
            let start = reader.offset;
            if reader.raw_record().is_err() {
                debug_assert!(false, "invariant: valid batch");
                break;
            }
            size += reader.offset - start;
            steps += 1;
        }
    }
    (size, steps)
}

/// Append every batch's record bytes to the empty `merged`.
fn merge_append(batches: &[&WriteBatch], mut merged: WriteBatch) -> (WriteBatch, MergeWork) {
    debug_assert!(merged.is_empty());
    let count = total_count(batches);
    for batch in batches {
        merged.buf.extend_from_slice(batch.record_bytes());
    }
    merged.set_count(count);
    let work = MergeWork {
        bytes_copied: merged.record_bytes().len() as u64,
        ..MergeWork::default()
    };
    (merged, work)
}

/// Decode every record of every batch and encode it again into the empty `merged`.
fn merge_rebuild(
    batches: &[&WriteBatch],
    mut merged: WriteBatch,
) -> Result<(WriteBatch, MergeWork), MalformedBatch> {
    debug_assert!(merged.is_empty());
    let mut work = MergeWork::default();
    for batch in batches {
        for record in batch.records()? {
            work.records_decoded += 1;
            merged.push_record(&record);
            work.records_encoded += 1;
        }
    }
    work.bytes_copied = merged.record_bytes().len() as u64;
    Ok((merged, work))
}

#[cfg(test)]
#[path = "write_batch_tests.rs"]
mod tests;
