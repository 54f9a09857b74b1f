//! Shrinking a failing case: fewer operations, fewer faults and the smallest crash, while the
//! violation persists.
//!
//! Operations are removed by delta debugging (chunks of half the list, then quarters, … down to
//! single operations); then each fault kind is switched off in turn. Then the crash itself: the
//! power cut the violation follows (the run's last) is pinned to what it kept, and each sector
//! that survived it is lost instead, and each torn one kept whole instead, while the same
//! verdict persists — pass after pass until none changes, so no single surviving sector can be
//! lost and no torn one made whole (1-minimal); then the fault kinds again, with the cut pinned.
//! A directory engine's cut (a file system's) is pinned the same way, per part: each kept
//! metadata operation dropped, each file's surviving sector lost and each torn one kept whole,
//! one at a time, until none of them keeps the verdict (1-minimal over all of them together).
//! Every attempt is one run, so the budget bounds the work. The result always still fails: only
//! changes that keep the violation are kept.

use crate::adapter::Engine;
use crate::config::RunConfig;
use crate::disk::{CrashPin, DirPin, FaultConfig, PinnedCut};
use crate::runner::{run, CutRecord};
use crate::verdict::{Outcome, Verdict};

/// What [`shrink`] leaves of a failing run.
pub struct Shrunk<C> {
    /// The smallest failing run found: fewer operations and fault kinds, and the power cut the
    /// violation follows (if any) pinned in `run.pinned_cut`.
    pub run: RunConfig<C>,
    /// Runs made, within the budget.
    pub attempts: usize,
    /// The minimal crash state, when the violation follows a power cut: what that cut kept
    /// and lost in the shrunk run (pinned in `run.pinned_cut`).
    pub crash: Option<CutRecord>,
}

impl<C> Shrunk<C> {
    /// The minimal crash state in words: `power cut 3: sectors 16 and 17 survived, ...`.
    pub fn crash_words(&self) -> Option<String> {
        let c = self.crash.as_ref()?;
        Some(format!(
            "power cut {} of the run: {}",
            c.cut.cut,
            c.describe()
        ))
    }
}

fn fails<E: Engine>(cfg: &RunConfig<E::Config>) -> bool {
    run::<E>(cfg).outcome.is_violation()
}

/// The verdict `cfg`'s run ends with, if it is a violation.
fn verdict_of<E: Engine>(cfg: &RunConfig<E::Config>) -> Option<Verdict> {
    match run::<E>(cfg).outcome {
        Outcome::Violation(v) => Some(v.verdict),
        _ => None,
    }
}

