//! crashlab's own engine behind the adapter. Errors keep the engine's message, so traces (and
//! their pinned hashes) do not move with the adapter.

mod batch;
mod callers;
mod config;
mod read;

pub use config::{format_options, presize_name};
pub use read::{read_model, read_snapshot, snapshot_equals};

use crate::adapter::error::INVARIANT_IN_MEMORY;
use crate::adapter::{Ack, Engine, EngineError, ErrorKind, Listing};
use crate::apply::path_refs;
use crate::calls::{CallSpec, GroupObserver};
use crate::op::{value_bytes, KeyRange, Name, Op, Path};
use crate::schedule::Schedule;
use crashlab_engine::{Counters, Db, Error, FormatError, Options, ReadTx, Storage, WriteTx};
use crashlab_models::{Answer, KvModel, ModelError};
use read::{list_bucket, read_range};
use std::rc::Rc;
use std::time::Duration;

/// crashlab's [`Db`] as an engine under test.
pub struct CrashlabDb {
    pub db: Db,
    /// `Options::no_sync`: commits are then acknowledged without a durability promise.
    no_sync: bool,
}

impl From<Error> for EngineError {
    fn from(e: Error) -> EngineError {
        let kind = match &e {
            Error::Format(FormatError::Io { .. }) => ErrorKind::Io,
            Error::Latched(_) => ErrorKind::Latched,
            Error::BucketNotFound => ErrorKind::Refused(ModelError::BucketNotFound),
            Error::BucketExists => ErrorKind::Refused(ModelError::BucketExists),
            Error::IncompatibleValue { .. } => ErrorKind::Refused(ModelError::Incompatible),
            Error::BucketTooDeep { .. } => ErrorKind::Refused(ModelError::TooDeep),
            Error::KeyTooLarge { .. } => ErrorKind::Refused(ModelError::KeyTooLarge),
            Error::Format(FormatError::Corrupted { .. })
            | Error::Format(FormatError::ChecksumMismatch { .. })
            | Error::Format(FormatError::NoValidMeta { .. })
            | Error::Format(FormatError::Truncated { .. }) => ErrorKind::Corrupt,
            Error::Invariant(_) => ErrorKind::Invariant,
            // A batch's shared commit passes its error on as text.
            Error::BatchCommitFailed(m) if m.contains(INVARIANT_IN_MEMORY) => ErrorKind::Invariant,
            _ => ErrorKind::Other,
        };
        EngineError {
            kind,
            message: e.to_string(),
        }
    }
}

impl CrashlabDb {
    fn ack(&self) -> Ack {
        if self.no_sync {
            Ack::Acknowledged
        } else {
            Ack::Durable
        }
    }
}

impl Engine for CrashlabDb {
    type Config = Options;
    type Reader<'a> = ReadTx<'a>;
    type Writer<'a> = WriteTx<'a>;

