//! Page header and page types (bbolt layout, little-endian).
//!
//! ```text
//! offset  size  field
//!      0     8  id        page id; must equal the page's position in the file
//!      8     2  flags     exactly one of BRANCH, LEAF, META, FREELIST
//!     10     2  count     element count (freelist: id count, or 0xFFFF escape)
//!     12     4  overflow  number of additional contiguous pages
//!     16     …  data
//! ```
//!
//! Invariants: a decoded header's `flags` is a single known type; `overflow` never reaches past
//! the high-water mark (checked by callers that know it).

use crate::corruption::Corruption;
use crate::error::{Error, Result};
pub use crate::kind::{
    PageKind, ELEMENT_SIZE, FLAG_BRANCH, FLAG_FREELIST, FLAG_LEAF, FLAG_META, LEAF_FLAG_BUCKET,
};
use crate::types::PageId;

pub const PAGE_HEADER_SIZE: usize = 16;

/// Smallest and largest page sizes accepted (powers of two). The upper bound keeps one page
/// allocation small; the lower bound leaves room for a meta page and a few elements.
pub const PAGE_SIZE_MIN: u32 = 512;
pub const PAGE_SIZE_MAX: u32 = 65536;

/// A decoded page header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    pub id: PageId,
    pub flags: u16,
    pub count: u16,
    pub overflow: u32,
}

impl PageHeader {
    /// Decode the first 16 bytes of `buf`. Fails only when `buf` is too short; the fields are
    /// returned as stored, unvalidated.
    pub fn decode(buf: &[u8], page: PageId) -> Result<PageHeader> {
        if buf.len() < PAGE_HEADER_SIZE {
            return Err(Error::corrupted(page, Corruption::ShortHeader));
        }
        Ok(PageHeader {
            id: PageId(read_u64(buf, 0)),
            flags: read_u16(buf, 8),
            count: read_u16(buf, 10),
            overflow: read_u32(buf, 12),
        })
    }

    pub fn encode(&self, buf: &mut [u8]) {
        assert!(buf.len() >= PAGE_HEADER_SIZE);
        write_u64(buf, 0, self.id.0);
        write_u16(buf, 8, self.flags);
        write_u16(buf, 10, self.count);
        write_u32(buf, 12, self.overflow);
    }

    /// Decode and check that the header is the page the caller expected: right id, right type.
    pub fn decode_expecting(buf: &[u8], page: PageId, want: &[PageKind]) -> Result<PageHeader> {
        let h = PageHeader::decode(buf, page)?;
        if h.id != page {
            return Err(Error::corrupted(page, Corruption::WrongId { found: h.id }));
        }
        let kind = PageKind::from_flags(h.flags).ok_or(Error::corrupted(
            page,
            Corruption::InvalidFlags { flags: h.flags },
        ))?;
        if !want.contains(&kind) {
            let reason = Corruption::WrongKind {
                expected: want.to_vec(),
                found: kind,
            };
            return Err(Error::corrupted(page, reason));
        }
        Ok(h)
    }

    pub fn kind(&self) -> Option<PageKind> {
        PageKind::from_flags(self.flags)
    }
}

/// Whether `size` is an accepted page size.
pub fn page_size_valid(size: u32) -> bool {
    size.is_power_of_two() && (PAGE_SIZE_MIN..=PAGE_SIZE_MAX).contains(&size)
}

/// Where an encoder appends bytes: a `Vec<u8>`, or a buffer of the caller's that counts its own
/// growth (the engine's pre-sized buffers).
pub trait ByteSink {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn extend_from_slice(&mut self, bytes: &[u8]);
    /// Append zero bytes up to `len` (nothing if already that long).
    fn zero_fill_to(&mut self, len: usize);
    /// The bytes from `at` to the end, to fill in place what [`ByteSink::zero_fill_to`]
    /// appended (`at` at most the length).
    fn tail_mut(&mut self, at: usize) -> &mut [u8];
}

impl ByteSink for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
    fn zero_fill_to(&mut self, len: usize) {
        if len > Vec::len(self) {
            self.resize(len, 0);
        }
    }
    fn tail_mut(&mut self, at: usize) -> &mut [u8] {
        &mut self[at..]
    }
}

// Little-endian field access. Callers guarantee bounds (asserted: a violation is a programmer
// error, since every buffer is length-checked against the structure before fields are read).

pub fn read_u16(buf: &[u8], at: usize) -> u16 {
    let mut b = [0u8; 2];
    b.copy_from_slice(&buf[at..at + 2]);
    u16::from_le_bytes(b)
}

pub fn read_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

pub fn read_u64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

pub fn write_u16(buf: &mut [u8], at: usize, v: u16) {
    buf[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub fn write_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub fn write_u64(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = PageHeader {
            id: PageId(0x0102_0304_0506_0708),
            flags: FLAG_LEAF,
            count: 0xBEEF,
            overflow: 0xDEAD_BEEF,
        };
        let mut buf = [0u8; 16];
        h.encode(&mut buf);
        assert_eq!(buf[0], 0x08, "little-endian id");
        assert_eq!(&buf[8..10], &[0x02, 0x00]);
        assert_eq!(PageHeader::decode(&buf, h.id).unwrap(), h);
    }

    #[test]
    fn decode_expecting_names_the_problem() {
        let mut buf = [0u8; 16];
        PageHeader {
            id: PageId(7),
            flags: FLAG_LEAF | FLAG_BRANCH,
            count: 0,
            overflow: 0,
        }
        .encode(&mut buf);
        let err = PageHeader::decode_expecting(&buf, PageId(7), &[PageKind::Leaf]).unwrap_err();
        assert!(err.to_string().contains("invalid page flags"), "{err}");
        let err = PageHeader::decode_expecting(&buf, PageId(8), &[PageKind::Leaf]).unwrap_err();
        assert!(err.to_string().contains("header names page 7"), "{err}");
        assert!(PageHeader::decode(&buf[..15], PageId(7)).is_err());
    }

    #[test]
    fn page_sizes() {
        assert!(page_size_valid(4096));
        assert!(page_size_valid(512));
        assert!(!page_size_valid(4095));
        assert!(!page_size_valid(256));
        assert!(!page_size_valid(1 << 17));
    }
}
