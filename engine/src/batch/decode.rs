//! Decoding a write batch's untrusted bytes (the layout is in `write_batch.rs`'s header): every
//! length is checked against the bytes that remain, with checked arithmetic, before it slices,
//! and nothing allocated is sized by the input.

use super::record::{MalformedBatch, Record, HEADER_SIZE, LEN_PREFIX_SIZE, TAG_DELETE, TAG_PUT};
use crashlab_format::limits::MAX_BUCKET_DEPTH;
use std::fmt;

/// Check a whole encoding; return its record count.
pub(super) fn validate(bytes: &[u8]) -> Result<u32, MalformedBatch> {
    let count = read_header(bytes)?;
    let mut reader = Reader::after_header(bytes);
    let mut found: u32 = 0;
    while !reader.is_at_end() {
        if found == count {
            return Err(excess_after(reader, count));
        }
        reader.raw_record()?;
        found += 1;
    }
    if found != count {
        let reason = format!("header counts {count} records, only {found} present");
        return Err(MalformedBatch {
            offset: bytes.len(),
            reason,
        });
    }
    Ok(count)
}

fn read_header(bytes: &[u8]) -> Result<u32, MalformedBatch> {
    let header = bytes
        .first_chunk::<HEADER_SIZE>()
        .ok_or_else(|| MalformedBatch {
            offset: 0,
            reason: format!("header needs {HEADER_SIZE} bytes, {} present", bytes.len()),
        })?;
    Ok(u32::from_le_bytes(*header))
}

/// The error for bytes left once `count` records were read: more records, or garbage.
fn excess_after(mut reader: Reader<'_>, count: u32) -> MalformedBatch {
    let offset = reader.offset;
    let excess_size = reader.remaining_len();
    let mut more: u64 = 0;
    while !reader.is_at_end() {
        if reader.raw_record().is_err() {
            let reason = format!("{excess_size} trailing bytes after the last of {count} records");
            return MalformedBatch { offset, reason };
        }
        more += 1;
    }
    let reason = format!("header counts {count} records, but {more} more follow");
    MalformedBatch { offset, reason }
}

/// A record as it lies in the buffer; the path is kept encoded so checking needs no allocation.
pub(super) struct RawRecord<'a> {
    tag: u8,
    component_count: u8,
    /// The encoded components, already checked.
    path_bytes: &'a [u8],
    path_offset: usize,
    key: &'a [u8],
    value: &'a [u8],
}

impl<'a> RawRecord<'a> {
    pub(super) fn to_record(&self) -> Result<Record<'a>, MalformedBatch> {
        let mut reader = Reader {
            bytes: self.path_bytes,
            offset: 0,
        };
        let mut path = Vec::with_capacity(usize::from(self.component_count));
        for _ in 0..self.component_count {
            let component = reader.with_len("path component").map_err(|mut e| {
                e.offset += self.path_offset;
                e
            })?;
            path.push(component);
        }
        Ok(match self.tag {
            TAG_PUT => Record::Put {
                path,
                key: self.key,
                value: self.value,
            },
            _ => Record::Delete {
                path,
                key: self.key,
            },
        })
    }
}

/// A cursor over untrusted bytes. Every read checks the bytes that remain first.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    /// Offset of the next unread byte, from the start of `bytes`.
    pub(super) offset: usize,
}

impl<'a> Reader<'a> {
    /// A reader past the header; at the end if the header itself is short.
    pub(super) fn after_header(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            offset: HEADER_SIZE.min(bytes.len()),
        }
    }

    fn remaining_len(&self) -> usize {
        self.bytes.len().saturating_sub(self.offset)
    }

    pub(super) fn is_at_end(&self) -> bool {
        self.remaining_len() == 0
    }

    fn error(&self, offset: usize, reason: String) -> MalformedBatch {
        MalformedBatch { offset, reason }
    }

    /// The next `len` bytes, or an error naming `what` and the field that gave `len`.
    fn take(
        &mut self,
        len: usize,
        what: impl fmt::Display,
        field_offset: usize,
    ) -> Result<&'a [u8], MalformedBatch> {
        let remaining = self.remaining_len();
        let end = self.offset.checked_add(len).filter(|_| len <= remaining);
        let slice = end.and_then(|end| self.bytes.get(self.offset..end));
        let Some(slice) = slice else {
            let reason = format!("{what} of {len} bytes runs past the end ({remaining} remain)");
            return Err(self.error(field_offset, reason));
        };
        self.offset += len;
        Ok(slice)
    }

    fn u8(&mut self, what: &str) -> Result<u8, MalformedBatch> {
        let at = self.offset;
        let byte = self.take(1, what, at)?;
        Ok(byte.first().copied().unwrap_or_default())
    }

    fn u32_le(&mut self, what: impl fmt::Display) -> Result<u32, MalformedBatch> {
        let at = self.offset;
        let bytes = self.take(LEN_PREFIX_SIZE, what, at)?;
        let array = bytes
            .first_chunk::<LEN_PREFIX_SIZE>()
            .copied()
            .unwrap_or_default();
        Ok(u32::from_le_bytes(array))
    }

    /// A u32 LE length then that many bytes.
    fn with_len(&mut self, what: &str) -> Result<&'a [u8], MalformedBatch> {
        let field_offset = self.offset;
        let len = self.u32_le(LengthOf(what))?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len, what, field_offset)
    }

    pub(super) fn raw_record(&mut self) -> Result<RawRecord<'a>, MalformedBatch> {
        let tag_offset = self.offset;
        let tag = self.u8("tag")?;
        if tag != TAG_PUT && tag != TAG_DELETE {
            return Err(self.error(tag_offset, format!("unknown tag {tag}")));
        }
        let component_count = self.component_count()?;
        let path_offset = self.offset;
        for _ in 0..component_count {
            self.with_len("path component")?;
        }
        let path_bytes = self.bytes.get(path_offset..self.offset).unwrap_or_default();
        let key = self.with_len("key")?;
        let value = if tag == TAG_PUT {
            self.with_len("value")?
        } else {
            &[]
        };
        Ok(RawRecord {
            tag,
            component_count,
            path_bytes,
            path_offset,
            key,
            value,
        })
    }

    fn component_count(&mut self) -> Result<u8, MalformedBatch> {
        let at = self.offset;
        let count = self.u8("path component count")?;
        if count == 0 || usize::from(count) > MAX_BUCKET_DEPTH {
            let reason = format!("path has {count} components, not 1..={MAX_BUCKET_DEPTH}");
            return Err(self.error(at, reason));
        }
        Ok(count)
    }
}

/// The name of a field's length prefix in an error, `"{field} length"`: written only when an
/// error is, not for every field a well-formed batch decodes.
struct LengthOf<'n>(&'n str);

impl fmt::Display for LengthOf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} length", self.0)
    }
}
