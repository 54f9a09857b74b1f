//! The database handle: open and create, transactions, and the state they share.
//!
//! Concurrency: one writer at a time (the `writer` mutex, held by the [`WriteTx`] for its whole
//! life, guards the freelist); any number of readers. A reader registers its snapshot's txid
//! under the `published` lock, so the writer's view of open readers (used to release pending
//! pages) and the current meta change atomically.
//!
//! Latching: after any failed commit the database refuses every later write transaction with
//! [`Error::Latched`] until it is reopened. Readers keep working on their snapshots.

use crate::batch::apply::{self, BatchFn, Call};
use crate::batch::group::GroupCommit;
use crate::batch::{MergeWork, WriteBatch};
use crate::counters::Counters;
use crate::error::{Corruption, Error, Result};
use crate::freelist::{self, Freelist, FreelistCounters};
use crate::meta::{Meta, META_SIZE};
use crate::options::Options;
use crate::page::{PageHeader, PageKind, FLAG_FREELIST, FLAG_LEAF, PAGE_HEADER_SIZE};
use crate::pager::Pager;
use crate::storage::{FileStorage, Storage};
use crate::tx::{ReadTx, WriteTx};
use crate::types::{PageId, PageSpan, TxId};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

pub(crate) struct Published {
    meta: Meta,
    readers: BTreeMap<TxId, usize>,
}

pub(crate) struct WriterState {
    pub freelist: Freelist,
    /// The pages of the persisted freelist the current meta points at.
    pub freelist_span: Option<PageSpan>,
    pub file_len: u64,
    pub latched: Option<String>,
    /// What the session's first commit found that no commit can see (`guard.rs`).
    pub guard: Option<crate::guard::Guard>,
}

