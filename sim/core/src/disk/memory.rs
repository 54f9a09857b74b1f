//! What a simulated disk holds in memory, and forks that share it.
//!
//! A disk keeps only the sectors ever written (never-written ones read as the fill), each
//! buffer once: the durable image and the pending sectors over it are two sparse maps, a crash
//! writes the kept sectors into the durable map in place, and sector buffers are never changed
//! in place, so [`SimDisk::fork`] shares every buffer of the disk it copies. A disk's memory is
//! therefore its written sectors plus the sectors written since the last sync: about the file's
//! length, whatever the crash pattern — `compare`'s large database holds one 2 GB image for the
//! template and all its variants.
//!
//! [`SimDisk::memory`] counts it: the sector bytes the disk holds now and at most so far (fixed
//! per-sector overhead aside). [`distinct_held_bytes`] counts a set of disks' buffers once each,
//! so a fork that copied instead of sharing shows. [`SimDisk::set_debug_fork_copies`] is that
//! copy, the negative control of the memory tests (off unless a test turns it on).

use super::{capture, DiskConfig, Inner, SimDisk};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// A disk's memory, in bytes of sector buffers (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskMemory {
    /// The current length of the file.
    pub len: u64,
    /// Sector bytes held now, durable and pending, shared with a fork or not.
    pub held_bytes: u64,
    /// The most sector bytes held at once since the disk was created.
    pub peak_held_bytes: u64,
}

impl SimDisk {
    /// What the disk's sectors hold in memory.
    pub fn memory(&self) -> DiskMemory {
        let inner = self.lock();
        DiskMemory {
            len: inner.sectors.len(),
            held_bytes: inner.sectors.held_bytes(),
            peak_held_bytes: inner.sectors.peak_held_bytes(),
        }
    }

    /// A new disk (seed `seed`, `config`, whose sector size must be this disk's) whose durable
    /// image is what reads of this disk see now, with nothing pending and no latent sectors:
    /// what writing [`SimDisk::image`] to a fresh disk and syncing would give, but sharing this
    /// disk's sector buffers instead of copying them (and without counting a write or a sync).
    /// Writes to either disk replace buffers; neither sees the other's.
    pub fn fork(&self, seed: u64, config: DiskConfig) -> SimDisk {
        let (sectors, copy) = {
            let inner = self.lock();
            let ss = inner.sectors.sector_size();
            assert_eq!(
                u64::from(config.sector_size),
                ss,
                "a fork keeps the sector size"
            );
            let fill = Self::fill_of(seed, &config);
            let copy = inner.debug_fork_copies;
            (inner.sectors.forked(fill, copy), copy)
        };
        let mut inner = Inner::new(seed, config);
        inner.sectors = sectors;
        inner.debug_fork_copies = copy;
        let disk = SimDisk {
            inner: Arc::new(Mutex::new(inner)),
        };
        capture::created(&disk);
        disk
    }

    /// A copy of this disk as it is now — durable image, pending sectors, length and latent
    /// sectors — sharing its sector buffers, with fresh figures and no fault log: the
    /// crash-state checker crashes copies of one crash point in every way it enumerates.
    /// Writes to either disk replace buffers; neither sees the other's.
    pub fn clone_state(&self) -> SimDisk {
        let copy = {
            let inner = self.lock();
            let mut copy = Inner::new(inner.seed, inner.config.clone());
            copy.sectors = inner.sectors.clone();
            copy.latent = inner.latent.clone();
            copy.write_calls = inner.write_calls.clone();
            copy.grew = inner.grew;
            copy.debug_fork_copies = inner.debug_fork_copies;
            copy
        };
        let disk = SimDisk {
            inner: Arc::new(Mutex::new(copy)),
        };
        capture::created(&disk);
        disk
    }

    /// Negative control of the memory tests: when on, [`SimDisk::fork`] copies every sector
    /// instead of sharing it (a full second image, as `compare` once held its template), and the
    /// fork inherits the switch. Behaviour is otherwise unchanged. Off on every new disk.
    pub fn set_debug_fork_copies(&self, on: bool) {
        self.lock().debug_fork_copies = on;
    }
}

/// Bytes of sector buffers `disks` hold together, each buffer counted once however many of
/// them share it.
pub fn distinct_held_bytes(disks: &[&SimDisk]) -> u64 {
    let mut seen = BTreeSet::new();
    let mut bytes = 0u64;
    for disk in disks {
        let inner = disk.lock();
        for buffer in inner.sectors.buffers() {
            // The buffer's address identifies it while the lock holds it alive; only the count
            // of distinct ones is used, never their order.
            if seen.insert(Arc::as_ptr(buffer).cast::<u8>() as usize) {
                bytes += buffer.len() as u64;
            }
        }
    }
    bytes
}
