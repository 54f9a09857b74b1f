//! The meta page: the root of everything. Two copies (pages 0 and 1) alternate by `txid % 2`, so
//! the slot a commit overwrites never holds the last durable state.
//!
//! ```text
//! page off  meta off  size  field
//!       16         0     4  magic     0xED0CDAED
//!       20         4     4  version   2
//!       24         8     4  page_size
//!       28        12     4  flags     (unused, 0)
//!       32        16     8  root      root bucket's root page
//!       40        24     8  sequence  root bucket's sequence
//!       48        32     8  freelist  freelist page, or 0xFFFF_FFFF_FFFF_FFFF (not persisted)
//!       56        40     8  pgid      high-water mark: first page never allocated
//!       64        48     8  txid
//!       72        56     8  checksum  FNV-1a-64 of meta bytes [0, 56)
//! ```
//!
//! A meta is valid when magic, version and checksum match, the page size is accepted, and
//! `root` and `freelist` (unless the sentinel) lie in `[2, pgid)`. bbolt checks only the first
//! three; the range checks keep a checksum-valid but nonsensical meta from steering reads.

use crate::corruption::Corruption;
use crate::error::{Error, Result};
use crate::page::{self, PageHeader, FLAG_META, PAGE_HEADER_SIZE};
use crate::types::{PageId, TxId};

pub const MAGIC: u32 = 0xED0C_DAED;
pub const VERSION: u32 = 2;
/// Bytes of the meta struct, and the part the checksum covers.
pub const META_SIZE: usize = 64;
const CHECKSUMMED: usize = 56;
/// Bytes of a meta page the format uses (header and meta); the rest of the page is zero.
pub const META_IMAGE_SIZE: usize = PAGE_HEADER_SIZE + META_SIZE;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// How a meta's checksum is made and checked. [`ChecksumRule::Format`] is the format's rule and
/// the only one a correct engine uses; the others are negative controls' broken rules
/// (`DebugHooks` in the engine), kept here so that both the writer and the reader of a meta
/// follow the same one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChecksumRule {
    /// FNV-1a-64 of meta bytes [0, 56), verified on decode.
    #[default]
    Format,
    /// Written as the format's, never verified: a torn or flipped meta is trusted.
    Unverified,
    /// Written and verified over meta bytes [0, 48): the txid is left out of the sum.
    SkipsTxid,
}

impl ChecksumRule {
    /// The checksum of the 64 meta bytes `m` under this rule.
    fn sum(self, m: &[u8]) -> u64 {
        let covered = match self {
            ChecksumRule::SkipsTxid => 48,
            ChecksumRule::Format | ChecksumRule::Unverified => CHECKSUMMED,
        };
        fnv1a64(&m[..covered])
    }
}

/// FNV-1a, 64 bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub page_size: u32,
    pub flags: u32,
    pub root: PageId,
    pub sequence: u64,
    pub freelist: PageId,
    pub high_water: PageId,
    pub txid: TxId,
}

impl Meta {
    /// The meta of a fresh file (bbolt's layout): freelist at page 2, root leaf at page 3,
    /// high-water mark 4. Slot 0 holds txid 0, slot 1 txid 1.
    pub fn fresh(page_size: u32, txid: TxId) -> Meta {
        Meta {
            page_size,
            flags: 0,
            root: PageId(3),
            sequence: 0,
            freelist: PageId(2),
            high_water: PageId(4),
            txid,
        }
    }

    /// The slot this meta is written to.
    pub fn slot(&self) -> PageId {
        PageId(self.txid.0 % 2)
    }

    pub fn has_freelist(&self) -> bool {
        self.freelist != PageId::NO_FREELIST
    }

    /// The 64 meta bytes, checksum included.
    pub fn encode(&self) -> [u8; META_SIZE] {
        self.encode_by(ChecksumRule::Format)
    }

    /// The 64 meta bytes, with the checksum `rule` makes.
    fn encode_by(&self, rule: ChecksumRule) -> [u8; META_SIZE] {
        let mut b = [0u8; META_SIZE];
        page::write_u32(&mut b, 0, MAGIC);
        page::write_u32(&mut b, 4, VERSION);
        page::write_u32(&mut b, 8, self.page_size);
        page::write_u32(&mut b, 12, self.flags);
        page::write_u64(&mut b, 16, self.root.0);
        page::write_u64(&mut b, 24, self.sequence);
        page::write_u64(&mut b, 32, self.freelist.0);
        page::write_u64(&mut b, 40, self.high_water.0);
        page::write_u64(&mut b, 48, self.txid.0);
        let sum = rule.sum(&b);
        page::write_u64(&mut b, CHECKSUMMED, sum);
        b
    }

