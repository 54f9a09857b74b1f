//! The commit protocol.
//!
//! 1. Write each dirty sub-bucket (inline when small enough) and put its header into its parent;
//!    rebalance and spill the root bucket. Pages come from the freelist, else the high-water mark;
//!    a page reachable from the last durable meta is never overwritten.
//! 2. Free the old freelist page; write the new one (unless `no_freelist_sync`).
//! 3. If the high-water mark passed the file's end: `set_len`, then sync, so growth is durable
//!    before any page past the old end is referenced.
//! 4. Write the dirty pages in page order, then sync.
//! 5. Write the meta page to slot `txid % 2`, then sync. Only now is the commit acknowledged.
//!
//! Any failure latches the database (see `db.rs`): the in-memory freelist may already hold this
//! commit's allocations, and after a failed write or sync nothing is known about the disk, so
//! the only safe continuation is to reopen and read the truth back.

use crate::bucket::{encode_header, BucketTree};
use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::freelist::{self, Freelist};
use crate::meta::Meta;
use crate::node::{Body, Child, LeafItem, Node};
use crate::page::{self, LEAF_FLAG_BUCKET};
use crate::tree::{self, Reader, SpillSink};
use crate::tx::WriteTx;
use crate::types::{PageId, PageSpan, TxId};
use std::sync::Arc;

/// Collects a commit's allocations, frees and encoded pages.
struct Sink<'w> {
    freelist: &'w mut Freelist,
    txid: TxId,
    page_size: u32,
    fill_percent: f64,
    high_water: PageId,
    dirty: Vec<(PageId, Vec<u8>)>,
    nodes: Vec<(PageId, Arc<Node>)>,
    counters: Counters,
}

impl SpillSink for Sink<'_> {
    fn page_size(&self) -> u32 {
        self.page_size
    }
    fn fill_percent(&self) -> f64 {
        self.fill_percent
    }
    fn allocate(&mut self, count: u64) -> Result<PageId> {
        assert!(count >= 1);
        if let Some(id) = self.freelist.allocate(self.txid, count) {
            return Ok(id);
        }
        let id = self.high_water;
        self.high_water =
            PageId(id.0.checked_add(count).ok_or_else(|| {
                Error::corrupted(id, "high-water mark overflows the page id space")
            })?);
        self.freelist.record_allocation(self.txid, id);
        self.counters.high_water_allocations += count;
        Ok(id)
    }
    fn free(&mut self, span: PageSpan) -> Result<()> {
        self.freelist.try_free(self.txid, span).map_err(|refusal| {
            let why = format!("freed twice ({refusal}): the tree references it more than once");
            Error::corrupted(refusal.page(), why)
        })
    }
    fn emit(&mut self, id: PageId, bytes: Vec<u8>, node: Arc<Node>) {
        self.dirty.push((id, bytes));
        self.nodes.push((id, node));
    }
    fn count_split(&mut self) {
        self.counters.node_splits += 1;
    }
    fn count_merge(&mut self) {
        self.counters.node_merges += 1;
    }
}

pub(crate) fn commit(tx: &mut WriteTx<'_>) -> Result<()> {
    if let Some(reason) = &tx.writer.latched {
        return Err(Error::Latched(reason.clone()));
    }
    match commit_inner(tx) {
        Ok(()) => Ok(()),
        Err(e) => {
            tx.writer.latched = Some(e.to_string());
            tx.db.count_rollback();
            Err(e)
        }
    }
}

fn commit_inner(tx: &mut WriteTx<'_>) -> Result<()> {
    let db = tx.db;
    let opts = db.options().clone();
    let rd = tx.reader();
    let writer = &mut *tx.writer;
    let mut sink = Sink {
        freelist: &mut writer.freelist,
        txid: tx.txid,
        page_size: db.page_size(),
        fill_percent: opts.fill_percent,
        high_water: tx.base.high_water,
        dirty: Vec::new(),
        nodes: Vec::new(),
        counters: Counters::default(),
    };
    for span in tx.freed.drain(..) {
        sink.free(span)?;
    }
    commit_children(&mut tx.root, &rd, &mut sink)?;
    tree::rebalance(&mut tx.root.root, &rd, &mut sink)?;
    let root_tree = std::mem::replace(&mut tx.root.root, Child::Page(tx.base.root));
    let root = tree::spill_root(root_tree, &mut sink)?;

    if let Some(old) = writer.freelist_span.take() {
        sink.free(old)?;
    }
    let freelist_page = if opts.no_freelist_sync {
        PageId::NO_FREELIST
    } else {
        let span = write_freelist(&mut sink)?;
        writer.freelist_span = Some(span);
        span.start
    };
    let meta = Meta {
        page_size: sink.page_size,
        flags: 0,
        root,
        sequence: tx.root.sequence,
        freelist: freelist_page,
        high_water: sink.high_water,
        txid: tx.txid,
    };

    let Sink {
        dirty,
        nodes,
        mut counters,
        ..
    } = sink;
    let storage = db.pager().storage();
    let needed = meta.high_water.0 * u64::from(meta.page_size);
    if needed > writer.file_len {
        let len = grow_to(needed);
        storage.set_len(len).map_err(|e| Error::io("set_len", e))?;
        sync(storage, &opts, &mut counters)?;
        writer.file_len = len;
        counters.file_growths += 1;
    }
    write_pages(storage, meta.page_size, dirty, &mut counters)?;
    sync(storage, &opts, &mut counters)?;
    let meta_page = meta.encode_page();
    write_at(
        storage,
        meta.slot(),
        meta.page_size,
        &meta_page,
        &mut counters,
    )?;
    counters.meta_writes += 1;
    sync(storage, &opts, &mut counters)?;

    for (id, node) in nodes {
        db.pager().insert(id, node);
    }
    counters.commits += 1;
    let fl = writer.freelist.counters();
    db.finish_commit(meta, counters, fl);
    Ok(())
}

