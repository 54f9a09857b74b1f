//! A sweep: many seeds of one engine and profile, each run and judged, their figures summed.
//! The command line's `explore`, the sweep tests and a user's own `#[test]` all call [`sweep`];
//! what they do with each seed's report (save a case, print a line, move a progress bar) is the
//! callback's business.
//!
//! With `jobs > 1` the seeds run on that many worker threads (rayon), at most a window of them
//! ahead of the callback, which still sees them one by one in seed order, on the calling thread:
//! the summary, the callback's output and its order are the same for any number of jobs. Each
//! run is its own
//! madsim runtime on the thread that runs it (madsim's context is per thread), seeded by the
//! seed alone, so a seed's run is the same on any thread.

use crate::adapter::{Engine, EngineConfig};
use crate::config::RunConfig;
use crate::control::Control;
use crate::disk::{DiskConfig, FaultCounts, LengthModel};
use crate::driver::RunStats;
use crate::fs::{FsCounts, MetaModel};
use crate::limits::JOBS_MAX;
use crate::profile::Profile;
use crate::runner::{run, Report};
use crate::saturation::Saturation;
use crate::signature::{signature, Signature};
use crate::thresholds::ThresholdCoverage;
use crate::verdict::Outcome;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;

/// Seeds per job in flight at once: run, or done and waiting for an earlier seed before the
/// callback sees them. The window bounds what is held in memory; a seed is handed to the
/// workers as soon as one leaves it, so a slow seed never leaves the others idle (a batch that
/// waited for its slowest seed, and for the callback, did).
const BATCH_SEEDS_PER_JOB: usize = 64;

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
    /// A negative control built as an engine debug hook, on in every seed (`None`: none).
    pub control: Control,
    /// Worker threads, 1 to [`JOBS_MAX`]: how the seeds are run, never what they give.
    pub jobs: usize,
    /// A deliberate bug of the parallel sweep, for its negative control (off by default).
    pub debug_control: SweepControl,
}

/// The negative control of `--jobs`: a bug that only comparing the output of different job
/// counts sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepControl {
    #[default]
    None,
    /// Hand a batch's reports back grouped by the worker a static deal gave them to (seed `k`
    /// of a batch to worker `k % jobs`), the way a sweep that concatenated per-worker result
    /// lists would: every seed's result is right, their order depends on `jobs`. One job
    /// runs without a pool, so its output is the clean twin.
    WorkerOrder,
    /// The negative control of the saturation curve: a signature that also hashes the seed
    /// (a feature that names the run, not its behaviour), so every seed looks new and the
    /// curve never falls.
    SeedInSignature,
}

