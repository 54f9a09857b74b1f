//! What the session driver runs an engine on: one [`SimDisk`] (a single-file engine) or one
//! [`SimFs`] (an engine of several files, capability `directory`). Everything the driver does
//! with "the disk" — faults switched off for its own reads, the fault log, figures, the image
//! hash, the barrier after creation — goes through here and covers every file of a file
//! system, so the driver never asks which kind it runs on. A power cut is the one thing that
//! differs in kind, and the hooks decide it ([`crate::driver::Hooks::power_cut`]).

use crate::disk::{FaultConfig, FaultCounts, FaultEvent, IoStats, SimDisk};
use crate::fs::SimFs;

/// The storage of one run.
#[derive(Clone, Debug)]
pub enum Medium {
    Disk(SimDisk),
    Fs(SimFs),
}

impl Medium {
    /// The one disk, when this is one.
    pub fn disk(&self) -> Option<&SimDisk> {
        match self {
            Medium::Disk(d) => Some(d),
            Medium::Fs(_) => None,
        }
    }

    /// The file system, when this is one.
    pub fn fs(&self) -> Option<&SimFs> {
        match self {
            Medium::Disk(_) => None,
            Medium::Fs(fs) => Some(fs),
        }
    }

    /// The faults in force (a file system's are every file's).
    pub fn faults(&self) -> FaultConfig {
        match self {
            Medium::Disk(d) => d.config().faults,
            Medium::Fs(fs) => fs.faults(),
        }
    }

    /// Replace the faults, of every file and of files created later.
    pub fn set_faults(&self, faults: FaultConfig) {
        match self {
            Medium::Disk(d) => d.set_faults(faults),
            Medium::Fs(fs) => fs.set_faults(faults),
        }
    }

    /// I/O figures and simulated time, summed over files (gone ones included).
    pub fn io_stats(&self) -> IoStats {
        match self {
            Medium::Disk(d) => d.io_stats(),
            Medium::Fs(fs) => fs.io_stats(),
        }
    }

    /// Fault counts, summed over files (gone ones included).
    pub fn fault_counts(&self) -> FaultCounts {
        match self {
            Medium::Disk(d) => d.fault_counts(),
            Medium::Fs(fs) => fs.fault_counts(),
        }
    }

    /// The image hash: the disk's bytes, or every name and its bytes in name order.
    pub fn image_hash(&self) -> u64 {
        match self {
            Medium::Disk(d) => d.image_hash(),
            Medium::Fs(fs) => fs.image_hash(),
        }
    }

    /// Log every fault injected from now on.
    pub fn log_faults(&self) {
        match self {
            Medium::Disk(d) => d.log_faults(),
            Medium::Fs(fs) => fs.log_faults(),
        }
    }

    pub fn take_faults(&self) -> Vec<FaultEvent> {
        match self {
            Medium::Disk(d) => d.take_faults(),
            Medium::Fs(fs) => fs.take_faults(),
        }
    }

    /// Pending data sectors, over every file.
    pub fn pending_sector_count(&self) -> u64 {
        match self {
            Medium::Disk(d) => d.pending_sectors().len() as u64,
            Medium::Fs(fs) => fs.pending_sector_count(),
        }
    }

    /// The harness's barrier: everything durable (a file system's directory too).
    pub fn make_all_durable(&self) {
        match self {
            Medium::Disk(d) => d.make_all_durable(),
            Medium::Fs(fs) => fs.make_all_durable(),
        }
    }
}
