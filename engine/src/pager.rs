//! The page cache: decoded nodes shared by every transaction, over the untrusting page reader
//! of `crashlab_format::read` (which checks every claim a page makes before memory follows it).
//!
//! The cache is keyed by page id. It never serves stale bytes because of copy-on-write: a page's
//! contents change only when it is reallocated, which needs it to have been freed and released,
//! which happens only after no open transaction can reach it; the committing writer then
//! replaces the entry. Eviction is first-in first-out, which is deterministic. Each entry
//! carries a key index (`cached.rs`) built by the first read transaction that searches it.
//!
//! The writer takes a cached node out of the cache instead of copying it when nobody else holds
//! it ([`Pager::node_for_update`]): its commit frees that page and caches the new version, so
//! the entry could only go stale, and moving the node saves copying every key and value.
//!
//! The allocations that hold a node on its way round — the `Arc` the cache shares it in, the
//! `Box` the writer's tree owns it in — are kept as empty shells ([`Spares`]) rather than freed
//! and allocated again: a one-key commit takes four nodes out of the cache and publishes four,
//! which was eight allocations and eight frees per commit.

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
    spares: Spares,
}

/// Most empty shells of each kind kept: more than a commit of a few paths takes and publishes.
pub const SPARES_MAX: usize = 64;

/// Empty shells, each the only reference to its allocation: `cached` holds an empty node and
/// no index ([`CachedNode::take_node`]), `boxes` an empty leaf.
#[derive(Default)]
struct Spares {
    cached: Vec<Arc<CachedNode>>,
    #[expect(
        clippy::vec_box,
        reason = "the boxes are the allocations kept for reuse"
    )]
    boxes: Vec<Box<Node>>,
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
    pub fn node_for_update(
        &self,
        id: PageId,
        high_water: PageId,
        from: PageId,
    ) -> Result<Box<Node>> {
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
                return Ok(c.spares.unwrap_only(only));
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
        let node = Arc::try_unwrap(shared).map_or_else(|n| Node::clone(&n), CachedNode::into_node);
        Ok(Box::new(node))
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

    /// Publish the nodes a commit just wrote, each at its page (replacing whatever was cached
    /// there), under one lock: the writer wrapped them as the cache holds them, so they move in
    /// without a copy. The commit's emptied boxes are kept as spares, up to [`SPARES_MAX`].
    #[expect(
        clippy::vec_box,
        reason = "the boxes are the allocations kept for reuse"
    )]
    pub fn publish(
        &self,
        nodes: impl Iterator<Item = (PageId, Arc<CachedNode>)>,
        boxes: &mut Vec<Box<Node>>,
    ) {
        let mut c = self.lock();
        for (id, node) in nodes {
            c.insert(self.capacity, id, node);
        }
        let room = SPARES_MAX.saturating_sub(c.spares.boxes.len());
        // Draining empties `boxes` whole; the boxes past the bound are freed.
        c.spares.boxes.extend(boxes.drain(..).take(room));
    }

    /// Move spare cache shells into `into` for a commit to wrap its nodes in
    /// ([`CachedNode::refill`]), up to [`SPARES_MAX`] in all.
    pub fn lend_spares(&self, into: &mut Vec<Arc<CachedNode>>) {
        let mut c = self.lock();
        let room = SPARES_MAX.saturating_sub(into.len());
        let keep = c.spares.cached.len().saturating_sub(room);
        into.extend(c.spares.cached.drain(keep..));
    }

    fn insert_cached(&self, id: PageId, node: Arc<CachedNode>) {
        self.lock().insert(self.capacity, id, node);
    }
}

impl Spares {
    /// The node of `only`, which nobody else can reach, in a spare box; `only`'s allocation is
    /// kept as a spare shell.
    fn unwrap_only(&mut self, mut only: Arc<CachedNode>) -> Box<Node> {
        let node = Arc::get_mut(&mut only)
            .expect("the cache held the only reference")
            .take_node();
        if self.cached.len() < SPARES_MAX {
            self.cached.push(only);
        }
        match self.boxes.pop() {
            Some(mut shell) => {
                *shell = node;
                shell
            }
            None => Box::new(node),
        }
    }
}

impl Cache {
    /// Cache `node` at `id`, evicting the oldest entries past `capacity` (none when it is 0).
    fn insert(&mut self, capacity: usize, id: PageId, node: Arc<CachedNode>) {
        if capacity == 0 {
            return;
        }
        let n = self.next_insertion;
        self.next_insertion += 1;
        self.map.insert(id, (n, node));
        self.order.push_back((id, n));
        while self.map.len() > capacity {
            match self.order.pop_front() {
                Some((old, n)) => {
                    if self.map.get(&old).is_some_and(|(m, _)| *m == n) {
                        self.map.remove(&old);
                    }
                }
                None => break,
            }
        }
        self.compact_order();
        debug_assert!(self.map.len() <= capacity);
    }

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

#[cfg(test)]
#[path = "pager_tests.rs"]
mod tests;
