//! `SimFs`: a simulated directory of files with crash semantics, for engines that keep more than
//! one file (a journal or a WAL beside the database, an LSM tree's tables and manifest).
//!
//! # Model
//!
//! One directory of named files. Each file's *data* is a [`SimDisk`] of its own — pending
//! sectors over a durable image, the disk's length model, every fault kind of the disk's fault
//! table, drawn from the file's own stream — so file data behaves exactly as the single-file
//! simulator's disk does, by construction. The *directory* is the file system's part: names
//! pointing at files ([`FileId`]s), changed by metadata operations (create, rename, delete).
//! Each operation is visible at once and *pending* until the directory is synced
//! ([`SimFs::sync_dir`]); a file's length is pending until the file is synced, as its disk's
//! [`LengthModel`](crate::disk::LengthModel) says. A power cut ([`SimFs::crash`]) keeps a seeded
//! choice of the pending metadata operations, as the file system's [`MetaModel`] allows, and
//! crashes every surviving file's data as its disk crashes; a file no name points at afterwards
//! is gone.
//!
//! Seeds: the file created `n`-th (from 0) has a disk seeded with `seed ^ n * φ` (φ =
//! 0x9E37_79B9_7F4A_7C15), so the first file draws exactly as a lone `SimDisk` on the same seed
//! would: a single-file engine on one SimFs file runs the very run it runs on a `SimDisk`. The
//! metadata choices of power cuts draw from their own stream (`SimRng::derive(seed,
//! "simfs metadata")`), which nothing else touches, and draw nothing when nothing is pending.
//!
//! # Fault table
//!
//! | fault | what it does here | what it models |
//! |---|---|---|
//! | file data (every fault of [`crate::disk`]) | each file is a `SimDisk`: pending sectors kept or lost at a cut, tears, EIO, latent sectors, bit flips, misdirected writes, ENOSPC, lying syncs, garbage, both length models | a file's data and size on a real device, as the disk's table says |
//! | `ordered` metadata ([`MetaModel::Ordered`]) | a cut keeps a prefix of the pending metadata operations (uniformly one of the `n + 1`), independently of any file's data | ext4 `data=ordered`, XFS: a journal that commits metadata in order; a rename (or create) may survive while the file's unsynced data does not |
//! | `strict` metadata ([`MetaModel::Strict`]) | a cut keeps each pending operation with probability 1/2, independently; the kept ones replay in order and a moot one (its file not where it acted) is dropped | what POSIX promises without a directory `fsync`: nothing but each operation's atomicity; file systems without ordered journalling, and sync-less delayed metadata |
//! | rename (atomic replace) | one operation: after a cut the target names the old file or the new one, never neither nor both; the source goes with it | `rename(2)` over an existing name |
//! | `lying_sync` | a directory sync returns `Ok` and persists nothing, like a lying file sync | a device ignoring flushes: the negative control of the disk, for metadata too |
//! | debug switch `renames_durable_at_once` | every rename makes the directory durable at once (everything pending before it included) | a negative control: the simulator that forgot rename is a pending metadata operation, which hides missing directory syncs |
//!
//! Deliberately not modelled: directory hierarchy (one directory; `/` in a name is refused),
//! hard links (a file has at most one name), symbolic links, permissions and timestamps; a
//! partial rename (source and target both, or neither, after a cut); a file `fsync` that also
//! commits the directory (ext4 commits its whole journal on `fsync`, so a synced new file keeps
//! its name there: here only a directory sync does, which is what POSIX asks for and stricter
//! than ext4); faults of directory syncs (EIO, a dropped entry) and of metadata operations
//! themselves; the cost of metadata operations (no simulated time); data of a file that no name
//! points at after a cut (deleted files are not recoverable); ext4's `auto_da_alloc`, which
//! flushes a file's data when it is renamed over another.
//!
//! # Handles
//!
//! [`SimFs::open`] returns an [`FsFile`], which implements the engine's
//! [`Storage`](crashlab_engine::Storage): single-file engines run on it unchanged. A handle
//! follows its file, not its name: it survives a rename, and a deleted file stays readable and
//! writable through handles opened before (POSIX unlink semantics). A power cut makes every
//! handle opened before it stale: its calls fail with an I/O error, and its locks are gone.
//!
//! # Limits
//!
//! Names are 1 to [`NAME_LEN_MAX`] bytes, without `/` or NUL, not `.` or `..`
//! (`InvalidInput`); at most [`FILE_COUNT_MAX`] files exist at once (`StorageFull`). A missing
//! file is `NotFound`, an existing one passed to [`SimFs::create`] is `AlreadyExists`.

