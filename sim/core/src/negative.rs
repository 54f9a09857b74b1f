//! The negative controls built as storage wrappers — deliberately broken I/O that the harness must
//! catch, used only when a run's profile (or `crashlab check --control`) names them.

use crate::disk::SimDisk;
use crashlab_engine::Storage;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Drops every sync that follows a data-page write, keeping the ones that follow a meta-page
/// write: the barrier between a commit's data and its meta is gone. Over a [`SimDisk`], or any
/// storage (a SimFs file).
pub struct NoBarrier<S = SimDisk> {
    disk: S,
    /// Writes below this offset are the meta (crashlab: two pages; redb: its header page).
    meta_len: u64,
    last_write_was_data: AtomicBool,
}

impl<S: Storage> NoBarrier<S> {
    /// For crashlab's engine, whose two meta pages open the file.
    pub fn new(disk: S, page_size: u32) -> NoBarrier<S> {
        NoBarrier::with_meta_len(disk, 2 * u64::from(page_size))
    }

    /// For an engine whose meta / header is the file's first `meta_len` bytes.
    pub fn with_meta_len(disk: S, meta_len: u64) -> NoBarrier<S> {
        NoBarrier {
            disk,
            meta_len,
            last_write_was_data: AtomicBool::new(false),
        }
    }
}

impl<S: Storage> Storage for NoBarrier<S> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.disk.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let meta = offset < self.meta_len;
        self.last_write_was_data.store(!meta, Ordering::Relaxed);
        self.disk.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        if self.last_write_was_data.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        self.disk.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.disk.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.disk.set_len(len)
    }
}

/// Drops the sync that directly follows a growing `set_len` (returns `Ok`, syncs nothing):
/// negative control (d), file growth never made durable before use. Its disk is an
/// `own-barrier` one ([`LengthModel::OwnBarrier`](crate::disk::LengthModel)), where that sync is
/// the only one that persists the new length, so the meta that references pages past the old
/// end survives a power cut while the length that holds them does not. The same disk without
/// this wrapper is the positive twin, `fdatasync-disk`, on which a correct engine must pass.
pub struct DropGrowthSync<S = SimDisk> {
    disk: S,
    /// The last call (reads and `len` aside) was a `set_len` that grew the file.
    grew: AtomicBool,
}

impl<S: Storage> DropGrowthSync<S> {
    pub fn new(disk: S) -> DropGrowthSync<S> {
        DropGrowthSync {
            disk,
            grew: AtomicBool::new(false),
        }
    }
}

impl<S: Storage> Storage for DropGrowthSync<S> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.disk.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.grew.store(false, Ordering::Relaxed);
        self.disk.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        if self.grew.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        self.disk.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.disk.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        let grows = len > self.disk.len()?;
        self.grew.store(false, Ordering::Relaxed);
        self.disk.set_len(len)?;
        self.grew.store(grows, Ordering::Relaxed);
        Ok(())
    }
}
