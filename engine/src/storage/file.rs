//! A real file: positional I/O and `sync_data` (fdatasync on Linux).

use super::Storage;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A [`Storage`] over a file. Reads and writes use `pread`/`pwrite`, so concurrent readers do
/// not contend on a file cursor. `sync` is `fdatasync`, which also persists a size change.
#[derive(Debug)]
pub struct FileStorage {
    file: File,
}

impl FileStorage {
    /// Open the file at `path`, creating it (empty) if it does not exist.
    pub fn create(path: impl AsRef<Path>) -> io::Result<FileStorage> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(FileStorage { file })
    }

    /// Open an existing file read-only. Writes and syncs fail with `PermissionDenied`.
    pub fn open_read_only(path: impl AsRef<Path>) -> io::Result<FileStorage> {
        let file = OpenOptions::new().read(true).open(path)?;
        Ok(FileStorage { file })
    }

    pub fn from_file(file: File) -> FileStorage {
        FileStorage { file }
    }
}

impl Storage for FileStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
}