mod crash;
mod dir;
mod file;
mod harness;
mod lock;
mod meta;
mod model;
mod name;
pub mod run;
#[cfg(test)]
mod tests;

pub use crash::FsCrashOutcome;
pub use dir::{CallObserver, DirFile, SimDir};
pub use file::FsFile;
pub use lock::{LockError, LockKind};
pub use meta::{
    crash_states, replay, replay_chosen, Directory, FileId, MetaOp, MetaSubset,
    STRICT_ENUMERATION_OPS_MAX,
};
pub use model::MetaModel;
pub use name::NAME_LEN_MAX;

use crate::disk::{DiskConfig, FaultConfig, FaultCounts, IoStats, SimDisk};
use crate::rng::SimRng;
use lock::LockTable;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// Most files that exist at once (named, or kept by a pending operation).
pub const FILE_COUNT_MAX: usize = 1 << 16;

/// Spreads file seeds apart: the 64-bit golden ratio.
const FILE_SEED_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// Everything that shapes a file system apart from its seed and its files' disk configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsConfig {
    /// What a power cut keeps of the pending metadata operations.
    pub model: MetaModel,
    /// Negative control: every rename makes the directory durable at once.
    pub renames_durable_at_once: bool,
}

/// What the directory did, over the file system's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsCounts {
    pub meta_ops: u64,
    pub dir_syncs: u64,
    /// Directory syncs that returned `Ok` and persisted nothing (`lying_sync`).
    pub lying_dir_syncs: u64,
    pub crashes: u64,
    /// Pending metadata operations a power cut kept, and lost (moot ones among the lost).
    pub meta_ops_kept_in_crash: u64,
    pub meta_ops_lost_in_crash: u64,
    /// Files gone at a power cut because no name pointed at them any more.
    pub files_gone_in_crash: u64,
}

/// A simulated directory. Cheap to clone: clones share one file system.
#[derive(Clone)]
pub struct SimFs {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for SimFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("SimFs")
            .field("seed", &inner.seed)
            .field("model", &inner.config.model)
            .field("names", &inner.current)
            .field("pending", &inner.pending.len())
            .finish_non_exhaustive()
    }
}

struct Inner {
    seed: u64,
    disk: DiskConfig,
    config: FsConfig,
    meta_rng: SimRng,
    /// The directory as calls see it: `durable` with every pending operation applied.
    current: Directory,
    /// The directory as of the last directory sync (or power cut).
    durable: Directory,
    /// Metadata operations since then, in order; each applied to `current` when made.
    pending: Vec<MetaOp>,
    /// Every file a name, durable or current, or a pending operation refers to.
    files: BTreeMap<FileId, SimDisk>,
    next_file: u64,
    /// Power cuts so far: a handle opened in an earlier epoch is stale.
    epoch: u64,
    locks: LockTable,
    next_handle: u64,
    counts: FsCounts,
    /// Fault counts and I/O figures of files that are gone.
    gone_faults: FaultCounts,
    gone_io: IoStats,
    /// Every file's disk logs the faults it injects (files created later too).
    log_faults: bool,
}

fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("simfs: no file {name:?}"))
}