/// Write every dirty child bucket of `t` and put its new header into `t`'s tree.
fn commit_children(t: &mut BucketTree, rd: &Reader<'_>, sink: &mut Sink<'_>) -> Result<()> {
    let children = std::mem::take(&mut t.children);
    for (name, mut child) in children {
        if !child.is_dirty() {
            continue;
        }
        let value = commit_bucket(&mut child, rd, sink)?;
        tree::with_leaf(&mut t.root, &name, rd, |items, _| {
            match items.binary_search_by(|it| it.key.as_slice().cmp(&name)) {
                Ok(i) => items[i].value = value,
                Err(i) => items.insert(
                    i,
                    LeafItem {
                        flags: LEAF_FLAG_BUCKET,
                        key: name.clone(),
                        value,
                    },
                ),
            }
            Ok(())
        })?;
        t.dirty = true;
    }
    Ok(())
}

/// Write one bucket (children first) and return its header value for the parent.
fn commit_bucket(t: &mut BucketTree, rd: &Reader<'_>, sink: &mut Sink<'_>) -> Result<Vec<u8>> {
    commit_children(t, rd, sink)?;
    tree::rebalance(&mut t.root, rd, sink)?;
    if let Child::Node(n) = &t.root {
        if inlineable(n, sink.page_size) {
            if let Some(span) = n.origin {
                sink.free(span)?;
            }
            return Ok(encode_header(PageId(0), t.sequence, Some(n)));
        }
    }
    let root = std::mem::replace(&mut t.root, Child::Page(PageId(0)));
    let id = tree::spill_root(root, sink)?;
    Ok(encode_header(id, t.sequence, None))
}

/// bbolt's rule: a leaf root with no sub-buckets whose page image fits in a quarter page.
fn inlineable(n: &Node, page_size: u32) -> bool {
    match &n.body {
        Body::Leaf(items) => {
            !items.iter().any(LeafItem::is_bucket) && n.size() <= page_size as usize / 4
        }
        Body::Branch(_) => false,
    }
}

/// Allocate and encode the freelist page (free ∪ pending ids).
fn write_freelist(sink: &mut Sink<'_>) -> Result<PageSpan> {
    let estimate = sink.freelist.free_count() + sink.freelist.pending_count();
    let pages = freelist::page_count_for(estimate, sink.page_size);
    let start = sink.allocate(pages)?;
    let ids = sink.freelist.all_ids();
    let mut buf = freelist::encode_page(start, &ids, sink.page_size);
    // Allocation only shrinks the list, so the encoding fits; the header records the pages
    // actually allocated so the next commit frees all of them.
    assert!(buf.len() as u64 <= pages * u64::from(sink.page_size));
    buf.resize((pages * u64::from(sink.page_size)) as usize, 0);
    page::write_u32(&mut buf, 12, (pages - 1) as u32);
    sink.counters.freelist_pages_written += pages;
    sink.counters.freelist_bytes_written += buf.len() as u64;
    sink.dirty.push((start, buf));
    Ok(PageSpan::new(start, pages))
}

/// File length to grow to: the next power of two while under 16 MiB, then 16 MiB steps.
pub(crate) fn grow_to(needed: u64) -> u64 {
    const STEP: u64 = 16 << 20;
    if needed <= STEP {
        needed.next_power_of_two().max(32 << 10)
    } else {
        needed.div_ceil(STEP) * STEP
    }
}

fn write_pages(
    storage: &dyn crate::Storage,
    page_size: u32,
    mut dirty: Vec<(PageId, Vec<u8>)>,
    counters: &mut Counters,
) -> Result<()> {
    dirty.sort_by_key(|(id, _)| *id);
    for (id, bytes) in &dirty {
        write_at(storage, *id, page_size, bytes, counters)?;
    }
    Ok(())
}

fn write_at(
    storage: &dyn crate::Storage,
    id: PageId,
    page_size: u32,
    bytes: &[u8],
    counters: &mut Counters,
) -> Result<()> {
    let offset = id.0 * u64::from(page_size);
    storage
        .write_at(offset, bytes)
        .map_err(|e| Error::io("write", e))?;
    counters.write_calls += 1;
    counters.pages_written += bytes.len() as u64 / u64::from(page_size);
    counters.bytes_written += bytes.len() as u64;
    Ok(())
}

fn sync(storage: &dyn crate::Storage, opts: &crate::Options, c: &mut Counters) -> Result<()> {
    if opts.no_sync {
        return Ok(());
    }
    storage.sync().map_err(|e| Error::io("sync", e))?;
    c.syncs += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::grow_to;

    #[test]
    fn growth_steps() {
        assert_eq!(grow_to(4 * 4096), 32 << 10);
        assert_eq!(grow_to(33 << 10), 64 << 10);
        assert_eq!(grow_to(16 << 20), 16 << 20);
        assert_eq!(grow_to((16 << 20) + 1), 32 << 20);
    }
}