impl SweepConfig {
    pub fn new(seeds: Range<u64>, ops: usize, profile: Profile) -> SweepConfig {
        SweepConfig {
            seeds,
            shard: (0, 1),
            ops,
            profile,
            control: Control::None,
            jobs: 1,
            debug_control: SweepControl::None,
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
    /// The behaviours met (coverage signatures' components), and the new ones per window.
    pub saturation: Saturation,
    /// How often the seeds crossed each of the format's scale thresholds, and how many did.
    pub thresholds: ThresholdCoverage,
    /// The file systems the seeds of an engine of several files ran on (empty otherwise).
    pub fs: FsCoverage,
}

/// What a sweep of an engine of several files covered of the file system: the models its seeds
/// drew, the metadata operations made and what power cuts kept and lost of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsCoverage {
    pub seeds_by_model: BTreeMap<MetaModel, u64>,
    /// The directories' own figures, summed over seeds.
    pub counts: FsCounts,
}

impl FsCoverage {
    fn add(&mut self, model: MetaModel, c: &FsCounts) {
        *self.seeds_by_model.entry(model).or_insert(0) += 1;
        let s = &mut self.counts;
        s.meta_ops += c.meta_ops;
        s.dir_syncs += c.dir_syncs;
        s.lying_dir_syncs += c.lying_dir_syncs;
        s.crashes += c.crashes;
        s.meta_ops_kept_in_crash += c.meta_ops_kept_in_crash;
        s.meta_ops_lost_in_crash += c.meta_ops_lost_in_crash;
        s.files_gone_in_crash += c.files_gone_in_crash;
    }
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
        self.thresholds.add(&r.stats.thresholds);
        self.faults.accumulate(&r.faults);
        self.sim_ns += r.io.sim_time_ns;
        if let Some(c) = &r.fs {
            self.fs.add(run.fs.model, c);
        }
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

/// Run every seed of `cfg` for engine `E` on `cfg.jobs` threads, calling `each` with every
/// seed's configuration and report in seed order; return the summary.
pub fn sweep<E: Engine>(
    cfg: &SweepConfig,
    each: &mut dyn FnMut(&RunConfig<E::Config>, &Report),
) -> Summary {
    sweep_with::<E>(cfg, &|_| {}, each)
}

/// [`sweep`], with every seed's configuration passed through `adjust` before it runs: a test
/// turns on an engine's debug switch or pins one of its options there. `adjust` must keep the
/// engine's [`Capabilities`](crate::adapter::Capabilities): the workload was generated for them.
///
/// ```
/// use crashlab_engine::FreelistKind;
/// use crashlab_sim::crashlab::CrashlabDb;
/// use crashlab_sim::profile::Profile;
/// use crashlab_sim::sweep::{sweep_with, SweepConfig};
///
/// // Every seed on the hashmap freelist, whichever freelist the seed drew.
/// let cfg = SweepConfig::new(0..4, 60, Profile::Default);
/// let mut ran = Vec::new();
/// let s = sweep_with::<CrashlabDb>(
///     &cfg,
///     &|c| c.engine.freelist = FreelistKind::Hashmap,
///     &mut |c, _| ran.push(c.engine.freelist),
/// );
/// assert_eq!((s.seeds, s.violations), (4, 0));
/// assert_eq!(ran, [FreelistKind::Hashmap; 4]);
/// ```
pub fn sweep_with<E: Engine>(
    cfg: &SweepConfig,
    adjust: &(dyn Fn(&mut RunConfig<E::Config>) + Sync),
    each: &mut dyn FnMut(&RunConfig<E::Config>, &Report),
) -> Summary {
    assert!(
        (1..=JOBS_MAX).contains(&cfg.jobs),
        "jobs {} outside 1..={JOBS_MAX}",
        cfg.jobs
    );
    let mut summary = Summary::default();
    let mut done = |(run_cfg, report, signature): &Run<E::Config>| {
        summary.add(run_cfg, report);
        summary.saturation.add(signature);
        each(run_cfg, report);
    };
    let pool = match cfg.jobs {
        1 => None,
        jobs => rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("sweep-{i}"))
            .build()
            .ok(),
    };
    // Without a pool (one job, or no threads to be had) the seeds run here: the same results.
    let Some(pool) = pool else {
        for seed in cfg.shard_seeds() {
            done(&run_seed::<E>(cfg, adjust, seed));
        }
        return summary;
    };
    if cfg.debug_control != SweepControl::WorkerOrder {
        streamed::<E>(&pool, cfg, adjust, &mut done);
        return summary;
    }
    let mut seeds = cfg.shard_seeds();
    loop {
        let batch: Vec<u64> = seeds
            .by_ref()
            .take(cfg.jobs * BATCH_SEEDS_PER_JOB)
            .collect();
        if batch.is_empty() {
            return summary;
        }
        // `collect` keeps the batch's order; one seed per task so idle workers steal singly.
        let runs: Vec<_> = pool.install(|| {
            batch
                .par_iter()
                .with_max_len(1)
                .map(|&seed| run_seed::<E>(cfg, adjust, seed))
                .collect()
        });
        for run in &control_order(cfg, runs) {
            done(run);
        }
    }
}

/// The seeds of `cfg` on `pool`, at most [`BATCH_SEEDS_PER_JOB`] per job in flight, each
/// handed to `done` in seed order on this thread as soon as every earlier one was: the callback
/// runs while the workers go on with later seeds.
fn streamed<E: Engine>(
    pool: &rayon::ThreadPool,
    cfg: &SweepConfig,
    adjust: &(dyn Fn(&mut RunConfig<E::Config>) + Sync),
    done: &mut dyn FnMut(&Run<E::Config>),
) {
    let window = cfg.jobs * BATCH_SEEDS_PER_JOB;
    let (tx, rx) = std::sync::mpsc::channel();
    pool.in_place_scope(|scope| {
        let mut seeds = cfg.shard_seeds().enumerate();
        let mut spawn_next = || {
            let Some((k, seed)) = seeds.next() else {
                return false;
            };
            let tx = tx.clone();
            scope.spawn(move |_| {
                // A panic outside the run (which catches its own) comes back as the seed's
                // result, to be resumed on this thread: a lost seed would block the receiver.
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_seed::<E>(cfg, adjust, seed)
                }));
                // The receiver lives until every seed came back: a send cannot fail.
                let _ = tx.send((k, run));
            });
            true
        };
        let mut in_flight = 0;
        while in_flight < window && spawn_next() {
            in_flight += 1;
        }
        // Seeds back early, by their position in the shard, until every earlier one is done.
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        while in_flight > 0 {
            let (k, run) = rx.recv().expect("a spawned seed sends its report");
            let run = run.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            waiting.insert(k, run);
            while let Some(run) = waiting.remove(&next) {
                done(&run);
                next += 1;
                in_flight -= 1;
                if spawn_next() {
                    in_flight += 1;
                }
            }
        }
        assert!(waiting.is_empty(), "every seed was handed back in order");
    });
}

