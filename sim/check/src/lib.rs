//! The exhaustive crash-state model checker (`crashlab check`).
//!
//! Random simulation samples crash states; this mode visits all of them for a small workload:
//!
//! 1. **Record** (`drive`, `record`): run the workload once, with the simulator's one session
//!    driver, on a fault-free `SimDisk` behind a recording wrapper. After every write call and
//!    every sync — the *crash points* — note the durable image, the pending sectors and what the
//!    page cache holds, with the states the durability oracle allows at that instant and the
//!    readers that are open.
//! 2. **Enumerate** (`states`): at each crash point, every image a power cut could leave — the
//!    durable image plus every subset of the pending sectors, exhaustive while `2^n` is within
//!    `max_states`, then page-level subsets with single-page tears, then a seeded sample; the
//!    report says which. A crash inside a write call (some of its sectors persisted) is one of
//!    these subsets, since sector writes are atomic. Also the process crash (page cache kept),
//!    and each open reader's snapshot read from the page cache.
//! 3. **Judge** (`explore`, `recover`): images are identified by a 128-bit hash computed
//!    from per-sector deltas ([`image`]), and each distinct one is opened once (in memory) with
//!    the workload's options, read whole and `check()`ed. The recovered state must be one the
//!    oracle allowed at that crash point; with `no_sync` a power cut promises nothing, so only a
//!    panic is a violation there, while a process crash must still lose nothing acknowledged. A
//!    panic on any image is an engine bug. For a seeded sample of distinct states the recovery
//!    itself (open, then a probe commit) is recorded and crashed again, and the second recovery
//!    must give the first state or it with the probe.
//! 4. **Report** ([`report`], `minimise`): counts, coverage, and each violation shrunk to a
//!    minimal set of persisted sectors, as a case file `crashlab repro` replays.
//!
//! **Bounded-exhaustive workloads** ([`check_all_workloads`]): instead of one workload, every
//! workload of up to K transactions over a small alphabet ([`alphabet`]) that the model accepts,
//! one per class of in-order renamings ([`canonical`], [`enumerate`]), each checked as above
//! under every variant of the engine's options, with recoveries and identical crash points
//! shared between the workloads of a variant (`bounded`).
//!
//! With `jobs > 1` the distinct images of a run of crash points are recovered on that many
//! threads before the walk of step 3 reaches them (`prefetch`); the walk itself, and so every
//! count, sample and finding, is the same for any number of jobs.
//!
//! Negative controls ([`crashlab_sim::control`]) prove it sees real bugs: each must be found,
//! and a correct engine must pass the same workload.
//!
//! Every engine is reached through the simulator's adapter trait; what one lacks (write batches
//! for `--batched`, reader views for reader states, debug hooks for some controls) is declared by
//! its configuration, and the checker leaves it out or refuses the option with the reason.
//!
//! **From a test of your own engine** (see `crashlab_sim`'s crate docs for the adapter): draw
//! a small workload from a seed with [`CheckConfig::from_seed`] (or give the operations to
//! [`CheckConfig::new`]), turn on what you need in its fields, and call [`check`]; each
//! [`Found`] in the [`CheckReport`] names its minimal crash state, which [`replay`] re-judges
//! alone and [`CheckConfig::to_case`] writes down.
//!
//! ```
//! use crashlab_check::{check, CheckConfig};
//! use crashlab_sim::crashlab::CrashlabDb;
//!
//! let cfg = CheckConfig::<crashlab_engine::Options>::from_seed(7, 8);
//! let report = check::<CrashlabDb>(&cfg);
//! assert_eq!(report.violating_states, 0, "{}", report.text(None));
//! assert!(report.crash_points > 0 && report.coverage.exhaustive > 0);
//! ```
#![forbid(unsafe_code)]

pub mod alphabet;
mod book;
mod bounded;
pub mod canonical;
pub mod dir;
mod drive;
pub mod enumerate;
mod explore;
pub mod image;
mod interleave;
mod minimise;
pub mod prebuilt;
mod prefetch;
mod record;
mod recover;
pub mod report;
mod states;
mod view;
mod workers;

