//! SQLite through rusqlite (SQLite built from the bundled C sources), in WAL mode, keys in a
//! `WITHOUT ROWID` table (one B-tree keyed by the 16-byte key, as a key-value store would use).
//! Statements are prepared once and cached; each transaction is `BEGIN` … `COMMIT`.

use crate::concurrent::Concurrent;
use crate::kv::{Kv, Mode, Read};
use crate::shape::{key, scattered, BUCKET};
use rusqlite::{params, Connection, OptionalExtension};
use std::hint::black_box;
use std::ops::Range;
use std::path::Path;
use std::sync::Mutex;

// The table is `shape::BUCKET` ("bench"); constants, so that no transaction builds a string.
const PUT: &str = "INSERT OR REPLACE INTO bench (k, v) VALUES (?1, ?2)";
const GET: &str = "SELECT v FROM bench WHERE k = ?1";
const DELETE: &str = "DELETE FROM bench WHERE k = ?1";

pub struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    pub fn open(dir: &Path, mode: Mode) -> Self {
        let synchronous = match mode {
            Mode::Sync => "FULL",
            Mode::Normal => "NORMAL",
            Mode::NoSync => "OFF",
        };
        let conn = Connection::open(dir.join("bench.sqlite")).expect("sqlite: open");
        let setup = format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous};
             CREATE TABLE IF NOT EXISTS {BUCKET} (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;"
        );
        conn.execute_batch(&setup).expect("sqlite: setup");
        Sqlite { conn }
    }

    /// Run `f` between `BEGIN` and `COMMIT`.
    fn write(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<()>) {
        let run = || -> rusqlite::Result<()> {
            let tx = self.conn.unchecked_transaction()?;
            f(&tx)?;
            tx.commit()
        };
        run().unwrap_or_else(|e| panic!("sqlite: write: {e}"));
    }
}

impl Kv for Sqlite {
    fn put(&mut self, keys: Range<u64>, value: &[u8]) {
        self.write(|c| {
            let mut stmt = c.prepare_cached(PUT)?;
            keys.clone()
                .try_for_each(|n| stmt.execute(params![&key(n)[..], value]).map(drop))
        });
    }

    fn get(&mut self, reads: Range<u64>, read: Read) {
        let run = || -> rusqlite::Result<()> {
            let tx = self.conn.unchecked_transaction()?;
            {
                let mut stmt = tx.prepare_cached(GET)?;
                for i in reads.clone() {
                    let v: Option<Vec<u8>> = stmt
                        .query_row(params![&key(scattered(i))[..]], |row| row.get(0))
                        .optional()?;
                    let Some(v) = v else {
                        panic!("sqlite: read {i} found no value");
                    };
                    read.consume(&v);
                    black_box(v);
                }
            }
            tx.commit()
        };
        run().unwrap_or_else(|e| panic!("sqlite: get {reads:?}: {e}"));
    }

    fn delete(&mut self, keys: Range<u64>) {
        self.write(|c| {
            let mut stmt = c.prepare_cached(DELETE)?;
            for n in keys.clone() {
                assert_eq!(
                    stmt.execute(params![&key(n)[..]])?,
                    1,
                    "sqlite: key {n} missing"
                );
            }
            Ok(())
        });
    }
}

/// SQLite's concurrent writers: one connection behind a mutex, each thread running its own
/// `BEGIN` … `COMMIT` while it holds it. SQLite has no group commit (each commit syncs the WAL
/// once), and with a connection per thread a writer that finds the WAL write lock taken waits in
/// the busy handler, which sleeps and polls (1 ms, 2 ms, 5 ms, …); the mutex instead hands the
/// lock to the next writer the moment a commit ends, which is SQLite's best here.
pub struct SharedSqlite(pub Mutex<Sqlite>);

impl Concurrent for SharedSqlite {
    fn put_one(&self, n: u64, value: &'static [u8]) {
        let mut conn = self.0.lock().unwrap_or_else(|e| e.into_inner());
        conn.put(n..n + 1, value);
    }
}
