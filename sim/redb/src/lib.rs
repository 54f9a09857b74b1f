//! redb (crates.io, written independently of crashlab) behind the adapter, on the simulated disk.
//!
//! - Storage: the runner's storage stack (power switch, negative-control wrappers, `SimDisk`)
//!   is redb's [`StorageBackend`]; every redb I/O is a simulated, faultable call.
//! - Buckets are tables (`&[u8]` → `&[u8]`); redb has no nested tables, so the redb workload
//!   uses top-level buckets only. A table name is the bucket name's text form (`op::Name`).
//! - Durability: each commit is `Durability::Immediate` (acknowledged as durable) or
//!   `Durability::None` (acknowledged, no promise across a power cut), drawn from the seed;
//!   each seed also picks redb's commit protocol: one-phase with checksums (the default) or
//!   two-phase. The `no-barrier` control forces two-phase, the only protocol that relies on
//!   the sync between data and header that the control drops.
//! - Recovery: redb repairs on open after an unclean shutdown (its repair writes and syncs go
//!   through the same faultable storage, and a power cut can land inside them); after the open
//!   the runner reads the whole database and runs `Database::check_integrity`, which must find
//!   nothing left to repair.
//! - Determinism: redb 4.6 spawns no threads, reads no clock and hashes with a fixed hasher in
//!   the code paths a custom backend uses; `tests/redb_sweep.rs` checks same seed → same trace.
//! - Closing: redb's close makes pending non-durable commits durable; the adapter does that
//!   step as an explicit durable commit so a failure is seen (capability `close_writes`).
#![forbid(unsafe_code)]

use crashlab_engine::Storage;
use crashlab_models::{BucketModel, KvModel, ModelError};
use crashlab_sim::adapter::{
    Ack, Capabilities, Checksummed, Engine, EngineConfig, EngineError, ErrorKind, Listing,
};
use crashlab_sim::control::Control;
use crashlab_sim::op::{value_bytes, Name, Op, Path};
use crashlab_sim::profile::Profile;
use crashlab_sim::rng::SimRng;
use crashlab_sim::words::{flag, num, settings};
use redb::{
    Database, Durability, ReadTransaction, ReadableDatabase, ReadableTable, StorageBackend,
    TableDefinition, TableHandle, WriteTransaction,
};
use std::cell::{Cell, RefCell};
use std::io;

/// redb's page size with its default builder (crashlab's checker enumerates per page).
pub const REDB_PAGE_SIZE: u32 = 4096;

/// redb's header page: its two commit slots live in the first page.
const REDB_HEADER_LEN: u64 = REDB_PAGE_SIZE as u64;

/// A storage of ours as redb's backend.
struct Backend(Box<dyn Storage>);

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("crashlab simulated storage")
    }
}

impl StorageBackend for Backend {
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.0.read_at(offset, out)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync()
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.0.write_at(offset, data)
    }
}

/// redb on `storage`, with redb's defaults (for `compare`, which drives redb's API directly).
pub fn open_database(storage: Box<dyn Storage>) -> Result<Database, redb::DatabaseError> {
    redb::Builder::new().create_with_backend(Backend(storage))
}

/// What a seed decides for redb: its commit protocol and the share of non-durable commits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedbChoices {
    /// Each open's durability draws come from this seed and the open's number.
    pub seed: u64,
    pub two_phase: bool,
    /// Share of commits made with `Durability::None`, in percent.
    pub non_durable_percent: u32,
}

impl EngineConfig for RedbChoices {
    const ENGINE: &'static str = "redb";

