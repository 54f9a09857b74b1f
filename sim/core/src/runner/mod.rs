//! The seeded runner: one case on a faulty [`SimDisk`], driven by the session [`Driver`] inside a
//! madsim runtime seeded with the run's seed. What it adds to the loop ([`RunnerHooks`]): the
//! profile's faults and storage control, a seeded power cut that keeps or loses each pending
//! sector, simulated time for every operation's I/O, background reader tasks that hold snapshots
//! across the writer's commits, and a timer that may cut the power at a seeded instant.

mod hooks;
mod tasks;

pub use hooks::{CutRecord, RunnerHooks};

use crate::adapter::{Engine, EngineConfig};
use crate::config::RunConfig;
use crate::disk::{FaultCounts, IoStats, SimDisk};
use crate::driver::{Driver, Hooks, RunStats, Settings};
use crate::events::EventLog;
use crate::fs::{FsCounts, SimFs};
use crate::guard;
use crate::medium::Medium;
use crate::thresholds::Thresholds;
use crate::verdict::{Outcome, Stop, Verdict};
use crashlab_engine::Counters;

/// What a run did and how it ended.
#[derive(Clone, Debug)]
pub struct Report {
    pub outcome: Outcome,
    pub stats: RunStats,
    pub trace_hash: u64,
    pub trace_events: u64,
    pub trace_tail: Vec<String>,
    pub counters: Counters,
    pub faults: FaultCounts,
    pub io: IoStats,
    pub image_hash: u64,
    /// Power cuts that tore the engine's meta region (see [`RunnerHooks::torn_metas`]).
    pub torn_metas: u64,
    /// The pinned power cut's record, or the last power cut's (see
    /// [`RunnerHooks::cut_record`]).
    pub cut: Option<CutRecord>,
    /// What the directory did, for an engine of several files (capability `directory`).
    pub fs: Option<FsCounts>,
}

/// Run a case to its end or its first violation. An engine panic is a `panic` violation with
/// the run's trace so far (the run goes on being reported, so a sweep goes on).
pub fn run<E: Engine>(cfg: &RunConfig<E::Config>) -> Report {
    run_with::<E>(cfg, Settings::default())
}

/// [`run`] with the driver's settings: a test turns one of its checks off to show what that
/// check alone catches.
pub fn run_with<E: Engine>(cfg: &RunConfig<E::Config>, settings: Settings) -> Report {
    run_inner::<E>(cfg, settings, false).0
}

/// [`run`] keeping the structured [`EventLog`] of the run, for a report a person reads. The
/// run is the same run (same trace hash); only the log is extra.
pub fn run_logged<E: Engine>(cfg: &RunConfig<E::Config>) -> (Report, EventLog) {
    let (report, log) = run_inner::<E>(cfg, Settings::default(), true);
    (report, log.unwrap_or_default())
}

fn run_inner<E: Engine>(
    cfg: &RunConfig<E::Config>,
    settings: Settings,
    log: bool,
) -> (Report, Option<EventLog>) {
    in_runtime(cfg.seed, run_async::<E>(cfg, settings, log))
}

/// Run `drive` in a madsim runtime seeded with `seed`; a panic it does not catch is a violation
/// (with no event log).
pub(crate) fn in_runtime(
    seed: u64,
    drive: impl std::future::Future<Output = (Report, Option<EventLog>)>,
) -> (Report, Option<EventLog>) {
    let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    match guard::catch(|| rt.block_on(drive)) {
        Ok(done) => done,
        Err(detail) => (panicked_outside_the_run(detail), None),
    }
}

/// A panic the drive future did not catch (one in the runtime itself, or in a background task's
/// own frame): reported as a violation with nothing else known.
fn panicked_outside_the_run(detail: String) -> Report {
    Report {
        outcome: Outcome::Violation(crate::verdict::Violation {
            op_index: 0,
            verdict: Verdict::Panic,
            detail,
        }),
        stats: RunStats::default(),
        trace_hash: 0,
        trace_events: 0,
        trace_tail: Vec::new(),
        counters: Counters::default(),
        faults: FaultCounts::default(),
        io: IoStats::default(),
        image_hash: 0,
        torn_metas: 0,
        cut: None,
        fs: None,
    }
}