/// A batch's reports as the callback must see them: in seed order, unless the control is on.
fn control_order<T>(cfg: &SweepConfig, runs: Vec<T>) -> Vec<T> {
    if cfg.debug_control != SweepControl::WorkerOrder {
        return runs;
    }
    let mut dealt: Vec<(usize, T)> = runs
        .into_iter()
        .enumerate()
        .map(|(k, r)| (k % cfg.jobs, r))
        .collect();
    dealt.sort_by_key(|&(worker, _)| worker);
    dealt.into_iter().map(|(_, r)| r).collect()
}

/// The run's signature, with the seed mixed in when the control says so.
fn control_signature<C: EngineConfig>(
    cfg: &SweepConfig,
    run_cfg: &RunConfig<C>,
    report: &Report,
) -> Signature {
    let mut s = signature(run_cfg, report);
    if cfg.debug_control == SweepControl::SeedInSignature {
        s.components[0] ^= run_cfg.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    s
}

/// A seed's configuration, report and coverage signature.
type Run<C> = (RunConfig<C>, Report, Signature);

/// One seed of the sweep, run on the calling thread, and its signature: computed where the
/// seed ran, so the thread that hands results over in order does as little as it can.
fn run_seed<E: Engine>(
    cfg: &SweepConfig,
    adjust: &(dyn Fn(&mut RunConfig<E::Config>) + Sync),
    seed: u64,
) -> Run<E::Config> {
    let mut run_cfg = RunConfig::<E::Config>::from_seed(seed, cfg.ops, cfg.profile);
    if cfg.control != Control::None {
        run_cfg.engine = run_cfg
            .engine
            .with_control(cfg.control)
            .expect("the caller checked that the engine has the control");
    }
    let caps = run_cfg.engine.capabilities();
    adjust(&mut run_cfg);
    assert_eq!(
        run_cfg.engine.capabilities(),
        caps,
        "sweep_with: the adjustment changed the engine's capabilities"
    );
    let report = run::<E>(&run_cfg);
    let signature = control_signature(cfg, &run_cfg, &report);
    (run_cfg, report, signature)
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