impl SimFs {
    /// An empty directory whose files have disks configured as `disk`. Panics on a disk
    /// configuration that is a programmer error, as [`SimDisk::new`] does.
    pub fn new(seed: u64, disk: DiskConfig, config: FsConfig) -> SimFs {
        // Every file's disk asserts it when made: check it before the first file.
        crate::disk::assert_config(&disk);
        let inner = Inner {
            seed,
            disk,
            config,
            meta_rng: SimRng::derive(seed, "simfs metadata"),
            current: Directory::new(),
            durable: Directory::new(),
            pending: Vec::new(),
            files: BTreeMap::new(),
            next_file: 0,
            epoch: 0,
            locks: LockTable::default(),
            next_handle: 0,
            counts: FsCounts::default(),
            gone_faults: FaultCounts::default(),
            gone_io: IoStats::default(),
            log_faults: false,
        };
        SimFs {
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked mid-call; every mutation asserts
        // before it changes anything, or completes.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Create an empty file named `name` (`O_CREAT | O_EXCL`) and open it. The create is pending
    /// until the directory is synced.
    pub fn create(&self, name: &str) -> io::Result<FsFile> {
        name::check(name)?;
        let mut inner = self.lock();
        if inner.current.contains_key(name) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("simfs: file {name:?} exists"),
            ));
        }
        if inner.files.len() >= FILE_COUNT_MAX {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("simfs: {FILE_COUNT_MAX} files exist, the most SimFs holds at once"),
            ));
        }
        let file = FileId(inner.next_file);
        inner.next_file += 1;
        let seed = inner.seed ^ file.0.wrapping_mul(FILE_SEED_STEP);
        let disk = SimDisk::new(seed, inner.disk.clone());
        if inner.log_faults {
            disk.log_faults();
        }
        inner.files.insert(file, disk);
        inner.record(MetaOp::Create {
            name: name.to_string(),
            file,
        });
        Ok(inner.handle(self, name, file))
    }

    /// Open the existing file `name`.
    pub fn open(&self, name: &str) -> io::Result<FsFile> {
        name::check(name)?;
        let mut inner = self.lock();
        let file = *inner.current.get(name).ok_or_else(|| not_found(name))?;
        Ok(inner.handle(self, name, file))
    }

    /// Open `name`, creating it when missing (`O_CREAT`).
    pub fn open_or_create(&self, name: &str) -> io::Result<FsFile> {
        match self.open(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create(name),
            other => other,
        }
    }

    /// Rename `from` to `to`, replacing what `to` named (atomically). Pending until the
    /// directory is synced. Renaming a file to its own name does nothing.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        name::check(from)?;
        name::check(to)?;
        let mut inner = self.lock();
        let file = *inner.current.get(from).ok_or_else(|| not_found(from))?;
        if from == to {
            return Ok(());
        }
        inner.record(MetaOp::Rename {
            from: from.to_string(),
            to: to.to_string(),
            file,
        });
        if inner.config.renames_durable_at_once {
            inner.persist_directory();
        }
        Ok(())
    }

    /// Delete `name`. Pending until the directory is synced; handles open on the file keep
    /// working on it.
    pub fn delete(&self, name: &str) -> io::Result<()> {
        name::check(name)?;
        let mut inner = self.lock();
        let file = *inner.current.get(name).ok_or_else(|| not_found(name))?;
        inner.record(MetaOp::Delete {
            name: name.to_string(),
            file,
        });
        Ok(())
    }

    /// Sync the directory: every pending metadata operation becomes durable (nothing does when
    /// the disk's syncs lie).
    pub fn sync_dir(&self) -> io::Result<()> {
        let mut inner = self.lock();
        inner.counts.dir_syncs += 1;
        if inner.disk.faults.lying_sync {
            inner.counts.lying_dir_syncs += 1;
            return Ok(());
        }
        inner.persist_directory();
        Ok(())
    }

    /// The names, in order.
    pub fn list(&self) -> Vec<String> {
        self.lock().current.keys().cloned().collect()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.lock().current.contains_key(name)
    }

    /// The directory as calls see it.
    pub fn directory(&self) -> Directory {
        self.lock().current.clone()
    }

    /// The directory as of the last directory sync or power cut.
    pub fn durable_directory(&self) -> Directory {
        self.lock().durable.clone()
    }

    /// The metadata operations made since the last directory sync or power cut, in order.
    pub fn pending_meta(&self) -> Vec<MetaOp> {
        self.lock().pending.clone()
    }

    /// Every crash state of the metadata this file system's model allows now (see
    /// [`crash_states`]).
    pub fn meta_crash_states(&self) -> Result<Vec<MetaSubset>, String> {
        let inner = self.lock();
        crash_states(&inner.durable, &inner.pending, inner.config.model)
    }

    /// The directory a power cut keeping `subset` of the pending operations would leave, or why
    /// the model does not allow it. Changes nothing.
    pub fn directory_after(&self, subset: &MetaSubset) -> Result<Directory, String> {
        let inner = self.lock();
        replay(&inner.durable, &inner.pending, subset, inner.config.model)
    }

    /// The data of file `name`: its disk, shared (faults, figures and images for the harness).
    pub fn file_disk(&self, name: &str) -> Option<SimDisk> {
        let inner = self.lock();
        let file = inner.current.get(name)?;
        Some(inner.files[file].clone())
    }

    /// Every name and what reads of it see now.
    pub fn images(&self) -> BTreeMap<String, Vec<u8>> {
        let inner = self.lock();
        let files = &inner.files;
        inner
            .current
            .iter()
            .map(|(name, f)| (name.clone(), files[f].image()))
            .collect()
    }

    /// Make the directory and every file's data and length durable: the harness's own barrier
    /// (no fault applies, nothing is counted).
    pub fn make_all_durable(&self) {
        let mut inner = self.lock();
        inner.persist_directory();
        for disk in inner.files.values() {
            disk.make_all_durable();
        }
    }

    /// Make the directory durable, and nothing else: the harness's barrier for metadata.
    pub fn make_meta_durable(&self) {
        self.lock().persist_directory();
    }

    /// Replace every file's faults, now and for files created later (see
    /// [`SimDisk::set_faults`]).
    pub fn set_faults(&self, faults: FaultConfig) {
        let mut inner = self.lock();
        for disk in inner.files.values() {
            disk.set_faults(faults.clone());
        }
        inner.disk.faults = faults;
    }

    pub fn config(&self) -> FsConfig {
        self.lock().config
    }

    pub fn seed(&self) -> u64 {
        self.lock().seed
    }

    pub fn counts(&self) -> FsCounts {
        self.lock().counts
    }

    /// The fault counts of every file, gone ones included, summed.
    pub fn fault_counts(&self) -> FaultCounts {
        let inner = self.lock();
        let mut sum = inner.gone_faults;
        for disk in inner.files.values() {
            sum.accumulate(&disk.fault_counts());
        }
        sum
    }

    /// The I/O figures of every file, gone ones included, summed.
    pub fn io_stats(&self) -> IoStats {
        let inner = self.lock();
        let mut sum = inner.gone_io;
        for disk in inner.files.values() {
            sum.accumulate(&disk.io_stats());
        }
        sum
    }
}