    /// A full meta page (page size bytes) for slot `txid % 2`. Panics on a meta that
    /// [`Meta::decode`] would reject: for metas the caller built itself.
    pub fn encode_page(&self) -> Vec<u8> {
        self.encode_page_by(ChecksumRule::Format)
    }

    /// [`Meta::encode_page`] with the checksum `rule` makes.
    pub fn encode_page_by(&self, rule: ChecksumRule) -> Vec<u8> {
        self.assert_sane();
        self.encode_page_unchecked(rule)
    }

    /// [`Meta::encode_page`] for a meta assembled from what was read from disk: a meta that
    /// decoding would reject is an error about the file (named at `page`), never written.
    pub fn encode_page_checked(&self, page: PageId) -> Result<Vec<u8>> {
        self.validate(page)?;
        let buf = self.encode_page_unchecked(ChecksumRule::Format);
        // Pair check: what is about to be written reads back as this meta.
        debug_assert_eq!(Meta::decode(&buf, self.slot()).ok(), Some(*self));
        Ok(buf)
    }

    /// [`Meta::encode_page_checked`] into `page_buf`, a page whose bytes from
    /// [`META_IMAGE_SIZE`] on are zero already: only the header and the meta are written, so a
    /// committer that keeps a zeroed page zeroes nothing per commit. The checksum is `rule`'s.
    pub fn encode_page_checked_into(
        &self,
        page: PageId,
        page_buf: &mut [u8],
        rule: ChecksumRule,
    ) -> Result<()> {
        assert_eq!(page_buf.len(), self.page_size as usize, "one page");
        self.validate(page)?;
        self.encode_image(page_buf, rule);
        debug_assert_eq!(
            Meta::decode_checked(page_buf, self.slot(), rule).ok(),
            Some(*self)
        );
        Ok(())
    }

    /// A zeroed page with the header and the meta written, the checksum `rule`'s.
    fn encode_page_unchecked(&self, rule: ChecksumRule) -> Vec<u8> {
        let mut buf = vec![0u8; self.page_size as usize];
        self.encode_image(&mut buf, rule);
        buf
    }

    /// Write the header and the meta: the first [`META_IMAGE_SIZE`] bytes of the page.
    fn encode_image(&self, buf: &mut [u8], rule: ChecksumRule) {
        PageHeader {
            id: self.slot(),
            flags: FLAG_META,
            count: 0,
            overflow: 0,
        }
        .encode(buf);
        buf[PAGE_HEADER_SIZE..META_IMAGE_SIZE].copy_from_slice(&self.encode_by(rule));
    }

    /// Decode and validate the meta stored in `buf` (at least header + 64 bytes) of page `page`.
    pub fn decode(buf: &[u8], page: PageId) -> Result<Meta> {
        Meta::decode_checked(buf, page, ChecksumRule::Format)
    }

    /// [`Meta::decode`], the checksum checked by `rule` (a rule other than the format's is a
    /// negative control's: `DebugHooks::skip_meta_checksum`, `meta_checksum_skips_txid`).
    pub fn decode_checked(buf: &[u8], page: PageId, rule: ChecksumRule) -> Result<Meta> {
        let end = PAGE_HEADER_SIZE + META_SIZE;
        let m = buf
            .get(PAGE_HEADER_SIZE..end)
            .ok_or(Error::corrupted(page, Corruption::MetaTooShort))?;
        if page::read_u32(m, 0) != MAGIC {
            return Err(Error::corrupted(page, Corruption::InvalidMagic));
        }
        let version = page::read_u32(m, 4);
        if version != VERSION {
            return Err(Error::corrupted(
                page,
                Corruption::UnsupportedVersion { version },
            ));
        }
        let stored = page::read_u64(m, CHECKSUMMED);
        let computed = rule.sum(m);
        if rule != ChecksumRule::Unverified && stored != computed {
            return Err(Error::ChecksumMismatch {
                page,
                stored,
                computed,
            });
        }
        let meta = Meta::fields(m);
        meta.validate(page)?;
        Ok(meta)
    }

    /// The fields stored in `buf` as they are, validating nothing but the length: what an
    /// inspection tool shows for a meta that [`Meta::decode`] rejects.
    pub fn decode_unvalidated(buf: &[u8], page: PageId) -> Result<Meta> {
        buf.get(PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + META_SIZE)
            .map(Meta::fields)
            .ok_or(Error::corrupted(page, Corruption::MetaTooShort))
    }

    /// Whether the checksum stored in a meta page image (at least 80 bytes) matches its fields.
    pub fn checksum_matches(buf: &[u8]) -> bool {
        buf.get(PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + META_SIZE)
            .is_some_and(|m| page::read_u64(m, CHECKSUMMED) == ChecksumRule::Format.sum(m))
    }

