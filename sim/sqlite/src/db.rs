//! SQLite's connection as an engine under test.

use crate::mode::{Journal, SqliteChoices, Synchronous};
use crate::sql::{self, err, refused, table};
use crate::vfs::{self, Registration, VFS_NAME};
use crashlab_engine::Storage;
use crashlab_models::{KvModel, ModelError};
use crashlab_sim::adapter::{Ack, Engine, EngineError, Listing, SimDir};
use crashlab_sim::op::{value_bytes, Name, Op, Path};
use rusqlite::{Connection, OpenFlags};
use std::cell::RefCell;

/// One open SQLite database on a session's directory.
pub struct SqliteDb {
    // Declared first, dropped first: the connection closes before its session leaves the VFS.
    conn: Connection,
    choices: SqliteChoices,
    /// The committed state, read in a fresh read transaction just before the open writer
    /// began: what a reader that begins while the writer is open sees (the one connection sees
    /// its own uncommitted writes).
    before_writer: RefCell<Option<KvModel>>,
    _session: Registration,
}

/// The one write transaction: `BEGIN IMMEDIATE` on the connection, rolled back when dropped
/// uncommitted.
pub struct SqliteWriter<'a> {
    db: &'a SqliteDb,
    open: bool,
    /// A statement changed the database: SQLite writes (and syncs) nothing for a transaction
    /// that changed nothing, so such a commit promises nothing about the commits before it.
    changed: bool,
}

impl Drop for SqliteWriter<'_> {
    fn drop(&mut self) {
        if self.open && !self.db.conn.is_autocommit() {
            // An error here leaves SQLite to roll back at the next open, as after a crash.
            let _ = self.db.conn.execute_batch("ROLLBACK");
        }
        *self.db.before_writer.borrow_mut() = None;
    }
}

/// The pragmas every connection runs: temporary files in memory, then the modes. WAL runs in
/// exclusive locking mode, set before the journal mode, so the WAL index is in heap memory.
fn configure(conn: &Connection, c: &SqliteChoices) -> Result<(), EngineError> {
    conn.execute_batch("PRAGMA temp_store=MEMORY")
        .map_err(err)?;
    if c.journal == Journal::Wal {
        let mode: String = conn
            .query_row("PRAGMA locking_mode=EXCLUSIVE", [], |r| r.get(0))
            .map_err(err)?;
        assert_eq!(mode, "exclusive", "SQLite refused exclusive locking");
    }
    let want = c.journal.word();
    let got: String = conn
        .query_row(&format!("PRAGMA journal_mode={want}"), [], |r| r.get(0))
        .map_err(err)?;
    if got != want {
        return Err(EngineError::other(format!(
            "sqlite: PRAGMA journal_mode={want} left the database in journal_mode={got}"
        )));
    }
    conn.execute_batch(&format!("PRAGMA synchronous={}", c.synchronous.word()))
        .map_err(err)
}

impl SqliteDb {
    /// The committed state through a fresh read transaction; while the writer is open, the
    /// one read just before it began.
    fn committed(&self) -> Result<KvModel, EngineError> {
        if self.conn.is_autocommit() {
            return sql::in_read_tx(&self.conn, sql::read_all);
        }
        self.before_writer
            .borrow()
            .clone()
            .ok_or_else(|| EngineError::other("sqlite: a transaction is open outside the writer"))
    }

    pub fn choices(&self) -> &SqliteChoices {
        &self.choices
    }
}

fn bucket<'m>(
    m: &'m KvModel,
    path: &Path,
) -> Result<Option<&'m crashlab_models::BucketModel>, EngineError> {
    table(path)?;
    Ok(m.root.buckets.get(&path[0].0))
}

impl Engine for SqliteDb {
    type Config = SqliteChoices;
    type Reader<'a> = KvModel;
    type Writer<'a> = SqliteWriter<'a>;

    fn open(_: Box<dyn Storage>, _: &SqliteChoices, _: u64) -> Result<Self, EngineError> {
        unreachable!("sqlite declares `directory`: the driver calls open_dir")
    }

    fn open_dir(dir: SimDir, cfg: &SqliteChoices, _opens: u64) -> Result<Self, EngineError> {
        vfs::register().map_err(EngineError::other)?;
        let session = Registration::new(dir, cfg.synchronous == Synchronous::Extra);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags_and_vfs(session.path(), flags, VFS_NAME).map_err(err)?;
        configure(&conn, cfg)?;
        Ok(SqliteDb {
            conn,
            choices: *cfg,
            before_writer: RefCell::new(None),
            _session: session,
        })
    }

    /// The database file's bytes and every name and length: see [`crate::image`].
    fn dir_image_hash(fs: &crashlab_sim::fs::SimFs) -> u64 {
        crate::image::image_hash(fs)
    }

