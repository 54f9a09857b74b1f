//! Reading a file that is not trusted to be well formed: choosing the meta, and reading page runs
//! and nodes with every claim checked before memory follows it.
//!
//! Every read is validated against the snapshot's high-water mark and the file length before a
//! buffer is allocated, and a run of pages is read incrementally: the first page, then (for a
//! node) its element table, and only then the bytes its elements or ids use. A header's overflow
//! count is a claim, not a size: a run that claims more pages than its contents need is an error
//! (bbolt sizes node runs exactly), so neither memory nor the per-page work of freeing and
//! checking a run can follow a number a sparse or damaged file makes up.
//!
//! The meta a file is opened at is the valid one with the highest txid; a meta that cannot be
//! read (an I/O error) fails the open instead of falling back to the older one.

use crate::corruption::Corruption;
use crate::error::{Error, Result};
use crate::meta::{ChecksumRule, Meta, META_SIZE};
use crate::node::{self, Node};
use crate::page::{PageHeader, PageKind, ELEMENT_SIZE, PAGE_HEADER_SIZE};
use crate::storage::Storage;
use crate::types::{PageId, PageSpan};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Largest read buffer a [`PageReader`] keeps for the next node read: a node of more pages (a
/// big overflow value) gets a buffer of its own, so one large read does not pin its memory.
const SCRATCH_MAX: usize = 64 << 10;

/// Pages and bytes a [`PageReader`] has read from storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadCounts {
    pub pages_read: u64,
    pub bytes_read: u64,
}

/// Reads pages of one file through its storage, checking every claim it reads, and counts what
/// it read.
pub struct PageReader {
    storage: Box<dyn Storage>,
    page_size: u32,
    pages_read: AtomicU64,
    bytes_read: AtomicU64,
    /// The buffer the last node was read into, reused by the next: a node is decoded into
    /// owned items, so its page bytes are dead once decoded, and a fresh zeroed buffer per read
    /// was 7 % of a simulated sweep's instructions (allocating and zeroing each page, then
    /// overwriting it). Readers on other threads that find it taken allocate their own.
    scratch: Mutex<Vec<u8>>,
}

impl PageReader {
    pub fn new(storage: Box<dyn Storage>, page_size: u32) -> PageReader {
        PageReader {
            storage,
            page_size,
            pages_read: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            scratch: Mutex::new(Vec::new()),
        }
    }

