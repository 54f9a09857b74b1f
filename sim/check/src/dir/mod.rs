//! The crash-state checker for engines of several files (capability `directory`).
//!
//! 1. **Record** (`record`): the workload once, with the session driver, on a fault-free
//!    SimFs; before every call that changes the file system (a file's write, sync or
//!    `set_len`; a create, rename, delete or directory sync) — the *crash points* — a copy of
//!    the file system and the states the durability oracle allows at that instant.
//! 2. **Enumerate** (`states`): at each crash point, the metadata subsets the model allows
//!    crossed with subsets of every file's pending sectors, exhaustive within the bounds
//!    `states` documents, seeded samples past them; the report counts which.
//! 3. **Judge**: each state is made (`SimFs::crash_with` on a copy), identified by its image
//!    (every name and its bytes), and each distinct image opened once with
//!    [`Engine::open_dir`], read whole and `check()`ed; the recovered state must be one the
//!    oracle allowed at that crash point. A panic is a violation whatever was promised.
//! 4. **Report** ([`DirCheckReport`]): counts and coverage, and for each crash point with a
//!    violation its first violating state (fewest kept sectors for its metadata subset, when
//!    the data was exhaustive), which [`replay_dir`] judges again alone.

mod record;
pub mod states;

use crate::CheckConfig;
use crashlab_models::KvModel;
use crashlab_sim::adapter::{Engine, EngineConfig as _};
use crashlab_sim::fs::{FileId, FsConfig, MetaModel, MetaSubset, SimDir, SimFs};
use crashlab_sim::power::PowerSwitch;
use crashlab_sim::rng::SimRng;
use crashlab_sim::verdict::{During, Verdict};
use record::Point;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

/// One violating crash state: the crash point, the metadata operations kept (indexes into the
/// operations pending there) and the pending data sectors kept (file, sector).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirState {
    pub point: usize,
    pub meta: MetaSubset,
    pub keep: Vec<(FileId, u64)>,
}

impl fmt::Display for DirState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keep: Vec<String> = self
            .keep
            .iter()
            .map(|(f, s)| format!("{}/{s}", f.0))
            .collect();
        let keep = if keep.is_empty() {
            "none".to_string()
        } else {
            keep.join(",")
        };
        write!(f, "point={} meta={} keep={keep}", self.point, self.meta)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirFound {
    pub state: DirState,
    /// The operation running at the crash point.
    pub op: usize,
    pub verdict: Verdict,
    pub detail: String,
    /// Whether the state came from an exhaustive enumeration of both metadata and data.
    pub exhaustive: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirCheckReport {
    pub model: MetaModel,
    pub ops: usize,
    pub commits: u64,
    pub crash_points: u64,
    /// Crash points whose metadata states were all visited, and those sampled.
    pub meta_exhaustive: u64,
    pub meta_sampled: u64,
    /// Crash points whose data subsets were all visited, and those sampled.
    pub data_exhaustive: u64,
    pub data_sampled: u64,
    pub pending_meta_max: usize,
    pub pending_sectors_max: usize,
    /// States generated (duplicates included), and the distinct images opened.
    pub states: u64,
    pub distinct: u64,
    pub violating_states: u64,
    pub found: Vec<DirFound>,
    /// A violation of the recorded run itself (before any enumerated crash).
    pub live: Option<String>,
}

impl DirCheckReport {
    /// The report for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "model {} · ops {} · commits {} · crash points {} (metadata: exhaustive {}, sampled {}; data: exhaustive {}, sampled {}) · most pending: {} metadata operations, {} sectors",
            self.model, self.ops, self.commits, self.crash_points, self.meta_exhaustive,
            self.meta_sampled, self.data_exhaustive, self.data_sampled, self.pending_meta_max,
            self.pending_sectors_max
        );
        let _ = writeln!(
            s,
            "states generated {} · distinct images opened {} · violating states {}",
            self.states, self.distinct, self.violating_states
        );
        if let Some(live) = &self.live {
            let _ = writeln!(s, "the recorded run itself: {live}");
        }
        for f in &self.found {
            let how = if f.exhaustive {
                "exhaustive"
            } else {
                "sampled"
            };
            let _ = writeln!(
                s,
                "  {} at op {} ({how}): {} — {}",
                f.verdict, f.op, f.state, f.detail
            );
        }
        s
    }
}

/// What opening one image gave.
#[derive(Clone)]
enum Recovered {
    State {
        model: KvModel,
        problems: Vec<String>,
    },
    Failed {
        verdict: Verdict,
        detail: String,
    },
}

/// Open `fs` (a crash state) with engine `E`, read it whole and check it.
fn recover<E: Engine>(fs: SimFs, engine: &E::Config) -> Recovered {
    let failed = |during, e: crashlab_sim::adapter::EngineError| Recovered::Failed {
        verdict: Verdict::Failed(during),
        detail: e.to_string(),
    };
    let opened = crashlab_sim::guard::catch(|| {
        let mut db = match E::open_dir(SimDir::new(fs, PowerSwitch::new()), engine, 1) {
            Ok(db) => db,
            Err(e) => return failed(During::Open, e),
        };
        let model = match db.begin_read().and_then(|r| E::read_snapshot(&r)) {
            Ok(m) => m,
            Err(e) => return failed(During::RecoveryRead, e),
        };
        match db.check() {
            Ok(problems) => Recovered::State { model, problems },
            Err(e) => failed(During::Check, e),
        }
    });
    opened.unwrap_or_else(|panic| Recovered::Failed {
        verdict: Verdict::Panic,
        detail: format!("the engine panicked recovering: {panic}"),
    })
}

