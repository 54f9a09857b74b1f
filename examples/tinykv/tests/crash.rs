//! tinykv crash-tested by crashlab, as a storage engineer would do it for their own engine:
//! seed sweeps on the faulty simulated disk, shrinking and replaying what a sweep finds, and the
//! exhaustive crash-state checker. The planted bug (`Options::debug_skip_checksum`) is this
//! harness's negative control: each way in must find it, and must pass the same engine without
//! it. `docs/crash-test-your-engine.md` walks through this file.

mod adapter;

use adapter::{TinyConfig, TinyDb};
use crashlab_check::{check, replay, CheckConfig, CheckReport, Coverage, Replayed};
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::RunConfig;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::{run, Report};
use crashlab_sim::shrink::shrink;
use crashlab_sim::sweep::{repro_line, sweep, sweep_with, Summary, SweepConfig};
use crashlab_sim::verdict::{Outcome, Violation};

/// Seeds per sweep, and operations per seed.
const SEEDS: u64 = 200;
const OPS: usize = 200;

fn plant_bug(cfg: &mut RunConfig<TinyConfig>) {
    cfg.engine.0.debug_skip_checksum = true;
}

fn violation(r: &Report) -> Option<&Violation> {
    match &r.outcome {
        Outcome::Violation(v) => Some(v),
        _ => None,
    }
}

/// What a sweep must have exercised for its verdict to mean anything.
fn assert_exercised(s: &Summary) {
    assert_eq!(s.seeds, SEEDS);
    assert!(s.stats.commits > 10 * SEEDS, "{} commits", s.stats.commits);
    assert!(s.stats.crashes > SEEDS, "{} power cuts", s.stats.crashes);
    assert!(
        s.faults.sectors_lost_in_crash > 0,
        "no power cut lost a sector"
    );
}

#[test]
fn the_clean_engine_passes_a_sweep_under_the_default_faults() {
    let cfg = SweepConfig::new(0..SEEDS, OPS, Profile::Default);
    let mut failures = Vec::new();
    let s = sweep::<TinyDb>(&cfg, &mut |run_cfg, report| {
        if let Some(v) = violation(report) {
            failures.push(format!("{v}\n  replay: {}", repro_line(run_cfg)));
        }
    });
    println!(
        "clean: {} seeds, {} ops, {} commits, {} power cuts, {} violations",
        s.seeds, s.stats.ops_run, s.stats.commits, s.stats.crashes, s.violations
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(s.violations, 0);
    assert_exercised(&s);
}

#[test]
fn a_sweep_finds_the_planted_bug_shrinks_it_and_the_case_replays() {
    let cfg = SweepConfig::new(0..SEEDS, OPS, Profile::Default);
    let mut first: Option<RunConfig<TinyConfig>> = None;
    let s = sweep_with::<TinyDb>(&cfg, &plant_bug, &mut |run_cfg, report| {
        if violation(report).is_some() && first.is_none() {
            first = Some(run_cfg.clone());
        }
    });
    println!(
        "planted bug: {} of {} seeds violate: {:?}",
        s.violations, s.seeds, s.violating_seeds
    );
    assert_exercised(&s);
    assert!(s.violations > 0, "the planted bug escaped {SEEDS} seeds");
    let found = first.expect("a violating seed");

    let small = shrink::<TinyDb>(&found, 400);
    // The bug shows only after a power cut: the shrinker pins that cut to what it kept.
    let crash = small.crash_words().expect("a violation after a power cut");
    println!(
        "shrunk in {} runs; minimal crash state: {crash}",
        small.attempts
    );
    let shrunk = small.run;
    let before = run::<TinyDb>(&shrunk);
    let v = violation(&before).expect("the shrunk case still fails");
    assert!(
        shrunk.ops.len() * 4 <= found.ops.len(),
        "{} of {} ops left",
        shrunk.ops.len(),
        found.ops.len()
    );

    // Written down and read back, the case replays to the same violation, bit for bit.
    let case = Case {
        run: shrunk.clone(),
        expect: Expect::Violation,
        explicit_ops: true,
        check: None,
        crash_state: None,
    };
    let text = case.to_text();
    println!(
        "first violation: {v}\nshrunk to {} ops:\n{text}",
        shrunk.ops.len()
    );
    let replayed = Case::<TinyConfig>::parse(&text, "shrunk.case").expect("the case parses");
    assert_eq!(replayed.run, shrunk);
    let after = run::<TinyDb>(&replayed.run);
    assert_eq!(violation(&after), Some(v), "{text}");
    assert_eq!(after.trace_hash, before.trace_hash);

    // The clean twin passes the very same case.
    let mut clean = shrunk;
    clean.engine.0.debug_skip_checksum = false;
    assert_eq!(run::<TinyDb>(&clean).outcome, Outcome::Ok);
}

/// Small workloads for the checker: every crash point of each, every subset of its unsynced
/// sectors while there are at most 2^12 of them (the checker's default), sampled past that.
const CHECK_SEEDS: std::ops::Range<u64> = 0..4;
const CHECK_OPS: usize = 24;

fn checked(seed: u64, skip_checksum: bool) -> (CheckConfig<TinyConfig>, CheckReport) {
    let mut cfg = CheckConfig::<TinyConfig>::from_seed(seed, CHECK_OPS);
    cfg.engine.0.debug_skip_checksum = skip_checksum;
    let report = check::<TinyDb>(&cfg);
    (cfg, report)
}

#[test]
fn the_checker_finds_the_planted_bug_at_exhaustive_crash_points_and_passes_the_clean_engine() {
    let mut missed = Vec::new();
    for seed in CHECK_SEEDS {
        let (_, clean) = checked(seed, false);
        println!("seed {seed}, clean engine:\n{}", clean.text(None));
        assert_eq!(clean.violating_states, 0, "seed {seed}");
        assert!(clean.commits > 0, "seed {seed}: nothing committed");
        assert!(
            clean.coverage.exhaustive > 0,
            "seed {seed}: no exhaustive crash point"
        );

        let (cfg, buggy) = checked(seed, true);
        println!("seed {seed}, planted bug:\n{}", buggy.text(None));
        // The same workload, the same crash points: only the engine's recovery differs.
        assert_eq!(buggy.crash_points, clean.crash_points, "seed {seed}");
        let Some(f) = buggy
            .found
            .iter()
            .find(|f| f.coverage == Some(Coverage::Exhaustive))
        else {
            missed.push(seed);
            continue;
        };
        // The minimal state replays alone to its violation, and the clean engine survives it.
        match replay::<TinyDb>(&cfg, &f.state) {
            Replayed::Violation { verdict, .. } => assert_eq!(verdict, f.verdict),
            other => panic!("seed {seed}: {} replayed as {other:?}", f.state),
        }
        let mut clean_cfg = cfg.clone();
        clean_cfg.engine.0.debug_skip_checksum = false;
        assert_eq!(replay::<TinyDb>(&clean_cfg, &f.state), Replayed::Clean);
    }
    assert!(
        missed.is_empty(),
        "no exhaustive crash point caught the planted bug at seeds {missed:?}"
    );
}
