//! Negative controls: deliberate bugs the harness must find, each built as a storage wrapper (the
//! I/O is wrong, any engine) or an engine debug hook (the engine is wrong; an engine's
//! [`EngineConfig::with_control`](crate::adapter::EngineConfig::with_control) turns its hook on,
//! or says it has none). crashlab's hooks live in `Options::debug`, every flag off by default.
//!
//! | control | bug | built as |
//! |---|---|---|
//! | `no-barrier` (a) | no sync between a commit's data pages and its meta | `negative::NoBarrier` |
//! | `meta-same-slot` (b) | every commit's meta goes to the same slot | `DebugHooks::meta_same_slot` |
//! | `meta-unchecked` (c) | a meta's checksum is not verified on open | `DebugHooks::skip_meta_checksum` |
//! | `no-growth-sync` (d) | file growth not made durable before use | `negative::GrowthBarrier` dropping the growth sync |
//! | `reuse-under-readers` (e) | a freed page reused while a reader's snapshot references it | `DebugHooks::reuse_pages_under_readers` |
//! | `batch-keeps-failed-call` (f) | a batch whose call failed is committed instead of rolled back | `DebugHooks::batch_keeps_failed_call` |
//! | `emptied-bucket-leak` (g) | deleting a bucket emptied earlier in the same transaction leaks its pages | `DebugHooks::emptied_bucket_leaks` |
//!
//! `fdatasync-disk` is no bug: it is (d)'s disk model with the growth sync kept, on which a
//! correct engine must pass — the twin that shows (d) is found because of the bug.

use crate::disk::SimDisk;
use crate::negative::{GrowthBarrier, NoBarrier};
use crashlab_engine::Storage;
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Control {
    #[default]
    None,
    NoBarrier,
    MetaSameSlot,
    MetaUnchecked,
    NoGrowthSync,
    ReuseUnderReaders,
    BatchKeepsFailedCall,
    EmptiedBucketLeak,
    FdatasyncDisk,
}

impl Control {
    pub const ALL: [Control; 9] = [
        Control::None,
        Control::NoBarrier,
        Control::MetaSameSlot,
        Control::MetaUnchecked,
        Control::NoGrowthSync,
        Control::ReuseUnderReaders,
        Control::BatchKeepsFailedCall,
        Control::EmptiedBucketLeak,
        Control::FdatasyncDisk,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Control::None => "none",
            Control::NoBarrier => "no-barrier",
            Control::MetaSameSlot => "meta-same-slot",
            Control::MetaUnchecked => "meta-unchecked",
            Control::NoGrowthSync => "no-growth-sync",
            Control::ReuseUnderReaders => "reuse-under-readers",
            Control::BatchKeepsFailedCall => "batch-keeps-failed-call",
            Control::EmptiedBucketLeak => "emptied-bucket-leak",
            Control::FdatasyncDisk => "fdatasync-disk",
        }
    }

    /// Whether the control is a deliberate bug (violations are the expected result).
    pub fn is_bug(self) -> bool {
        !matches!(self, Control::None | Control::FdatasyncDisk)
    }

    /// Whether the control is built as a storage wrapper (so it applies to every engine).
    pub fn is_storage_wrapper(self) -> bool {
        matches!(
            self,
            Control::NoBarrier | Control::NoGrowthSync | Control::FdatasyncDisk
        )
    }

    /// The control's storage over `disk` for one run. `meta_len`: the bytes at the start of the
    /// file that hold the engine's meta (control (a) keeps their syncs).
    pub fn for_run(self, disk: &SimDisk, meta_len: u64) -> ControlStorage {
        let disk = disk.clone();
        match self {
            Control::NoBarrier => ControlStorage::NoBarrier { disk, meta_len },
            Control::NoGrowthSync => ControlStorage::Growth(GrowthBarrier::new(disk, true)),
            Control::FdatasyncDisk => ControlStorage::Growth(GrowthBarrier::new(disk, false)),
            _ => ControlStorage::Plain(disk),
        }
    }
}

/// A control's storage for one run: the disk, or a wrapper over it. What a wrapper holds in
/// memory (the growth-barrier disk's unsynced tail) is shared by every open of the run, as a
/// page cache survives a process restart, and dropped by a power cut.
#[derive(Clone)]
pub enum ControlStorage {
    Plain(SimDisk),
    NoBarrier { disk: SimDisk, meta_len: u64 },
    Growth(GrowthBarrier),
}

impl ControlStorage {
    /// The storage one open of the engine gets.
    pub fn open(&self) -> Box<dyn Storage> {
        match self {
            ControlStorage::Plain(disk) => Box::new(disk.clone()),
            ControlStorage::NoBarrier { disk, meta_len } => {
                Box::new(NoBarrier::with_meta_len(disk.clone(), *meta_len))
            }
            ControlStorage::Growth(g) => Box::new(g.clone()),
        }
    }

    /// The power is cut: what the wrapper held in memory is gone.
    pub fn power_cut(&self) {
        if let ControlStorage::Growth(g) = self {
            g.power_cut();
        }
    }
}

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Control {
    type Err = String;
    fn from_str(s: &str) -> Result<Control, String> {
        Control::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Control::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown control `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
