//! The engines the runner can drive, each behind one narrow adapter: open on a storage,
//! begin / commit / rollback (drop), put / get / delete / scan in a bucket (a table in redb),
//! read a whole snapshot, check integrity, close.
//!
//! Everything else — the disk, its faults, the workloads, the oracle, the trace and the CLI —
//! knows only this trait, so an engine nobody here wrote runs under the same faults and the
//! same oracle as ours. An operation an engine lacks (nested buckets in redb) is left out by
//! that engine's workload generator ([`crate::workload::generate_for`]), never faked here.
//!
//! Lifetimes: crashlab's transactions borrow the database and redb's are owned, so readers and
//! writers are generic associated types that may borrow `&'a self`.

pub mod crashlab;
pub mod redb;

use crate::op::{Name, Op, Path};
use crate::runner::RunConfig;
use crashlab_engine::{Counters, Storage};
use crashlab_models::{BucketModel, KvModel, ModelError};
use std::fmt;
use std::str::FromStr;

/// Which engine a run drives. Case files without an `engine` line mean [`EngineKind::Crashlab`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    #[default]
    Crashlab,
    Redb,
}

impl EngineKind {
    pub const ALL: [EngineKind; 2] = [EngineKind::Crashlab, EngineKind::Redb];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Crashlab => "crashlab",
            EngineKind::Redb => "redb",
        }
    }

    /// Whether the engine has buckets inside buckets (redb's tables are flat).
    pub fn nested_buckets(self) -> bool {
        self == EngineKind::Crashlab
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<EngineKind, String> {
        EngineKind::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown engine `{s}` (expected crashlab or redb)"))
    }
}

/// What kind of failure an engine reported: the runner treats each differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An I/O error (a disk fault or the power going off): allowed, the application restarts.
    Io,
    /// A refusal the model also makes (missing bucket, existing bucket, ...).
    Refused(ModelError),
    /// Anything else: on a valid database under non-corrupting faults, a violation.
    Other,
}

/// An engine's error, with the engine's own message kept verbatim (it goes into the trace, so
/// crashlab's trace hashes do not move with this adapter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub message: String,
}

impl EngineError {
    pub fn is_io(&self) -> bool {
        self.kind == ErrorKind::Io
    }

    pub fn other(message: impl Into<String>) -> EngineError {
        EngineError {
            kind: ErrorKind::Other,
            message: message.into(),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A bucket's contents in key order: values as `Some`, sub-buckets as `None`.
pub type Listing = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// A model bucket listed as an engine lists it.
pub(crate) fn list_model(b: &BucketModel) -> Listing {
    let mut out: Listing = b
        .values
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    out.extend(b.buckets.keys().map(|k| (k.clone(), None)));
    out.sort();
    out
}

/// One open database of an engine under test.
pub trait EngineDb: Sized + 'static {
    /// A read-only snapshot; may borrow the database.
    type Reader<'a>;
    /// The one write transaction; may borrow the database. Dropping it rolls back.
    type Writer<'a>;

    /// Open (creating on empty storage, recovering after a crash) on `storage`; `opens` counts
    /// the run's earlier opens, so per-open choices stay a function of the seed.
    fn open(storage: Box<dyn Storage>, cfg: &RunConfig, opens: u64) -> Result<Self, EngineError>;
    /// Close cleanly. redb writes here (it makes non-durable commits durable), so a close can
    /// fail and can be cut by the power; `Err` means acknowledged, non-durable commits may be
    /// lost.
    fn close(self) -> Result<(), EngineError>;

    fn begin_read(&self) -> Result<Self::Reader<'_>, EngineError>;
    /// A label for the snapshot in the trace (crashlab: its txid).
    fn snapshot_id(reader: &Self::Reader<'_>) -> u64;
    /// Everything a snapshot holds, as a model.
    fn read_snapshot(reader: &Self::Reader<'_>) -> Result<KvModel, EngineError>;
    /// One key through a fresh snapshot: `None` when the bucket or the key is missing.
    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError>;
    /// One bucket through a fresh snapshot: `None` when the bucket is missing.
    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError>;

    fn begin_write(&self) -> Result<Self::Writer<'_>, EngineError>;
    /// A data operation (create / delete bucket, put, delete) in the write transaction.
    fn apply(tx: &mut Self::Writer<'_>, op: &Op) -> Result<(), EngineError>;
    fn get_in(
        tx: &mut Self::Writer<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<Vec<u8>>, EngineError>;
    fn scan_in(tx: &mut Self::Writer<'_>, path: &Path) -> Result<Option<Listing>, EngineError>;
    /// Commit. `Ok(true)` when the engine promised durability (the oracle's `Durable`),
    /// `Ok(false)` when it acknowledged without that promise.
    fn commit(&self, tx: Self::Writer<'_>) -> Result<bool, EngineError>;

    /// The engine's own integrity check after recovery: every problem found, empty when clean.
    fn check(&mut self) -> Result<Vec<String>, EngineError>;
    /// Engine-internal counters (crashlab's; other engines report zeros).
    fn counters(&self) -> Counters;

    /// Whether a crash in this run is a process crash (the page cache survives) rather than a
    /// power cut: crashlab with `no_sync` makes no promise across a power cut.
    fn crash_is_process_crash(cfg: &RunConfig) -> bool;
    /// Whether any I/O error ends the session: the application must close and reopen before
    /// using the database again (redb's documented contract: "Previous I/O error occurred.
    /// Please close and re-open the database"). crashlab's engine keeps serving the transaction.
    fn io_error_ends_session() -> bool;
    /// Bytes at the start of the file that hold the engine's meta / header: the `no-barrier`
    /// control keeps the syncs that follow writes there and drops the others.
    fn meta_region_len(cfg: &RunConfig) -> u64;
}