pub struct Db {
    group: GroupCommit<Call>,
    merge_work: Mutex<MergeWork>,
    pager: Pager,
    options: Options,
    published: Mutex<Published>,
    writer: Mutex<WriterState>,
    counters: Mutex<Counters>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another thread does not make the guarded bookkeeping unusable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Db {
    /// Open the database in `storage`, creating a fresh one if the storage is empty.
    pub fn open(storage: impl Storage + 'static, options: Options) -> Result<Db> {
        Db::open_with(storage, options)
    }

    fn open_with(storage: impl Storage + 'static, options: Options) -> Result<Db> {
        options.validate()?;
        let len = storage.len().map_err(|e| Error::io("len", e))?;
        // A file this open creates holds only what it wrote: its commits have no damage to
        // step around, so they skip the guard's walk (`guard.rs`).
        let fresh = len == 0;
        if fresh {
            if options.read_only {
                return Err(Error::Truncated {
                    len: 0,
                    needed: 2 * META_SIZE as u64,
                });
            }
            init_fresh(&storage, &options)?;
        }
        if !options.read_only && !options.no_sync {
            // What we are about to read may sit only in the page cache (a previous process
            // wrote it and its sync failed). Make it durable before building on it: otherwise
            // a later failed sync can drop it and leave the file pointing at pages this
            // process has since reused.
            storage.sync().map_err(|e| Error::io("sync", e))?;
        }
        let verify = !options.debug.skip_meta_checksum;
        let page_size = detect_page_size(&storage, verify)?;
        let meta = choose_meta(&storage, page_size, verify)?;
        let len = storage.len().map_err(|e| Error::io("len", e))?;
        let needed = meta.high_water.0.saturating_mul(u64::from(page_size));
        if len < needed {
            return Err(Error::Truncated { len, needed });
        }
        let pager = Pager::new(Box::new(storage), page_size, options.page_cache_pages);
        let mut counters = Counters::default();
        // A reader has no use for a free set: none is loaded, so neither a damaged freelist nor
        // a tree the rebuild cannot walk, nor a claimed free count past what the array freelist
        // takes, keeps a file from being read (`check` takes the free set from the file).
        let (freelist, freelist_span) = if options.read_only {
            (Freelist::new(options.freelist), None)
        } else {
            load_freelist(&pager, &meta, &options, &mut counters)?
        };
        let db = Db {
            group: GroupCommit::new(options.max_batch_size, options.max_batch_delay),
            merge_work: Mutex::new(MergeWork::default()),
            pager,
            published: Mutex::new(Published {
                meta,
                readers: BTreeMap::new(),
            }),
            writer: Mutex::new(WriterState {
                freelist,
                freelist_span,
                file_len: len,
                latched: None,
                guard: fresh.then(crate::guard::Guard::default),
            }),
            counters: Mutex::new(counters),
            options,
        };
        let writable = !db.options.read_only && !meta.txid_exhausted();
        if !meta.has_freelist() && !db.options.no_freelist_sync && writable {
            // Persist a freelist at once, so the file no longer depends on a rebuild. (With no
            // txid left there is no commit to do it with; every write will say so.)
            db.begin_write()?.commit()?;
        }
        Ok(db)
    }

    /// Open (or create) the database file at `path`.
    pub fn open_path(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let storage = if options.read_only {
            FileStorage::open_read_only(path)
        } else {
            FileStorage::create(path)
        };
        Db::open(storage.map_err(|e| Error::io("open", e))?, options)
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn page_size(&self) -> u32 {
        self.pager.page_size()
    }

    pub(crate) fn pager(&self) -> &Pager {
        &self.pager
    }

    /// The meta of the last commit.
    pub fn meta(&self) -> Meta {
        lock(&self.published).meta
    }

    /// Begin a read transaction on the current snapshot.
    pub fn begin_read(&self) -> Result<ReadTx<'_>> {
        let mut p = lock(&self.published);
        let meta = p.meta;
        *p.readers.entry(meta.txid).or_insert(0) += 1;
        Ok(ReadTx::new(self, meta))
    }

    pub(crate) fn end_read(&self, txid: TxId) {
        let mut p = lock(&self.published);
        match p.readers.get_mut(&txid) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                p.readers.remove(&txid);
            }
            None => debug_assert!(false, "reader {txid} ended twice"),
        }
    }

    /// Begin the write transaction, waiting for the current one to finish.
    pub fn begin_write(&self) -> Result<WriteTx<'_>> {
        if self.options.read_only {
            return Err(Error::InvalidOptions("database opened read-only".into()));
        }
        let mut writer = lock(&self.writer);
        if let Some(reason) = &writer.latched {
            return Err(Error::Latched(reason.clone()));
        }
        let (meta, readers) = {
            let p = lock(&self.published);
            (p.meta, p.readers.keys().copied().collect::<Vec<_>>())
        };
        // Refused before anything changes: a wrapped txid would overwrite the meta in use.
        let txid = meta
            .txid
            .next()
            .ok_or(Error::TxIdExhausted { txid: meta.txid })?;
        // A negative control releases as if no reader were open (see `DebugHooks`).
        let readers = if self.options.debug.reuse_pages_under_readers {
            Vec::new()
        } else {
            readers
        };
        writer.freelist.release_pending(&readers);
        Ok(WriteTx::new(self, writer, meta, txid))
    }

    /// Run `f` in a write transaction; commit when it returns `Ok`, roll back otherwise.
    pub fn update<T>(&self, f: impl FnOnce(&mut WriteTx<'_>) -> Result<T>) -> Result<T> {
        let mut tx = self.begin_write()?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Run `f` in a read transaction.
    pub fn view<T>(&self, f: impl FnOnce(&ReadTx<'_>) -> Result<T>) -> Result<T> {
        let tx = self.begin_read()?;
        f(&tx)
    }

    /// Run `f` in a write transaction shared with concurrent callers: one transaction and one
    /// sync for all of them (bbolt's `Batch`). If `f` fails, the shared transaction is rolled
    /// back, `f` runs again alone and only its caller gets its error; the other functions run
    /// again together. **`f` may therefore run more than once**: keep its effects inside the
    /// transaction. `Ok` means the last run of `f` was committed.
    pub fn batch<F>(&self, f: F) -> Result<()>
    where
        F: Fn(&mut WriteTx<'_>) -> Result<()> + Send + Sync + 'static,
    {
        let f: BatchFn = std::sync::Arc::new(f);
        self.submit(Call::Fn(f))
    }

    /// Apply `batch` atomically. Concurrent `write` (and `batch`) calls share one transaction and
    /// one sync; their batches are merged by `Options::merge_strategy`. A put creates missing
    /// buckets along its path; a delete in a missing bucket does nothing. If a record fails, only
    /// its caller gets the error and the others are retried together.
    ///
    /// What `batch`'s buffer cost to build is added to the buffer counters.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        lock(&self.merge_work).buffer.add(&batch.buffer_work());
        self.submit(Call::Write(batch))
    }

    fn submit(&self, call: Call) -> Result<()> {
        let run = |calls: &[Call]| {
            let mut work = MergeWork::default();
            let outcome = apply::run_batch(self, calls, &mut work);
            let mut total = lock(&self.merge_work);
            total.bytes_copied += work.bytes_copied;
            total.records_decoded += work.records_decoded;
            total.records_encoded += work.records_encoded;
            total.buffer.add(&work.buffer);
            outcome
        };
        let result = self.group.submit(call, &run);
        apply::finish_call(self, result)
    }

    /// Deterministic cost counters since open.
    pub fn counters(&self) -> Counters {
        let mut c = *lock(&self.counters);
        let g = self.group.stats();
        c.batches = g.batches;
        c.batched_calls = g.batched_calls;
        c.batch_solo_retries = g.solo_retries;
        let m = *lock(&self.merge_work);
        c.merge_bytes_copied = m.bytes_copied;
        c.merge_records_decoded = m.records_decoded;
        c.merge_records_encoded = m.records_encoded;
        c.add_buffer_work(&m.buffer);
        let r = self.pager.read_counts();
        c.page_cache_hits = r.hits;
        c.pages_read = r.pages_read;
        c.bytes_read = r.bytes_read;
        c
    }

    /// Free and pending page counts of the freelist (waits for a running write transaction).
    /// A read-only database loads no freelist: (0, 0).
    pub fn freelist_counts(&self) -> (u64, u64) {
        let w = lock(&self.writer);
        (w.freelist.free_count(), w.freelist.pending_count())
    }

    /// Whether an earlier failure latched the database.
    pub fn latched(&self) -> Option<String> {
        lock(&self.writer).latched.clone()
    }

    pub(crate) fn lock_writer(&self) -> MutexGuard<'_, WriterState> {
        lock(&self.writer)
    }

    pub(crate) fn count_rollback(&self) {
        lock(&self.counters).rollbacks += 1;
    }

    /// Publish a durable commit: new readers see `meta` from now on.
    pub(crate) fn finish_commit(&self, meta: Meta, delta: Counters, fl: FreelistCounters) {
        {
            let mut c = lock(&self.counters);
            c.accumulate(&delta);
            c.freelist_allocate_calls = fl.allocate_calls;
            c.freelist_scan_steps = fl.allocate_scan_steps;
            c.freelist_ids_moved = fl.ids_moved;
        }
        lock(&self.published).meta = meta;
    }
}

/// Write a fresh file: two metas (txids 0 and 1), an empty freelist at page 2 and an empty leaf
/// root at page 3, in one write, then sync — bbolt's layout.
fn init_fresh(storage: &dyn Storage, options: &Options) -> Result<()> {
    let ps = options.page_size as usize;
    let mut buf = vec![0u8; 4 * ps];
    for txid in 0..2u64 {
        let meta = Meta::fresh(options.page_size, TxId(txid));
        let at = txid as usize * ps;
        buf[at..at + ps].copy_from_slice(&meta.encode_page());
    }
    PageHeader {
        id: PageId(2),
        flags: FLAG_FREELIST,
        count: 0,
        overflow: 0,
    }
    .encode(&mut buf[2 * ps..]);
    PageHeader {
        id: PageId(3),
        flags: FLAG_LEAF,
        count: 0,
        overflow: 0,
    }
    .encode(&mut buf[3 * ps..]);
    storage
        .write_at(0, &buf)
        .map_err(|e| Error::io("write", e))?;
    if !options.no_sync {
        storage.sync().map_err(|e| Error::io("sync", e))?;
    }
    Ok(())
}

fn read_meta_at(storage: &dyn Storage, offset: u64, page: PageId, verify: bool) -> Result<Meta> {
    let mut buf = [0u8; PAGE_HEADER_SIZE + META_SIZE];
    storage
        .read_at(offset, &mut buf)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::corrupted(page, Corruption::MetaPastEof),
            _ => Error::io("read", e),
        })?;
    Meta::decode_checked(&buf, page, verify)
}

