//! The workload reaches the engine's public surface beyond get, scan and put: cursor ranges
//! (seek to present and absent keys, first, last, next, prev), sequences, and nesting up to and
//! past the limit — and the run counts each call. Negative control (h), `prev-skips-leaf-end`,
//! breaks reverse iteration only: the range operations catch it and nothing else does.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};
use std::collections::BTreeMap;

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
        "check",
    ] {
        assert!(
            calls.get(name).copied().unwrap_or(0) > 0,
            "{name} never called in {SEEDS} seeds: {calls:?}"
        );
    }
}

#[test]
fn reverse_iteration_that_skips_a_key_is_caught_by_ranges_alone() {
    let (mut caught, mut without_ranges) = (0, 0);
    for seed in 0..SEEDS {
        let clean = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
        assert!(
            !run::<CrashlabDb>(&clean).outcome.is_violation(),
            "seed {seed}"
        );
        let mut buggy = clean.clone();
        buggy.engine = buggy
            .engine
            .with_control(Control::PrevSkipsLeafEnd)
            .unwrap();
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