pub use alphabet::Alphabet;
pub use bounded::{space_header, BoundedReport, Finding, Progress, VariantRow, TABLE_HEAD};
pub use dir::{check_dir, replay_dir, DirCheckReport, DirFound, DirState};
pub use enumerate::{Counts, Space};
pub use interleave::{
    check_interleavings, Checked, GroupSpace, Interleavings, GROUP_CALLERS_MAX, GROUP_SCHEDULES_MAX,
};
pub use prebuilt::{ImageFacts, Prebuilt, Shape};
pub use report::{CheckReport, Found};
pub use states::Coverage;
pub use view::{state_view, StateView};

use book::Book;
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::{AfterFailure, RunConfig};
use crashlab_sim::control::Control;
use crashlab_sim::disk::DiskConfig;
use crashlab_sim::op::Op;
use crashlab_sim::profile::{self, Profile};
use crashlab_sim::spec::{CheckParams, CrashState};
use crashlab_sim::verdict::Verdict;
use crashlab_sim::workload;
use explore::Explorer;

/// Everything that determines a check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckConfig<C> {
    /// Seeds the disk and every sampled choice.
    pub seed: u64,
    /// The engine's options; debug hooks come from `params.control`.
    pub engine: C,
    pub ops: Vec<Op>,
    pub params: CheckParams,
    /// Re-crash the recovery of one distinct recovered state in this many, chosen by the seed
    /// (0: never).
    pub recrash_one_in: u64,
    /// Violations minimised and reported, at most (every violating state is counted).
    pub max_reported: usize,
    /// Stop after this many violating states (`None`: visit everything).
    pub stop_after: Option<u64>,
    /// Worker threads that recover crash images, 1 to `JOBS_MAX`: how the check runs, never
    /// what it reports (see `prefetch`).
    pub jobs: usize,
    /// Start the workload from this pre-built image instead of an empty file ([`prebuilt`]);
    /// not part of a case file, and not used by [`check_all_workloads`] or
    /// [`check_interleavings`].
    pub image: Option<Shape>,
    /// The recorded run's sessions after the first open with the settings the engine's
    /// `at_open` gives them, as the run of a case that says so did (`RunConfig::switch_settings`).
    pub switch_settings: bool,
}

/// Default `recrash_one_in`.
pub const RECRASH_ONE_IN_DEFAULT: u64 = 16;

impl<C: EngineConfig> CheckConfig<C> {
    /// A check of `ops` generated from `seed` (no power cuts in the workload: the checker makes
    /// them), with the options and the disk's length model the seed draws (the same one a run
    /// of the seed has); the workload leaves out what the engine lacks.
    pub fn from_seed(seed: u64, ops: usize) -> CheckConfig<C> {
        let engine = C::from_seed(seed, Profile::None);
        let ops = workload::generate(seed, ops, false, &engine.capabilities());
        let mut cfg = CheckConfig::new(seed, engine, ops);
        cfg.params.length = profile::length_model(seed);
        cfg.switch_settings = cfg.engine.switches_settings(seed);
        cfg
    }

    pub fn new(seed: u64, engine: C, ops: Vec<Op>) -> CheckConfig<C> {
        CheckConfig {
            seed,
            engine,
            ops,
            params: CheckParams::default(),
            recrash_one_in: RECRASH_ONE_IN_DEFAULT,
            max_reported: 10,
            stop_after: None,
            jobs: 1,
            image: None,
            switch_settings: false,
        }
    }

    /// [`CheckConfig::from_seed`] starting from the image `shape`: the engine's options are the
    /// ones the seed draws under the `scale` profile (512-byte pages for crashlab's engine),
    /// the workload the same.
    pub fn from_seed_on_image(seed: u64, ops: usize, shape: Shape) -> CheckConfig<C> {
        let mut cfg = CheckConfig::from_seed(seed, ops);
        cfg.engine = C::from_seed(seed, Profile::Scale);
        cfg.image = Some(shape);
        cfg
    }

    /// The check a case describes: its `check` line, or without one the checker's defaults on
    /// the length model of the case's disk. Its fault profile is not used (the checker's disk
    /// has no faults), except the storage controls `no-barrier` (a) and `no-growth-sync` (d).
    /// A run case found under an engine-hook control (its options' `debug=`) is checked with
    /// that control on, as it ran: the checker turns hooks on from its control alone.
    pub fn from_case(case: &Case<C>) -> CheckConfig<C> {
        let mut cfg =
            CheckConfig::new(case.run.seed, case.run.engine.clone(), case.run.ops.clone());
        cfg.switch_settings = case.run.switch_settings;
        cfg.params = case.check.unwrap_or(CheckParams {
            length: case.run.disk.length,
            ..CheckParams::default()
        });
        let control = match case.run.profile.control() {
            Control::None => case.run.engine.control(),
            storage => storage,
        };
        if control != Control::None && cfg.params.control == Control::None {
            cfg.params = cfg.params.with_control(control);
        }
        cfg
    }

