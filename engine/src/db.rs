//! The database handle: open and create, and beginning transactions on the state they share
//! (`shared.rs`, where the concurrency rules are). `Db::batch` and `Db::write`, the batched
//! front end above transactions, are in `batch/apply.rs`.
//!
//! Latching: after any failed commit the database refuses every later write transaction with
//! [`Error::Latched`] until it is reopened. Readers keep working on their snapshots.

use crate::batch::call::Call;
use crate::batch::core::Coalescer;
use crate::batch::group::GroupCommit;
use crate::batch::MergeWork;
use crate::counters::Counters;
use crate::error::{Error, FormatError, Result};
use crate::freelist::Freelist;
use crate::options::Options;
use crate::pager::Pager;
use crate::shared::{lock, Published, Shared, WriterState};
use crate::storage::{FileStorage, Storage};
use crate::tx::{ReadTx, WriteTx};
use crashlab_format::freelist;
use crashlab_format::meta::{Meta, META_SIZE};
use crashlab_format::page::{PageHeader, PageKind, FLAG_FREELIST, FLAG_LEAF};
use crashlab_format::read::{choose_meta, detect_page_size};
use crashlab_format::types::{PageId, PageSpan, TxId};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

pub struct Db {
    pub(crate) shared: Shared,
    pub(crate) group: GroupCommit<Call>,
    pub(crate) merge_work: Mutex<MergeWork>,
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
                return Err(Error::Format(FormatError::Truncated {
                    len: 0,
                    needed: 2 * META_SIZE as u64,
                }));
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
        let rule = options.checksum_rule();
        let page_size = detect_page_size(&storage, rule)?;
        let meta = choose_meta(&storage, page_size, rule)?;
        let len = storage.len().map_err(|e| Error::io("len", e))?;
        let needed = meta.high_water.0.saturating_mul(u64::from(page_size));
        if len < needed {
            return Err(Error::Format(FormatError::Truncated { len, needed }));
        }
        let pager = Pager::new(Box::new(storage), page_size, options.page_cache_pages)
            .with_prev_skips_leaf_end(options.hooks().prev_skips_leaf_end);
        let mut counters = Counters::default();
        // A reader has no use for a free set: none is loaded, so neither a damaged freelist nor
        // a tree the rebuild cannot walk, nor a claimed free count past what the array freelist
        // takes, keeps a file from being read (`check` takes the free set from the file).
        let (freelist, freelist_span) = if options.read_only {
            (Freelist::new(options.freelist), None)
        } else {
            load_freelist(&pager, &meta, &options, &mut counters)?
        };
        let group =
            GroupCommit::with_core(Coalescer::for_options(&options), options.max_batch_delay);
        let db = Db {
            shared: Shared {
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
                    arena: Default::default(),
                    fixed: Default::default(),
                    lists: Default::default(),
                }),
                counters: Mutex::new(counters),
                options,
            },
            group,
            merge_work: Mutex::new(MergeWork::default()),
        };
        let writable = !db.options().read_only && !meta.txid_exhausted();
        if !meta.has_freelist() && !db.options().no_freelist_sync && writable {
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
        self.shared.options()
    }

    pub fn page_size(&self) -> u32 {
        self.shared.pager().page_size()
    }

    pub(crate) fn pager(&self) -> &Pager {
        self.shared.pager()
    }

    /// The meta of the last commit.
    pub fn meta(&self) -> Meta {
        self.shared.meta()
    }

    /// Begin a read transaction on the current snapshot.
    pub fn begin_read(&self) -> Result<ReadTx<'_>> {
        let meta = self.shared.register_read();
        Ok(ReadTx::new(&self.shared, meta))
    }

    /// Begin the write transaction, waiting for the current one to finish.
    pub fn begin_write(&self) -> Result<WriteTx<'_>> {
        Ok(WriteTx::new(&self.shared, self.shared.start_write()?))
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

    /// Deterministic cost counters since open.
    pub fn counters(&self) -> Counters {
        let mut c = *lock(&self.shared.counters);
        let g = self.group.stats();
        c.batches = g.batches;
        c.batched_calls = g.batched_calls;
        c.batch_solo_retries = g.solo_retries;
        let m = *lock(&self.merge_work);
        c.merge_bytes_copied = m.bytes_copied;
        c.merge_records_decoded = m.records_decoded;
        c.merge_records_encoded = m.records_encoded;
        c.add_buffer_work(&m.buffer);
        let r = self.pager().read_counts();
        c.page_cache_hits = r.hits;
        c.pages_read = r.pages_read;
        c.bytes_read = r.bytes_read;
        c
    }

    /// Free and pending page counts of the freelist (waits for a running write transaction).
    /// A read-only database loads no freelist: (0, 0).
    pub fn freelist_counts(&self) -> (u64, u64) {
        let w = self.shared.lock_writer();
        (w.freelist.free_count(), w.freelist.pending_count())
    }

    /// Whether an earlier failure latched the database.
    pub fn latched(&self) -> Option<String> {
        self.shared.lock_writer().latched.clone()
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
        buf[at..at + ps].copy_from_slice(&meta.encode_page_by(options.checksum_rule()));
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
        // As runs, as the ids are read: a free set of half a million pages in a few runs.
        let runs = freelist::decode_runs(&buf, meta.freelist, meta.high_water)?;
        fl.init_runs(&runs);
        let pages = (buf.len() / pager.page_size() as usize) as u64;
        return Ok((fl, Some(PageSpan::new(meta.freelist, pages))));
    }
    let free = crate::rebuild::free_pages(pager, meta, counters)?;
    fl.init_spans(&free)?;
    Ok((fl, None))
}
