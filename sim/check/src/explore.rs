//! Visiting the crash states of recorded crash points: build each image, open it once per
//! distinct identity, judge it against the promise in force at its crash point, minimise and
//! report violations, and re-crash a sample of recoveries.

use crate::book::{Book, ModelId};
use crate::drive::{probe_allowed, record_recovery, LiveFinding};
use crate::image::{build, ImageId};
use crate::minimise::minimise;
use crate::record::{CrashPoint, Log, OpenReader};
use crate::recover::{judge, reader_view, recover, Recovery};
use crate::report::{CheckReport, Found};
use crate::states::{self, delta, Coverage, Subset};
use crate::workers::Prefetch;
use crate::{CheckConfig, Replayed};
use crashlab_sim::adapter::Engine;
use crashlab_sim::rng::SimRng;
use crashlab_sim::spec::CrashState;
use crashlab_sim::verdict::Verdict;
use std::collections::BTreeMap;

/// Most states per crash point of a re-crashed recovery: recoveries are many and small.
const RECOVERY_MAX_STATES: u64 = 256;

/// Recoveries by image identity. Valid for one engine configuration and the book whose states
/// they name, so checks of many workloads with one configuration can share it (`bounded.rs`).
pub(crate) type Cache = BTreeMap<ImageId, Recovery>;

/// Where a crash point lies: in the recorded run, or in the recovery of one of its states.
#[derive(Clone)]
pub(crate) enum Level {
    First,
    /// A recovery of the state `keep` (disk sectors) at the recorded run's call `call`.
    Recovery {
        call: u64,
        keep: Vec<u64>,
    },
}

pub(crate) struct Explorer<'a, E: Engine> {
    pub(crate) cfg: &'a CheckConfig<E::Config>,
    /// The engine's options with the control on: what every recovery opens with.
    pub(crate) engine: E::Config,
    pub book: Book,
    pub(crate) cache: Cache,
    /// Images recovered ahead of the walk by the worker threads, and the threads.
    pub(crate) prefetch: Prefetch,
    recrash_rng: SimRng,
    /// How the crash point being enumerated is covered.
    point_coverage: Option<Coverage>,
    pub report: CheckReport,
}

impl<'a, E: Engine> Explorer<'a, E> {
    pub fn new(cfg: &'a CheckConfig<E::Config>, book: Book) -> Explorer<'a, E> {
        Explorer {
            cfg,
            engine: cfg.engine_config(),
            book,
            cache: BTreeMap::new(),
            prefetch: Prefetch::new(cfg.jobs),
            recrash_rng: SimRng::derive(cfg.seed, "check-recrash"),
            point_coverage: None,
            report: CheckReport::default(),
        }
    }

    /// An explorer whose recoveries start from `cache`, judged earlier with the same engine
    /// configuration against `book`.
    pub fn with_cache(
        cfg: &'a CheckConfig<E::Config>,
        book: Book,
        cache: Cache,
    ) -> Explorer<'a, E> {
        Explorer {
            cache,
            ..Explorer::new(cfg, book)
        }
    }

    /// What it found, and the book and cache to hand to the next explorer.
    pub fn into_parts(self) -> (Book, Cache, CheckReport) {
        (self.book, self.cache, self.report)
    }

    pub fn stopped(&self) -> bool {
        self.cfg
            .stop_after
            .is_some_and(|n| self.report.violating_states >= n)
    }

    pub(crate) fn sector_size(&self) -> usize {
        self.cfg.params.sector_size as usize
    }

    /// Every state of one crash point of the recorded run.
    pub fn point(&mut self, p: &CrashPoint) {
        self.report.crash_points += 1;
        self.report.pending_max = self.report.pending_max.max(p.pending.len());
        self.report.pending_all_max = self.report.pending_all_max.max(p.pending_all);
        self.process_crash(p);
        let coverage = self.power_cuts(p, &Level::First, self.cfg.params.max_states);
        self.report.coverage.add(coverage);
        self.readers(p);
    }

    /// A failure of the recorded run itself.
    pub fn live(&mut self, l: LiveFinding) {
        self.report.violating_states += 1;
        self.report.found.push(Found {
            verdict: l.verdict,
            detail: l.detail,
            op: l.op,
            state: CrashState::Live { op: l.op },
            coverage: None,
            states_before: self.report.states(),
        });
    }