    pub fn storage(&self) -> &dyn Storage {
        &*self.storage
    }

    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    pub fn counts(&self) -> ReadCounts {
        ReadCounts {
            pages_read: self.pages_read.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }

    /// The branch or leaf node at `id`, as seen by a snapshot whose high-water mark is
    /// `high_water`, decoded, with its origin set. `from` is the page the reference to `id` was
    /// read from (a branch, the leaf holding a bucket header, or a meta page): a reference
    /// outside the file is its damage.
    pub fn node(&self, id: PageId, high_water: PageId, from: PageId) -> Result<Node> {
        check_reference(id, high_water, from)?;
        let mut buf = std::mem::take(&mut *self.scratch());
        let kinds = [PageKind::Branch, PageKind::Leaf];
        let span = self.read_span_into(id, high_water, &kinds, &mut buf);
        let node = span.and_then(|len| Ok((Node::decode(&buf[..len], id, id)?, len)));
        if buf.capacity() <= SCRATCH_MAX {
            *self.scratch() = buf;
        }
        let (mut node, len) = node?;
        let pages = (len / self.page_size as usize) as u64;
        node.origin = Some(PageSpan::new(id, pages));
        Ok(node)
    }

    fn scratch(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // A panic while it was held left at worst a buffer of stale bytes, which every read
        // overwrites before it looks at them.
        self.scratch.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read page `id` and its overflow pages, checking the header's id and type first. Reads
    /// grow with what the page's contents use (see the module docs), never with the overflow
    /// count alone.
    pub fn read_span(&self, id: PageId, high_water: PageId, kinds: &[PageKind]) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        let len = self.read_span_into(id, high_water, kinds, &mut buf)?;
        buf.truncate(len);
        Ok(buf)
    }

    /// [`PageReader::read_span`] into the first bytes of `buf`, whatever it held; returns how
    /// many. Its bytes are overwritten by the reads (a [`Storage`] reads exactly the bytes asked
    /// for), and it is never shortened, so a reused buffer is grown (and zeroed) only past the
    /// longest span it held: a node of several pages read into it costs no zeroing but the
    /// first time.
    fn read_span_into(
        &self,
        id: PageId,
        high_water: PageId,
        kinds: &[PageKind],
        buf: &mut Vec<u8>,
    ) -> Result<usize> {
        let ps = u64::from(self.page_size);
        let have = ps as usize;
        if buf.len() < have {
            buf.resize(have, 0);
        }
        // The first page through `read_raw`, whose offset is checked: the id is only known to
        // lie below a high-water mark the file claims.
        self.read_raw(id, &mut buf[..have])?;
        let header = PageHeader::decode_expecting(&buf[..have], id, kinds)?;
        let corrupt = |reason| Error::corrupted(id, reason);
        let claimed = u64::from(header.overflow) + 1;
        if header.overflow != 0 {
            let end = id.0.checked_add(claimed).filter(|&e| e <= high_water.0);
            let Some(end) = end else {
                let overflow = header.overflow;
                return Err(corrupt(Corruption::OverflowPastHighWater {
                    overflow,
                    high_water,
                }));
            };
            let file_len = self.storage.len().map_err(|e| Error::io("len", e))?;
            if end.saturating_mul(ps) > file_len {
                return Err(corrupt(Corruption::OverflowPastEof));
            }
        }
        // `decode_expecting` accepted the kind, so it is one of these.
        // Every page the contents allow is read in one call once the first page (or, for a
        // node whose element table runs past it, the table's pages) has said how many that is.
        let (allowed, have) = match header.kind() {
            Some(PageKind::Freelist) => {
                let bytes = crate::freelist::page_extent(&buf[..have], id, claimed * ps)?;
                // bbolt sizes a freelist run before allocating it, so the run may exceed what
                // the ids need by a page or two, and by a page in 500 more: allow twice that.
                (bytes.div_ceil(ps) * 2 + 2, have)
            }
            _ => self.node_pages(id, buf, &header, claimed)?,
        };
        if claimed > allowed {
            let overflow = header.overflow;
            return Err(corrupt(Corruption::OverflowBeyondContents {
                overflow,
                allowed,
            }));
        }
        self.extend_to(id, buf, have, claimed)
    }

    /// Pages a branch or leaf run needs, from its element table (read into `buf` first, from the
    /// pages of the `claimed` run), and the bytes of the run `buf` then holds.
    fn node_pages(
        &self,
        id: PageId,
        buf: &mut Vec<u8>,
        header: &PageHeader,
        claimed: u64,
    ) -> Result<(u64, usize)> {
        let ps = u64::from(self.page_size);
        let count = usize::from(header.count);
        let table = (PAGE_HEADER_SIZE + count * ELEMENT_SIZE) as u64;
        if table > claimed * ps {
            return Err(Error::corrupted(id, Corruption::ElementsOverrun { count }));
        }
        let have = self.extend_to(id, buf, ps as usize, table.div_ceil(ps))?;
        let kind = header.kind().unwrap_or(PageKind::Branch);
        let extent = node::image_extent(&buf[..have], kind, count, claimed * ps)
            .map_err(|reason| Error::corrupted(id, reason))?;
        Ok((extent.div_ceil(ps).max(1), have))
    }

    /// Read the pages of the run at `id` past the `have` bytes of it the first bytes of `buf`
    /// hold, up to `pages` pages (the caller checked them against the high-water mark and the
    /// file length); returns the bytes of the run `buf` then holds. `buf` grows (zeroed) only
    /// when it is shorter than that.
    fn extend_to(&self, id: PageId, buf: &mut Vec<u8>, have: usize, pages: u64) -> Result<usize> {
        let ps = u64::from(self.page_size);
        let held = have as u64 / ps;
        if pages <= held {
            return Ok(have);
        }
        let end = (pages * ps) as usize;
        if buf.len() < end {
            buf.resize(end, 0);
        }
        self.storage
            .read_at((id.0 + held) * ps, &mut buf[have..end])
            .map_err(|e| read_error(id, e))?;
        self.count_read(pages - held, (pages - held) * ps);
        Ok(end)
    }

    /// Read exactly one page's bytes into `buf` (page-size long), counting it.
    pub fn read_raw(&self, id: PageId, buf: &mut [u8]) -> Result<()> {
        let offset = id
            .offset(self.page_size)
            .ok_or(Error::corrupted(id, Corruption::OffsetOverflows))?;
        self.storage
            .read_at(offset, buf)
            .map_err(|e| read_error(id, e))?;
        self.count_read(1, buf.len() as u64);
        Ok(())
    }

    fn count_read(&self, pages: u64, bytes: u64) {
        self.pages_read.fetch_add(pages, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// A reference to a node, read from page `from`, must lie in `[2, high_water)`.
pub fn check_reference(id: PageId, high_water: PageId, from: PageId) -> Result<()> {
    if id.0 < 2 || id >= high_water {
        let reason = Corruption::ChildOutOfRange {
            child: id,
            low: PageId(2),
            high: high_water,
        };
        return Err(Error::corrupted(from, reason));
    }
    Ok(())
}

fn read_error(page: PageId, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        Error::corrupted(page, Corruption::PastEof)
    } else {
        Error::io("read", e)
    }
}

fn read_meta_at(
    storage: &dyn Storage,
    offset: u64,
    page: PageId,
    rule: ChecksumRule,
) -> Result<Meta> {
    let mut buf = [0u8; PAGE_HEADER_SIZE + META_SIZE];
    storage
        .read_at(offset, &mut buf)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::corrupted(page, Corruption::MetaPastEof),
            _ => Error::io("read", e),
        })?;
    Meta::decode_checked(&buf, page, rule)
}

/// Page size from meta 0, or — if meta 0 is damaged — from meta 1 probed at every accepted
/// page size (a meta at offset P counts only if it says its page size is P).
pub fn detect_page_size(storage: &dyn Storage, rule: ChecksumRule) -> Result<u32> {
    let err0 = match read_meta_at(storage, 0, PageId(0), rule) {
        Ok(m) => return Ok(m.page_size),
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => e,
    };
    // Report the most telling failure: a meta that is there but invalid beats "nothing found".
    let mut err1 = None;
    let mut size = crate::page::PAGE_SIZE_MIN;
    while size <= crate::page::PAGE_SIZE_MAX {
        match read_meta_at(storage, u64::from(size), PageId(1), rule) {
            Ok(m) if m.page_size == size => return Ok(size),
            Ok(_) => {}
            Err(e @ Error::Io { .. }) => return Err(e),
            Err(Error::Corrupted {
                reason: Corruption::InvalidMagic | Corruption::MetaPastEof,
                ..
            }) => {}
            Err(e) => err1 = err1.or(Some(e)),
        }
        size *= 2;
    }
    let err1 = err1.unwrap_or(Error::corrupted(PageId(1), Corruption::NoMetaFound));
    Err(Error::NoValidMeta {
        meta0: Box::new(err0),
        meta1: Box::new(err1),
    })
}

/// Both meta slots of a file whose page size is `page_size`: each its meta, or why not
/// (`rule`: how checksums are checked; only a negative control departs from the format's).
pub fn read_slots(storage: &dyn Storage, page_size: u32, rule: ChecksumRule) -> [Result<Meta>; 2] {
    let m0 = read_meta_at(storage, 0, PageId(0), rule).and_then(|m| same_size(m, page_size, 0));
    let m1 = read_meta_at(storage, u64::from(page_size), PageId(1), rule)
        .and_then(|m| same_size(m, page_size, 1));
    [m0, m1]
}

/// The valid meta with the highest txid (slot 0 on a tie).
pub fn newest_valid(slots: &[Result<Meta>; 2]) -> Option<Meta> {
    let mut valid = slots.iter().filter_map(|s| s.as_ref().ok().copied());
    let first = valid.next()?;
    Some(valid.fold(first, |a, b| if b.txid > a.txid { b } else { a }))
}

/// The meta open uses: the valid one with the highest txid.
pub fn choose_meta(storage: &dyn Storage, page_size: u32, rule: ChecksumRule) -> Result<Meta> {
    let slots = read_slots(storage, page_size, rule);
    let newest = newest_valid(&slots);
    // An unreadable meta is not an invalid one: falling back to the other slot would silently
    // open an older commit, so an I/O error fails the open instead.
    match (slots, newest) {
        ([Err(e @ Error::Io { .. }), _], _) | ([_, Err(e @ Error::Io { .. })], _) => Err(e),
        (_, Some(meta)) => Ok(meta),
        ([Err(e0), Err(e1)], None) => Err(Error::NoValidMeta {
            meta0: Box::new(e0),
            meta1: Box::new(e1),
        }),
        _ => unreachable!("a valid slot makes `newest` Some"),
    }
}

fn same_size(m: Meta, page_size: u32, slot: u64) -> Result<Meta> {
    if m.page_size != page_size {
        let reason = Corruption::PageSizeDiffers {
            found: m.page_size,
            file: page_size,
        };
        return Err(Error::corrupted(PageId(slot), reason));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::freelist;
    use crate::node::{Body, LeafItem};
    use crate::storage::Storage;
    use std::sync::RwLock;

    const PS: usize = 512;

    /// A fixed file in memory (the engine's `MemStorage` is above this crate).
    struct Bytes(RwLock<Vec<u8>>);

    impl Storage for Bytes {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
            let bytes = self.0.read().unwrap();
            let start = offset as usize;
            match bytes.get(start..start + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    Ok(())
                }
                None => Err(std::io::ErrorKind::UnexpectedEof.into()),
            }
        }
        fn write_at(&self, _: u64, _: &[u8]) -> std::io::Result<()> {
            Err(std::io::ErrorKind::PermissionDenied.into())
        }
        fn sync(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn len(&self) -> std::io::Result<u64> {
            Ok(self.0.read().unwrap().len() as u64)
        }
        fn set_len(&self, _: u64) -> std::io::Result<()> {
            Err(std::io::ErrorKind::PermissionDenied.into())
        }
    }

    /// A 64-page file with a one-page leaf at page 2 and a one-id freelist page at page 10, whose
    /// headers claim `leaf_overflow` and `freelist_overflow` more pages.
    fn pager(leaf_overflow: u32, freelist_overflow: u32) -> PageReader {
        let mut file = vec![0u8; 64 * PS];
        let leaf = Node {
            body: Body::Leaf(vec![LeafItem::new(0, b"k", b"v")]),
            ..Node::empty_leaf()
        };
        leaf.encode(&mut file[2 * PS..3 * PS], PageId(2), PS as u32)
            .unwrap();
        file[2 * PS + 12..2 * PS + 16].copy_from_slice(&leaf_overflow.to_le_bytes());
        let fl = freelist::encode_page(PageId(10), &[PageId(40)], PS as u32);
        file[10 * PS..11 * PS].copy_from_slice(&fl);
        file[10 * PS + 12..10 * PS + 16].copy_from_slice(&freelist_overflow.to_le_bytes());
        PageReader::new(Box::new(Bytes(RwLock::new(file))), PS as u32)
    }

    fn reason(e: Error) -> Corruption {
        e.corruption().cloned().expect("a corruption error")
    }

    #[test]
    fn a_run_claiming_more_than_its_contents_is_refused_after_one_page() {
        let p = pager(40, 0);
        let err = p.node(PageId(2), PageId(64), PageId(0)).unwrap_err();
        let claimed = Corruption::OverflowBeyondContents {
            overflow: 40,
            allowed: 1,
        };
        assert_eq!(reason(err), claimed);
        assert_eq!(p.counts().pages_read, 1, "only the first page was read");
        // Claims past the high-water mark, and references outside the file, name what they must.
        let err = pager(70, 0)
            .node(PageId(2), PageId(64), PageId(0))
            .unwrap_err();
        assert!(matches!(
            reason(err),
            Corruption::OverflowPastHighWater { .. }
        ));
        let err = p.node(PageId(99), PageId(64), PageId(7)).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Corrupted {
                    page: PageId(7),
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_freelist_run_may_exceed_its_ids_by_bbolts_slack() {
        // One id takes one page; bbolt's sizing may leave a run of up to 2 × 1 + 2 pages.
        let kinds = [PageKind::Freelist];
        let buf = pager(0, 3)
            .read_span(PageId(10), PageId(64), &kinds)
            .unwrap();
        assert_eq!(buf.len(), 4 * PS);
        let err = pager(0, 4)
            .read_span(PageId(10), PageId(64), &kinds)
            .unwrap_err();
        let claimed = Corruption::OverflowBeyondContents {
            overflow: 4,
            allowed: 4,
        };
        assert_eq!(reason(err), claimed);
    }

    #[test]
    fn a_reused_read_buffer_never_shows_an_earlier_page() {
        // A three-page leaf at page 20 and the one-page leaf of `pager` at page 2, read in turn
        // by one reader (whose buffer is reused) and each by a fresh reader.
        let big = Node {
            body: Body::Leaf(vec![LeafItem::new(0, b"big", &vec![0xab; 2 * PS])]),
            ..Node::empty_leaf()
        };
        let pages = big.size().div_ceil(PS);
        assert_eq!(pages, 3, "spans overflow pages");
        let p = pager(0, 0);
        let mut file = vec![0u8; 64 * PS];
        p.storage().read_at(0, &mut file).unwrap();
        big.encode(&mut file[20 * PS..(20 + pages) * PS], PageId(20), PS as u32)
            .unwrap();
        let file = || PageReader::new(Box::new(Bytes(RwLock::new(file.clone()))), PS as u32);
        let reused = file();
        for id in [20, 2, 20, 2] {
            let fresh = file().node(PageId(id), PageId(64), PageId(0)).unwrap();
            let again = reused.node(PageId(id), PageId(64), PageId(0)).unwrap();
            assert_eq!(again, fresh, "page {id}");
        }
        // A damaged page read into the reused buffer fails alone; the next read is whole.
        assert!(reused.node(PageId(30), PageId(64), PageId(0)).is_err());
        let fresh = file().node(PageId(2), PageId(64), PageId(0)).unwrap();
        assert_eq!(
            reused.node(PageId(2), PageId(64), PageId(0)).unwrap(),
            fresh
        );
    }
}
