//! A handle on one SimFs file: the engine's [`Storage`] over the file's data, and its advisory
//! lock. Data calls go straight to the file's [`SimDisk`] (after checking the handle is not
//! stale), so they behave — faults, draws, figures — exactly as the disk's own calls do.

use super::lock::{LockError, LockKind};
use super::meta::FileId;
use super::SimFs;
use crate::disk::SimDisk;
use crashlab_engine::Storage;
use std::io;

/// An open file. Follows its file through renames and deletes; stale after a power cut.
pub struct FsFile {
    fs: SimFs,
    /// The name it was opened by, for messages.
    name: String,
    file: FileId,
    disk: SimDisk,
    epoch: u64,
    handle: u64,
}

impl std::fmt::Debug for FsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsFile")
            .field("name", &self.name)
            .field("file", &self.file)
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl FsFile {
    pub(super) fn new(
        fs: SimFs,
        name: &str,
        file: FileId,
        disk: SimDisk,
        epoch: u64,
        handle: u64,
    ) -> FsFile {
        FsFile {
            fs,
            name: name.to_string(),
            file,
            disk,
            epoch,
            handle,
        }
    }

    /// The file this handle is open on.
    pub fn file(&self) -> FileId {
        self.file
    }

    /// The file's data.
    pub fn disk(&self) -> &SimDisk {
        &self.disk
    }

    fn is_stale(&self) -> bool {
        self.fs.lock().epoch != self.epoch
    }

    /// `Err` when the power was cut since this handle was opened.
    fn live(&self) -> io::Result<()> {
        if self.is_stale() {
            return Err(io::Error::other(format!(
                "simfs: stale handle on {:?}: the power was cut since it was opened",
                self.name
            )));
        }
        Ok(())
    }

    /// Take a `kind` lock on the file, or change the kind this handle holds; refused with
    /// [`LockError::Held`] when another handle's lock conflicts. Never waits.
    pub fn try_lock(&self, kind: LockKind) -> Result<(), LockError> {
        let mut inner = self.fs.lock();
        if inner.epoch != self.epoch {
            return Err(LockError::Stale {
                name: self.name.clone(),
            });
        }
        inner
            .locks
            .lock(self.file, self.handle, kind)
            .map_err(|held| LockError::Held {
                name: self.name.clone(),
                wanted: kind,
                held,
            })
    }

    /// Drop this handle's lock, if it holds one.
    pub fn unlock(&self) {
        let mut inner = self.fs.lock();
        if inner.epoch == self.epoch {
            inner.locks.unlock(self.file, self.handle);
        }
    }

    /// The lock this handle holds.
    pub fn lock_held(&self) -> Option<LockKind> {
        let inner = self.fs.lock();
        if inner.epoch != self.epoch {
            return None;
        }
        inner.locks.held_by(self.file, self.handle)
    }
}

impl Drop for FsFile {
    fn drop(&mut self) {
        self.unlock();
    }
}

/// Truncation is `set_len` to a smaller length; a file's length is durable when its disk's
/// length model says, at a sync of the file.
impl Storage for FsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.live()?;
        self.disk.read_at(offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.live()?;
        self.disk.write_at(offset, buf)
    }

    /// The file's data and, as the length model says, its length: never its name.
    fn sync(&self) -> io::Result<()> {
        self.live()?;
        self.disk.sync()
    }

    fn len(&self) -> io::Result<u64> {
        self.live()?;
        self.disk.len()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.live()?;
        self.disk.set_len(len)
    }
}