    /// The verdict on the image with identity `id` (opened once per identity) under the allowed
    /// set `allowed`, and the state it recovered.
    fn judged(
        &mut self,
        allowed: usize,
        id: ImageId,
        process: bool,
        image: impl FnOnce() -> Vec<u8>,
    ) -> (Option<(Verdict, String)>, Option<ModelId>) {
        let Explorer {
            cache,
            book,
            report,
            engine,
            prefetch,
            ..
        } = self;
        let rec = cache.entry(id).or_insert_with(|| {
            report.distinct += 1;
            prefetch
                .take(id)
                .unwrap_or_else(|| recover::<E>(image(), engine, book))
        });
        let recovered = match rec {
            Recovery::State(Some(m)) => Some(*m),
            _ => None,
        };
        (judge(book.allowed(allowed), rec, process), recovered)
    }

    fn process_crash(&mut self, p: &CrashPoint) {
        self.report.process_states += 1;
        if let Some((verdict, detail)) = self.process_verdict(p) {
            let state = CrashState::ProcessCrash { call: p.call };
            self.violation(verdict, detail, p.context.op, state);
        }
    }

    fn process_verdict(&mut self, p: &CrashPoint) -> Option<(Verdict, String)> {
        let id = ImageId::of(&p.current, self.sector_size());
        self.judged(p.context.allowed, id, true, || p.current.to_vec())
            .0
    }

    /// Every power-cut state of `p` under `max` states.
    fn power_cuts(&mut self, p: &CrashPoint, level: &Level, max: u64) -> Coverage {
        let spp = self.sectors_per_page();
        let mut rng = sample_rng(self.cfg.seed, p.call);
        // A re-crash runs inside an outer crash point's enumeration: restore its coverage.
        let outer = self
            .point_coverage
            .replace(states::coverage(&p.pending, spp, max));
        let coverage = states::enumerate(&p.pending, spp, max, &mut rng, &mut |subset, d| {
            self.power_cut(p, level, subset, p.durable.id ^ d);
            !self.stopped()
        });
        self.point_coverage = outer;
        coverage
    }

    fn power_cut(&mut self, p: &CrashPoint, level: &Level, subset: &Subset<'_>, id: ImageId) {
        match level {
            Level::First => self.report.power_states += 1,
            Level::Recovery { .. } => self.report.recovery.states += 1,
        }
        let ss = self.sector_size();
        let image = || build(&p.durable, positions(subset).map(|i| &p.pending[i]), ss);
        let fresh = !self.cache.contains_key(&id);
        let recrash = fresh && matches!(level, Level::First) && self.recrash_roll();
        let kept_image = recrash.then(image);
        let (verdict, recovered) = self.judged(p.context.allowed, id, false, || {
            kept_image.clone().unwrap_or_else(image)
        });
        if let Some((kind, detail)) = verdict {
            self.power_cut_violation(p, level, subset.positions(), kind, detail);
        } else if let (Some(image), Some(m)) = (kept_image, recovered) {
            self.recrash(p, &subset.positions(), &image, m);
        }
    }

    pub(crate) fn sectors_per_page(&self) -> u64 {
        u64::from(self.cfg.page_size() / self.cfg.params.sector_size).max(1)
    }

    fn recrash_roll(&mut self) -> bool {
        let n = self.cfg.recrash_one_in;
        n > 0 && self.recrash_rng.below(n) == 0
    }

    /// Re-crash the recovery of `image`, the state `kept` of `p`, which recovered to `state`.
    fn recrash(&mut self, p: &CrashPoint, kept: &[u32], image: &[u8], state: ModelId) {
        let log = self.recovery_log(p, image, state);
        let level = Level::Recovery {
            call: p.call,
            keep: kept.iter().map(|&i| p.pending[i as usize].index).collect(),
        };
        self.report.recovery.sessions += 1;
        let max = RECOVERY_MAX_STATES.min(self.cfg.params.max_states);
        self.prefetch_recovery(&log.points, max);
        for q in &log.points {
            if self.stopped() {
                return;
            }
            self.report.recovery.crash_points += 1;
            let c = self.power_cuts(q, &level, max);
            self.report.recovery.coverage.add(c);
        }
    }

    /// The crash points of a recovery of `image` (a state of `p` that recovered to `state`).
    fn recovery_log(&mut self, p: &CrashPoint, image: &[u8], state: ModelId) -> Log {
        let promised = self.book.allowed(p.context.allowed).promised;
        let allowed = probe_allowed(&mut self.book, state, promised);
        record_recovery::<E>(self.cfg, image, allowed)
    }

