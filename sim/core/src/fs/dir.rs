//! The directory an engine of several files is opened on: a [`SimFs`] behind the run's power
//! switch. It is what [`Engine::open_dir`](crate::adapter::Engine::open_dir) gets, as a
//! single-file engine gets one [`Storage`].
//!
//! Every call that changes the file system — a file's write, sync or `set_len`, and every
//! metadata operation (create, rename, delete, directory sync) — counts as one storage call of
//! the power switch, so a power cut can land on a rename as it lands on a write; from the cut
//! until the driver reboots, every call fails. Reads of data count too, as on one file; the
//! directory's listings and a file's length do not (they are answered from memory, and fail
//! only once the power is off).

use super::{FsFile, LockError, LockKind, SimFs};
use crate::power::{PowerSwitch, Switched};
use crashlab_engine::Storage;
use std::io;
use std::sync::Arc;

/// Told of every call that changes the file system, just before it is made (power on), with
/// the file system as the call finds it: the crash-state checker's crash points.
pub type CallObserver = Arc<dyn Fn(&SimFs) + Send + Sync>;

/// One open of an engine's directory. Cheap to clone: clones share the file system and switch.
#[derive(Clone)]
pub struct SimDir {
    fs: SimFs,
    power: PowerSwitch,
    observer: Option<CallObserver>,
}

impl std::fmt::Debug for SimDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimDir")
            .field("fs", &self.fs)
            .field("power", &self.power)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

impl SimDir {
    pub fn new(fs: SimFs, power: PowerSwitch) -> SimDir {
        SimDir {
            fs,
            power,
            observer: None,
        }
    }

    /// [`SimDir::new`], with `observer` told of every call that changes the file system
    /// (files opened through this directory included) before it is made.
    pub fn observed(fs: SimFs, power: PowerSwitch, observer: CallObserver) -> SimDir {
        SimDir {
            fs,
            power,
            observer: Some(observer),
        }
    }

    /// The file system underneath, for the harness (images, figures, crash states): an engine
    /// that used it would bypass the power switch.
    pub fn fs(&self) -> &SimFs {
        &self.fs
    }

    fn tick(&self) -> io::Result<()> {
        observe(&self.observer, &self.power, &self.fs);
        self.power.tick()
    }

    fn live(&self) -> io::Result<()> {
        if self.power.is_off() {
            return Err(io::Error::other("power lost"));
        }
        Ok(())
    }

    fn file(&self, file: FsFile) -> DirFile {
        DirFile {
            file: Switched {
                inner: file,
                switch: self.power.clone(),
            },
            fs: self.fs.clone(),
            observer: self.observer.clone(),
        }
    }

    /// Open the existing file `name`.
    pub fn open(&self, name: &str) -> io::Result<DirFile> {
        self.live()?;
        Ok(self.file(self.fs.open(name)?))
    }

    /// Create an empty file `name` (`O_CREAT | O_EXCL`): pending until [`SimDir::sync_dir`].
    pub fn create(&self, name: &str) -> io::Result<DirFile> {
        self.tick()?;
        Ok(self.file(self.fs.create(name)?))
    }

    /// Open `name`, creating it when missing (`O_CREAT`).
    pub fn open_or_create(&self, name: &str) -> io::Result<DirFile> {
        match self.open(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create(name),
            other => other,
        }
    }

    /// Rename `from` over `to`, atomically: pending until [`SimDir::sync_dir`].
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.tick()?;
        self.fs.rename(from, to)
    }

    /// Delete `name`: pending until [`SimDir::sync_dir`].
    pub fn delete(&self, name: &str) -> io::Result<()> {
        self.tick()?;
        self.fs.delete(name)
    }

    /// Make every metadata operation so far durable (`fsync` of the directory).
    pub fn sync_dir(&self) -> io::Result<()> {
        self.tick()?;
        self.fs.sync_dir()
    }

    pub fn exists(&self, name: &str) -> io::Result<bool> {
        self.live()?;
        Ok(self.fs.exists(name))
    }

    /// The names, in order.
    pub fn list(&self) -> io::Result<Vec<String>> {
        self.live()?;
        Ok(self.fs.list())
    }
}

/// Tell `observer` of a call about to change `fs`, unless the power is off (the call fails).
fn observe(observer: &Option<CallObserver>, power: &PowerSwitch, fs: &SimFs) {
    if let Some(o) = observer {
        if !power.is_off() {
            o(fs);
        }
    }
}

/// An open file of a [`SimDir`]: its data behind the power switch, and its advisory lock.
pub struct DirFile {
    file: Switched<FsFile>,
    fs: SimFs,
    observer: Option<CallObserver>,
}

impl std::fmt::Debug for DirFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirFile")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl DirFile {
    /// The handle underneath (its file, its disk), for the harness.
    pub fn fs_file(&self) -> &FsFile {
        &self.file.inner
    }

    /// See [`FsFile::try_lock`]; refused once the power is off.
    pub fn try_lock(&self, kind: LockKind) -> Result<(), LockError> {
        self.file.inner.try_lock(kind)
    }

    pub fn unlock(&self) {
        self.file.inner.unlock()
    }

    pub fn lock_held(&self) -> Option<LockKind> {
        self.file.inner.lock_held()
    }

    fn observe(&self) {
        observe(&self.observer, &self.file.switch, &self.fs);
    }
}

impl Storage for DirFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.observe();
        self.file.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        self.observe();
        self.file.sync()
    }
    fn len(&self) -> io::Result<u64> {
        if self.file.switch.is_off() {
            return Err(io::Error::other("power lost"));
        }
        self.file.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.observe();
        self.file.set_len(len)
    }
}