impl Inner {
    /// Record a metadata operation the caller checked applies: it changes the directory calls
    /// see now and is pending.
    fn record(&mut self, op: MetaOp) {
        let applied = op.apply(&mut self.current);
        assert!(applied, "{op} recorded but does not apply to the directory");
        self.pending.push(op);
        self.counts.meta_ops += 1;
    }

    /// The directory as calls see it becomes durable; files nothing refers to any more go.
    fn persist_directory(&mut self) {
        self.durable = self.current.clone();
        self.pending.clear();
        self.drop_unreferenced();
    }

    /// Forget files that no name (durable or current) and no pending operation refers to;
    /// handles open on them keep their disks.
    fn drop_unreferenced(&mut self) -> u64 {
        let mut live: BTreeSet<FileId> = self.current.values().copied().collect();
        live.extend(self.durable.values().copied());
        live.extend(self.pending.iter().map(MetaOp::file));
        let gone: Vec<FileId> = self
            .files
            .keys()
            .filter(|f| !live.contains(f))
            .copied()
            .collect();
        for f in &gone {
            let disk = self.files.remove(f).expect("a file listed");
            self.gone_faults.accumulate(&disk.fault_counts());
            self.gone_io.accumulate(&disk.io_stats());
        }
        gone.len() as u64
    }

    fn handle(&mut self, fs: &SimFs, name: &str, file: FileId) -> FsFile {
        self.next_handle += 1;
        FsFile::new(
            fs.clone(),
            name,
            file,
            self.files[&file].clone(),
            self.epoch,
            self.next_handle,
        )
    }
}

// `Storage` needs `Send + Sync`, and a parallel sweep hands file systems between threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SimFs>();
    assert_send_sync::<FsFile>();
};