    /// A case that replays `state` of this check.
    pub fn to_case(&self, state: CrashState) -> Case<C> {
        Case {
            run: RunConfig {
                profile: Profile::None,
                ..self.run_config()
            },
            expect: Expect::Violation,
            explicit_ops: true,
            check: Some(self.params),
            crash_state: Some(state),
        }
    }

    /// The engine's configuration with the control's debug hook on (the case parser and the
    /// command line refuse a control the engine has no hook for, so this cannot fail here).
    pub fn engine_config(&self) -> C {
        self.engine
            .with_control(self.params.control)
            .unwrap_or_else(|why| panic!("an unsupported check reached the checker: {why}"))
    }

    /// The run this check records: the engine with the control on, no disk faults.
    pub fn run_config(&self) -> RunConfig<C> {
        let profile = if self.params.control == Control::NoBarrier {
            Profile::NoBarrier
        } else {
            Profile::None
        };
        RunConfig {
            seed: self.seed,
            profile,
            disk: DiskConfig {
                sector_size: self.params.sector_size,
                length: self.params.disk_length(),
                ..DiskConfig::default()
            },
            ops: self.ops.clone(),
            engine: self.engine_config(),
            // The checker's disk has no faults: no commit of the recorded run fails.
            after_failure: AfterFailure::Restart,
            pinned_cut: None,
            fs: Default::default(),
            switch_settings: self.switch_settings,
        }
    }

    /// The engine's page size: sectors per page, for the page-level tier of the enumeration.
    pub fn page_size(&self) -> u32 {
        self.engine.capabilities().page_size
    }

    /// A fresh, fault-free disk with the checker's sector size and length model: what a
    /// recorded run (and a pre-built image) is written on.
    pub(crate) fn fresh_disk(&self) -> crashlab_sim::disk::SimDisk {
        crashlab_sim::disk::SimDisk::new(
            self.seed,
            crashlab_sim::disk::DiskConfig {
                sector_size: self.params.sector_size,
                length: self.params.disk_length(),
                ..crashlab_sim::disk::DiskConfig::default()
            },
        )
    }

    /// Why this check cannot run on its engine, if it cannot.
    pub fn unsupported(&self) -> Option<String> {
        if self.engine.capabilities().directory {
            return Some(format!(
                "{} keeps several files: it is checked by check_dir (its crash states are the \
                 file system's), not page by page on one disk",
                C::ENGINE
            ));
        }
        self.params
            .supported_by(&self.engine)
            .err()
            .or_else(|| self.image.and_then(|s| s.unsupported_by(&self.engine)))
    }

    /// This check for every variant of the engine's options × batched or not (when the engine
    /// has write batches).
    pub fn variants(&self) -> Result<Vec<CheckConfig<C>>, String> {
        let batched: &[bool] = if self.engine.capabilities().write_batches {
            &[false, true]
        } else {
            &[false]
        };
        let mut all = Vec::new();
        for engine in self.engine.variants()? {
            for &b in batched {
                let mut cfg = self.clone();
                cfg.engine = engine.clone();
                cfg.params.batched = b;
                all.push(cfg);
            }
        }
        Ok(all)
    }
}

/// Check every crash state of `cfg`'s workload on engine `E` (from its pre-built image, if it
/// names one: built here, once).
pub fn check<E: Engine>(cfg: &CheckConfig<E::Config>) -> CheckReport {
    match prebuild::<E>(cfg) {
        Ok(image) => check_on::<E>(cfg, image.as_ref()),
        Err(why) => CheckReport::image_failed(why),
    }
}

/// The image `cfg` starts from, built (`None` for an empty file).
pub fn prebuild<E: Engine>(cfg: &CheckConfig<E::Config>) -> Result<Option<Prebuilt>, String> {
    cfg.image.map(|s| prebuilt::build::<E>(cfg, s)).transpose()
}

