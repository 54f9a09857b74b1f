//! Power cuts of a SimFs: the metadata part (which pending operations survive, as the model
//! allows) and each surviving file's data (as its disk crashes).

use super::meta::{replay, replay_chosen, FileId, MetaOp, MetaSubset};
use super::model::MetaModel;
use super::{Inner, SimFs};
use crate::disk::{CrashOutcome, SimDisk};

/// What a power cut did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsCrashOutcome {
    /// The metadata operations pending at the cut, in order.
    pub pending: Vec<MetaOp>,
    /// Of those, the ones kept (consistent: none moot).
    pub kept: MetaSubset,
    /// Files gone because no name pointed at them afterwards.
    pub files_gone: u64,
    /// The data crashes of the surviving files, summed.
    pub data: CrashOutcome,
}

impl SimFs {
    /// Power cut: a seeded choice of the pending metadata operations survives, as the model
    /// allows (ordered: a prefix, each of the `n + 1` equally likely; strict: each operation
    /// with probability 1/2, moot ones dropped); every surviving file's data crashes as its
    /// [`SimDisk::crash`] does. Handles opened before are stale afterwards and every lock is
    /// gone; the file system stays usable (the machine rebooted).
    pub fn crash(&self) -> FsCrashOutcome {
        self.crash_each(&mut |_, disk| disk.crash())
    }

    /// [`SimFs::crash`] with each surviving file's data crashed by `data` (asked once per file,
    /// ascending: a runner pins one file's cut this way). `data` runs with the file system
    /// locked: it must not call into it.
    pub fn crash_each(
        &self,
        data: &mut dyn FnMut(FileId, &SimDisk) -> CrashOutcome,
    ) -> FsCrashOutcome {
        let mut inner = self.lock();
        let (pending, kept) = inner.draw_meta();
        inner.apply_crash(pending, kept, data)
    }

    /// A power cut keeping exactly `subset` of the pending metadata operations and, of each
    /// surviving file's pending sectors, those `keep(file, sector)` is true for (whole, as
    /// [`SimDisk::crash_with`] keeps them): the crash-state checker's materialisation of one
    /// crash state. `Err` (nothing changed) when the model does not allow `subset`. `keep` runs
    /// with the file system locked: it must not call into it.
    pub fn crash_with(
        &self,
        subset: &MetaSubset,
        keep: &mut dyn FnMut(FileId, u64) -> bool,
    ) -> Result<FsCrashOutcome, String> {
        let mut inner = self.lock();
        replay(&inner.durable, &inner.pending, subset, inner.config.model)?;
        let pending = inner.pending.clone();
        Ok(
            inner.apply_crash(pending, subset.clone(), &mut |file, disk| {
                disk.crash_with(&mut |s| keep(file, s))
            }),
        )
    }
}

impl Inner {
    /// The seeded choice of pending metadata operations a cut keeps. Draws nothing when none is
    /// pending.
    pub(super) fn draw_meta(&mut self) -> (Vec<MetaOp>, MetaSubset) {
        let pending = self.pending.clone();
        if pending.is_empty() {
            return (pending, MetaSubset::default());
        }
        let chosen = match self.config.model {
            MetaModel::Ordered => {
                let n = self.meta_rng.below(pending.len() as u64 + 1);
                MetaSubset::prefix(usize::try_from(n).expect("at most the pending count"))
            }
            MetaModel::Strict => {
                let rng = &mut self.meta_rng;
                replay_chosen(&self.durable, &pending, &mut |_| rng.below(2) == 1).1
            }
        };
        (pending, chosen)
    }

    /// Make `kept` of `pending` the durable and current directory, drop the files no name
    /// points at, crash the rest's data, and reboot.
    pub(super) fn apply_crash(
        &mut self,
        pending: Vec<MetaOp>,
        kept: MetaSubset,
        data: &mut dyn FnMut(FileId, &SimDisk) -> CrashOutcome,
    ) -> FsCrashOutcome {
        let dir = replay(&self.durable, &pending, &kept, self.config.model)
            .unwrap_or_else(|why| panic!("a power cut chose a state its model forbids: {why}"));
        self.durable = dir.clone();
        self.current = dir;
        self.pending.clear();
        self.epoch += 1;
        self.locks.clear();
        let files_gone = self.drop_unreferenced();
        let mut sum = CrashOutcome {
            pending_sectors: 0,
            kept: 0,
            lost: 0,
            sub_sector_tears: 0,
        };
        for (&file, disk) in &self.files {
            let c = data(file, disk);
            sum.pending_sectors += c.pending_sectors;
            sum.kept += c.kept;
            sum.lost += c.lost;
            sum.sub_sector_tears += c.sub_sector_tears;
        }
        let kept_n = kept.kept().len() as u64;
        self.counts.crashes += 1;
        self.counts.meta_ops_kept_in_crash += kept_n;
        self.counts.meta_ops_lost_in_crash += pending.len() as u64 - kept_n;
        self.counts.files_gone_in_crash += files_gone;
        assert!(self.pending.is_empty() && self.durable == self.current);
        FsCrashOutcome {
            pending,
            kept,
            files_gone,
            data: sum,
        }
    }
}
