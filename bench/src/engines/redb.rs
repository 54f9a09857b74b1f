//! redb: its own file format, copy-on-write B-trees, `Durability::Immediate` by default.

use crate::concurrent::Concurrent;
use crate::kv::{Kv, Mode, Read};
use crate::shape::{key, scattered, BUCKET};
use redb::{Database, Durability, ReadableDatabase, TableDefinition};
use std::hint::black_box;
use std::ops::Range;
use std::path::Path;

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new(BUCKET);

pub struct Redb {
    db: Database,
    durability: Durability,
}

impl Redb {
    pub fn open(dir: &Path, mode: Mode) -> Self {
        let durability = match mode {
            Mode::Sync => Durability::Immediate,
            Mode::NoSync => Durability::None,
            Mode::Normal => unreachable!("redb has no NORMAL mode"),
        };
        let db = Database::create(dir.join("bench.redb")).expect("redb: open");
        let r = Redb { db, durability };
        // Only a new database commits at open, so that reopening measures the open alone.
        let tx = r.db.begin_read().expect("redb: read txn");
        match tx.open_table(TABLE) {
            Ok(_) => {}
            Err(redb::TableError::TableDoesNotExist(_)) => r.write(|_| Ok(())),
            Err(e) => panic!("redb: open table: {e}"),
        }
        drop(tx);
        r
    }

    /// Run `f` on the table in one write transaction and commit it.
    fn write(&self, f: impl FnOnce(&mut redb::Table<'_, &[u8], &[u8]>) -> Result<(), redb::Error>) {
        let run = || -> Result<(), redb::Error> {
            let mut tx = self.db.begin_write()?;
            tx.set_durability(self.durability)?;
            {
                let mut table = tx.open_table(TABLE)?;
                f(&mut table)?;
            }
            tx.commit()?;
            Ok(())
        };
        run().unwrap_or_else(|e| panic!("redb: write: {e}"));
    }
}

impl Kv for Redb {
    fn put(&mut self, keys: Range<u64>, value: &[u8]) {
        self.write(|t| {
            for n in keys {
                t.insert(&key(n)[..], value)?;
            }
            Ok(())
        });
    }

    fn get(&mut self, reads: Range<u64>, read: Read) {
        let run = || -> Result<(), redb::Error> {
            let tx = self.db.begin_read()?;
            let table = tx.open_table(TABLE)?;
            for i in reads.clone() {
                let v = table.get(&key(scattered(i))[..])?;
                let v = v.unwrap_or_else(|| panic!("redb: read {i} found no value"));
                read.consume(v.value());
                black_box(v.value());
            }
            Ok(())
        };
        run().unwrap_or_else(|e| panic!("redb: get {reads:?}: {e}"));
    }

    fn delete(&mut self, keys: Range<u64>) {
        self.write(|t| {
            for n in keys {
                assert!(t.remove(&key(n)[..])?.is_some(), "redb: key {n} missing");
            }
            Ok(())
        });
    }
}

/// Concurrent writers share the `Database`; `begin_write` blocks until the previous write
/// transaction has committed, so each thread runs its own transaction, one at a time.
impl Concurrent for Redb {
    fn put_one(&self, n: u64, value: &'static [u8]) {
        self.write(|t| t.insert(&key(n)[..], value).map(drop).map_err(Into::into));
    }
}
