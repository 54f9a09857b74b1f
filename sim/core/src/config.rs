//! Everything that determines a run: a leaf that the adapters, the driver and the case files
//! share, and that imports none of them.

use crate::adapter::{Capabilities, EngineConfig};
use crate::disk::{DiskConfig, PinnedCut};
use crate::fs::{FsConfig, MetaModel};
use crate::op::Op;
use crate::profile::{self, Profile};
use crate::rng::SimRng;
use crate::workload;
use std::fmt;
use std::str::FromStr;

/// What the application does after a commit fails with an I/O error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AfterFailure {
    /// Close the database and open it again (what redb's contract asks for).
    #[default]
    Restart,
    /// Retry the commit's work on the same handle once, then restart.
    Retry,
    /// Carry on with the workload's next operations on the same handle until it reopens.
    CarryOn,
}

impl AfterFailure {
    pub const ALL: [AfterFailure; 3] = [
        AfterFailure::Restart,
        AfterFailure::Retry,
        AfterFailure::CarryOn,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AfterFailure::Restart => "restart",
            AfterFailure::Retry => "retry",
            AfterFailure::CarryOn => "carry-on",
        }
    }

    /// The choice a seed makes, from a stream of its own (so no other choice of the seed moves).
    pub fn from_seed(seed: u64) -> AfterFailure {
        *SimRng::derive(seed, "after failure").pick(&AfterFailure::ALL)
    }
}

impl fmt::Display for AfterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AfterFailure {
    type Err = String;
    fn from_str(s: &str) -> Result<AfterFailure, String> {
        AfterFailure::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("expected restart, retry or carry-on, found `{s}`"))
    }
}

/// One run of engine configuration `C`: the seed, the fault profile and the disk it gives, the
/// engine's options and the operations.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig<C> {
    pub seed: u64,
    pub profile: Profile,
    pub disk: DiskConfig,
    pub ops: Vec<Op>,
    pub engine: C,
    /// What the application does after a failed commit (an engine whose I/O errors end the
    /// session always restarts).
    pub after_failure: AfterFailure,
    /// One power cut of the run whose outcome is pinned rather than drawn (`crashlab shrink`'s
    /// minimal crash state); `None`: every cut is drawn from the seed.
    pub pinned_cut: Option<PinnedCut>,
    /// The file system an engine of several files runs on (capability `directory`): its
    /// metadata crash model, drawn from the seed ([`fs_config_from_seed`]). Unused, and left at
    /// its default, for a single-file engine.
    pub fs: FsConfig,
    /// Sessions after the first open with the settings [`EngineConfig::at_open`] gives them;
    /// `false`: every session with `engine` (as every case saved before the choice existed).
    pub switch_settings: bool,
}

/// The file system a seed draws for an engine of several files: the metadata model, from a
/// stream of its own (so no other choice of the seed moves), each model equally likely.
pub fn fs_config_from_seed(seed: u64) -> FsConfig {
    FsConfig {
        model: *SimRng::derive(seed, "simfs model").pick(&MetaModel::ALL),
        renames_durable_at_once: false,
    }
}

/// The operations seed `seed` draws for an engine of `caps`: `count` of its workload, then, under
/// a profile that reaches scale, its scale patterns on top. What a case's `ops = N` regenerates.
pub fn seed_ops(seed: u64, count: usize, profile: Profile, caps: &Capabilities) -> Vec<Op> {
    let mut ops = workload::generate(seed, count, true, caps);
    if profile.reaches_scale() {
        workload::scale::add(seed, &mut ops, caps);
    }
    ops
}

impl<C: EngineConfig> RunConfig<C> {
    /// The `count` for which [`seed_ops`] gives exactly this run's operations, if one does: what
    /// a case saved without its operations writes as `ops = N` (regression 019).
    pub fn seed_op_count(&self) -> Option<usize> {
        let caps = self.engine.capabilities();
        let len = self.ops.len();
        // Scale patterns come on top of the count, as many whatever the count (they are drawn
        // from streams of their own): the count is the length less what they add.
        let added = seed_ops(self.seed, len, self.profile, &caps)
            .len()
            .checked_sub(len)?;
        let count = len.checked_sub(added).filter(|&n| n > 0)?;
        (seed_ops(self.seed, count, self.profile, &caps) == self.ops).then_some(count)
    }

    /// The run a seed describes: engine options, faults and `ops` operations all drawn from it.
    pub fn from_seed(seed: u64, ops: usize, profile: Profile) -> RunConfig<C> {
        let engine = C::from_seed(seed, profile);
        let switch_settings = engine.switches_settings(seed);
        let caps = engine.capabilities();
        let ops = seed_ops(seed, ops, profile, &caps);
        let mut disk = profile::disk_config(seed, profile);
        if let (Some(length), None) = (engine.length_model(), profile.control().length_model()) {
            disk.length = length;
        }
        RunConfig {
            seed,
            profile,
            disk,
            ops,
            engine,
            after_failure: AfterFailure::from_seed(seed),
            pinned_cut: None,
            fs: if caps.directory {
                fs_config_from_seed(seed)
            } else {
                FsConfig::default()
            },
            switch_settings,
        }
    }
}
