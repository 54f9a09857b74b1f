//! A sweep: many seeds of one engine and profile, each run and judged, their figures summed.
//! The command line's `explore`, the sweep tests and a user's own `#[test]` all call [`sweep`];
//! what they do with each seed's report (save a case, print a line, move a progress bar) is the
//! callback's business.

use crate::adapter::{Engine, EngineConfig};
use crate::config::RunConfig;
use crate::disk::{DiskConfig, FaultCounts, LengthModel};
use crate::driver::RunStats;
use crate::profile::Profile;
use crate::runner::{run, Report};
use crate::verdict::Outcome;
use std::collections::BTreeMap;
use std::ops::Range;

/// Which seeds a sweep runs, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepConfig {
    /// Seeds `start..end`.
    pub seeds: Range<u64>,
    /// Run only shard `.0` of `.1`: seeds whose offset from the range's start is `.0` modulo
    /// `.1`.
    pub shard: (u64, u64),
    /// Operations generated per seed.
    pub ops: usize,
    pub profile: Profile,
}

impl SweepConfig {
    pub fn new(seeds: Range<u64>, ops: usize, profile: Profile) -> SweepConfig {
        SweepConfig {
            seeds,
            shard: (0, 1),
            ops,
            profile,
        }
    }

    /// The seeds of this shard, in order: walked, never collected (a range may hold billions).
    pub fn shard_seeds(&self) -> impl Iterator<Item = u64> {
        let (i, n) = self.shard;
        assert!(n > 0 && i < n, "shard {i}/{n}");
        let step = usize::try_from(n).expect("a shard count fits usize");
        (self.seeds.start.saturating_add(i)..self.seeds.end).step_by(step)
    }

    /// How many seeds this shard runs.
    pub fn shard_len(&self) -> u64 {
        let (i, n) = self.shard;
        (self.seeds.end - self.seeds.start)
            .saturating_sub(i)
            .div_ceil(n)
    }
}

/// What a sweep did, summed over its seeds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub seeds: u64,
    pub ok: u64,
    pub violations: u64,
    pub disk_failures: u64,
    pub stats: RunStats,
    pub faults: FaultCounts,
    /// Simulated disk time, summed.
    pub sim_ns: u64,
    /// Seeds that ended in a violation, in order.
    pub violating_seeds: Vec<u64>,
    /// The disks the seeds ran on.
    pub disk: DiskCoverage,
}

/// What a sweep covered of the disk's own dimensions: sector sizes, length models and tears.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskCoverage {
    /// Seeds per sector size, in bytes.
    pub seeds_by_sector_size: BTreeMap<u32, u64>,
    /// Seeds per length model.
    pub seeds_by_length: BTreeMap<LengthModel, u64>,
    /// Seeds whose disk had sub-sector tears on.
    pub seeds_with_tears_on: u64,
    /// Power cuts that tore the engine's meta region (sub-sector tears, all of them, are in
    /// the summary's `faults`).
    pub torn_metas: u64,
    /// Seeds with at least one torn meta.
    pub seeds_with_torn_metas: u64,
}

impl DiskCoverage {
    fn add(&mut self, disk: &DiskConfig, r: &Report) {
        *self
            .seeds_by_sector_size
            .entry(disk.sector_size)
            .or_insert(0) += 1;
        *self.seeds_by_length.entry(disk.length).or_insert(0) += 1;
        self.seeds_with_tears_on += u64::from(disk.faults.sub_sector_tear > 0.0);
        self.torn_metas += r.torn_metas;
        self.seeds_with_torn_metas += u64::from(r.torn_metas > 0);
    }
}

impl Summary {
    /// Add one seed's report.
    pub fn add<C>(&mut self, run: &RunConfig<C>, r: &Report) {
        let seed = run.seed;
        self.seeds += 1;
        self.disk.add(&run.disk, r);
        self.stats.add(&r.stats);
        self.faults.accumulate(&r.faults);
        self.sim_ns += r.io.sim_time_ns;
        match r.outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::DiskFailure(_) => self.disk_failures += 1,
            Outcome::Violation(_) => {
                self.violations += 1;
                self.violating_seeds.push(seed);
            }
        }
    }
}

/// Run every seed of `cfg` for engine `E`, in seed order, calling `each` with every seed's
/// configuration and report; return the summary.
pub fn sweep<E: Engine>(
    cfg: &SweepConfig,
    each: &mut dyn FnMut(&RunConfig<E::Config>, &Report),
) -> Summary {
    sweep_with::<E>(cfg, &|_| {}, each)
}

/// [`sweep`], with every seed's configuration passed through `adjust` before it runs: a test
/// turns on an engine's debug switch or pins one of its options there. `adjust` must keep the
/// engine's [`Capabilities`](crate::adapter::Capabilities): the workload was generated for them.
pub fn sweep_with<E: Engine>(
    cfg: &SweepConfig,
    adjust: &dyn Fn(&mut RunConfig<E::Config>),
    each: &mut dyn FnMut(&RunConfig<E::Config>, &Report),
) -> Summary {
    let mut summary = Summary::default();
    for seed in cfg.shard_seeds() {
        let mut run_cfg = RunConfig::<E::Config>::from_seed(seed, cfg.ops, cfg.profile);
        let caps = run_cfg.engine.capabilities();
        adjust(&mut run_cfg);
        assert_eq!(
            run_cfg.engine.capabilities(),
            caps,
            "sweep_with: the adjustment changed the engine's capabilities"
        );
        let report = run::<E>(&run_cfg);
        summary.add(&run_cfg, &report);
        each(&run_cfg, &report);
    }
    summary
}

/// The one line that replays a seed of engine `C` from the command line.
pub fn repro_line<C: EngineConfig>(cfg: &RunConfig<C>) -> String {
    format!(
        "crashlab run --seed {} --ops {} --profile {} --engine {}",
        cfg.seed,
        cfg.ops.len(),
        cfg.profile,
        C::ENGINE
    )
}
