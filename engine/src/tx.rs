//! Transactions. A read transaction pins one meta (its snapshot) for its whole life; the one
//! write transaction at a time edits owned copies of the nodes it touches and commits them with
//! the protocol in `commit.rs` (where `WriteTx::commit` is defined).

use crate::bucket::{Bucket, BucketMut, BucketTree};
use crate::cursor::Cursor;
use crate::error::Result;
use crate::shared::{Shared, WriteStart, WriterState};
use crate::tree::{NodeRef, Reader};
use crashlab_format::bucket::{BucketRoot, Header};
use crashlab_format::meta::Meta;
use crashlab_format::types::{PageSpan, TxId};
use std::sync::MutexGuard;

/// A read-only snapshot. Dropping it releases the snapshot.
pub struct ReadTx<'db> {
    db: &'db Shared,
    meta: Meta,
}

impl<'db> ReadTx<'db> {
    pub(crate) fn new(db: &'db Shared, meta: Meta) -> ReadTx<'db> {
        ReadTx { db, meta }
    }

    pub fn id(&self) -> TxId {
        self.meta.txid
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub(crate) fn reader(&self) -> Reader<'db> {
        Reader {
            pager: self.db.pager(),
            high_water: self.meta.high_water,
            root: self.meta.root,
            debug: self.db.options().hooks(),
            build_indexes: true,
        }
    }

    /// The root bucket, whose keys are the top-level buckets.
    pub fn root(&self) -> Result<Bucket<'_>> {
        let rd = self.reader();
        let h = Header {
            root: BucketRoot::Page(self.meta.root),
            sequence: self.meta.sequence,
            from: self.meta.slot(),
        };
        Bucket::from_header(rd, h)
    }

    /// The top-level bucket `name`.
    pub fn bucket(&self, name: &[u8]) -> Result<Option<Bucket<'_>>> {
        self.root()?.bucket(name)
    }

    /// The bucket at `path` (top-level name first).
    pub fn bucket_path(&self, path: &[&[u8]]) -> Result<Option<Bucket<'_>>> {
        let mut b = self.root()?;
        for name in path {
            match b.bucket(name)? {
                Some(next) => b = next,
                None => return Ok(None),
            }
        }
        Ok(Some(b))
    }

    /// A cursor over the top-level bucket names.
    pub fn cursor(&self) -> Result<Cursor<'_>> {
        Ok(self.root()?.cursor())
    }
}

impl Drop for ReadTx<'_> {
    fn drop(&mut self) {
        self.db.end_read(self.meta.txid);
    }
}

/// The single write transaction. Dropping it without `commit` rolls it back.
pub struct WriteTx<'db> {
    pub(crate) db: &'db Shared,
    pub(crate) writer: MutexGuard<'db, WriterState>,
    /// The snapshot this transaction started from.
    pub(crate) base: Meta,
    pub(crate) txid: TxId,
    pub(crate) root: BucketTree,
    /// Pages made unreachable by user operations (deleted buckets); pending at commit.
    pub(crate) freed: Vec<PageSpan>,
    pub(crate) finished: bool,
    /// A negative control (`DebugHooks::lone_call_skips_data_sync`): skip the data sync.
    pub(crate) skip_data_sync: bool,
}

impl<'db> WriteTx<'db> {
    /// A write transaction on `start.base` that will commit as `start.txid` (`base.txid` + 1).
    pub(crate) fn new(db: &'db Shared, start: WriteStart<'db>) -> Self {
        let WriteStart { writer, base, txid } = start;
        assert!(txid > base.txid, "a commit's txid follows its base's");
        let h = Header {
            root: BucketRoot::Page(base.root),
            sequence: base.sequence,
            from: base.slot(),
        };
        WriteTx {
            db,
            writer,
            base,
            txid,
            root: BucketTree::from_header(h, 0),
            freed: Vec::new(),
            finished: false,
            skip_data_sync: false,
        }
    }

    pub fn id(&self) -> TxId {
        self.txid
    }

    pub(crate) fn reader(&self) -> Reader<'db> {
        Reader {
            pager: self.db.pager(),
            high_water: self.base.high_water,
            root: self.base.root,
            debug: self.db.options().hooks(),
            build_indexes: false,
        }
    }

    /// The root bucket, for creating, opening and deleting top-level buckets.
    pub fn root_mut(&mut self) -> BucketMut<'_> {
        let rd = self.reader();
        BucketMut::new(rd, &mut self.root, &mut self.freed)
    }

    pub fn create_bucket(&mut self, name: &[u8]) -> Result<BucketMut<'_>> {
        let rd = self.reader();
        BucketMut::new(rd, &mut self.root, &mut self.freed).create_bucket_owned(name)
    }

    pub fn create_bucket_if_missing(&mut self, name: &[u8]) -> Result<BucketMut<'_>> {
        let rd = self.reader();
        BucketMut::new(rd, &mut self.root, &mut self.freed).create_bucket_if_missing_owned(name)
    }

    pub fn bucket_mut(&mut self, name: &[u8]) -> Result<Option<BucketMut<'_>>> {
        let rd = self.reader();
        BucketMut::new(rd, &mut self.root, &mut self.freed).bucket_mut_owned(name)
    }

    /// The bucket at `path` (top-level name first), for editing.
    pub fn bucket_path_mut(&mut self, path: &[&[u8]]) -> Result<Option<BucketMut<'_>>> {
        let rd = self.reader();
        let mut b = BucketMut::new(rd, &mut self.root, &mut self.freed);
        for name in path {
            match b.bucket_mut_owned(name)? {
                Some(next) => b = next,
                None => return Ok(None),
            }
        }
        Ok(Some(b))
    }

    pub fn delete_bucket(&mut self, name: &[u8]) -> Result<()> {
        self.root_mut().delete_bucket(name)
    }

    /// Read the top-level bucket names (and this transaction's uncommitted state).
    pub fn cursor(&self) -> Result<Cursor<'_>> {
        let rd = self.reader();
        let root = NodeRef::of_child(&self.root.root, &rd, self.root.home)?;
        Ok(Cursor::new(rd, root))
    }

    /// Discard every change.
    pub fn rollback(mut self) {
        self.finished = true;
        self.db.count_rollback();
    }
}

impl Drop for WriteTx<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.db.count_rollback();
        }
    }
}