/// Shrink `cfg`, which must fail, using at most `budget` runs.
pub fn shrink<E: Engine>(cfg: &RunConfig<E::Config>, budget: usize) -> Shrunk<E::Config> {
    let mut best = cfg.clone();
    let mut attempts = 0;
    let mut chunk = best.ops.len().div_ceil(2).max(1);
    while chunk >= 1 && attempts < budget {
        let mut start = 0;
        while start < best.ops.len() && attempts < budget {
            let mut trial = best.clone();
            let end = (start + chunk).min(trial.ops.len());
            trial.ops.drain(start..end);
            attempts += 1;
            if fails::<E>(&trial) {
                best = trial; // keep `start`: the next chunk slid into place
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    knock_out_faults::<E>(&mut best, &mut attempts, budget, &mut |c| fails::<E>(c));
    let crash = minimise_crash::<E>(&mut best, &mut attempts, budget);
    Shrunk {
        run: best,
        attempts,
        crash,
    }
}

/// Switch each fault kind of `best` off in turn while `still_fails`.
fn knock_out_faults<E: Engine>(
    best: &mut RunConfig<E::Config>,
    attempts: &mut usize,
    budget: usize,
    still_fails: &mut dyn FnMut(&RunConfig<E::Config>) -> bool,
) {
    for knock_out in FAULT_KNOCKOUTS {
        if *attempts >= budget {
            break;
        }
        let mut trial = best.clone();
        if !knock_out(&mut trial.disk.faults) {
            continue;
        }
        *attempts += 1;
        if still_fails(&trial) {
            *best = trial;
        }
    }
}

/// Pin the power cut `best`'s violation follows and shrink what it keeps (see the module
/// docs); the record of the minimal cut in the final run, or `None` when the run cuts no power
/// before it fails.
fn minimise_crash<E: Engine>(
    best: &mut RunConfig<E::Config>,
    attempts: &mut usize,
    budget: usize,
) -> Option<CutRecord> {
    let first = run::<E>(best);
    let Outcome::Violation(v) = first.outcome else {
        unreachable!("the shrunk case still fails")
    };
    let verdict = v.verdict;
    let mut cut = first.cut?.cut;
    let mut same = |c: &RunConfig<E::Config>| verdict_of::<E>(c) == Some(verdict);
    let pinned = |cfg: &RunConfig<E::Config>, cut: &PinnedCut| RunConfig {
        pinned_cut: Some(cut.clone()),
        ..cfg.clone()
    };
    // Pinned to what it drew, the run is the same run.
    if !same(&pinned(best, &cut)) {
        return None;
    }
    *best = pinned(best, &cut);
    let mut changed = true;
    while changed && *attempts < budget {
        changed = false;
        for s in cut.pin.survivors() {
            if *attempts >= budget {
                break;
            }
            let torn = cut.pin.torn.iter().any(|(t, _)| *t == s);
            let mut trials = vec![cut.pin.without(s)];
            if torn {
                trials.push(cut.pin.untorn(s));
            }
            for pin in trials {
                let trial = PinnedCut {
                    cut: cut.cut,
                    pin,
                    dir: None,
                };
                *attempts += 1;
                if same(&pinned(best, &trial)) {
                    cut = trial;
                    *best = pinned(best, &cut);
                    changed = true;
                    break;
                }
            }
        }
    }
    let mut changed = cut.dir.is_some();
    while changed && *attempts < budget {
        changed = false;
        let Some(dir) = cut.dir.clone() else { break };
        for smaller in dir_trials(&dir) {
            if *attempts >= budget {
                break;
            }
            let trial = PinnedCut {
                dir: Some(smaller),
                ..cut.clone()
            };
            *attempts += 1;
            if same(&pinned(best, &trial)) {
                cut = trial;
                *best = pinned(best, &cut);
                changed = true;
                break;
            }
        }
    }
    knock_out_faults::<E>(best, attempts, budget, &mut same);
    run::<E>(best).cut.filter(|c| c.pinned)
}

/// The pins one step smaller than `dir`: each kept metadata operation dropped, then each
/// file's surviving sector lost and each torn one kept whole.
fn dir_trials(dir: &DirPin) -> Vec<DirPin> {
    let mut out = Vec::new();
    for &k in &dir.meta {
        out.push(DirPin {
            meta: dir.meta.iter().copied().filter(|&m| m != k).collect(),
            files: dir.files.clone(),
        });
    }
    for (&file, pin) in &dir.files {
        let mut with = |p: CrashPin| {
            let mut files = dir.files.clone();
            if p.survivors().is_empty() {
                files.remove(&file);
            } else {
                files.insert(file, p);
            }
            out.push(DirPin {
                meta: dir.meta.clone(),
                files,
            });
        };
        for s in pin.survivors() {
            with(pin.without(s));
            if pin.torn.iter().any(|(t, _)| *t == s) {
                with(pin.untorn(s));
            }
        }
    }
    out
}

/// Each switches one fault kind off; `false` when it was already off.
type KnockOut = fn(&mut FaultConfig) -> bool;

const FAULT_KNOCKOUTS: [KnockOut; 9] = [
    |f| std::mem::replace(&mut f.read_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.write_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.sync_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.latent, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.bit_flip, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.misdirect, 0.0) > 0.0,
    |f| f.enospc_capacity.take().is_some(),
    |f| std::mem::replace(&mut f.garbage_unwritten, false),
    |f| std::mem::replace(&mut f.sub_sector_tear, 0.0) > 0.0,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashlab::CrashlabDb;
    use crate::profile::Profile;

    #[test]
    fn shrinking_a_lying_sync_violation_keeps_it_failing_and_gets_smaller() {
        let from_seed = |s| RunConfig::from_seed(s, 120, Profile::LyingSync);
        let seed = (0..200)
            .find(|&s| fails::<CrashlabDb>(&from_seed(s)))
            .expect("the lying sync is caught within 200 seeds");
        let cfg = from_seed(seed);
        let s = shrink::<CrashlabDb>(&cfg, 400);
        assert!(fails::<CrashlabDb>(&s.run), "the shrunk case still fails");
        assert!(
            s.run.ops.len() < cfg.ops.len() / 2,
            "{} of {} ops left",
            s.run.ops.len(),
            cfg.ops.len()
        );
    }
}
