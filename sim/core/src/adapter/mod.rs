//! The one way in to an engine under test: the [`Engine`] adapter trait, the engine's own
//! configuration ([`EngineConfig`]) and the capabilities it declares.
//!
//! Everything else — the disk, its faults, the workloads, the oracle, the session driver, the
//! crash-state checker and the CLI — knows only these traits, so an engine nobody here wrote runs
//! under the same faults and the same oracle as crashlab's own. What engines differ in is a
//! declared [`Capabilities`] value, never a test of which engine this is: an operation an engine
//! lacks (nested buckets in redb, write batches in anything but crashlab's engine) is left out by
//! the generators, never faked by the adapter.
//!
//! To put your own engine under crashlab: implement [`EngineConfig`] for its options and
//! [`Engine`] for an open database, then call [`crate::sweep::sweep`] from a `#[test]`.
//!
//! Lifetimes: crashlab's transactions borrow the database and redb's are owned, so readers and
//! writers are generic associated types that may borrow `&'a self`.

pub mod caps;
pub mod error;

/// What an engine of several files is opened on (capability `directory`).
pub use crate::fs::{DirFile, SimDir};
pub use caps::{Capabilities, Checksummed};
/// Re-exported so an adapter needs no other crashlab crate: the storage an engine is opened on,
/// the model a snapshot is read into and the refusals the model makes.
pub use crashlab_engine::Storage;
pub use crashlab_models::{BucketModel, KvModel, ModelError};
pub use error::{Ack, EngineError, ErrorKind};

use crate::calls::{CallSpec, GroupObserver};
use crate::control::Control;
use crate::op::{KeyRange, Name, Op, Path};
use crate::profile::Profile;
use crate::schedule::Schedule;
use crashlab_engine::Counters;
use crashlab_models::Answer;
use std::fmt;
use std::rc::Rc;

/// An engine's own options, drawn from a seed in one place and printed in one place. `Send +
/// Sync`: a parallel sweep or check hands a run's configuration between worker threads (the
/// engine itself never leaves the thread that opened it).
pub trait EngineConfig: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The engine's name on the command line and in case files (`engine = NAME`).
    const ENGINE: &'static str;

    /// The options a seed draws (swarm testing: every choice printed in the run's header).
    fn from_seed(seed: u64, profile: Profile) -> Self;
    /// What this configuration can do.
    fn capabilities(&self) -> Capabilities;
    /// The engine's choices in one line, for a run's or a check's header.
    fn describe(&self) -> String;
    /// The `options = ...` line of a case file (`None`: the options come from the seed).
    fn to_case_text(&self) -> Option<String>;
    /// Parse what [`EngineConfig::to_case_text`] wrote; `seed` and `profile` are the case's.
    fn parse_case_text(text: &str, seed: u64, profile: Profile) -> Result<Self, String>;
    /// The negative control whose debug hook this configuration has on (a case found under an
    /// engine-hook control says so in its options), or `Control::None`.
    fn control(&self) -> Control {
        Control::None
    }
    /// This configuration with a negative control that is a debug hook in the engine turned on,
    /// or why the engine has no such hook. Storage-wrapper controls need nothing from the engine.
    fn with_control(&self, control: Control) -> Result<Self, String> {
        if control.is_storage_wrapper() || control == Control::None {
            return Ok(self.clone());
        }
        Err(format!(
            "control {control} is a debug hook in crashlab's engine; {} has none (storage-wrapper \
             controls: no-barrier, no-growth-sync, fdatasync-disk)",
            Self::ENGINE
        ))
    }
    /// The length model an engine's syncs need, when the seed's draw does not apply: an engine
    /// whose every sync is an `fsync`, which persists a size change (SQLite's unix VFS calls
    /// `fsync`, trusting no `fdatasync`), runs on `with-data` disks. `None`: the seed draws. A
    /// profile whose control needs a length model keeps it.
    fn length_model(&self) -> Option<crate::disk::LengthModel> {
        None
    }
    /// Whether `seed`'s run opens its sessions after the first with [`EngineConfig::at_open`]'s
    /// settings (a case says so in its `sessions` line). `false` (the default): one
    /// configuration for the whole run.
    fn switches_settings(&self, _seed: u64) -> bool {
        false
    }
    /// The configuration the run's session number `session` opens with where it is not this
    /// one (0: the creation and the first session; a session ends at a reopen or a crash), in a
    /// run that switches settings: what an application may change between runs of the same
    /// file, as an upgrade or a changed setting does. `None` (the default): this one. A function
    /// of `seed` and `session` alone, so a run and its case replay exactly (every attempt of one
    /// open uses the same); the checks that open a copy of the file use this configuration.
    fn at_open(&self, _seed: u64, _session: u64) -> Option<Self> {
        None
    }
    /// The variants `crashlab check --variants` runs (the engine's own option grid), or why
    /// there are none.
    fn variants(&self) -> Result<Vec<Self>, String> {
        Err(format!("{} has no option variants to check", Self::ENGINE))
    }
}

