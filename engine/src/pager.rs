//! The page cache: decoded nodes shared by every transaction, over the untrusting page reader
//! of `crashlab_format::read` (which checks every claim a page makes before memory follows it).
//!
//! The cache is keyed by page id. It never serves stale bytes because of copy-on-write: a page's
//! contents change only when it is reallocated, which needs it to have been freed and released,
//! which happens only after no open transaction can reach it; the committing writer then
//! replaces the entry. Eviction is first-in first-out, which is deterministic. Each entry
//! carries a key index (`cached.rs`) built once, when the node enters the cache.
//!
//! The writer takes a cached node out of the cache instead of copying it when nobody else holds
//! it ([`Pager::node_for_update`]): its commit frees that page and caches the new version, so
//! the entry could only go stale, and moving the node saves copying every key and value.

use crate::cached::CachedNode;
use crate::error::Result;
use crate::page_map::PageMap;
use crashlab_format::node::Node;
use crashlab_format::page::{PageHeader, PageKind};
use crashlab_format::read::{self, PageReader};
use crashlab_format::storage::Storage;
use crashlab_format::types::{PageId, PageSpan};
use std::collections::hash_map::Entry;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Default)]
struct Cache {
    /// Each entry with the insertion number it was queued under in `order`. A hash map
    /// rather than a B-tree because every page a reader visits is a lookup here.
    map: PageMap<(u64, Arc<CachedNode>)>,
    /// Insertion order for eviction. An entry whose number no longer matches the map's (the
    /// node was taken, or the id cached again since) is stale and skipped.
    order: VecDeque<(PageId, u64)>,
    next_insertion: u64,
    hits: u64,
}

pub struct Pager {
    reader: PageReader,
    capacity: usize,
    cache: Mutex<Cache>,
    /// The cursor's negative control, `DebugHooks::prev_skips_leaf_end` (a plain flag here:
    /// the pager sits below the options' layer).
    prev_skips_leaf_end: bool,
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
            reader: PageReader::new(storage, page_size),
            capacity,
            cache: Mutex::new(Cache::default()),
            prev_skips_leaf_end: false,
        }
    }

    /// This pager with the cursor's negative control on or off (see `DebugHooks`).
    pub fn with_prev_skips_leaf_end(self, prev_skips_leaf_end: bool) -> Pager {
        Pager {
            prev_skips_leaf_end,
            ..self
        }
    }

    pub fn prev_skips_leaf_end(&self) -> bool {
        self.prev_skips_leaf_end
    }

    pub fn storage(&self) -> &dyn Storage {
        self.reader.storage()
    }

    pub fn page_size(&self) -> u32 {
        self.reader.page_size()
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn read_counts(&self) -> ReadCounts {
        let hits = self.lock().hits;
        let r = self.reader.counts();
        ReadCounts {
            hits,
            pages_read: r.pages_read,
            bytes_read: r.bytes_read,
        }
    }

    /// The decoded branch or leaf node at `id`, as seen by a snapshot whose high-water mark is
    /// `high_water`. `from` is the page the reference to `id` was read from (a branch, the leaf
    /// holding a bucket header, or a meta page): a reference outside the file is its damage.
    pub fn node(&self, id: PageId, high_water: PageId, from: PageId) -> Result<Arc<CachedNode>> {
        read::check_reference(id, high_water, from)?;
        {
            let mut c = self.lock();
            if let Some((_, n)) = c.map.get(&id).cloned() {
                c.hits += 1;
                return Ok(n);
            }
        }
        let node = Arc::new(CachedNode::new(self.reader.node(id, high_water, from)?));
        self.insert_cached(id, node.clone());
        Ok(node)
    }

    /// The node at `id` as an owned value for the write transaction that is about to replace
    /// it (counted like [`Pager::node`]). When only the cache holds the node, it is moved out of
    /// the cache rather than copied; when a reader holds it too, it is copied and stays cached.
    pub fn node_for_update(&self, id: PageId, high_water: PageId, from: PageId) -> Result<Node> {
        read::check_reference(id, high_water, from)?;
        // A hit the cache alone holds is taken out under one lock: the same counts and the
        // same cache as the general path below, without a second lock and lookup.
        {
            let mut c = self.lock();
            let only = match c.map.entry(id) {
                Entry::Occupied(e) if Arc::strong_count(&e.get().1) == 1 => Some(e.remove().1),
                _ => None,
            };
            if let Some(only) = only {
                c.hits += 1;
                c.compact_order();
                drop(c);
                let node = Arc::try_unwrap(only).expect("the cache held the only reference");
                return Ok(node.into_node());
            }
        }
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
        Ok(Arc::try_unwrap(shared).map_or_else(|n| Node::clone(&n), CachedNode::into_node))
    }

    /// Read page `id` and its overflow pages, checked (see `crashlab_format::read`).
    pub fn read_span(&self, id: PageId, high_water: PageId, kinds: &[PageKind]) -> Result<Vec<u8>> {
        Ok(self.reader.read_span(id, high_water, kinds)?)
    }

    /// The run a branch or leaf page's header claims, clipped to `high_water`, whether or not
    /// the node decodes; `None` when the first page cannot be read or is no branch or leaf.
    /// `check()` uses it for a node it cannot read: the pages it claims are still referenced.
    pub fn claimed_run(&self, id: PageId, high_water: PageId) -> Option<PageSpan> {
        if id.0 < 2 || id >= high_water {
            return None;
        }
        let mut buf = vec![0u8; self.page_size() as usize];
        self.reader.read_raw(id, &mut buf).ok()?;
        let kinds = [PageKind::Branch, PageKind::Leaf];
        let header = PageHeader::decode_expecting(&buf, id, &kinds).ok()?;
        let end =
            id.0.saturating_add(u64::from(header.overflow) + 1)
                .min(high_water.0);
        Some(PageSpan::new(id, end - id.0))
    }

    /// Publish a node the writer just wrote at `id` (replacing whatever was cached there): the
    /// writer wrapped it as the cache holds it, so it moves in without a copy.
    pub fn insert(&self, id: PageId, node: Arc<CachedNode>) {
        self.insert_cached(id, node);
    }

    fn insert_cached(&self, id: PageId, node: Arc<CachedNode>) {
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
