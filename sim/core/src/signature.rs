//! A run's coverage signature: which kinds of behaviour it showed, so that a sweep can count
//! the behaviours it has met ([`crate::saturation`]) and see when more seeds stop finding new
//! ones.
//!
//! A signature has one component per dimension, each the hash (FNV-1a-64, as the trace is, so
//! the same on every machine and in every build) of a set of feature names:
//!
//! - `ops`: the operation kinds in the workload (the first word of each one's text form);
//! - `faults`: the kinds of fault the disk injected, and what power cuts did (sectors kept or
//!   lost, writes torn — a cut that found unsynced sectors hit inside a commit);
//! - `harness`: which of the harness's run figures moved — commits, failed commits, power cuts
//!   (by the workload or the timer), reopens, I/O errors seen, background snapshot checks,
//!   retries on the same handle, writes a latched engine refused, groups of callers and how
//!   their calls were answered — and, when a commit failed, what the application then did;
//! - `engine`: which of the engine's deterministic counters moved (which code paths ran:
//!   splits, merges, freelist scans, growths, rebuilds, batches, merged write batches...);
//! - `outcome`: ok, the violation's verdict, or the kind of disk failure (its message up to the
//!   first colon, without the pages and sizes it names).
//!
//! A *behaviour* is one component value in one dimension. Features are presence only, not
//! counts: with counts in four buckets (0, 1, 2–15, 16+) every one of 2,000 default seeds had a
//! signature of its own and the curve never fell; by presence, a sweep of 5,000 default seeds
//! (300 ops) met 726 behaviours, 412 in its first 1,000 seeds and 53 in its fifth.
//!
//! Everything comes from the run's configuration and report, both functions of the seed: a
//! seed's signature does not depend on which thread, job or shard ran it.

use crate::adapter::EngineConfig;
use crate::config::RunConfig;
use crate::op::Op;
use crate::runner::Report;
use crate::trace::Trace;
use crate::verdict::Outcome;
use std::collections::BTreeSet;

/// The dimensions of a signature, in the order of [`Signature::components`].
pub const DIMENSIONS: [&str; 5] = ["ops", "faults", "harness", "engine", "outcome"];

/// A run's signature: one hash per dimension of [`DIMENSIONS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Signature {
    pub components: [u64; 5],
}

/// The signature of a run: the hash of each dimension's [`features`].
pub fn signature<C: EngineConfig>(cfg: &RunConfig<C>, r: &Report) -> Signature {
    Signature {
        components: features(cfg, r).map(|set| {
            let mut hash = Trace::default();
            for f in set {
                hash.record(f);
            }
            hash.hash()
        }),
    }
}

/// The features of a run, per dimension of [`DIMENSIONS`].
pub fn features<C: EngineConfig>(cfg: &RunConfig<C>, r: &Report) -> [BTreeSet<String>; 5] {
    // `Op::kind` is the first word of the operation's text form, without formatting the
    // operation (its keys and values) only to keep that word; a String per kind, not per op.
    let kinds: BTreeSet<&str> = cfg.ops.iter().map(Op::kind).collect();
    let ops = kinds.into_iter().map(str::to_string).collect();
    let mut harness: BTreeSet<String> = run_figures(r)
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(name, _)| name.to_string())
        .collect();
    if r.stats.failed_commits > 0 {
        harness.insert(format!("after-failure:{}", cfg.after_failure));
    }
    [
        ops,
        moved(&r.faults),
        harness,
        moved(&r.counters),
        BTreeSet::from([outcome_kind(&r.outcome)]),
    ]
}

/// The harness's figures of a run, by name.
fn run_figures(r: &Report) -> [(&'static str, u64); 15] {
    let s = &r.stats;
    let g = &s.groups;
    [
        ("commits", s.commits),
        ("failed_commits", s.failed_commits),
        ("power_cuts", s.crashes),
        ("reopens", s.reopens),
        ("io_errors", s.io_errors),
        ("background_snapshot_checks", s.background_snapshot_checks),
        ("timer_power_cuts", s.timer_power_cuts),
        ("retries", s.retries),
        ("latched_refusals", s.latched_refusals),
        ("groups", g.groups),
        ("group_calls", g.calls),
        ("merged_commits", g.merged_commits),
        ("answered_committed", g.answered_committed),
        ("answered_own_error", g.answered_own_error),
        ("answered_commit_failed", g.answered_commit_failed),
    ]
}

/// The names of the non-zero counters of `counts`, a struct of named counts: read through its
/// serde form, so a counter added to the struct joins the signature.
fn moved(counts: &impl serde::Serialize) -> BTreeSet<String> {
    let value = serde_json::to_value(counts).expect("a struct of counts serializes");
    let Some(fields) = value.as_object() else {
        panic!("counts are a struct, found {value}");
    };
    fields
        .iter()
        .filter(|(_, n)| n.as_u64().is_some_and(|n| n > 0))
        .map(|(name, _)| name.clone())
        .collect()
}

/// How a run ended, without its details (which name pages, keys and sizes).
fn outcome_kind(o: &Outcome) -> String {
    match o {
        Outcome::Ok => "ok".into(),
        Outcome::Violation(v) => format!("violation:{}", v.verdict),
        Outcome::DiskFailure(m) => {
            let kind = m.split(':').next().unwrap_or_default();
            format!("disk-failure:{kind}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashlab::CrashlabDb;
    use crate::profile::Profile;
    use crate::runner::run;

    fn of(seed: u64, ops: usize, profile: Profile) -> (Signature, [BTreeSet<String>; 5]) {
        let cfg = RunConfig::from_seed(seed, ops, profile);
        let r = run::<CrashlabDb>(&cfg);
        (signature(&cfg, &r), features(&cfg, &r))
    }

    #[test]
    fn a_signature_names_what_the_run_did_and_repeats_for_its_seed() {
        let (sig, [ops, _, harness, engine, outcome]) = of(3, 120, Profile::Default);
        assert_eq!(
            of(3, 120, Profile::Default).0,
            sig,
            "a function of the seed"
        );
        assert!(ops.contains("put") && ops.contains("commit"), "{ops:?}");
        assert!(harness.contains("commits"), "{harness:?}");
        assert!(engine.contains("pages_written"), "{engine:?}");
        assert_eq!(outcome, BTreeSet::from(["ok".to_string()]));
    }

    #[test]
    fn each_dimension_tells_runs_apart_on_its_own() {
        let (none, f_none) = of(11, 200, Profile::None);
        assert!(!f_none[1].contains("lying_syncs"), "{:?}", f_none[1]);
        let (lying, f_lying) = of(11, 200, Profile::LyingSync);
        assert!(f_lying[1].contains("lying_syncs"), "{:?}", f_lying[1]);
        assert_ne!(none.components[1], lying.components[1]);
        let (short, _) = of(11, 3, Profile::None);
        assert_ne!(
            short.components[0], none.components[0],
            "3 ops hold fewer kinds"
        );
        assert_ne!(
            short.components[3], none.components[3],
            "and run fewer engine paths"
        );
    }
}
