//! The exhaustive crash-state model checker (`crashlab check`).
//!
//! Random simulation samples crash states; this mode visits all of them for a small workload:
//!
//! 1. **Record** ([`drive`], [`record`]): run the workload once on a fault-free `SimDisk` behind
//!    a recording wrapper. After every write call and every sync — the *crash points* — note the
//!    durable image, the pending sectors and what the page cache holds, with the states the
//!    durability oracle allows at that instant and the readers that are open.
//! 2. **Enumerate** ([`states`]): at each crash point, every image a power cut could leave — the
//!    durable image plus every subset of the pending sectors, exhaustive while `2^n` is within
//!    `max_states`, then page-level subsets with single-page tears, then a seeded sample; the
//!    report says which. A crash inside a write call (some of its sectors persisted) is one of
//!    these subsets, since sector writes are atomic. Also the process crash (page cache kept),
//!    and each open reader's snapshot read from the page cache.
//! 3. **Judge** ([`explore`], [`recover`]): images are identified by a 128-bit hash computed
//!    from per-sector deltas ([`image`]), and each distinct one is opened once (in memory) with
//!    the workload's options, read whole and `check()`ed. The recovered state must be one the
//!    oracle allowed at that crash point; with `no_sync` a power cut promises nothing, so only a
//!    panic is a violation there, while a process crash must still lose nothing acknowledged. A
//!    panic on any image is an engine bug. For a seeded sample of distinct states the recovery
//!    itself (open, then a probe commit) is recorded and crashed again, and the second recovery
//!    must give the first state or it with the probe.
//! 4. **Report** ([`report`], [`minimise`]): counts, coverage, and each violation shrunk to a
//!    minimal set of persisted sectors, as a case file `crashlab repro` replays.
//!
//! Negative controls ([`control`]) prove it sees real bugs: each must be found, and a correct
//! engine must pass the same workload.
//!
//! Engines: crashlab's own is driven directly (batched commits, readers' snapshot metas, debug
//! hooks); any other engine — redb — through the runner's adapter trait ([`adapter`]): the same
//! recording, enumeration, oracle and minimisation, with the controls that are storage wrappers.

mod adapter;
mod book;
pub mod control;
mod drive;
mod explore;
mod image;
mod minimise;
mod record;
mod recover;
pub mod report;
pub mod spec;
mod states;

pub use control::Control;
pub use report::{CheckReport, Found};
pub use spec::{CheckParams, CrashState};
pub use states::Coverage;

use crate::case::{Case, Expect};
use crate::disk::DiskConfig;
use crate::engines::EngineKind;
use crate::op::Op;
use crate::profile::{self, Profile};
use crate::runner::RunConfig;
use crate::workload;
use book::Book;
use crashlab_engine::{FreelistKind, Options, PresizePolicy};
use explore::Explorer;
use std::time::Duration;

/// Everything that determines a check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckConfig {
    /// The engine under test.
    pub engine: EngineKind,
    /// Seeds the disk and every sampled choice.
    pub seed: u64,
    /// The engine's options; debug hooks come from `params.control`.
    pub options: Options,
    pub ops: Vec<Op>,
    pub params: CheckParams,
    /// Re-crash the recovery of one distinct recovered state in this many, chosen by the seed
    /// (0: never).
    pub recrash_one_in: u64,
    /// Violations minimised and reported, at most (every violating state is counted).
    pub max_reported: usize,
    /// Stop after this many violating states (`None`: visit everything).
    pub stop_after: Option<u64>,
}

/// Default `recrash_one_in`.
pub const RECRASH_ONE_IN_DEFAULT: u64 = 16;

impl CheckConfig {
    /// A check of `ops` generated from `seed` (no power cuts in the workload: the checker makes
    /// them), with the options the seed draws.
    pub fn from_seed(seed: u64, ops: usize) -> CheckConfig {
        CheckConfig::from_seed_for(EngineKind::Crashlab, seed, ops)
    }

    /// [`CheckConfig::from_seed`] for `engine`: its workload generator leaves out what it lacks.
    pub fn from_seed_for(engine: EngineKind, seed: u64, ops: usize) -> CheckConfig {
        CheckConfig {
            engine,
            ..CheckConfig::new(
                seed,
                profile::engine_options(seed),
                workload::generate_for(engine, seed, ops, false),
            )
        }
    }

    pub fn new(seed: u64, options: Options, ops: Vec<Op>) -> CheckConfig {
        CheckConfig {
            engine: EngineKind::Crashlab,
            seed,
            options,
            ops,
            params: CheckParams::default(),
            recrash_one_in: RECRASH_ONE_IN_DEFAULT,
            max_reported: 10,
            stop_after: None,
        }
    }

    /// The check a case describes. Its fault profile is not used (the checker's disk has no
    /// faults), except `no-barrier`, which is control (a).
    pub fn from_case(case: &Case) -> CheckConfig {
        let mut cfg = CheckConfig::new(
            case.run.seed,
            case.run.options.clone(),
            case.run.ops.clone(),
        );
        cfg.engine = case.run.engine;
        cfg.params = case.check.unwrap_or_default();
        if case.run.profile == Profile::NoBarrier && cfg.params.control == Control::None {
            cfg.params.control = Control::NoBarrier;
        }
        cfg
    }