    /// Open readers read their snapshots in the page cache of `p`.
    fn readers(&mut self, p: &CrashPoint) {
        for (i, r) in p.context.readers.iter().enumerate() {
            self.report.reader_states += 1;
            if let Some((verdict, detail)) = self.reader_verdict(p, r) {
                let state = CrashState::Reader {
                    call: p.call,
                    reader: i,
                };
                self.violation(verdict, detail, p.context.op, state);
            }
        }
    }

    fn reader_verdict(&self, p: &CrashPoint, r: &OpenReader) -> Option<(Verdict, String)> {
        let detail = match reader_view::<E>(&p.current, r, &self.engine, &self.book)? {
            Recovery::State(Some(m)) if m == r.model => return None,
            Recovery::Panic(m) => return Some((Verdict::Panic, m)),
            Recovery::Corrupt(m) => m,
            Recovery::State(_) => "the reader's snapshot changed under it".into(),
        };
        Some((Verdict::SnapshotMoved, detail))
    }

    /// A violating power-cut state: minimise it once per crash point, then report it.
    fn power_cut_violation(
        &mut self,
        p: &CrashPoint,
        level: &Level,
        kept: Vec<u32>,
        verdict: Verdict,
        detail: String,
    ) {
        let call = p.call;
        let already = self
            .report
            .found
            .iter()
            .any(|f| same_crash_point(&f.state, level, call));
        if already || self.report.found.len() >= self.cfg.max_reported {
            self.report.violating_states += 1;
            return;
        }
        let min = minimise(kept, &mut |k| self.fails_as(p, k, verdict));
        let sectors: Vec<u64> = min.iter().map(|&i| p.pending[i as usize].index).collect();
        let state = match level {
            Level::First => CrashState::PowerCut {
                call,
                keep: sectors,
                recovery: None,
            },
            Level::Recovery { call: first, keep } => CrashState::PowerCut {
                call: *first,
                keep: keep.clone(),
                recovery: Some((call, sectors)),
            },
        };
        self.violation(verdict, detail, p.context.op, state);
    }

    /// Whether keeping `kept` of `p` shows a violation of `kind`.
    fn fails_as(&mut self, p: &CrashPoint, kept: &[u32], verdict: Verdict) -> bool {
        self.judge_state(p, kept).is_some_and(|(v, _)| v == verdict)
    }

    fn violation(&mut self, verdict: Verdict, detail: String, op: usize, state: CrashState) {
        self.report.violating_states += 1;
        if self.report.found.len() < self.cfg.max_reported {
            let coverage = match state {
                CrashState::PowerCut { .. } => self.point_coverage,
                _ => None,
            };
            self.report.found.push(Found {
                verdict,
                detail,
                op,
                state,
                coverage,
                states_before: self.report.states(),
            });
        }
    }

    /// Judge the power cut of `p` that keeps `kept`: the violation, if any.
    pub fn judge_state(&mut self, p: &CrashPoint, kept: &[u32]) -> Option<(Verdict, String)> {
        let id = p.durable.id ^ delta(&p.pending, kept);
        let ss = self.sector_size();
        let image = || build(&p.durable, kept.iter().map(|&i| &p.pending[i as usize]), ss);
        self.judged(p.context.allowed, id, false, image).0
    }
}

