//! Recording crash points: a storage wrapper that, after every write call and every sync that
//! reaches the disk, writes down everything a power cut at that instant could leave.
//!
//! A crash point holds the disk's durable image, its *effective* pending sectors — pending, inside
//! the durable length (a sector past it is lost with the length, see `disk/mod.rs`), and
//! different from the durable bytes (keeping an identical sector is no new state) — and what
//! reads see at that instant (the page cache), which is what a process crash leaves and what an
//! open reader reads. `set_len` makes no crash point: it changes neither the durable image nor
//! the pending sectors. The driver adds the context: the operation running, the set of states the
//! oracle allows, and the open readers.

use crate::book::ModelId;
use crate::image::{Durable, Sector};
use crashlab_engine::Storage;
use crashlab_sim::disk::SimDisk;
use std::collections::BTreeSet;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// A reader open at a crash point: what identifies its snapshot in the file (when the engine has
/// reader views) and the state it must keep seeing.
#[derive(Clone, Debug)]
pub(crate) struct OpenReader {
    pub token: Option<Vec<u8>>,
    pub model: ModelId,
}

/// What the driver was doing when a storage call was made.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    /// Index of the workload operation running.
    pub op: usize,
    /// Index of the allowed set in the book.
    pub allowed: usize,
    pub readers: Vec<OpenReader>,
}

/// The storage call a crash point follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum After {
    Write { offset: u64, len: usize },
    Sync,
}

#[derive(Debug)]
pub(crate) struct CrashPoint {
    /// Storage calls (writes and syncs) made so far, this one included: the point's name.
    pub call: u64,
    pub context: Context,
    pub durable: Arc<Durable>,
    /// Effective pending sectors, ascending by index.
    pub pending: Vec<Sector>,
    /// Every pending sector, effective or not.
    pub pending_all: usize,
    /// What reads see: the image a process crash leaves.
    pub current: Arc<Vec<u8>>,
}

/// Everything recorded in one run, shared by the recorder and the driver.
pub(crate) struct Log {
    pub points: Vec<CrashPoint>,
    pub context: Context,
    /// Pending sectors written again before a sync (their older content is then not enumerated;
    /// the engine never does this unless `no_sync`).
    pub rewrites: u64,
    calls: u64,
    sector_size: u64,
    durable: Option<Arc<Durable>>,
    current: Option<Arc<Vec<u8>>>,
    pending_before: BTreeSet<u64>,
}

pub(crate) type SharedLog = Arc<Mutex<Log>>;

impl Log {
    pub fn shared(sector_size: u32, context: Context) -> SharedLog {
        Arc::new(Mutex::new(Log {
            context,
            ..Log::empty(sector_size)
        }))
    }

    /// Take what `log` recorded, leaving an empty log behind.
    pub fn take(log: &SharedLog) -> Log {
        let mut l = lock(log);
        let empty = Log::empty(u32::try_from(l.sector_size).expect("a sector size"));
        std::mem::replace(&mut *l, empty)
    }

    /// A log with nothing recorded, to leave behind when a finished one is taken.
    pub fn empty(sector_size: u32) -> Log {
        Log {
            points: Vec::new(),
            context: Context::default(),
            rewrites: 0,
            calls: 0,
            sector_size: u64::from(sector_size),
            durable: None,
            current: None,
            pending_before: BTreeSet::new(),
        }
    }

    /// The disk changed behind the recorder's back (a crash): capture images afresh.
    pub fn forget_images(&mut self) {
        self.durable = None;
        self.current = None;
        self.pending_before.clear();
    }
}

pub(crate) fn lock(log: &SharedLog) -> MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|e| e.into_inner())
}

/// The recording wrapper: `inner` is the storage the engine would have used (the disk, or a
/// negative control over it); `disk` is the simulated disk underneath, whose sector model says
/// what a power cut keeps.
pub(crate) struct Recorder {
    inner: Box<dyn Storage>,
    disk: SimDisk,
    log: SharedLog,
}

impl Recorder {
    pub fn new(inner: Box<dyn Storage>, disk: SimDisk, log: SharedLog) -> Recorder {
        Recorder { inner, disk, log }
    }

    fn capture(&self, after: After) {
        let mut log = lock(&self.log);
        log.calls += 1;
        let ss = log.sector_size;
        if after == After::Sync {
            log.durable = None;
            log.pending_before.clear();
        } else {
            log.current = None;
        }
        let durable = match &log.durable {
            Some(d) => d.clone(),
            None => Arc::new(Durable::new(self.disk.durable_image(), ss as usize)),
        };
        log.durable = Some(durable.clone());
        let current = match &log.current {
            Some(c) => c.clone(),
            None => Arc::new(read_all(&*self.inner)),
        };
        log.current = Some(current.clone());
        let keys = self.disk.pending_sectors();
        if let After::Write { offset, len } = after {
            log.rewrites += rewritten(&log.pending_before, offset, len, ss);
        }
        let pending = effective(&self.disk.image(), &durable, &keys, ss);
        log.pending_before = keys.iter().copied().collect();
        let point = CrashPoint {
            call: log.calls,
            context: log.context.clone(),
            durable,
            pending,
            pending_all: keys.len(),
            current,
        };
        log.points.push(point);
    }
}

/// Sectors of `offset..offset + len` that were already pending.
fn rewritten(before: &BTreeSet<u64>, offset: u64, len: usize, ss: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let last = (offset + len as u64 - 1) / ss;
    before.range(offset / ss..=last).count() as u64
}

/// The pending sectors a power cut could keep to any effect.
fn effective(view: &[u8], durable: &Durable, keys: &[u64], ss: u64) -> Vec<Sector> {
    let limit = durable.bytes.len().min(view.len());
    keys.iter()
        .filter_map(|&s| {
            let start = usize::try_from(s * ss).ok().filter(|&a| a < limit)?;
            let end = (start + ss as usize).min(limit);
            Sector::new(s, &durable.bytes[start..end], &view[start..end])
        })
        .collect()
}

/// Everything `storage` holds, read through it (so a wrapper's own view is included).
fn read_all(storage: &dyn Storage) -> Vec<u8> {
    let len = storage.len().expect("the recorded disk has no faults");
    let mut bytes = vec![0u8; usize::try_from(len).expect("an image fits memory")];
    storage
        .read_at(0, &mut bytes)
        .expect("the recorded disk has no faults");
    bytes
}

impl Storage for Recorder {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, buf)?;
        self.capture(After::Write {
            offset,
            len: buf.len(),
        });
        Ok(())
    }
    fn sync(&self) -> io::Result<()> {
        self.inner.sync()?;
        self.capture(After::Sync);
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        // No crash point, but what reads see changes.
        lock(&self.log).current = None;
        self.inner.set_len(len)
    }
}