async fn run_async<E: Engine>(
    cfg: &RunConfig<E::Config>,
    settings: Settings,
    log: bool,
) -> (Report, Option<EventLog>) {
    let medium = medium_of(cfg);
    let hooks = RunnerHooks::<E>::new(cfg);
    drive_to_report(cfg, medium, settings, hooks, |h| h, log).await
}

/// What a run's engine runs on, seeded by the run's seed: one disk, or a file system of such
/// disks when the engine keeps several files (capability `directory`).
pub fn medium_of<C: EngineConfig>(cfg: &RunConfig<C>) -> Medium {
    if cfg.engine.capabilities().directory {
        Medium::Fs(SimFs::new(cfg.seed, cfg.disk.clone(), cfg.fs))
    } else {
        Medium::Disk(SimDisk::new(cfg.seed, cfg.disk.clone()))
    }
}

/// Drive the case on `medium` (the driver's: faults, figures, images) with `hooks`, which are
/// the runner's own or wrap them (`runner` finds them), and report.
pub(crate) async fn drive_to_report<E: Engine, H: Hooks<E>>(
    cfg: &RunConfig<E::Config>,
    medium: Medium,
    settings: Settings,
    hooks: H,
    runner: fn(&H) -> &RunnerHooks<E>,
    log: bool,
) -> (Report, Option<EventLog>) {
    let mut d = Driver::<E, _>::new(cfg, medium, settings, hooks);
    if log {
        d.keep_event_log();
    }
    let outcome = match guard::catch_future(d.drive()).await {
        Err(panic) => {
            let detail = format!("the engine panicked: {panic} ({})", d.during());
            d.violation(Verdict::Panic, detail).into_outcome()
        }
        Ok(Ok(())) => Outcome::Ok,
        // The engine keeps no checksums on data pages (bbolt's format): once the corruption
        // profile's disk has corrupted bytes, a wrong answer is undetected corruption the disk
        // caused, not a broken promise. Before, it is the engine's (`disk_may_explain`).
        Ok(Err(Stop::Violation(v))) if d.disk_may_explain() && v.verdict.disk_may_explain() => {
            Outcome::DiskFailure(format!("undetected corruption: {v}"))
        }
        Ok(Err(stop)) => stop.into_outcome(),
    };
    d.trace.record(format!("outcome {outcome:?}"));
    let mut stats = d.stats.clone();
    let hooks = runner(&d.hooks);
    stats.thresholds = Thresholds::of_run(&d.counters, hooks.many_bucket_states());
    let report = Report {
        outcome,
        stats,
        trace_hash: d.trace.hash(),
        trace_events: d.trace.events(),
        trace_tail: d.trace.tail(),
        counters: d.counters,
        faults: d.medium.fault_counts(),
        io: d.medium.io_stats(),
        image_hash: match d.medium.fs() {
            Some(fs) => E::dir_image_hash(fs),
            None => d.medium.image_hash(),
        },
        torn_metas: hooks.torn_metas(),
        cut: hooks.cut_record(),
        fs: d.medium.fs().map(SimFs::counts),
    };
    (report, d.take_event_log())
}

/// The header of a run: every choice its seed made (an engine of several files: the file
/// system's too).
pub fn header<C: EngineConfig>(cfg: &RunConfig<C>) -> String {
    let mut h = format!(
        "seed {} profile {} ops {} engine {}\n  options: {}\n  faults:  {}\n  disk:    {}\n",
        cfg.seed,
        cfg.profile,
        cfg.ops.len(),
        C::ENGINE,
        cfg.engine.describe(),
        crate::case::format_faults(&cfg.disk.faults),
        crate::case::format_disk(&cfg.disk)
    );
    if cfg.engine.capabilities().directory {
        h.push_str(&format!("  fs:      {}\n", crate::case::format_fs(&cfg.fs)));
    }
    if cfg.switch_settings {
        h.push_str("  sessions: switch (later sessions may open with other settings)\n");
    }
    h
}
