//! Reading pages: bounds checks, decoding, and a cache of decoded nodes shared by every
//! transaction.
//!
//! The cache is keyed by page id. It never serves stale bytes because of copy-on-write: a page's
//! contents change only when it is reallocated, which needs it to have been freed and released,
//! which happens only after no open transaction can reach it; the committing writer then
//! replaces the entry. Eviction is first-in first-out, which is deterministic.
//!
//! The writer takes a cached node out of the cache instead of copying it when nobody else holds
//! it ([`Pager::node_for_update`]): its commit frees that page and caches the new version, so
//! the entry could only go stale, and moving the node saves copying every key and value.
//!
//! Every read is validated against the snapshot's high-water mark and the file length before a
//! buffer is allocated, and a run of pages is read incrementally: the first page, then (for a
//! node) its element table, and only then the bytes its elements or ids use. A header's overflow
//! count is a claim, not a size: a run that claims more pages than its contents need is an error
//! (bbolt sizes node runs exactly), so neither memory nor the per-page work of freeing and
//! checking a run can follow a number a sparse or damaged file makes up.

use crate::error::{Corruption, Error, Result};
use crate::node::{self, Node};
use crate::page::{PageHeader, PageKind, ELEMENT_SIZE, PAGE_HEADER_SIZE};
use crate::storage::Storage;
use crate::types::{PageId, PageSpan};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// A fixed, unseeded hash of a page id (a multiply by an odd constant), so that the cache behaves
/// the same on every run. The map is never iterated, so its order cannot leak into results; a
/// hash map rather than a B-tree because every page a reader visits is a lookup here.
#[derive(Default)]
struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageIdHasher>>;

#[derive(Default)]
struct Cache {
    /// Each entry with the insertion number it was queued under in `order`.
    map: PageMap<(u64, Arc<Node>)>,
    /// Insertion order for eviction. An entry whose number no longer matches the map's (the
    /// node was taken, or the id cached again since) is stale and skipped.
    order: VecDeque<(PageId, u64)>,
    next_insertion: u64,
    hits: u64,
    pages_read: u64,
    bytes_read: u64,
}

pub struct Pager {
    storage: Box<dyn Storage>,
    page_size: u32,
    capacity: usize,
    cache: Mutex<Cache>,
}

/// Read counters of the pager.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadCounts {
    pub hits: u64,
    pub pages_read: u64,
    pub bytes_read: u64,
}

impl Pager {
    pub fn new(storage: Box<dyn Storage>, page_size: u32, capacity: usize) -> Pager {
        Pager {
            storage,
            page_size,
            capacity,
            cache: Mutex::new(Cache::default()),
        }
    }

    pub fn storage(&self) -> &dyn Storage {
        &*self.storage
    }

    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn read_counts(&self) -> ReadCounts {
        let c = self.lock();
        ReadCounts {
            hits: c.hits,
            pages_read: c.pages_read,
            bytes_read: c.bytes_read,
        }
    }

    /// The decoded branch or leaf node at `id`, as seen by a snapshot whose high-water mark is
    /// `high_water`. `from` is the page the reference to `id` was read from (a branch, the leaf
    /// holding a bucket header, or a meta page): a reference outside the file is its damage.
    pub fn node(&self, id: PageId, high_water: PageId, from: PageId) -> Result<Arc<Node>> {
        if id.0 < 2 || id >= high_water {
            let reason = Corruption::ChildOutOfRange {
                child: id,
                low: PageId(2),
                high: high_water,
            };
            return Err(Error::corrupted(from, reason));
        }
        {
            let mut c = self.lock();
            if let Some((_, n)) = c.map.get(&id).cloned() {
                c.hits += 1;
                return Ok(n);
            }
        }
        let buf = self.read_span(id, high_water, &[PageKind::Branch, PageKind::Leaf])?;
        let mut node = Node::decode(&buf, id, id)?;
        node.origin = Some(PageSpan::new(
            id,
            (buf.len() / self.page_size as usize) as u64,
        ));
        let node = Arc::new(node);
        self.insert(id, node.clone());
        Ok(node)
    }

    /// The node at `id` as an owned value for the write transaction that is about to replace
    /// it (counted like [`Pager::node`]). When only the cache holds the node, it is moved out of
    /// the cache rather than copied; when a reader holds it too, it is copied and stays cached.
    pub fn node_for_update(&self, id: PageId, high_water: PageId, from: PageId) -> Result<Node> {
        let shared = self.node(id, high_water, from)?;
        {
            let mut c = self.lock();
            let only_cached = c.map.get(&id).is_some_and(|(_, n)| Arc::ptr_eq(n, &shared))
                && Arc::strong_count(&shared) == 2;
            if only_cached {
                c.map.remove(&id);
                c.compact_order();
            }
        }
        // Under the lock nobody could clone it out of the map; outside, nobody can reach it.
        Ok(Arc::try_unwrap(shared).unwrap_or_else(|n| Node::clone(&n)))
    }

    /// Read page `id` and its overflow pages, checking the header's id and type first. Reads
    /// grow with what the page's contents use (see the module docs), never with the overflow
    /// count alone.
    pub fn read_span(&self, id: PageId, high_water: PageId, kinds: &[PageKind]) -> Result<Vec<u8>> {
        let ps = u64::from(self.page_size);
        let mut buf = vec![0u8; self.page_size as usize];
        self.read_raw(id, &mut buf)?;
        let header = PageHeader::decode_expecting(&buf, id, kinds)?;
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
        let allowed = match header.kind() {
            Some(PageKind::Freelist) => {
                let bytes = crate::freelist::page_extent(&buf, id, claimed * ps)?;
                // bbolt sizes a freelist run before allocating it, so the run may exceed what
                // the ids need by a page or two, and by a page in 500 more: allow twice that.
                bytes.div_ceil(ps) * 2 + 2
            }
            _ => self.node_pages(id, &mut buf, &header, claimed)?,
        };
        if claimed > allowed {
            let overflow = header.overflow;
            return Err(corrupt(Corruption::OverflowBeyondContents {
                overflow,
                allowed,
            }));
        }
        self.extend_to(id, &mut buf, claimed)?;
        Ok(buf)
    }

