//! Everything that determines a run: a leaf that the adapters, the driver and the case files
//! share, and that imports none of them.

use crate::adapter::EngineConfig;
use crate::disk::DiskConfig;
use crate::op::Op;
use crate::profile::{self, Profile};
use crate::workload;

/// One run of engine configuration `C`: the seed, the fault profile and the disk it gives, the
/// engine's options and the operations.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig<C> {
    pub seed: u64,
    pub profile: Profile,
    pub disk: DiskConfig,
    pub ops: Vec<Op>,
    pub engine: C,
}

impl<C: EngineConfig> RunConfig<C> {
    /// The run a seed describes: engine options, faults and `ops` operations all drawn from it.
    pub fn from_seed(seed: u64, ops: usize, profile: Profile) -> RunConfig<C> {
        let engine = C::from_seed(seed, profile);
        let caps = engine.capabilities();
        RunConfig {
            seed,
            profile,
            disk: profile::disk_config(seed, profile),
            ops: workload::generate(seed, ops, true, &caps),
            engine,
        }
    }
}
