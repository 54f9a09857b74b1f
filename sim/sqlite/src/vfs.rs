//! The VFS: every file SQLite opens is a file of the session's [`SimDir`].
//!
//! A VFS is process-global in SQLite, so it is registered once (as `crashlab-simfs`, never the
//! process's default) and each connection names its session in its path: `"{id}/db"`, where
//! `id` is an entry of a process-wide registry holding that session's directory. SQLite forms
//! the journal's and the WAL's names by appending `-journal` and `-wal`, so both land in the
//! same session. The id never reaches a file or a message the trace sees.
//!
//! What the VFS does where SQLite's own unix VFS does something specific:
//!
//! - A journal or WAL file opened with the create flag syncs the directory at its first sync
//!   (unix VFS: `UNIXFILE_DIRSYNC`, set by the flag, not by whether the file existed), so the
//!   file's name is durable before SQLite relies on its contents.
//! - SQLite asks for a directory sync after deleting a journal only in `synchronous=EXTRA`
//!   (the `dirSync` argument of `xDelete`). `sqlite-vfs` 0.2 does not pass that argument on, so
//!   the session records its synchronous level and every delete syncs the directory under
//!   EXTRA: the only other delete SQLite makes in these modes is the WAL's at a clean close,
//!   after a checkpoint made the database durable, where the extra sync changes nothing a crash
//!   can observe.
//! - Short reads fill the rest of the buffer with zeros and say so (`SQLITE_IOERR_SHORT_READ`).
//! - Locks: one connection per session, but SQLite's lock levels are kept per handle and mapped
//!   onto the file's advisory lock (SHARED → shared, RESERVED and above → exclusive), so a
//!   second connection would be refused rather than silently share the file.
//! - Temporary files (statement journals, sorters) are refused: every connection runs
//!   `PRAGMA temp_store=MEMORY`, so SQLite keeps them in memory and never asks.
//! - No shared memory: WAL runs in `locking_mode=EXCLUSIVE`, where SQLite keeps the WAL index
//!   in heap memory and never calls `xShmMap` (SQLite's "WAL without shared memory").
//! - `xSleep` returns at once; `xRandomness` fills zeros (SQLite only calls it to seed its PRNG,
//!   from the default VFS, which this one never is); `xCurrentTime` is `sqlite-vfs`'s (the
//!   workloads call no date function, so SQLite never asks).

use crashlab_engine::Storage;
use crashlab_sim::fs::{DirFile, LockKind, SimDir};
use sqlite_vfs::wip::{WalIndex, WalIndexLock};
use sqlite_vfs::{DatabaseHandle, LockKind as SqlLock, OpenAccess, OpenKind, OpenOptions, Vfs};
use std::collections::BTreeMap;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

/// The VFS's name, as connections name it.
pub const VFS_NAME: &str = "crashlab-simfs";

/// The database file's name in the session's directory (SQLite adds `-journal`, `-wal`).
pub const DB_FILE: &str = "db";

/// What the VFS knows of one session.
struct Session {
    dir: SimDir,
    /// `synchronous=EXTRA`: a delete syncs the directory (see the module header).
    sync_dir_after_delete: bool,
}

static SESSIONS: Mutex<BTreeMap<u64, Session>> = Mutex::new(BTreeMap::new());
static NEXT_SESSION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();
static REGISTERED: Mutex<Option<Result<(), String>>> = Mutex::new(None);

fn sessions() -> MutexGuard<'static, BTreeMap<u64, Session>> {
    // A poisoned registry only means a panic elsewhere; entries are inserted whole.
    SESSIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Register the VFS with SQLite, once per process.
pub fn register() -> Result<(), String> {
    REGISTER.call_once(|| {
        let r = sqlite_vfs::register(VFS_NAME, SimVfs, false)
            .map_err(|e| format!("registering the SQLite VFS {VFS_NAME}: {e:?}"));
        *REGISTERED.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    });
    REGISTERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(|| Err("the SQLite VFS registration did not run".into()))
}

/// One session's entry in the registry; dropping it removes the entry.
#[derive(Debug)]
pub struct Registration {
    id: u64,
}

impl Registration {
    pub fn new(dir: SimDir, sync_dir_after_delete: bool) -> Registration {
        let id = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        let session = Session {
            dir,
            sync_dir_after_delete,
        };
        let old = sessions().insert(id, session);
        assert!(old.is_none(), "session {id} registered twice");
        Registration { id }
    }

