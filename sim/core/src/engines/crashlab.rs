//! crashlab's own engine behind the adapter. Every call is the one the runner made before the
//! adapter existed, and errors keep the engine's message, so traces (and their pinned hashes)
//! are unchanged.

use super::{EngineDb, EngineError, ErrorKind, Listing};
use crate::apply::{engine_apply, path_refs};
use crate::op::{Name, Op, Path};
use crate::runner::RunConfig;
use crashlab_engine::{Bucket, Counters, Db, Error, ReadTx, Storage, WriteTx};
use crashlab_models::{BucketModel, KvModel, ModelError};

/// crashlab's [`Db`] as an engine under test.
pub struct CrashlabDb {
    pub db: Db,
    /// `Options::no_sync`: commits are then acknowledged without a durability promise.
    no_sync: bool,
}

impl From<Error> for EngineError {
    fn from(e: Error) -> EngineError {
        let kind = match &e {
            Error::Io { .. } => ErrorKind::Io,
            Error::BucketNotFound => ErrorKind::Refused(ModelError::BucketNotFound),
            Error::BucketExists => ErrorKind::Refused(ModelError::BucketExists),
            Error::IncompatibleValue { .. } => ErrorKind::Refused(ModelError::Incompatible),
            _ => ErrorKind::Other,
        };
        EngineError {
            kind,
            message: e.to_string(),
        }
    }
}

impl EngineDb for CrashlabDb {
    type Reader<'a> = ReadTx<'a>;
    type Writer<'a> = WriteTx<'a>;

    fn open(storage: Box<dyn Storage>, cfg: &RunConfig, _opens: u64) -> Result<Self, EngineError> {
        let db = Db::open(storage, cfg.options.clone())?;
        Ok(CrashlabDb {
            db,
            no_sync: cfg.options.no_sync,
        })
    }

    fn close(self) -> Result<(), EngineError> {
        drop(self.db); // no I/O: everything acknowledged is already in the page cache
        Ok(())
    }

    fn begin_read(&self) -> Result<ReadTx<'_>, EngineError> {
        Ok(self.db.begin_read()?)
    }

    fn snapshot_id(reader: &ReadTx<'_>) -> u64 {
        reader.id().0
    }

    fn read_snapshot(reader: &ReadTx<'_>) -> Result<KvModel, EngineError> {
        Ok(read_snapshot(reader)?)
    }

    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let refs = path_refs(path);
        let got = self
            .db
            .view(|tx| tx.bucket_path(&refs)?.map(|b| b.get(&key.0)).transpose())?;
        Ok(got.flatten())
    }

    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError> {
        let refs = path_refs(path);
        Ok(self
            .db
            .view(|tx| tx.bucket_path(&refs)?.map(|b| list_bucket(&b)).transpose())?)
    }

    fn begin_write(&self) -> Result<WriteTx<'_>, EngineError> {
        Ok(self.db.begin_write()?)
    }

    fn apply(tx: &mut WriteTx<'_>, op: &Op) -> Result<(), EngineError> {
        Ok(engine_apply(tx, op)?)
    }

    fn get_in(
        tx: &mut WriteTx<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        let got = tx
            .bucket_path_mut(&path_refs(path))
            .and_then(|b| b.map(|b| b.get(&key.0)).transpose())?;
        Ok(got.flatten())
    }

    fn scan_in(tx: &mut WriteTx<'_>, path: &Path) -> Result<Option<Listing>, EngineError> {
        Ok(tx
            .bucket_path_mut(&path_refs(path))
            .and_then(|b| b.map(|b| b.items()).transpose())?)
    }

    fn commit(&self, tx: WriteTx<'_>) -> Result<bool, EngineError> {
        tx.commit()?;
        Ok(!self.no_sync)
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        Ok(self.db.check()?.iter().map(|p| p.to_string()).collect())
    }

    fn counters(&self) -> Counters {
        self.db.counters()
    }

    fn crash_is_process_crash(cfg: &RunConfig) -> bool {
        cfg.options.no_sync
    }

    fn io_error_ends_session() -> bool {
        false
    }

    fn meta_region_len(cfg: &RunConfig) -> u64 {
        2 * u64::from(cfg.options.page_size)
    }
}

/// Every item of a bucket in key order (sub-buckets as `None`).
pub(crate) fn list_bucket(b: &Bucket<'_>) -> Result<Listing, Error> {
    let mut c = b.cursor();
    let mut out = Vec::new();
    let mut it = c.first()?;
    while let Some(item) = it {
        out.push(item);
        it = c.next()?;
    }
    Ok(out)
}

/// The whole database as a model, through one snapshot.
pub fn read_model(db: &Db) -> Result<KvModel, Error> {
    read_snapshot(&db.begin_read()?)
}

/// What a read transaction's snapshot holds, as a model.
pub fn read_snapshot(tx: &ReadTx<'_>) -> Result<KvModel, Error> {
    let mut m = KvModel::new();
    let root = tx.root()?;
    fill(&root, &mut m.root, 0)?;
    Ok(m)
}

fn fill(b: &Bucket<'_>, into: &mut BucketModel, depth: usize) -> Result<(), Error> {
    into.sequence = b.sequence();
    for (k, v) in list_bucket(b)? {
        match v {
            Some(v) => {
                into.values.insert(k, v);
            }
            None if depth < crashlab_engine::limits::MAX_BUCKET_DEPTH => {
                let child = b.bucket(&k)?.ok_or(Error::BucketNotFound)?;
                fill(&child, into.buckets.entry(k).or_default(), depth + 1)?;
            }
            None => return Err(Error::BucketNotFound),
        }
    }
    Ok(())
}
