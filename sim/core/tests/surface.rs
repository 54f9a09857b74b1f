//! The workload reaches the engine's public surface beyond get, scan and put: cursor ranges
//! (seek to present and absent keys, first, last, next, prev), sequences, and nesting up to and
//! past the limit — and the run counts each call. Negative control (h), `prev-skips-leaf-end`,
//! breaks reverse iteration only: the range operations catch it and nothing else does. Negative
//! control (v), `sequence-skips-dirty`, loses a sequence change made alone in its bucket: the
//! lone sequence transactions catch it.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};
use std::collections::BTreeMap;

use crate::seeded_control::saved_case_and_twins;

const SEEDS: u64 = 100;

#[test]
fn the_workload_calls_every_part_of_the_surface() {
    let mut calls: BTreeMap<&str, u64> = BTreeMap::new();
    for seed in 0..SEEDS {
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        let report = run::<CrashlabDb>(&cfg);
        assert!(
            !report.outcome.is_violation(),
            "seed {seed}: {:?}",
            report.outcome
        );
        for (name, n) in report.stats.api_calls {
            *calls.entry(name).or_default() += n;
        }
    }
    for name in [
        "range",
        "seek present",
        "seek absent",
        "first",
        "last",
        "next",
        "prev",
        "next-seq",
        "set-seq",
        "create past the nesting limit",
        "incompatible value",
        "delete absent",
        "check",
    ] {
        assert!(
            calls.get(name).copied().unwrap_or(0) > 0,
            "{name} never called in {SEEDS} seeds: {calls:?}"
        );
    }
}

/// Seed `seed`'s run under profile `none` with `control` on, once the run without it has passed.
fn buggy_twin_of_a_clean_pass(seed: u64, control: Control) -> RunConfig<Options> {
    let clean = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
    assert!(
        !run::<CrashlabDb>(&clean).outcome.is_violation(),
        "seed {seed}: the twin passes"
    );
    let mut buggy = clean;
    buggy.engine = buggy.engine.with_control(control).unwrap();
    buggy
}

#[test]
fn reverse_iteration_that_skips_a_key_is_caught_by_ranges_alone() {
    let (mut caught, mut without_ranges) = (0, 0);
    for seed in 0..SEEDS {
        let mut buggy = buggy_twin_of_a_clean_pass(seed, Control::PrevSkipsLeafEnd);
        if let Outcome::Violation(v) = run::<CrashlabDb>(&buggy).outcome {
            assert_eq!(v.verdict, Verdict::ModelMismatch, "seed {seed}: {v}");
            assert!(v.detail.contains(" rev"), "seed {seed}: {v}");
            caught += 1;
        }
        buggy.ops.retain(|op| !matches!(op, Op::Range { .. }));
        if run::<CrashlabDb>(&buggy).outcome.is_violation() {
            without_ranges += 1;
        }
    }
    assert!(caught >= 10, "caught on {caught} of {SEEDS} seeds");
    assert_eq!(without_ranges, 0, "something besides a range saw the bug");
}

/// Whether `ops[i]` is a lone sequence operation: one that no put to its bucket directly
/// precedes (the workload's other sequence operations each follow one).
fn lone_sequence(ops: &[Op], i: usize) -> bool {
    let path = match &ops[i] {
        Op::NextSequence { path } | Op::SetSequence { path, .. } => path,
        _ => return false,
    };
    let before = i.checked_sub(1).map(|j| &ops[j]);
    !matches!(before, Some(Op::Put { path: p, .. }) if p == path)
}

/// Negative control (v), `sequence-skips-dirty`: a sequence change does not mark its bucket
/// dirty. A transaction that also puts to the bucket keeps it, so only the workload's lone
/// sequence transactions show it: with them the control is caught on most seeds, without them
/// on few (a put that failed leaves its bucket clean too).
#[test]
fn a_sequence_change_that_leaves_its_bucket_clean_is_caught_by_lone_sequence_transactions() {
    let (mut caught, mut without_lone, mut lone) = (0, 0, 0);
    for seed in 0..SEEDS {
        let mut buggy = buggy_twin_of_a_clean_pass(seed, Control::SequenceSkipsDirty);
        lone += (0..buggy.ops.len())
            .filter(|&i| lone_sequence(&buggy.ops, i))
            .count();
        // A later transaction, a reader or a recovery finds the old sequence.
        caught += u32::from(run::<CrashlabDb>(&buggy).outcome.is_violation());
        let ops = std::mem::take(&mut buggy.ops);
        buggy.ops = (0..ops.len())
            .filter(|&i| !lone_sequence(&ops, i))
            .map(|i| ops[i].clone())
            .collect();
        without_lone += u32::from(run::<CrashlabDb>(&buggy).outcome.is_violation());
    }
    assert!(
        lone as u64 > SEEDS,
        "{lone} lone sequence operations in {SEEDS} seeds"
    );
    assert!(
        caught as u64 * 2 >= SEEDS,
        "caught on {caught} of {SEEDS} seeds"
    );
    assert!(
        without_lone * 10 <= SEEDS as u32,
        "caught on {without_lone} of {SEEDS} seeds without lone sequences"
    );
}

/// The saved case of control (v) fails; its clean twin passes, and so does the case with a put
/// to the bucket before its lone `next-seq`.
#[test]
fn the_saved_sequence_skips_dirty_case_fails_only_when_the_sequence_is_alone() {
    saved_case_and_twins("sequence-skips-dirty", |run| {
        let at = (0..run.ops.len())
            .find(|&i| lone_sequence(&run.ops, i))
            .expect("the case's lone sequence");
        let Op::NextSequence { path } = run.ops[at].clone() else {
            panic!("the case bumps a sequence");
        };
        let put = Op::Put {
            path,
            key: Name::new("k"),
            len: 1,
            version: 0,
        };
        run.ops.insert(at, put);
    });
}