    /// A case that replays `state` of this check.
    pub fn to_case(&self, state: CrashState) -> Case {
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

    /// The run this check records, as the runner's adapter sees it: redb draws its commit
    /// protocol and its non-durable commits from the seed, and control (a) forces two-phase
    /// commit, the protocol that relies on the barrier the control drops.
    pub fn run_config(&self) -> RunConfig {
        let profile = if self.params.control == Control::NoBarrier {
            Profile::NoBarrier
        } else {
            Profile::None
        };
        RunConfig {
            engine: self.engine,
            seed: self.seed,
            profile,
            options: self.options.clone(),
            disk: DiskConfig::default(),
            ops: self.ops.clone(),
        }
    }

    /// The storage the engine runs on: the disk, or the control's wrapper over it.
    pub(crate) fn storage(&self, disk: crate::disk::SimDisk) -> Box<dyn crashlab_engine::Storage> {
        use crate::engines::{crashlab::CrashlabDb, redb::RedbDb, EngineDb};
        let run = self.run_config();
        let meta_len = match self.engine {
            EngineKind::Crashlab => CrashlabDb::meta_region_len(&run),
            EngineKind::Redb => RedbDb::meta_region_len(&run),
        };
        self.params.control.storage(disk, meta_len)
    }

    /// The engine's page size: sectors per page, for the page-level tier of the enumeration.
    pub fn page_size(&self) -> u32 {
        match self.engine {
            EngineKind::Crashlab => self.options.page_size,
            EngineKind::Redb => crate::engines::redb::REDB_PAGE_SIZE,
        }
    }

    /// Why this check cannot run on its engine, if it cannot: batched commits and the controls
    /// built as debug hooks exist in crashlab's engine only.
    pub fn unsupported(&self) -> Option<String> {
        if self.engine == EngineKind::Crashlab {
            return None;
        }
        if self.params.batched {
            return Some(format!(
                "batched commits (--batched) are crashlab's WriteBatch; {} has none",
                self.engine
            ));
        }
        if self.params.control.hooks() != Default::default() {
            return Some(format!(
                "control {} is a debug hook in crashlab's engine; with --engine {} use \
                 no-barrier, no-growth-sync or fdatasync-disk",
                self.params.control, self.engine
            ));
        }
        None
    }

    /// This check for every freelist kind × freelist synced or not × batched or not × pre-size
    /// policy: 24 checks.
    pub fn variants(&self) -> Vec<CheckConfig> {
        let mut all = Vec::new();
        for freelist in [FreelistKind::Array, FreelistKind::Hashmap] {
            for no_freelist_sync in [false, true] {
                for batched in [false, true] {
                    for presize in [
                        PresizePolicy::Grow,
                        PresizePolicy::Exact,
                        PresizePolicy::Estimate,
                    ] {
                        let mut cfg = self.clone();
                        cfg.options.freelist = freelist;
                        cfg.options.no_freelist_sync = no_freelist_sync;
                        cfg.options.presize = presize;
                        cfg.params.batched = batched;
                        all.push(cfg);
                    }
                }
            }
        }
        all
    }

    /// The options the engine runs with: the control's hooks on, no batch delay (one client).
    pub fn engine_options(&self) -> Options {
        Options {
            debug: self.params.control.hooks(),
            max_batch_delay: Duration::ZERO,
            read_only: false,
            ..self.options.clone()
        }
    }
}

/// Check every crash state of `cfg`'s workload.
pub fn check(cfg: &CheckConfig) -> CheckReport {
    let mut book = Book::default();
    let rec = drive::record(cfg, &mut book);
    let mut ex = Explorer::new(cfg, book);
    for p in &rec.log.points {
        if ex.stopped() {
            break;
        }
        ex.point(p);
    }
    if let Some(l) = rec.live {
        ex.live(l);
    }
    let mut report = ex.report;
    report.ops = cfg.ops.len();
    report.commits = rec.commits;
    report.pending_rewrites = rec.log.rewrites;
    report
}

/// What replaying one crash state gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// The state shows this violation.
    Violation { kind: &'static str, detail: String },
    /// The state is fine.
    Clean,
    /// The recorded run has no such state (the engine or the workload changed).
    Missing(String),
}

/// The disk image one crash state of `cfg`'s workload leaves (a power cut or a process crash;
/// readers' views and live failures are no single image).
pub fn state_image(cfg: &CheckConfig, state: &CrashState) -> Result<Vec<u8>, String> {
    let mut book = Book::default();
    let rec = drive::record(cfg, &mut book);
    let mut ex = Explorer::new(cfg, book);
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
pub fn replay(cfg: &CheckConfig, state: &CrashState) -> Replayed {
    let mut book = Book::default();
    let rec = drive::record(cfg, &mut book);
    let mut ex = Explorer::new(cfg, book);
    if let CrashState::Live { op } = state {
        return match rec.live {
            Some(l) if l.op == *op => Replayed::Violation {
                kind: l.kind,
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