/// [`check`] on an image built by [`prebuild`] for `cfg` (or for a configuration that differs
/// only in its control, its check parameters or its workload: the image is built without the
/// control), so that several checks share one build.
pub fn check_on<E: Engine>(cfg: &CheckConfig<E::Config>, image: Option<&Prebuilt>) -> CheckReport {
    assert_eq!(
        cfg.image,
        image.map(|i| i.shape),
        "the image given is the one the check names"
    );
    let mut book = Book::default();
    let rec = drive::record::<E>(cfg, image, &mut book);
    let mut ex = Explorer::<E>::new(cfg, book);
    let points = &rec.log.points;
    let mut next = 0;
    while next < points.len() && !ex.stopped() {
        let end = ex.prefetch_from(points, next, cfg.params.max_states);
        for p in &points[next..end] {
            if ex.stopped() {
                break;
            }
            ex.point(p);
        }
        next = end;
    }
    if let Some(l) = rec.live {
        ex.live(l);
    }
    let mut report = ex.report;
    report.ops = cfg.ops.len();
    report.commits = rec.commits;
    report.pending_rewrites = rec.log.rewrites;
    report.thresholds = rec.thresholds;
    report.image = image.map(Prebuilt::facts);
    report
}

/// Bounded-exhaustive workloads: check every canonical workload of `space` (every sequence of
/// up to `space.depth` transactions over its alphabet that the model accepts, one per class of
/// in-order renamings) under every variant of `base`'s engine options (× batched or not; `base`
/// alone for an engine without variants), every crash state of each. `base`'s operations are
/// ignored; its parameters, control, seed, `max_reported` and `stop_after` apply to the whole
/// run. `progress` hears how the space divides, then about each variant as it finishes.
pub fn check_all_workloads<E: Engine>(
    base: &CheckConfig<E::Config>,
    space: &Space,
    progress: &mut dyn FnMut(Progress<'_>),
) -> BoundedReport<E::Config> {
    bounded::check_all::<E>(base, space, progress)
}

/// What replaying one crash state gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// The state shows this violation.
    Violation { verdict: Verdict, detail: String },
    /// The state is fine.
    Clean,
    /// The recorded run has no such state (the engine or the workload changed).
    Missing(String),
}

/// The disk image one crash state of `cfg`'s workload leaves (a power cut or a process crash;
/// readers' views and live failures are no single image).
pub fn state_image<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    state: &CrashState,
) -> Result<Vec<u8>, String> {
    let image = prebuild::<E>(cfg)?;
    let mut book = Book::default();
    let rec = drive::record::<E>(cfg, image.as_ref(), &mut book);
    let mut ex = Explorer::<E>::new(cfg, book);
    let p = crash_point(&rec, state)?;
    ex.state_image(p, state)
}

/// The recorded crash point a (non-live) state is at.
fn crash_point<'r>(
    rec: &'r drive::Recording,
    state: &CrashState,
) -> Result<&'r record::CrashPoint, String> {
    let call = match state {
        CrashState::PowerCut { call, .. }
        | CrashState::ProcessCrash { call }
        | CrashState::Reader { call, .. } => *call,
        CrashState::Live { op } => return Err(format!("op {op} of the run itself is no crash")),
    };
    rec.log
        .points
        .iter()
        .find(|p| p.call == call)
        .ok_or_else(|| {
            format!(
                "the recorded run makes {} storage calls, not {call}",
                rec.log.points.len()
            )
        })
}

/// Replay one crash state of `cfg`'s workload.
pub fn replay<E: Engine>(cfg: &CheckConfig<E::Config>, state: &CrashState) -> Replayed {
    let image = match prebuild::<E>(cfg) {
        Ok(image) => image,
        Err(why) => return Replayed::Missing(why),
    };
    let mut book = Book::default();
    let rec = drive::record::<E>(cfg, image.as_ref(), &mut book);
    let mut ex = Explorer::<E>::new(cfg, book);
    if let CrashState::Live { op } = state {
        return match rec.live {
            Some(l) if l.op == *op => Replayed::Violation {
                verdict: l.verdict,
                detail: l.detail,
            },
            Some(l) => Replayed::Missing(format!("the recorded run fails at op {}", l.op)),
            None => Replayed::Clean,
        };
    }
    match crash_point(&rec, state) {
        Ok(p) => ex.replay(p, state),
        Err(m) => Replayed::Missing(m),
    }
}