/// Page size from meta 0, or — if meta 0 is damaged — from meta 1 probed at every accepted
/// page size (a meta at offset P counts only if it says its page size is P).
pub(crate) fn detect_page_size(storage: &dyn Storage, verify: bool) -> Result<u32> {
    let err0 = match read_meta_at(storage, 0, PageId(0), verify) {
        Ok(m) => return Ok(m.page_size),
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => e,
    };
    // Report the most telling failure: a meta that is there but invalid beats "nothing found".
    let mut err1 = None;
    let mut size = crate::page::PAGE_SIZE_MIN;
    while size <= crate::page::PAGE_SIZE_MAX {
        match read_meta_at(storage, u64::from(size), PageId(1), verify) {
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
/// (`verify`: check checksums; only a negative control turns it off, see `DebugHooks`).
pub(crate) fn read_slots(storage: &dyn Storage, page_size: u32, verify: bool) -> [Result<Meta>; 2] {
    let m0 = read_meta_at(storage, 0, PageId(0), verify).and_then(|m| same_size(m, page_size, 0));
    let m1 = read_meta_at(storage, u64::from(page_size), PageId(1), verify)
        .and_then(|m| same_size(m, page_size, 1));
    [m0, m1]
}

/// The valid meta with the highest txid (slot 0 on a tie).
pub(crate) fn newest_valid(slots: &[Result<Meta>; 2]) -> Option<Meta> {
    let mut valid = slots.iter().filter_map(|s| s.as_ref().ok().copied());
    let first = valid.next()?;
    Some(valid.fold(first, |a, b| if b.txid > a.txid { b } else { a }))
}

/// The meta open uses: the valid one with the highest txid.
pub(crate) fn choose_meta(storage: &dyn Storage, page_size: u32, verify: bool) -> Result<Meta> {
    let slots = read_slots(storage, page_size, verify);
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

/// Load the persisted freelist, or rebuild it by walking every bucket.
fn load_freelist(
    pager: &Pager,
    meta: &Meta,
    options: &Options,
    counters: &mut Counters,
) -> Result<(Freelist, Option<PageSpan>)> {
    let mut fl = Freelist::new(options.freelist);
    if meta.has_freelist() {
        let buf = pager.read_span(meta.freelist, meta.high_water, &[PageKind::Freelist])?;
        let ids = freelist::decode_page(&buf, meta.freelist, meta.high_water)?;
        fl.init(&ids);
        let pages = (buf.len() / pager.page_size() as usize) as u64;
        return Ok((fl, Some(PageSpan::new(meta.freelist, pages))));
    }
    let free = crate::rebuild::free_pages(pager, meta, counters)?;
    fl.init_spans(&free)?;
    Ok((fl, None))
}
