//! What a database's transactions share: the page cache, the options, the published meta with
//! the open readers, the writer's state (the freelist) and the counters. [`Db`](crate::Db) owns
//! one, with the batch front end on top; transactions and the commit protocol reach it and
//! nothing above it.
//!
//! Concurrency: one writer at a time (the `writer` mutex, held by the write transaction for its
//! whole life, guards the freelist); any number of readers. A reader registers its snapshot's
//! txid under the `published` lock, so the writer's view of open readers (used to release
//! pending pages) and the current meta change atomically.

use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::freelist::{Freelist, FreelistCounters};
use crate::options::Options;
use crate::pager::Pager;
use crashlab_format::meta::Meta;
use crashlab_format::types::{PageId, PageSpan, TxId};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

pub(crate) struct Published {
    pub meta: Meta,
    /// Open readers by the txid of their snapshot, with how many share it. An entry whose
    /// count fell to zero stays until the next write transaction prunes it, so that beginning
    /// and ending a read of the same snapshot allocates nothing (removing a map's last entry
    /// frees its node, and the next reader would allocate it again).
    pub readers: BTreeMap<TxId, usize>,
}

pub(crate) struct WriterState {
    pub freelist: Freelist,
    /// The pages of the persisted freelist the current meta points at.
    pub freelist_span: Option<PageSpan>,
    pub file_len: u64,
    pub latched: Option<String>,
    /// What the session's first commit found that no commit can see (`guard.rs`).
    pub guard: Option<crate::guard::Guard>,
    /// The commit's page images, reused from commit to commit (`arena.rs`).
    pub arena: crate::arena::PageArena,
    /// The freelist and meta page images, in a buffer of their own (`commit/freelist_page.rs`).
    pub fixed: crate::arena::PageArena,
    /// A commit's lists, emptied and kept for the next one so that a commit allocates none.
    pub lists: CommitLists,
}

/// What a commit collects, kept from commit to commit for its allocations (`commit.rs`).
#[derive(Default)]
pub(crate) struct CommitLists {
    /// Each node run placed in the arena, and where.
    pub dirty: Vec<(PageId, std::ops::Range<usize>)>,
    /// Each written node with the page it was assembled from.
    pub nodes: Vec<(PageId, std::sync::Arc<crate::cached::CachedNode>, PageId)>,
    /// Pages the commit took from the free set.
    pub taken: crate::freelist::Taken,
    /// Empty cache shells the page cache lent the commit (`pager.rs`, `Spares`).
    pub spare_cached: Vec<std::sync::Arc<crate::cached::CachedNode>>,
    /// Boxes of spilled nodes, emptied, for the page cache.
    #[expect(
        clippy::vec_box,
        reason = "the boxes are the allocations kept for reuse"
    )]
    pub spare_boxes: Vec<Box<crashlab_format::node::Node>>,
    /// The allocation of the list of pages to write (`flush::recycle`), and their runs.
    pub pages: Vec<(PageId, crate::flush::PageImage<'static>)>,
    pub runs: Vec<crate::flush::Run>,
    /// The free and pending runs the freelist page lists (`commit/freelist_page.rs`).
    pub free_runs: Vec<PageSpan>,
    /// Pages the last successful commit allocated: how many the next one reserves in one run
    /// (`commit/reserve.rs`).
    pub reserve: u64,
}

impl CommitLists {
    /// Entries a list keeps room for from one commit to the next: as many pages as the arena
    /// keeps (`arena::RETAIN_BYTES` of 4 KiB pages). A one-key commit fills about six; a bulk
    /// load's lists hold hundreds of thousands, about 100 bytes a page, whose room would
    /// otherwise stay with the database until it closes.
    pub const KEEP: usize = 256;

    /// End a commit, whether it succeeded or failed: drop what holds memory of its own (nodes,
    /// pages taken), and give back the room of every list that grew past [`CommitLists::KEEP`]
    /// entries. The freelist page's runs are kept only while that page is
    /// small enough to be kept (`commit/freelist_page.rs`).
    pub fn trim(&mut self) {
        fn give_back<T>(list: &mut Vec<T>) {
            if list.capacity() > CommitLists::KEEP {
                *list = Vec::new();
            }
        }
        // A failed commit leaves its nodes, which hold their images, and a large commit's
        // pages taken are a `PageSet`; the plain lists are emptied when the next commit begins.
        self.nodes.clear();
        self.taken.clear();
        debug_assert!(self.pages.is_empty(), "the page list is recycled empty");
        give_back(&mut self.dirty);
        give_back(&mut self.nodes);
        give_back(&mut self.pages);
        give_back(&mut self.runs);
    }
}

