//! The negative controls built as storage wrappers — deliberately broken I/O that the harness must
//! catch, used only when a run's profile (or `crashlab check --control`) names them.

use crate::disk::SimDisk;
use crashlab_engine::Storage;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Drops every sync that follows a data-page write, keeping the ones that follow a meta-page
/// write: the barrier between a commit's data and its meta is gone.
pub struct NoBarrier {
    disk: SimDisk,
    /// Writes below this offset are the meta (crashlab: two pages; redb: its header page).
    meta_len: u64,
    last_write_was_data: AtomicBool,
}

impl NoBarrier {
    /// For crashlab's engine, whose two meta pages open the file.
    pub fn new(disk: SimDisk, page_size: u32) -> NoBarrier {
        NoBarrier::with_meta_len(disk, 2 * u64::from(page_size))
    }

    /// For an engine whose meta / header is the file's first `meta_len` bytes.
    pub fn with_meta_len(disk: SimDisk, meta_len: u64) -> NoBarrier {
        NoBarrier {
            disk,
            meta_len,
            last_write_was_data: AtomicBool::new(false),
        }
    }
}

impl Storage for NoBarrier {
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

/// A disk whose sync persists written data but not a change of size — fdatasync without the
/// metadata flush, the reason bbolt fsyncs after growing its file — except the sync that directly
/// follows a growing `set_len`, taken as the full sync a correct engine issues there. Bytes past
/// the disk's length live only in memory (a `tail`) until such a sync moves them onto the disk,
/// so a power cut loses them.
///
/// With `drop_growth_sync` the growth sync is dropped as well: negative control (d), file growth
/// never made durable before use. The meta that references pages past the old end then survives
/// a power cut while those pages do not. Without it, the wrapper is the positive twin: the same
/// disk model, on which a correct engine must pass.
///
/// The tail is the page cache's: clones share it, so it survives a reopen of the same run (a
/// process restart keeps the page cache) and [`GrowthBarrier::power_cut`] drops it.
#[derive(Clone)]
pub struct GrowthBarrier {
    disk: SimDisk,
    drop_growth_sync: bool,
    state: Arc<Mutex<Tail>>,
}

#[derive(Default)]
struct Tail {
    /// Bytes from the disk's length up to the length the engine sees.
    bytes: Vec<u8>,
    /// The last call was a `set_len` that grew the file.
    grew: bool,
}

impl GrowthBarrier {
    pub fn new(disk: SimDisk, drop_growth_sync: bool) -> GrowthBarrier {
        GrowthBarrier {
            disk,
            drop_growth_sync,
            state: Arc::new(Mutex::new(Tail::default())),
        }
    }

    /// The power is cut: the bytes past the disk's length were only in memory.
    pub fn power_cut(&self) {
        *self.lock() = Tail::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the disk ends and the tail begins: the split of `offset..offset + n` is at
    /// `offset + head`, `head` bytes going to the disk.
    fn head(&self, offset: u64, n: usize) -> io::Result<(u64, usize)> {
        let disk_len = self.disk.len()?;
        let head = disk_len.saturating_sub(offset).min(n as u64);
        Ok((disk_len, usize::try_from(head).expect("head is at most n")))
    }
}

/// Index `offset - disk_len` into the tail.
fn tail_index(offset: u64, disk_len: u64) -> usize {
    usize::try_from(offset - disk_len).expect("a tail index fits memory")
}

impl Storage for GrowthBarrier {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let tail = self.lock();
        let (disk_len, head) = self.head(offset, buf.len())?;
        let end = offset + buf.len() as u64;
        if end > disk_len + tail.bytes.len() as u64 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("read of {offset}..{end} past the end"),
            ));
        }
        let (on_disk, in_tail) = buf.split_at_mut(head);
        if !on_disk.is_empty() {
            self.disk.read_at(offset, on_disk)?;
        }
        if !in_tail.is_empty() {
            let at = tail_index(offset + head as u64, disk_len);
            in_tail.copy_from_slice(&tail.bytes[at..at + in_tail.len()]);
        }
        Ok(())
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut tail = self.lock();
        tail.grew = false;
        let (disk_len, head) = self.head(offset, buf.len())?;
        let (on_disk, in_tail) = buf.split_at(head);
        if !on_disk.is_empty() {
            self.disk.write_at(offset, on_disk)?;
        }
        if !in_tail.is_empty() {
            let at = tail_index(offset + head as u64, disk_len);
            if tail.bytes.len() < at + in_tail.len() {
                tail.bytes.resize(at + in_tail.len(), 0);
            }
            tail.bytes[at..at + in_tail.len()].copy_from_slice(in_tail);
        }
        Ok(())
    }
    fn sync(&self) -> io::Result<()> {
        let mut tail = self.lock();
        if std::mem::take(&mut tail.grew) && !self.drop_growth_sync {
            let disk_len = self.disk.len()?;
            self.disk.write_at(disk_len, &tail.bytes)?;
            tail.bytes.clear();
        }
        self.disk.sync()
    }
    fn len(&self) -> io::Result<u64> {
        let tail = self.lock();
        Ok(self.disk.len()? + tail.bytes.len() as u64)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut tail = self.lock();
        let disk_len = self.disk.len()?;
        tail.grew = len > disk_len + tail.bytes.len() as u64;
        if len <= disk_len {
            tail.bytes.clear();
            return self.disk.set_len(len);
        }
        tail.bytes.resize(tail_index(len, disk_len), 0);
        Ok(())
    }
}
