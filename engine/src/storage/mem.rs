//! Plain memory: no faults, every write immediately "durable". For unit tests and benchmarks
//! that want no I/O cost.

use super::Storage;
use std::io;
use std::sync::{Arc, RwLock};

/// A [`Storage`] held in memory. Clones share the same bytes, so a test can keep a handle and
/// reopen a database on it after dropping the first `Db`.
#[derive(Clone, Debug, Default)]
pub struct MemStorage {
    bytes: Arc<RwLock<Vec<u8>>>,
}

/// Largest length `MemStorage` accepts: a bound so a corrupt length never asks for terabytes.
const MEM_LEN_MAX: u64 = 1 << 40;

impl MemStorage {
    pub fn new() -> MemStorage {
        MemStorage::default()
    }

    pub fn from_bytes(bytes: Vec<u8>) -> MemStorage {
        MemStorage {
            bytes: Arc::new(RwLock::new(bytes)),
        }
    }

    /// A copy of the current contents.
    pub fn snapshot(&self) -> Vec<u8> {
        self.read_guard().clone()
    }

    fn read_guard(&self) -> std::sync::RwLockReadGuard<'_, Vec<u8>> {
        // A poisoned lock only means another thread panicked mid-access; the bytes are plain data.
        self.bytes.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_guard(&self) -> std::sync::RwLockWriteGuard<'_, Vec<u8>> {
        self.bytes.write().unwrap_or_else(|e| e.into_inner())
    }
}

fn to_index(v: u64) -> io::Result<usize> {
    if v > MEM_LEN_MAX {
        return Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            "length beyond MemStorage bound",
        ));
    }
    usize::try_from(v).map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "length overflow"))
}

impl Storage for MemStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let bytes = self.read_guard();
        let start = to_index(offset)?;
        let end = start.checked_add(buf.len()).filter(|&e| e <= bytes.len());
        match end {
            Some(end) => {
                buf.copy_from_slice(&bytes[start..end]);
                Ok(())
            }
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past end",
            )),
        }
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut bytes = self.write_guard();
        let start = to_index(offset)?;
        let end = to_index(offset.saturating_add(buf.len() as u64))?;
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[start..end].copy_from_slice(buf);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.read_guard().len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = to_index(len)?;
        self.write_guard().resize(len, 0);
        Ok(())
    }
}
