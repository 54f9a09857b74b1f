//! What the session driver asks of a file system as it asks it of one disk: its faults, the
//! fault log, the image hash, and a power cut pinned to a recorded outcome (`crashlab shrink`'s
//! minimal crash state of a directory engine).

use super::meta::{replay_chosen, FileId, MetaSubset};
use super::model::MetaModel;
use super::{FsCrashOutcome, Inner, SimFs};
use crate::disk::{DirPin, FaultConfig, FaultEvent, ImageHasher};
use crate::rng::SimRng;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

impl SimFs {
    /// A copy of this file system as it is now — the directory, the pending metadata
    /// operations, every file's data as [`SimDisk::clone_state`](crate::disk::SimDisk::clone_state)
    /// copies it — with no handles, no locks, fresh figures and no fault log: the crash-state
    /// checker's record of one crash point, which it crashes in every way it enumerates.
    pub fn clone_state(&self) -> SimFs {
        let inner = self.lock();
        let copy = Inner {
            seed: inner.seed,
            disk: inner.disk.clone(),
            config: inner.config,
            meta_rng: SimRng::derive(inner.seed, "simfs metadata"),
            current: inner.current.clone(),
            durable: inner.durable.clone(),
            pending: inner.pending.clone(),
            files: inner
                .files
                .iter()
                .map(|(&f, d)| (f, d.clone_state()))
                .collect(),
            next_file: inner.next_file,
            epoch: inner.epoch,
            locks: Default::default(),
            next_handle: 0,
            counts: Default::default(),
            gone_faults: Default::default(),
            gone_io: Default::default(),
            log_faults: false,
        };
        SimFs {
            inner: Arc::new(Mutex::new(copy)),
        }
    }

    /// Every file's pending data sectors, by file (ascending), files with none left out.
    pub fn pending_data(&self) -> BTreeMap<FileId, Vec<u64>> {
        let inner = self.lock();
        inner
            .files
            .iter()
            .map(|(&f, d)| (f, d.pending_sectors()))
            .filter(|(_, p)| !p.is_empty())
            .collect()
    }

    /// The faults files are created with (and every file has, after [`SimFs::set_faults`]).
    pub fn faults(&self) -> FaultConfig {
        self.lock().disk.faults.clone()
    }

    /// Every file's disk logs the faults it injects, files created later too.
    pub fn log_faults(&self) {
        let mut inner = self.lock();
        inner.log_faults = true;
        for disk in inner.files.values() {
            disk.log_faults();
        }
    }

    /// The faults injected since the last take, file by file (ascending by file); a file gone
    /// since takes its unread ones with it.
    pub fn take_faults(&self) -> Vec<FaultEvent> {
        let inner = self.lock();
        inner.files.values().flat_map(|d| d.take_faults()).collect()
    }

    /// Pending data sectors, over every file.
    pub fn pending_sector_count(&self) -> u64 {
        let inner = self.lock();
        let n: usize = inner
            .files
            .values()
            .map(|d| d.pending_sectors().len())
            .sum();
        n as u64
    }

    /// A stable hash of every name and what reads of it see, in name order: the file system's
    /// image hash (a name's length and bytes, then its image's length and bytes, each name in
    /// turn).
    pub fn image_hash(&self) -> u64 {
        let mut hasher = ImageHasher::new();
        for (name, image) in self.images() {
            hasher.update(&(name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update(&(image.len() as u64).to_le_bytes());
            hasher.update(&image);
        }
        hasher.digest()
    }

    /// [`SimFs::crash`], keeping what `pin` says when there is one instead of what is drawn.
    /// The draws are made either way (the metadata choice and every file's sectors), so the
    /// rest of the run's faults land where they would have. A pinned set of metadata operations
    /// the model does not allow is narrowed deterministically to one it does: under `ordered`
    /// the longest prefix it holds, under `strict` its operations that are not moot. Returns,
    /// beside the outcome, what the cut kept as a pin (files that kept no sector left out) and
    /// the pending sectors each file lost.
    pub fn crash_pinned(
        &self,
        pin: Option<&DirPin>,
    ) -> (FsCrashOutcome, DirPin, BTreeMap<u64, Vec<u64>>) {
        let mut inner = self.lock();
        let (pending, drawn) = inner.draw_meta();
        let kept = match pin {
            None => drawn,
            Some(p) => match inner.config.model {
                MetaModel::Ordered => MetaSubset::prefix(
                    (0..pending.len())
                        .take_while(|k| p.meta.contains(k))
                        .count(),
                ),
                MetaModel::Strict => {
                    replay_chosen(&inner.durable, &pending, &mut |k| p.meta.contains(&k)).1
                }
            },
        };
        let mut did = DirPin {
            meta: kept.kept().to_vec(),
            files: BTreeMap::new(),
        };
        let mut lost = BTreeMap::new();
        let outcome = inner.apply_crash(pending, kept, &mut |file, disk| {
            let file_pin = pin.map(|p| p.files.get(&file.0).cloned().unwrap_or_default());
            let (c, k, l) = disk.crash_pinned(file_pin.as_ref());
            if !k.survivors().is_empty() {
                did.files.insert(file.0, k);
            }
            if !l.is_empty() {
                lost.insert(file.0, l);
            }
            c
        });
        (outcome, did, lost)
    }
}