    /// The path a connection opens.
    pub fn path(&self) -> String {
        format!("{}/{DB_FILE}", self.id)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        sessions().remove(&self.id);
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// The session and file name a VFS path names.
fn resolve(path: &str) -> io::Result<(SimDir, bool, &str)> {
    let (id, name) = path
        .split_once('/')
        .ok_or_else(|| invalid(format!("{VFS_NAME}: path {path:?} names no session")))?;
    let id: u64 = id
        .parse()
        .map_err(|_| invalid(format!("{VFS_NAME}: path {path:?} names no session")))?;
    let reg = sessions();
    let s = reg
        .get(&id)
        .ok_or_else(|| invalid(format!("{VFS_NAME}: session of {path:?} is closed")))?;
    Ok((s.dir.clone(), s.sync_dir_after_delete, name))
}

struct SimVfs;

impl Vfs for SimVfs {
    type Handle = SimHandle;

    fn open(&self, path: &str, opts: OpenOptions) -> io::Result<SimHandle> {
        let (dir, _, name) = resolve(path)?;
        if !matches!(
            opts.kind,
            OpenKind::MainDb | OpenKind::MainJournal | OpenKind::Wal
        ) {
            return Err(io::Error::other(format!(
                "{VFS_NAME}: {:?} files are kept in memory (temp_store=MEMORY)",
                opts.kind
            )));
        }
        let create = matches!(opts.access, OpenAccess::Create | OpenAccess::CreateNew);
        let file = match opts.access {
            OpenAccess::Read | OpenAccess::Write => dir.open(name)?,
            OpenAccess::Create => dir.open_or_create(name)?,
            OpenAccess::CreateNew => dir.create(name)?,
        };
        // As the unix VFS: a journal or WAL opened with the create flag syncs the directory at
        // its first sync, whether this open created it or found it (an earlier session may
        // have created it and lost its handle before any sync: its name is pending still).
        let log_opened_to_create = create && opts.kind != OpenKind::MainDb;
        Ok(SimHandle {
            file,
            dir_sync_at_first_sync: log_opened_to_create.then_some(dir),
            lock: SqlLock::None,
        })
    }

    fn delete(&self, path: &str) -> io::Result<()> {
        let (dir, sync_dir, name) = resolve(path)?;
        dir.delete(name)?;
        if sync_dir {
            dir.sync_dir()?;
        }
        Ok(())
    }

    fn exists(&self, path: &str) -> io::Result<bool> {
        let (dir, _, name) = resolve(path)?;
        dir.exists(name)
    }

    fn temporary_name(&self) -> String {
        // Never opened: `open` refuses temporary files.
        "temporary".into()
    }

    fn random(&self, buffer: &mut [i8]) {
        buffer.fill(0);
    }

    fn sleep(&self, duration: Duration) -> Duration {
        duration
    }
}

/// An open file of a session.
pub struct SimHandle {
    file: DirFile,
    /// Set on a journal or WAL opened to create: its first sync syncs the directory too.
    dir_sync_at_first_sync: Option<SimDir>,
    lock: SqlLock,
}

fn lock_rank(l: SqlLock) -> u8 {
    match l {
        SqlLock::None => 0,
        SqlLock::Shared => 1,
        SqlLock::Reserved => 2,
        SqlLock::Pending => 3,
        SqlLock::Exclusive => 4,
    }
}

impl DatabaseHandle for SimHandle {
    type WalIndex = NoSharedMemory;

    fn size(&self) -> io::Result<u64> {
        self.file.len()
    }

    fn read_exact_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let len = self.file.len()?;
        let have = usize::try_from(len.saturating_sub(offset))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        if have > 0 {
            self.file.read_at(offset, &mut buf[..have])?;
        }
        buf[have..].fill(0);
        if have < buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "short read: zero-filled",
            ));
        }
        Ok(())
    }

    fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_at(offset, buf)
    }

    fn sync(&mut self, _data_only: bool) -> io::Result<()> {
        self.file.sync()?;
        if let Some(dir) = &self.dir_sync_at_first_sync {
            dir.sync_dir()?;
            self.dir_sync_at_first_sync = None;
        }
        Ok(())
    }

    fn set_len(&mut self, size: u64) -> io::Result<()> {
        self.file.set_len(size)
    }

    fn lock(&mut self, lock: SqlLock) -> io::Result<bool> {
        let advisory = match lock_rank(lock) {
            0 => None,
            1 => Some(LockKind::Shared),
            _ => Some(LockKind::Exclusive),
        };
        let got = match advisory {
            None => {
                self.file.unlock();
                true
            }
            Some(kind) => match self.file.try_lock(kind) {
                Ok(()) => true,
                Err(e @ crashlab_sim::fs::LockError::Stale { .. }) => return Err(e.into()),
                Err(crashlab_sim::fs::LockError::Held { .. }) => false,
            },
        };
        if got {
            self.lock = lock;
        }
        Ok(got)
    }

    fn reserved(&mut self) -> io::Result<bool> {
        Ok(lock_rank(self.lock) >= lock_rank(SqlLock::Reserved))
    }

    fn current_lock(&self) -> io::Result<SqlLock> {
        Ok(self.lock)
    }

    fn wal_index(&self, _readonly: bool) -> io::Result<NoSharedMemory> {
        Err(no_shm())
    }
}

fn no_shm() -> io::Error {
    io::Error::other(format!(
        "{VFS_NAME}: no shared memory (WAL runs in locking_mode=EXCLUSIVE)"
    ))
}

/// The WAL index type `sqlite-vfs` asks for: disabled, so SQLite is told there is no shared
/// memory (it never asks in exclusive locking mode).
pub struct NoSharedMemory;

impl WalIndex for NoSharedMemory {
    fn enabled() -> bool {
        false
    }

    fn map(&mut self, _region: u32) -> io::Result<[u8; 32768]> {
        Err(no_shm())
    }

    fn lock(&mut self, _locks: Range<u8>, _lock: WalIndexLock) -> io::Result<bool> {
        Err(no_shm())
    }

    fn delete(self) -> io::Result<()> {
        Ok(())
    }
}