impl<E: Engine> Explorer<'_, E> {
    /// Replay the one crash state `state` of `p`.
    pub fn replay(&mut self, p: &CrashPoint, state: &CrashState) -> Replayed {
        let verdict = match state {
            CrashState::PowerCut {
                keep,
                recovery: None,
                ..
            } => match positions_of(p, keep) {
                Ok(kept) => self.judge_state(p, &kept),
                Err(m) => return Replayed::Missing(m),
            },
            CrashState::PowerCut {
                keep,
                recovery: Some((call, again)),
                ..
            } => match self.replay_recovery(p, keep, *call, again) {
                Ok(v) => v,
                Err(m) => return Replayed::Missing(m),
            },
            CrashState::ProcessCrash { .. } => self.process_verdict(p),
            CrashState::Reader { reader, .. } => match p.context.readers.get(*reader) {
                Some(r) => self.reader_verdict(p, r),
                None => return Replayed::Missing(format!("no reader {reader} is open there")),
            },
            CrashState::Live { .. } => unreachable!("the recorded run replays live findings"),
        };
        match verdict {
            Some((verdict, detail)) => Replayed::Violation { verdict, detail },
            None => Replayed::Clean,
        }
    }

    /// The state `keep` of `p`, recovered, then cut again after the recovery's call `call`
    /// keeping `again`.
    fn replay_recovery(
        &mut self,
        p: &CrashPoint,
        keep: &[u64],
        call: u64,
        again: &[u64],
    ) -> Result<Option<(Verdict, String)>, String> {
        let (log, q) = self.recovery_point(p, keep, call)?;
        let q = &log.points[q];
        let kept = positions_of(q, again)?;
        Ok(self.judge_state(q, &kept))
    }

    /// The recorded recovery of the state `keep` of `p`, and the index of its crash point
    /// after storage call `call`.
    fn recovery_point(
        &mut self,
        p: &CrashPoint,
        keep: &[u64],
        call: u64,
    ) -> Result<(Log, usize), String> {
        let image = power_cut_image(p, keep, self.sector_size())?;
        let Recovery::State(Some(state)) = recover::<E>(image.clone(), &self.engine, &self.book)
        else {
            return Err("the first recovery does not reach a committed state".into());
        };
        let log = self.recovery_log(p, &image, state);
        let q = log
            .points
            .iter()
            .position(|q| q.call == call)
            .ok_or_else(|| format!("the recovery makes no storage call {call}"))?;
        Ok((log, q))
    }

    /// The disk image of `state` at `p`: what `crashlab db` and the engine itself can open.
    pub fn state_image(&mut self, p: &CrashPoint, state: &CrashState) -> Result<Vec<u8>, String> {
        match state {
            CrashState::PowerCut {
                keep,
                recovery: None,
                ..
            } => power_cut_image(p, keep, self.sector_size()),
            CrashState::PowerCut {
                keep,
                recovery: Some((call, again)),
                ..
            } => {
                let (log, q) = self.recovery_point(p, keep, *call)?;
                power_cut_image(&log.points[q], again, self.sector_size())
            }
            CrashState::ProcessCrash { .. } => Ok(p.current.to_vec()),
            CrashState::Reader { .. } | CrashState::Live { .. } => {
                Err(format!("{state} is no single disk image"))
            }
        }
    }
}

/// The generator of a crash point's sampled subsets: its own stream, so the sample of one point
/// is the same whichever points were enumerated before it (and by whom).
pub(crate) fn sample_rng(seed: u64, call: u64) -> SimRng {
    let salt = call.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    SimRng::derive(seed ^ salt, "check-sample")
}

/// The image a power cut at `p` leaves when it keeps the disk sectors `keep`.
fn power_cut_image(p: &CrashPoint, keep: &[u64], ss: usize) -> Result<Vec<u8>, String> {
    let kept = positions_of(p, keep)?;
    Ok(build(
        &p.durable,
        kept.iter().map(|&i| &p.pending[i as usize]),
        ss,
    ))
}

/// Whether `state` is a power cut at crash point `call` of `level`.
fn same_crash_point(state: &CrashState, level: &Level, call: u64) -> bool {
    let CrashState::PowerCut {
        call: first,
        keep,
        recovery,
    } = state
    else {
        return false;
    };
    match (level, recovery) {
        (Level::First, None) => *first == call,
        (Level::Recovery { call: c, keep: k }, Some((again, _))) => {
            first == c && keep == k && *again == call
        }
        _ => false,
    }
}

/// Positions in `p`'s pending list of the disk sectors `sectors`.
fn positions_of(p: &CrashPoint, sectors: &[u64]) -> Result<Vec<u32>, String> {
    sectors
        .iter()
        .map(|s| {
            p.pending
                .binary_search_by_key(s, |x| x.index)
                .map(|i| i as u32)
                .map_err(|_| {
                    format!(
                        "sector {s} is not pending (or changes nothing) at call {}",
                        p.call
                    )
                })
        })
        .collect()
}

pub(crate) fn positions<'s>(subset: &'s Subset<'_>) -> impl Iterator<Item = usize> + 's {
    let (mask, list) = match subset {
        Subset::Mask(m) => (*m, &[][..]),
        Subset::List(l) => (0, *l),
    };
    (0..64usize)
        .filter(move |i| mask >> i & 1 == 1)
        .chain(list.iter().map(|&i| i as usize))
}