pub(crate) struct Shared {
    pub pager: Pager,
    pub options: Options,
    pub published: Mutex<Published>,
    pub writer: Mutex<WriterState>,
    pub counters: Mutex<Counters>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another thread does not make the guarded bookkeeping unusable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A write transaction about to begin: the writer's lock, the meta it builds on and its txid.
pub(crate) struct WriteStart<'s> {
    pub writer: MutexGuard<'s, WriterState>,
    pub base: Meta,
    pub txid: TxId,
}

impl Shared {
    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn pager(&self) -> &Pager {
        &self.pager
    }

    /// The meta of the last commit.
    pub fn meta(&self) -> Meta {
        lock(&self.published).meta
    }

    /// Register a reader of the current snapshot and return its meta.
    pub fn register_read(&self) -> Meta {
        let mut p = lock(&self.published);
        let meta = p.meta;
        *p.readers.entry(meta.txid).or_insert(0) += 1;
        meta
    }

    pub fn end_read(&self, txid: TxId) {
        let mut p = lock(&self.published);
        match p.readers.get_mut(&txid) {
            Some(n) if *n > 0 => *n -= 1,
            _ => debug_assert!(false, "reader {txid} ended twice"),
        }
    }

    /// Take the writer's lock (waiting for the current write transaction), refuse if the
    /// database latched or has no txid left, and release the pending pages no open reader can
    /// see.
    pub fn start_write(&self) -> Result<WriteStart<'_>> {
        if self.options.read_only {
            return Err(Error::InvalidOptions("database opened read-only".into()));
        }
        let mut writer = lock(&self.writer);
        if let Some(reason) = &writer.latched {
            return Err(Error::Latched(reason.clone()));
        }
        let (meta, readers) = {
            let mut p = lock(&self.published);
            p.readers.retain(|_, n| *n > 0);
            (p.meta, p.readers.keys().copied().collect::<Vec<_>>())
        };
        // Refused before anything changes: a wrapped txid would overwrite the meta in use.
        let txid = meta
            .txid
            .next()
            .ok_or(Error::TxIdExhausted { txid: meta.txid })?;
        // A negative control releases as if no reader were open (see `DebugHooks`).
        let readers = if self.options.hooks().reuse_pages_under_readers {
            Vec::new()
        } else {
            readers
        };
        writer.freelist.release_pending(&readers);
        Ok(WriteStart {
            writer,
            base: meta,
            txid,
        })
    }

    pub fn lock_writer(&self) -> MutexGuard<'_, WriterState> {
        lock(&self.writer)
    }

    pub fn count_rollback(&self) {
        lock(&self.counters).rollbacks += 1;
    }

    /// Publish a durable commit: new readers see `meta` from now on.
    pub fn finish_commit(&self, meta: Meta, delta: &Counters, fl: FreelistCounters) {
        {
            let mut c = lock(&self.counters);
            c.accumulate(delta);
            c.freelist_allocate_calls = fl.allocate_calls;
            c.freelist_scan_steps = fl.allocate_scan_steps;
            c.freelist_ids_moved = fl.ids_moved;
        }
        lock(&self.published).meta = meta;
    }
}

#[cfg(test)]
mod tests {
    use super::{lock, CommitLists};
    use crate::{Db, MemStorage, Options};

    fn room(db: &Db) -> [usize; 4] {
        let writer = lock(&db.shared.writer);
        let l = &writer.lists;
        [
            l.dirty.capacity(),
            l.nodes.capacity(),
            l.pages.capacity(),
            l.runs.capacity(),
        ]
    }

    #[test]
    fn a_bulk_commit_gives_its_lists_back_and_a_small_one_keeps_them() {
        let db = Db::open(MemStorage::new(), Options::default()).unwrap();
        let put = |keys: std::ops::Range<u32>| {
            db.update(|tx| {
                let mut b = tx.create_bucket_if_missing(b"b")?;
                keys.into_iter()
                    .try_for_each(|i| b.put(format!("{i:08}").as_bytes(), &[7; 1000]))
            })
            .unwrap()
        };
        put(0..2000);
        // About 500 leaves of four values each: the lists of pages grew past KEEP, and went;
        // their runs are a few (the pages were allocated at the end of the file, in order).
        assert!(db.counters().pages_written > 2 * CommitLists::KEEP as u64);
        let [dirty, nodes, pages, runs] = room(&db);
        assert_eq!([dirty, nodes, pages], [0; 3]);
        assert!(runs <= CommitLists::KEEP);
        // The bulk commit left the right edge's leaf full (its keys ascend): the first small
        // commit splits it, and the two measured after it are of the same size.
        put(5000..5001);
        put(5001..5002);
        let kept = room(&db);
        assert!(
            kept.iter().all(|&c| c > 0 && c <= CommitLists::KEEP),
            "{kept:?}"
        );
        put(5002..5003);
        assert_eq!(
            room(&db),
            kept,
            "a commit of the same size allocates no list"
        );
    }
}