    /// In WAL mode a clean close checkpoints the WAL into the database, syncing both, and
    /// deletes it; a rollback journal's close writes nothing, so a commit acknowledged only
    /// stays so. The configuration declares no `close_writes`: a clean close promises nothing
    /// new (see `SqliteChoices::capabilities`).
    fn close(self) -> Result<(), EngineError> {
        let SqliteDb { conn, _session, .. } = self;
        conn.close().map_err(|(_, e)| err(e))
    }

    fn begin_read(&self) -> Result<KvModel, EngineError> {
        self.committed()
    }

    fn snapshot_id(_reader: &KvModel) -> u64 {
        0 // SQLite exposes no snapshot number in rollback modes
    }

    fn read_snapshot(reader: &KvModel) -> Result<KvModel, EngineError> {
        Ok(reader.clone())
    }

    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let t = table(path)?;
        if !self.conn.is_autocommit() {
            let m = self.committed()?;
            return Ok(bucket(&m, path)?.and_then(|b| b.values.get(&key.0).cloned()));
        }
        sql::in_read_tx(&self.conn, |c| sql::get(c, &t, &key.0))
    }

    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError> {
        let t = table(path)?;
        if !self.conn.is_autocommit() {
            let m = self.committed()?;
            return Ok(bucket(&m, path)?.map(crashlab_sim::adapter::list_model));
        }
        sql::in_read_tx(&self.conn, |c| sql::list(c, &t))
    }

    fn begin_write(&self) -> Result<SqliteWriter<'_>, EngineError> {
        let before = self.committed()?;
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(err)?;
        *self.before_writer.borrow_mut() = Some(before);
        Ok(SqliteWriter {
            db: self,
            open: true,
            changed: false,
        })
    }

    fn apply(w: &mut SqliteWriter<'_>, op: &Op) -> Result<(), EngineError> {
        let conn = &w.db.conn;
        let before = conn.total_changes();
        let applied = apply_op(conn, op);
        // DDL counts no rows: a created or dropped table changed the schema.
        let ddl = matches!(op, Op::CreateBucket(_) | Op::DeleteBucket(_));
        if applied.is_ok() && (ddl || conn.total_changes() != before) {
            w.changed = true;
        }
        applied
    }

    /// A `DELETE` changes one row when the key was there.
    fn delete_in(
        w: &mut SqliteWriter<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<bool>, EngineError> {
        let before = w.db.conn.total_changes();
        let op = Op::Delete {
            path: path.clone(),
            key: key.clone(),
        };
        Self::apply(w, &op)?;
        Ok(Some(w.db.conn.total_changes() != before))
    }

    fn get_in(
        w: &mut SqliteWriter<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        sql::get(&w.db.conn, &table(path)?, &key.0)
    }

    fn scan_in(w: &mut SqliteWriter<'_>, path: &Path) -> Result<Option<Listing>, EngineError> {
        sql::list(&w.db.conn, &table(path)?)
    }

    fn commit(&self, mut w: SqliteWriter<'_>) -> Result<Ack, EngineError> {
        self.conn.execute_batch("COMMIT").map_err(err)?;
        w.open = false;
        // A transaction that changed nothing writes and syncs nothing: its commit makes no
        // earlier commit durable (after a commit whose journal reset failed to sync, say).
        Ok(if w.changed {
            self.choices.ack()
        } else {
            Ack::Acknowledged
        })
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        sql::integrity_check(&self.conn)
    }

    fn check_live(&self) -> Result<Vec<String>, EngineError> {
        sql::integrity_check(&self.conn)
    }
}

/// The quoted table of a bucket that must exist.
fn existing(conn: &Connection, path: &Path) -> Result<String, EngineError> {
    let t = table(path)?;
    if !sql::table_exists(conn, &t)? {
        return Err(refused(ModelError::BucketNotFound, "no such table"));
    }
    Ok(t)
}

/// One data operation in the open write transaction.
fn apply_op(conn: &Connection, op: &Op) -> Result<(), EngineError> {
    match op {
        Op::CreateBucket(p) => {
            let t = table(p)?;
            if sql::table_exists(conn, &t)? {
                return Err(refused(ModelError::BucketExists, "table exists"));
            }
            let ddl = format!(
                "CREATE TABLE {t} (k BLOB PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID"
            );
            conn.execute_batch(&ddl).map_err(err)
        }
        Op::DeleteBucket(p) => {
            let t = existing(conn, p)?;
            conn.execute_batch(&format!("DROP TABLE {t}")).map_err(err)
        }
        Op::Put {
            path,
            key,
            len,
            version,
        } => {
            let t = existing(conn, path)?;
            let value = value_bytes(key, *len, *version);
            conn.execute(
                &format!("INSERT OR REPLACE INTO {t} (k, v) VALUES (?1, ?2)"),
                (&key.0, &value),
            )
            .map(drop)
            .map_err(err)
        }
        Op::Delete { path, key } => {
            let t = existing(conn, path)?;
            conn.execute(&format!("DELETE FROM {t} WHERE k = ?1"), [&key.0])
                .map(drop)
                .map_err(err)
        }
        other => unreachable!("{other} is not a data operation"),
    }
}
