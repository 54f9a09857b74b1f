//! LMDB through heed (LMDB built from the bundled C sources): a memory-mapped copy-on-write
//! B+tree. Reads are pointer chases in the map with no system call.

use crate::concurrent::Concurrent;
use crate::kv::{Kv, Mode, Read};
use crate::shape::{key, scattered, BUCKET};
use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env};
use std::hint::black_box;
use std::ops::Range;
use std::path::Path;

/// Address space reserved for the map: room for the 2 GB large database and its copy-on-write
/// growth (the file grows only as pages are used).
const MAP_SIZE: usize = 8 << 30;

pub struct Lmdb {
    env: Env,
    db: Database<'static, Bytes, Bytes>,
}

impl Lmdb {
    pub fn open(dir: &Path, mode: Mode) -> Self {
        let no_sync = match mode {
            Mode::Sync => false,
            Mode::NoSync => true,
            Mode::Normal => unreachable!("LMDB has no NORMAL mode"),
        };
        let env = crashlab_bench_lmdb_open::open(dir, MAP_SIZE, no_sync).expect("lmdb: open");
        // Only a new environment commits at open, so that reopening measures the open alone.
        // heed hands out a `Database` not tied to a transaction only once the transaction that
        // opened it has committed, hence the `*_and_commit` calls.
        let rtxn = env.read_txn().expect("lmdb: read txn");
        let found = env
            .open_databases_and_commit(rtxn, |dbo, rtxn| {
                dbo.open_database::<Bytes, Bytes>(rtxn, Some(BUCKET))
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .expect("lmdb: open database")
            .unwrap_commit();
        let db = match found {
            Some(db) => db,
            None => {
                let wtxn = env.write_txn().expect("lmdb: write txn");
                env.create_databases_and_commit(wtxn, |dbo, wtxn| {
                    dbo.create_database::<Bytes, Bytes>(wtxn, Some(BUCKET))
                        .map(CommitOrAbort::<_, ()>::Commit)
                })
                .expect("lmdb: create database")
                .unwrap_commit()
            }
        };
        Lmdb { env, db }
    }

    /// Run `f` in one write transaction and commit it.
    fn write(&self, f: impl FnOnce(&mut heed::RwTxn<'_>) -> heed::Result<()>) {
        let run = || -> heed::Result<()> {
            let mut tx = self.env.write_txn()?;
            f(&mut tx)?;
            tx.commit()
        };
        run().unwrap_or_else(|e| panic!("lmdb: write: {e}"));
    }
}

impl Kv for Lmdb {
    fn put(&mut self, keys: Range<u64>, value: &[u8]) {
        let db = self.db;
        self.write(|tx| keys.clone().try_for_each(|n| db.put(tx, &key(n), value)));
    }

    fn get(&mut self, reads: Range<u64>, read: Read) {
        let run = || -> heed::Result<()> {
            let tx = self.env.read_txn()?;
            for i in reads.clone() {
                let v = self.db.get(&tx, &key(scattered(i)))?;
                let Some(v) = v else {
                    panic!("lmdb: read {i} found no value");
                };
                read.consume(v);
                black_box(v);
            }
            Ok(())
        };
        run().unwrap_or_else(|e| panic!("lmdb: get {reads:?}: {e}"));
    }

    fn delete(&mut self, keys: Range<u64>) {
        let db = self.db;
        self.write(|tx| {
            for n in keys.clone() {
                assert!(db.delete(tx, &key(n))?, "lmdb: key {n} missing");
            }
            Ok(())
        });
    }
}

/// Concurrent writers share the `Env`; LMDB's writer mutex lets one write transaction run at a
/// time, so each thread runs its own transaction, one after another.
impl Concurrent for Lmdb {
    fn put_one(&self, n: u64, value: &'static [u8]) {
        let db = self.db;
        self.write(|tx| db.put(tx, &key(n), value));
    }
}