/// The violation `rec` is at `point`, if any.
fn judge(rec: &Recovered, point: &Point) -> Option<(Verdict, String)> {
    match rec {
        Recovered::Failed { verdict, detail } if point.promised || *verdict == Verdict::Panic => {
            Some((*verdict, detail.clone()))
        }
        Recovered::Failed { .. } => None,
        Recovered::State { .. } if !point.promised => None,
        Recovered::State { problems, .. } if !problems.is_empty() => Some((
            Verdict::IntegrityCheck,
            format!("{} problems: {}", problems.len(), problems[0]),
        )),
        Recovered::State { model, .. } if !point.allowed.contains(model) => Some((
            Verdict::Durability,
            format!(
                "the recovered state is none of the {} the oracle allows here",
                point.allowed.len()
            ),
        )),
        Recovered::State { .. } => None,
    }
}

/// The file system a crash state of `point` leaves.
fn materialise(point: &Point, meta: &MetaSubset, keep: &BTreeSet<(FileId, u64)>) -> SimFs {
    let fs = point.fs.clone_state();
    fs.crash_with(meta, &mut |f, s| keep.contains(&(f, s)))
        .unwrap_or_else(|why| panic!("an enumerated state the model forbids: {why}"));
    fs
}

/// Check every crash state of `cfg`'s workload on engine `E`, an engine of several files, on
/// a file system configured as `fs` (see the module docs for what is exhaustive).
pub fn check_dir<E: Engine>(cfg: &CheckConfig<E::Config>, fs: FsConfig) -> DirCheckReport {
    assert!(
        cfg.engine.capabilities().directory,
        "check_dir is for engines of several files"
    );
    let rec = record::record::<E>(cfg, fs);
    let engine = cfg.engine_config();
    let mut rng = SimRng::derive(cfg.seed, "check dir states");
    let mut report = DirCheckReport {
        model: fs.model,
        ops: cfg.ops.len(),
        commits: rec.commits,
        crash_points: rec.points.len() as u64,
        live: rec.live,
        ..DirCheckReport::default()
    };
    let mut seen: BTreeMap<u64, Recovered> = BTreeMap::new();
    for (i, point) in rec.points.iter().enumerate() {
        let ps = states::enumerate(&point.fs, fs.model, &mut rng);
        count_coverage(&mut report, &ps);
        let mut first: Option<DirFound> = None;
        for st in &ps.states {
            let keep: BTreeSet<(FileId, u64)> = st.keep.iter().map(|&k| ps.units[k]).collect();
            let crashed = materialise(point, &ps.metas[st.meta], &keep);
            report.states += 1;
            let recovered = seen.entry(crashed.image_hash()).or_insert_with(|| {
                report.distinct += 1;
                recover::<E>(crashed, &engine)
            });
            let Some((verdict, detail)) = judge(recovered, point) else {
                continue;
            };
            report.violating_states += 1;
            first.get_or_insert(DirFound {
                state: DirState {
                    point: i,
                    meta: ps.metas[st.meta].clone(),
                    keep: keep.into_iter().collect(),
                },
                op: point.op,
                verdict,
                detail,
                exhaustive: ps.meta_exhaustive && ps.data_exhaustive,
            });
        }
        if let Some(f) = first.filter(|_| report.found.len() < cfg.max_reported) {
            report.found.push(f);
        }
    }
    report
}

fn count_coverage(report: &mut DirCheckReport, ps: &states::PointStates) {
    report.meta_exhaustive += u64::from(ps.meta_exhaustive);
    report.meta_sampled += u64::from(!ps.meta_exhaustive);
    report.data_exhaustive += u64::from(ps.data_exhaustive);
    report.data_sampled += u64::from(!ps.data_exhaustive);
    report.pending_meta_max = report.pending_meta_max.max(ps.pending_meta);
    report.pending_sectors_max = report.pending_sectors_max.max(ps.units.len());
}

/// Judge `state` of `cfg`'s check again, alone: the violation it shows, or `None` when it is
/// clean (or names a crash point or an operation the run does not have).
pub fn replay_dir<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    fs: FsConfig,
    state: &DirState,
) -> Option<Verdict> {
    let rec = record::record::<E>(cfg, fs);
    let point = rec.points.get(state.point)?;
    if point.fs.directory_after(&state.meta).is_err() {
        return None;
    }
    let keep: BTreeSet<(FileId, u64)> = state.keep.iter().copied().collect();
    let crashed = materialise(point, &state.meta, &keep);
    let recovered = recover::<E>(crashed, &cfg.engine_config());
    judge(&recovered, point).map(|(v, _)| v)
}