    fn open(storage: Box<dyn Storage>, cfg: &Options, _opens: u64) -> Result<Self, EngineError> {
        // One caller at a time here: a batch never waits for others to join.
        let options = Options {
            max_batch_delay: Duration::ZERO,
            ..cfg.clone()
        };
        let db = Db::open(storage, options)?;
        Ok(CrashlabDb {
            db,
            no_sync: cfg.no_sync,
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

    fn snapshot_equals(reader: &ReadTx<'_>, want: &KvModel) -> Result<bool, EngineError> {
        Ok(read::snapshot_equals(reader, want)?)
    }

    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let refs = path_refs(path);
        let got = self.db.view(|tx| {
            tx.bucket_path(&refs)?
                .map(|b| owned(b.get(&key.0)))
                .transpose()
        })?;
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

    fn delete_in(
        tx: &mut WriteTx<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<bool>, EngineError> {
        Ok(Some(delete(tx, path, key)?))
    }

    fn get_in(
        tx: &mut WriteTx<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        let got = tx
            .bucket_path_mut(&path_refs(path))
            .and_then(|b| b.map(|b| owned(b.get(&key.0))).transpose())?;
        Ok(got.flatten())
    }

    fn scan_in(tx: &mut WriteTx<'_>, path: &Path) -> Result<Option<Listing>, EngineError> {
        Ok(tx
            .bucket_path_mut(&path_refs(path))
            .and_then(|b| b.map(|b| b.items()).transpose())?)
    }

    fn range(&self, path: &Path, range: &KeyRange) -> Result<Option<Listing>, EngineError> {
        let refs = path_refs(path);
        Ok(self.db.view(|tx| {
            tx.bucket_path(&refs)?
                .map(|b| read_range(b.cursor(), range))
                .transpose()
        })?)
    }

    fn range_in(
        tx: &mut WriteTx<'_>,
        path: &Path,
        range: &KeyRange,
    ) -> Result<Option<Listing>, EngineError> {
        Ok(tx
            .bucket_path_mut(&path_refs(path))
            .and_then(|b| b.map(|b| read_range(b.cursor()?, range)).transpose())?)
    }

    fn next_sequence(tx: &mut WriteTx<'_>, path: &Path) -> Result<u64, EngineError> {
        Ok(next_sequence(tx, path)?)
    }

    fn commit(&self, tx: WriteTx<'_>) -> Result<Ack, EngineError> {
        tx.commit()?;
        Ok(self.ack())
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        Ok(self.db.check()?.iter().map(|p| p.to_string()).collect())
    }

    fn check_live(&self) -> Result<Vec<String>, EngineError> {
        Ok(self.db.check()?.iter().map(|p| p.to_string()).collect())
    }

    fn counters(&self) -> Counters {
        self.db.counters()
    }

    fn commit_batch(&self, ops: &[Op]) -> Result<Ack, EngineError> {
        batch::commit(&self.db, ops)?;
        Ok(self.ack())
    }

    async fn run_group(
        db: &Rc<Self>,
        calls: &[CallSpec],
        schedule: Option<&Schedule>,
        observer: &mut dyn GroupObserver,
    ) -> Vec<(usize, Answer)> {
        match schedule {
            Some(s) => callers::run_scheduled(db, calls, s, observer),
            None => callers::run_group(db, calls, observer).await,
        }
    }

    fn reader_token(reader: &ReadTx<'_>) -> Vec<u8> {
        reader.meta().encode_page()
    }

    fn read_view(image: Vec<u8>, token: &[u8], cfg: &Options) -> Result<KvModel, EngineError> {
        Ok(read::view(image, token, cfg)?)
    }
}

/// Apply a data operation in crashlab's write transaction.
/// Increment a bucket's sequence and return the new value.
fn next_sequence(tx: &mut WriteTx<'_>, path: &Path) -> Result<u64, Error> {
    match tx.bucket_path_mut(&path_refs(path))? {
        Some(mut b) => Ok(b.next_sequence()),
        None => Err(Error::BucketNotFound),
    }
}

pub(crate) fn engine_apply(tx: &mut WriteTx<'_>, op: &Op) -> Result<(), Error> {
    let missing = || Err(Error::BucketNotFound);
    match op {
        Op::CreateBucket(p) | Op::DeleteBucket(p) => {
            let Some((name, parent)) = p.split_last() else {
                unreachable!("bucket paths are non-empty")
            };
            match tx.bucket_path_mut(&path_refs(parent)) {
                Ok(Some(mut b)) if matches!(op, Op::CreateBucket(_)) => {
                    b.create_bucket(&name.0).map(|_| ())
                }
                Ok(Some(mut b)) => b.delete_bucket(&name.0),
                Ok(None) => missing(),
                Err(e) => Err(e),
            }
        }
        Op::Put {
            path,
            key,
            len,
            version,
        } => match tx.bucket_path_mut(&path_refs(path)) {
            Ok(Some(mut b)) => b.put(&key.0, &value_bytes(key, *len, *version)),
            Ok(None) => missing(),
            Err(e) => Err(e),
        },
        Op::Delete { path, key } => delete(tx, path, key).map(drop),
        Op::SetSequence { path, value } => match tx.bucket_path_mut(&path_refs(path))? {
            Some(mut b) => {
                b.set_sequence(*value);
                Ok(())
            }
            None => missing(),
        },
        Op::NextSequence { path } => next_sequence(tx, path).map(drop),
        other => unreachable!("{other} is not a data operation"),
    }
}

/// Delete `key` in the bucket at `path`: whether it was there.
fn delete(tx: &mut WriteTx<'_>, path: &Path, key: &Name) -> Result<bool, Error> {
    match tx.bucket_path_mut(&path_refs(path))? {
        Some(mut b) => b.delete(&key.0),
        None => Err(Error::BucketNotFound),
    }
}

/// A value read from the engine, copied out of the transaction it borrows from.
fn owned(
    got: crashlab_engine::Result<Option<crashlab_engine::Value<'_>>>,
) -> crashlab_engine::Result<Option<Vec<u8>>> {
    got.map(|v| v.map(|v| v.to_vec()))
}