    /// Fields of the 64 meta bytes `m` (callers check the length).
    fn fields(m: &[u8]) -> Meta {
        Meta {
            page_size: page::read_u32(m, 8),
            flags: page::read_u32(m, 12),
            root: PageId(page::read_u64(m, 16)),
            sequence: page::read_u64(m, 24),
            freelist: PageId(page::read_u64(m, 32)),
            high_water: PageId(page::read_u64(m, 40)),
            txid: TxId(page::read_u64(m, 48)),
        }
    }

    /// Range checks on a checksum-valid meta: what decoding requires, and so what encoding
    /// refuses to write.
    fn validate(&self, page: PageId) -> Result<()> {
        self.invalid()
            .map_or(Ok(()), |reason| Err(Error::corrupted(page, reason)))
    }

    fn invalid(&self) -> Option<Corruption> {
        if !page::page_size_valid(self.page_size) {
            return Some(Corruption::InvalidPageSize {
                size: self.page_size,
            });
        }
        let in_range = |p: PageId| p.0 >= 2 && p < self.high_water;
        if !in_range(self.root) {
            return Some(Corruption::RootOutOfRange {
                root: self.root,
                high_water: self.high_water,
            });
        }
        if self.has_freelist() && !in_range(self.freelist) {
            return Some(Corruption::FreelistOutOfRange {
                freelist: self.freelist,
                high_water: self.high_water,
            });
        }
        None
    }

    /// Whether another commit can follow this meta: its txid + 1 must not pass
    /// [`MAX_TXID`](crate::limits::MAX_TXID).
    pub fn txid_exhausted(&self) -> bool {
        self.txid.next().is_none()
    }

    /// Programmer-error checks before a meta the caller built itself is written (bbolt panics in
    /// the same places); commit uses [`Meta::encode_page_checked`].
    fn assert_sane(&self) {
        if let Some(reason) = self.invalid() {
            panic!("writing an invalid meta: {reason}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(txid: u64) -> Meta {
        Meta::fresh(4096, TxId(txid))
    }

    #[test]
    fn encoding_into_a_zeroed_page_gives_the_page() {
        let m = Meta {
            root: PageId(7),
            high_water: PageId(9),
            txid: TxId(5),
            ..fresh(5)
        };
        let mut page = vec![0u8; 4096];
        m.encode_page_checked_into(PageId(1), &mut page, ChecksumRule::Format)
            .unwrap();
        assert_eq!(page, m.encode_page());
        // Only the image is written: a byte past it is left as it was.
        page[META_IMAGE_SIZE] = 0xEE;
        m.encode_page_checked_into(PageId(1), &mut page, ChecksumRule::Format)
            .unwrap();
        assert_eq!(page[META_IMAGE_SIZE], 0xEE);
    }

    #[test]
    fn fnv1a_known_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn fresh_file_golden_checksums() {
        // The values bbolt writes for a fresh 4096-byte-page database.
        let m0 = fresh(0).encode();
        assert_eq!(page::read_u64(&m0, 56), 0x07516e114689fdee);
        let m1 = fresh(1).encode();
        assert_eq!(page::read_u64(&m1, 56), 0x264c351a5179480f);
    }

    #[test]
    fn real_bbolt_meta_from_an_issue_report() {
        // A meta printed in a bbolt issue: root 2342, no freelist, pgid 2921, txid 39234.
        let m = Meta {
            page_size: 4096,
            flags: 0,
            root: PageId(2342),
            sequence: 0,
            freelist: PageId::NO_FREELIST,
            high_water: PageId(2921),
            txid: TxId(39234),
        };
        assert_eq!(page::read_u64(&m.encode(), 56), 0xc69c456bc6a1959f);
    }

    #[test]
    fn page_round_trip_and_slot() {
        let m = fresh(7);
        let buf = m.encode_page();
        assert_eq!(buf.len(), 4096);
        assert_eq!(PageHeader::decode(&buf, PageId(1)).unwrap().id, PageId(1));
        assert_eq!(Meta::decode(&buf, PageId(1)).unwrap(), m);
    }

    #[test]
    fn every_single_byte_flip_in_the_checksummed_range_is_detected() {
        let buf = fresh(3).encode_page();
        for i in PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + META_SIZE {
            let mut bad = buf.clone();
            bad[i] ^= 0x40;
            assert!(
                Meta::decode(&bad, PageId(1)).is_err(),
                "flip at byte {i} accepted"
            );
        }
    }

    #[test]
    fn checksum_valid_but_out_of_range_root_is_rejected() {
        let mut m = fresh(0);
        m.root = PageId(9);
        let mut bytes = vec![0u8; 4096];
        bytes[16..80].copy_from_slice(&m.encode());
        let err = Meta::decode(&bytes, PageId(0)).unwrap_err();
        assert!(err.to_string().contains("root 9 outside"), "{err}");
    }
}