/// A bucket's contents in key order: values as `Some`, sub-buckets as `None`.
pub type Listing = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// A model bucket listed as an engine lists it.
pub fn list_model(b: &BucketModel) -> Listing {
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
pub trait Engine: Sized + 'static {
    type Config: EngineConfig;
    /// A read-only snapshot; may borrow the database.
    type Reader<'a>;
    /// The one write transaction; may borrow the database. Dropping it rolls back.
    type Writer<'a>;

    /// Open (creating on empty storage, recovering after a crash) on `storage`; `opens` counts
    /// the run's earlier opens, so per-open choices stay a function of the seed.
    fn open(storage: Box<dyn Storage>, cfg: &Self::Config, opens: u64)
        -> Result<Self, EngineError>;
    /// Capability `directory`: open (creating on an empty directory, recovering after a crash)
    /// on `dir`, whose files the engine names itself. Never called unless the configuration
    /// declares the capability; [`Engine::open`] is then never called.
    fn open_dir(dir: SimDir, cfg: &Self::Config, opens: u64) -> Result<Self, EngineError> {
        let _ = (dir, cfg, opens);
        unreachable!("{} declares no directory", Self::Config::ENGINE)
    }
    /// Capability `directory`: the run's image hash over the engine's files. The default
    /// hashes every name and its bytes ([`SimFs::image_hash`](crate::fs::SimFs::image_hash));
    /// an engine that writes bytes which are not a function of the seed (SQLite's journal
    /// nonce and WAL salts come from its process-global PRNG) hashes only what is.
    fn dir_image_hash(fs: &crate::fs::SimFs) -> u64 {
        fs.image_hash()
    }
    /// Close cleanly. `Err` means acknowledged, non-durable commits may be lost.
    fn close(self) -> Result<(), EngineError>;

    fn begin_read(&self) -> Result<Self::Reader<'_>, EngineError>;
    /// A label for the snapshot in the trace (crashlab: its txid).
    fn snapshot_id(reader: &Self::Reader<'_>) -> u64;
    /// Everything a snapshot holds, as a model.
    fn read_snapshot(reader: &Self::Reader<'_>) -> Result<KvModel, EngineError>;
    /// Whether a snapshot holds exactly `want`: [`Engine::read_snapshot`] compared with it, the
    /// default. An engine may compare as it walks instead of building the model (readers are
    /// checked this way many times a run); it must then read everything `read_snapshot` reads
    /// and fail where it fails, whether or not a difference came first, so that an error is
    /// reported as an error and not as a difference.
    fn snapshot_equals(reader: &Self::Reader<'_>, want: &KvModel) -> Result<bool, EngineError> {
        Ok(Self::read_snapshot(reader)? == *want)
    }
    /// One key through a fresh snapshot: `None` when the bucket or the key is missing.
    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError>;
    /// One bucket through a fresh snapshot: `None` when the bucket is missing.
    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError>;

    /// Part of one bucket through a fresh snapshot: `None` when the bucket is missing. The
    /// default selects from [`Engine::scan`]; an engine with cursors reads the range with them.
    fn range(&self, path: &Path, range: &KeyRange) -> Result<Option<Listing>, EngineError> {
        Ok(self.scan(path)?.map(|l| range.select(&l)))
    }

    fn begin_write(&self) -> Result<Self::Writer<'_>, EngineError>;
    /// A data operation (create / delete bucket, put, delete) in the write transaction.
    fn apply(tx: &mut Self::Writer<'_>, op: &Op) -> Result<(), EngineError>;
    /// Delete `key` in the write transaction, as [`Engine::apply`] does, and say whether the key
    /// was there: `Some(existed)`, which the driver compares with the model's answer, from an
    /// engine whose delete tells (bbolt's does not; crashlab's, redb's and SQLite's do). The
    /// default runs `apply` and answers `None`.
    fn delete_in(
        tx: &mut Self::Writer<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<bool>, EngineError> {
        let op = Op::Delete {
            path: path.clone(),
            key: key.clone(),
        };
        Self::apply(tx, &op).map(|()| None)
    }
    fn get_in(
        tx: &mut Self::Writer<'_>,
        path: &Path,
        key: &Name,
    ) -> Result<Option<Vec<u8>>, EngineError>;
    fn scan_in(tx: &mut Self::Writer<'_>, path: &Path) -> Result<Option<Listing>, EngineError>;
    /// [`Engine::range`] in the write transaction.
    fn range_in(
        tx: &mut Self::Writer<'_>,
        path: &Path,
        range: &KeyRange,
    ) -> Result<Option<Listing>, EngineError> {
        Ok(Self::scan_in(tx, path)?.map(|l| range.select(&l)))
    }
    /// Capability `sequences`: increment the bucket's sequence in the write transaction and
    /// return the new value (`set-seq` goes through [`Engine::apply`]).
    fn next_sequence(tx: &mut Self::Writer<'_>, path: &Path) -> Result<u64, EngineError> {
        let _ = (tx, path);
        unreachable!("{} declares no sequences", Self::Config::ENGINE)
    }
    fn commit(&self, tx: Self::Writer<'_>) -> Result<Ack, EngineError>;

    /// The engine's own integrity check: every problem found, empty when clean.
    fn check(&mut self) -> Result<Vec<String>, EngineError>;
    /// Capability `live_check`: the engine's integrity check on the open database, between
    /// transactions (readers may be open): every problem found, empty when clean.
    fn check_live(&self) -> Result<Vec<String>, EngineError> {
        unreachable!("{} declares no live check", Self::Config::ENGINE)
    }
    /// Engine-internal counters (crashlab's; other engines report zeros).
    fn counters(&self) -> Counters {
        Counters::default()
    }

    /// Capability `write_batches`: commit `ops` (data operations the model accepts) as one
    /// write batch. Never called unless the configuration declares the capability.
    fn commit_batch(&self, ops: &[Op]) -> Result<Ack, EngineError> {
        let _ = ops;
        unreachable!("{} declares no write batches", Self::Config::ENGINE)
    }

    /// Capability `concurrent_callers`: run one group of callers, each submitting its call at
    /// its delay (simulated time) through the engine's coalescer, telling `observer` about every
    /// commit as it happens; each call's answer, by index.
    #[allow(
        async_fn_in_trait,
        reason = "generic only; madsim runs it on one thread"
    )]
    /// With a `schedule`, the calls commit in exactly its batches (each a set of callers whose
    /// next call it holds) instead of as timing makes them: the checker visits every schedule.
    async fn run_group(
        db: &Rc<Self>,
        calls: &[CallSpec],
        schedule: Option<&Schedule>,
        observer: &mut dyn GroupObserver,
    ) -> Vec<(usize, Answer)> {
        let _ = (db, calls, schedule, observer);
        unreachable!("{} declares no concurrent callers", Self::Config::ENGINE)
    }

    /// Capability `reader_views`: what identifies a reader's snapshot in the file (crashlab: its
    /// meta page), so the checker can read that snapshot from a crash point's page cache.
    fn reader_token(reader: &Self::Reader<'_>) -> Vec<u8> {
        let _ = reader;
        unreachable!("{} declares no reader views", Self::Config::ENGINE)
    }

    /// Capability `reader_views`: the state a reader with `token` reads from `image` (the page
    /// cache at a crash point).
    fn read_view(image: Vec<u8>, token: &[u8], cfg: &Self::Config) -> Result<KvModel, EngineError> {
        let _ = (image, token, cfg);
        unreachable!("{} declares no reader views", Self::Config::ENGINE)
    }
}
