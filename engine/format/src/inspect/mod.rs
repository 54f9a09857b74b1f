//! Read-only inspection of a database file that is not trusted to be well formed: both metas, a
//! map of every page, statistics and a full dump. `crashlab db` prints these; the engine's own
//! `check` of such a file is `crashlab_engine::Db::check_image`.
//!
//! Invariants:
//! - Nothing here writes to the storage.
//! - Opening fails only when the file cannot be read at all: it is empty, neither meta is valid,
//!   or it is shorter than the high-water mark of the meta in use. Everything wrong below the
//!   metas is a [`Problem`] in the result, never a failure and never a panic; only an I/O error
//!   stops a walk.
//! - Every length, offset and count read from the file is checked before use. Memory follows
//!   what the file holds, not what it claims: a page run is read only as far as its contents
//!   reach, and sets of pages (reached, free, pending) are kept as runs ([`PageSet`]) and
//!   handled run by run, so a sparse file whose metas claim 2^31 pages costs what its few real
//!   pages cost.
//! - No recursion: walks use explicit stacks, bounded by [`MAX_TREE_DEPTH`] levels per tree and
//!   [`MAX_BUCKET_DEPTH`] levels of nesting, and enter each page as a node at most once, so
//!   their work is linear in the pages they read whatever the references say.
//!
//! [`PageSet`]: crate::PageSet
//!
//! [`MAX_TREE_DEPTH`]: crate::limits::MAX_TREE_DEPTH
//! [`MAX_BUCKET_DEPTH`]: crate::limits::MAX_BUCKET_DEPTH

mod dump;
mod free;
mod pages;
mod stats;
mod survey;
mod walk;

pub use dump::{dump, hex, unhex, Dump};
pub use pages::{page_detail, page_map, PageBody, PageDetail, PageMap, PageRun, PageUse};
pub use stats::{stats, NodeUsage, Stats};
pub use walk::{unreached, walk, BucketInfo, Buckets, PageVisit, Visitor, Walk};

use crate::error::{Error, Result};
use crate::meta::{ChecksumRule, Meta, META_SIZE};
use crate::page::PAGE_HEADER_SIZE;
use crate::read::PageReader;
use crate::read::{choose_meta, detect_page_size, read_slots};
use crate::storage::Storage;
use crate::types::PageId;
use std::sync::Arc;

/// One of the two meta pages as found in the file.
#[derive(Debug)]
pub struct MetaSlot {
    /// Page 0 or page 1.
    pub page: PageId,
    /// The fields as stored, validated or not; `None` when the slot lies past the end of the
    /// file or cannot be read.
    pub stored: Option<Meta>,
    /// Whether the stored checksum matches the stored fields.
    pub checksum_ok: bool,
    /// Why the slot is not valid (`None` when it is).
    pub problem: Option<Error>,
}

impl MetaSlot {
    pub fn is_valid(&self) -> bool {
        self.problem.is_none()
    }
}

/// An opened database file: its page size, both metas and the one in use.
pub struct Image {
    storage: Arc<dyn Storage>,
    reader: PageReader,
    file_len: u64,
    slots: [MetaSlot; 2],
    meta: Meta,
    in_use: PageId,
}

impl Image {
    /// Read the metas of `storage` and choose one as the engine's open would. Fails with
    /// `Truncated` (empty, or shorter than the high-water mark), `NoValidMeta` or `Io`.
    pub fn open(storage: impl Storage + 'static) -> Result<Image> {
        let storage: Arc<dyn Storage> = Arc::new(storage);
        let file_len = storage.len().map_err(|e| Error::io("len", e))?;
        if file_len == 0 {
            let needed = (PAGE_HEADER_SIZE + META_SIZE) as u64;
            return Err(Error::Truncated { len: 0, needed });
        }
        let page_size = detect_page_size(&*storage, ChecksumRule::Format)?;
        let meta = choose_meta(&*storage, page_size, ChecksumRule::Format)?;
        let needed = meta.high_water.0.saturating_mul(u64::from(page_size));
        if file_len < needed {
            return Err(Error::Truncated {
                len: file_len,
                needed,
            });
        }
        let [m0, m1] = read_slots(&*storage, page_size, ChecksumRule::Format);
        let slots = [
            slot(&*storage, PageId(0), 0, m0),
            slot(&*storage, PageId(1), u64::from(page_size), m1),
        ];
        let in_use = if slots[0].problem.is_none() && slots[0].stored == Some(meta) {
            PageId(0)
        } else {
            PageId(1)
        };
        let reader = PageReader::new(Box::new(storage.clone()), page_size);
        Ok(Image {
            storage,
            reader,
            file_len,
            slots,
            meta,
            in_use,
        })
    }

    pub fn page_size(&self) -> u32 {
        self.reader.page_size()
    }

    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Whole pages in the file (a partial last page is not counted).
    pub fn file_pages(&self) -> u64 {
        self.file_len / u64::from(self.page_size())
    }

    /// The meta in use: the valid one with the higher txid.
    pub fn meta(&self) -> Meta {
        self.meta
    }

    /// The page the meta in use was read from.
    pub fn in_use(&self) -> PageId {
        self.in_use
    }

    pub fn slots(&self) -> &[MetaSlot; 2] {
        &self.slots
    }

    /// The other valid meta, when it is older than the one in use: the previous commit.
    pub fn previous_meta(&self) -> Option<Meta> {
        let other = &self.slots[1 - self.in_use.0 as usize];
        let meta = other.stored.filter(|_| other.is_valid())?;
        (meta.txid < self.meta.txid).then_some(meta)
    }

    /// The untrusting reader of the file's pages (it caches nothing).
    pub fn reader(&self) -> &PageReader {
        &self.reader
    }

    /// The storage the image reads.
    pub fn storage(&self) -> Arc<dyn Storage> {
        self.storage.clone()
    }
}

/// A slot's stored fields next to its verdict (`checked`, as open judged it).
fn slot(storage: &dyn Storage, page: PageId, offset: u64, checked: Result<Meta>) -> MetaSlot {
    let mut buf = [0u8; PAGE_HEADER_SIZE + META_SIZE];
    let read = storage.read_at(offset, &mut buf).is_ok();
    let stored = read
        .then(|| Meta::decode_unvalidated(&buf, page).ok())
        .flatten();
    MetaSlot {
        page,
        stored,
        checksum_ok: read && Meta::checksum_matches(&buf),
        problem: checked.err(),
    }
}