    /// The `no-barrier` profile forces two-phase commit, the only redb protocol that relies on
    /// the barrier the control drops.
    fn from_seed(seed: u64, profile: Profile) -> RedbChoices {
        let mut r = SimRng::derive(seed, "redb");
        let two_phase = r.chance(0.5) || profile == Profile::NoBarrier;
        let non_durable_percent = if r.chance(0.34) {
            0
        } else {
            r.range(10, 60) as u32
        };
        RedbChoices {
            seed,
            two_phase,
            non_durable_percent,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            nested_buckets: false,
            // redb takes keys of gigabytes: no key limit near bbolt's.
            refuses_long_keys: false,
            sequences: false,
            // `check_integrity` needs the database by `&mut`, which a session shares with its
            // readers: the live check compares the state with the model only.
            live_check: false,
            write_batches: false,
            concurrent_callers: false,
            max_batch_calls: 0,
            reader_views: false,
            io_error_ends_session: true,
            latches_after_failed_commit: false,
            crash_is_process_crash: false,
            close_writes: true,
            acknowledged_survive_process_crash: false,
            meta_region_len: REDB_HEADER_LEN,
            page_size: REDB_PAGE_SIZE,
            // redb checksums its header's commit slots, but whether it verifies a slot depends
            // on how the file was last closed: not declared until that rule is modelled.
            checksummed: Checksummed::NONE,
            directory: false,
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} commit · {} % of commits Durability::None",
            if self.two_phase {
                "two-phase"
            } else {
                "one-phase"
            },
            self.non_durable_percent
        )
    }

    fn to_case_text(&self) -> Option<String> {
        Some(format!(
            "two_phase={} non_durable_percent={}",
            self.two_phase, self.non_durable_percent
        ))
    }

    fn parse_case_text(text: &str, seed: u64, profile: Profile) -> Result<RedbChoices, String> {
        let mut c = RedbChoices::from_seed(seed, profile);
        for (k, v) in settings(text)? {
            match k {
                "two_phase" => c.two_phase = flag(k, v)?,
                "non_durable_percent" => c.non_durable_percent = num(k, v)?,
                _ => {
                    return Err(format!(
                        "unknown redb option `{k}` (expected two_phase or non_durable_percent)"
                    ))
                }
            }
        }
        if c.non_durable_percent > 100 {
            return Err(format!(
                "non_durable_percent {} is above 100",
                c.non_durable_percent
            ));
        }
        Ok(c)
    }

    /// Control (a) forces two-phase commit (see `from_seed`); the debug-hook controls are
    /// crashlab's.
    fn with_control(&self, control: Control) -> Result<RedbChoices, String> {
        match control {
            Control::None | Control::NoGrowthSync | Control::FdatasyncDisk => Ok(*self),
            Control::NoBarrier => Ok(RedbChoices {
                two_phase: true,
                ..*self
            }),
            other => Err(format!(
                "control {other} is a debug hook in crashlab's engine; with --engine redb use \
                 no-barrier, no-growth-sync or fdatasync-disk"
            )),
        }
    }
}

/// redb's [`Database`] as an engine under test.
pub struct RedbDb {
    db: Database,
    choices: RedbChoices,
    /// Draws each commit's durability; one stream per open, from the seed and the open count.
    durability: RefCell<SimRng>,
    /// The last commit was acknowledged without being made durable.
    pending_non_durable: Cell<bool>,
}

/// redb's writer with the durability chosen for it.
pub struct RedbWriter {
    tx: WriteTransaction,
    durable: bool,
}

fn classify(e: &redb::Error) -> ErrorKind {
    match e {
        redb::Error::Io(_) | redb::Error::PreviousIo => ErrorKind::Io,
        _ => ErrorKind::Other,
    }
}

fn err(e: impl Into<redb::Error>) -> EngineError {
    let e = e.into();
    EngineError {
        kind: classify(&e),
        message: format!("redb: {e}"),
    }
}

fn refused(reason: ModelError, what: &str) -> EngineError {
    EngineError {
        kind: ErrorKind::Refused(reason),
        message: format!("redb: {what}"),
    }
}

/// The table a one-component bucket path names.
fn table_name(path: &Path) -> Result<String, EngineError> {
    match path.as_slice() {
        [name] => Ok(name.to_string()),
        _ => Err(EngineError::other(format!(
            "redb has no nested tables: bucket path of {} components",
            path.len()
        ))),
    }
}

type Table<'n> = TableDefinition<'n, &'static [u8], &'static [u8]>;

fn table_exists(tx: &WriteTransaction, name: &str) -> Result<bool, EngineError> {
    Ok(tx.list_tables().map_err(err)?.any(|t| t.name() == name))
}

fn list<T: ReadableTable<&'static [u8], &'static [u8]>>(t: &T) -> Result<Listing, EngineError> {
    let mut out = Vec::new();
    for item in t.iter().map_err(err)? {
        let (k, v) = item.map_err(err)?;
        out.push((k.value().to_vec(), Some(v.value().to_vec())));
    }
    Ok(out)
}

impl Engine for RedbDb {
    type Config = RedbChoices;
    type Reader<'a> = ReadTransaction;
    type Writer<'a> = RedbWriter;

    fn open(storage: Box<dyn Storage>, cfg: &RedbChoices, opens: u64) -> Result<Self, EngineError> {
        let db = open_database(storage).map_err(err)?;
        let stream = SimRng::derive(cfg.seed.wrapping_add(opens), "redb durability");
        Ok(RedbDb {
            db,
            choices: *cfg,
            durability: RefCell::new(stream),
            pending_non_durable: Cell::new(false),
        })
    }

    fn close(self) -> Result<(), EngineError> {
        // redb's own close makes pending non-durable commits durable but only logs a failure.
        // Do that step here, as a durable empty commit, so a failure is seen: the runner then
        // allows those commits to be lost.
        if self.pending_non_durable.get() {
            let mut tx = self.db.begin_write().map_err(err)?;
            tx.set_durability(Durability::Immediate)
                .map_err(|e| err(redb::Error::from(e)))?;
            tx.commit().map_err(err)?;
        }
        drop(self.db);
        Ok(())
    }

    fn begin_read(&self) -> Result<ReadTransaction, EngineError> {
        self.db.begin_read().map_err(err)
    }

    fn snapshot_id(_reader: &ReadTransaction) -> u64 {
        0 // redb does not expose a snapshot's transaction id
    }