    /// Pages a branch or leaf run needs, from its element table (read into `buf` first, from the
    /// pages of the `claimed` run).
    fn node_pages(
        &self,
        id: PageId,
        buf: &mut Vec<u8>,
        header: &PageHeader,
        claimed: u64,
    ) -> Result<u64> {
        let ps = u64::from(self.page_size);
        let count = usize::from(header.count);
        let table = (PAGE_HEADER_SIZE + count * ELEMENT_SIZE) as u64;
        if table > claimed * ps {
            return Err(Error::corrupted(id, Corruption::ElementsOverrun { count }));
        }
        self.extend_to(id, buf, table.div_ceil(ps))?;
        let kind = header.kind().unwrap_or(PageKind::Branch);
        let extent = node::image_extent(buf, kind, count, claimed * ps)
            .map_err(|reason| Error::corrupted(id, reason))?;
        Ok(extent.div_ceil(ps).max(1))
    }

    /// Read the pages of the run at `id` that `buf` does not hold yet, up to `pages` pages (the
    /// caller checked them against the high-water mark and the file length).
    fn extend_to(&self, id: PageId, buf: &mut Vec<u8>, pages: u64) -> Result<()> {
        let ps = u64::from(self.page_size);
        let have = buf.len() as u64 / ps;
        if pages <= have {
            return Ok(());
        }
        let start = buf.len();
        buf.resize((pages * ps) as usize, 0);
        let offset = (id.0 + have) * ps;
        self.storage
            .read_at(offset, &mut buf[start..])
            .map_err(|e| read_error(id, e))?;
        self.count_read(pages - have, (pages - have) * ps);
        Ok(())
    }

    /// The run a branch or leaf page's header claims, clipped to `high_water`, whether or not
    /// the node decodes; `None` when the first page cannot be read or is no branch or leaf.
    /// `check()` uses it for a node it cannot read: the pages it claims are still referenced.
    pub fn claimed_run(&self, id: PageId, high_water: PageId) -> Option<PageSpan> {
        if id.0 < 2 || id >= high_water {
            return None;
        }
        let mut buf = vec![0u8; self.page_size as usize];
        self.read_raw(id, &mut buf).ok()?;
        let kinds = [PageKind::Branch, PageKind::Leaf];
        let header = PageHeader::decode_expecting(&buf, id, &kinds).ok()?;
        let end =
            id.0.saturating_add(u64::from(header.overflow) + 1)
                .min(high_water.0);
        Some(PageSpan::new(id, end - id.0))
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
        let mut c = self.lock();
        c.pages_read += pages;
        c.bytes_read += bytes;
    }

    /// Publish a node the writer just wrote at `id` (replacing whatever was cached there).
    pub fn insert(&self, id: PageId, node: Arc<Node>) {
        if self.capacity == 0 {
            return;
        }
        let mut c = self.lock();
        let n = c.next_insertion;
        c.next_insertion += 1;
        c.map.insert(id, (n, node));
        c.order.push_back((id, n));
        while c.map.len() > self.capacity {
            match c.order.pop_front() {
                Some((old, n)) => {
                    if c.map.get(&old).is_some_and(|(m, _)| *m == n) {
                        c.map.remove(&old);
                    }
                }
                None => break,
            }
        }
        c.compact_order();
        debug_assert!(c.map.len() <= self.capacity);
    }
}

impl Cache {
    /// Drop stale `order` entries once they outnumber the live ones three to one (amortised
    /// O(1) per call), so that taking nodes out of a cache that never fills cannot grow `order`
    /// without bound.
    fn compact_order(&mut self) {
        if self.order.len() > 4 * self.map.len() + 1024 {
            let map = &self.map;
            self.order
                .retain(|(id, n)| map.get(id).is_some_and(|(m, _)| m == n));
        }
    }
}

fn read_error(page: PageId, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        Error::corrupted(page, Corruption::PastEof)
    } else {
        Error::io("read", e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::freelist;
    use crate::node::{Body, LeafItem};
    use crate::storage::MemStorage;

    const PS: usize = 512;

    /// A 64-page file with a one-page leaf at page 2 and a one-id freelist page at page 10, whose
    /// headers claim `leaf_overflow` and `freelist_overflow` more pages.
    fn pager(leaf_overflow: u32, freelist_overflow: u32) -> Pager {
        let mut file = vec![0u8; 64 * PS];
        let leaf = Node {
            body: Body::Leaf(vec![LeafItem {
                flags: 0,
                key: b"k".to_vec(),
                value: b"v".to_vec(),
            }]),
            ..Node::empty_leaf()
        };
        leaf.encode(&mut file[2 * PS..3 * PS], PageId(2), PS as u32)
            .unwrap();
        file[2 * PS + 12..2 * PS + 16].copy_from_slice(&leaf_overflow.to_le_bytes());
        let fl = freelist::encode_page(PageId(10), &[PageId(40)], PS as u32);
        file[10 * PS..11 * PS].copy_from_slice(&fl);
        file[10 * PS + 12..10 * PS + 16].copy_from_slice(&freelist_overflow.to_le_bytes());
        Pager::new(Box::new(MemStorage::from_bytes(file)), PS as u32, 0)
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
        assert_eq!(
            p.read_counts().pages_read,
            1,
            "only the first page was read"
        );
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
}