    fn read_snapshot(reader: &ReadTransaction) -> Result<KvModel, EngineError> {
        let mut m = KvModel::new();
        for handle in reader.list_tables().map_err(err)? {
            let name = handle.name().to_string();
            let table = reader.open_table(Table::new(&name)).map_err(err)?;
            let key = Name::parse(&name).map_err(EngineError::other)?.0;
            let bucket: &mut BucketModel = m.root.buckets.entry(key).or_default();
            for (k, v) in list(&table)? {
                bucket.values.insert(k, v.unwrap_or_default());
            }
        }
        Ok(m)
    }

    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let name = table_name(path)?;
        let tx = self.begin_read()?;
        let table = match tx.open_table(Table::new(&name)) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        let got = table.get(key.0.as_slice()).map_err(err)?;
        Ok(got.map(|v| v.value().to_vec()))
    }

    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError> {
        let name = table_name(path)?;
        let tx = self.begin_read()?;
        match tx.open_table(Table::new(&name)) {
            Ok(t) => list(&t).map(Some),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    fn begin_write(&self) -> Result<RedbWriter, EngineError> {
        let mut tx = self.db.begin_write().map_err(err)?;
        let share = f64::from(self.choices.non_durable_percent) / 100.0;
        let durable = !self.durability.borrow_mut().chance(share);
        let level = if durable {
            Durability::Immediate
        } else {
            Durability::None
        };
        tx.set_durability(level)
            .map_err(|e| err(redb::Error::from(e)))?;
        tx.set_two_phase_commit(self.choices.two_phase);
        Ok(RedbWriter { tx, durable })
    }

    fn apply(w: &mut RedbWriter, op: &Op) -> Result<(), EngineError> {
        let tx = &w.tx;
        match op {
            Op::CreateBucket(p) => {
                let name = table_name(p)?;
                if table_exists(tx, &name)? {
                    return Err(refused(ModelError::BucketExists, "table exists"));
                }
                tx.open_table(Table::new(&name)).map_err(err).map(drop)
            }
            Op::DeleteBucket(p) => match tx.delete_table(Table::new(&table_name(p)?)) {
                Ok(true) => Ok(()),
                Ok(false) => Err(refused(ModelError::BucketNotFound, "no such table")),
                Err(e) => Err(err(e)),
            },
            Op::Put {
                path,
                key,
                len,
                version,
            } => {
                let value = value_bytes(key, *len, *version);
                let mut t = open_existing(tx, path)?;
                t.insert(key.0.as_slice(), value.as_slice())
                    .map_err(err)
                    .map(drop)
            }
            Op::Delete { path, key } => Self::delete_in(w, path, key).map(drop),
            other => unreachable!("{other} is not a data operation"),
        }
    }

    fn delete_in(w: &mut RedbWriter, path: &Path, key: &Name) -> Result<Option<bool>, EngineError> {
        let mut t = open_existing(&w.tx, path)?;
        let removed = t.remove(key.0.as_slice()).map_err(err)?;
        Ok(Some(removed.is_some()))
    }

    fn get_in(w: &mut RedbWriter, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let t = match open_existing(&w.tx, path) {
            Err(EngineError {
                kind: ErrorKind::Refused(_),
                ..
            }) => return Ok(None),
            t => t?,
        };
        let got = t.get(key.0.as_slice()).map_err(err)?;
        Ok(got.map(|v| v.value().to_vec()))
    }

    fn scan_in(w: &mut RedbWriter, path: &Path) -> Result<Option<Listing>, EngineError> {
        match open_existing(&w.tx, path) {
            Err(EngineError {
                kind: ErrorKind::Refused(_),
                ..
            }) => Ok(None),
            t => list(&t?).map(Some),
        }
    }

    fn commit(&self, w: RedbWriter) -> Result<Ack, EngineError> {
        w.tx.commit().map_err(err)?;
        self.pending_non_durable.set(!w.durable);
        Ok(if w.durable {
            Ack::Durable
        } else {
            Ack::Acknowledged
        })
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        match self.db.check_integrity() {
            Ok(true) => Ok(Vec::new()),
            // The open had already recovered; anything left to repair was missed by it.
            Ok(false) => Ok(vec![
                "redb check_integrity found damage after recovery and repaired it".into(),
            ]),
            Err(redb::DatabaseError::Storage(redb::StorageError::Corrupted(m))) => {
                Ok(vec![format!("redb check_integrity: corrupted: {m}")])
            }
            Err(e) => Err(err(e)),
        }
    }
}

/// A table that must already exist (redb's `open_table` in a write transaction creates it).
fn open_existing<'t>(
    tx: &'t WriteTransaction,
    path: &Path,
) -> Result<redb::Table<'t, &'static [u8], &'static [u8]>, EngineError> {
    let name = table_name(path)?;
    if !table_exists(tx, &name)? {
        return Err(refused(ModelError::BucketNotFound, "no such table"));
    }
    tx.open_table(Table::new(&name)).map_err(err)
}
