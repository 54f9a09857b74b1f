//! Concurrent callers under faults and power cuts: groups of madsim callers submit write
//! batches and batch functions through crashlab's own coalescer, some failing by design. Every
//! caller's answer must be true of the commits the engine made (the call oracle) and of the
//! recovered state (the durability oracle); and a coalescer that commits a batch whose call
//! failed — the negative control only groups of callers can see — is caught. The merge
//! strategy is drawn per seed, and a `Rebuild` merge that drops a call (control (o)) is caught;
//! so is the batch limit, and a full batch that drops a call (control (q)) and a batch past the
//! limit (control (r), seen only by the call oracle's batch-limit rule) are caught.

use crashlab_engine::batch::MergeStrategy;
use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::sweep::{sweep, SweepConfig};
use crashlab_sim::verdict::{Outcome, Verdict};

fn has_groups(cfg: &RunConfig<Options>) -> bool {
    cfg.ops.iter().any(|op| matches!(op, Op::Group { .. }))
}

#[test]
fn every_callers_answer_holds_under_faults_and_power_cuts() {
    let cfg = SweepConfig::new(0..200, 300, Profile::Default);
    let mut with_groups = 0;
    let summary = sweep::<CrashlabDb>(&cfg, &mut |run, r| {
        with_groups += u64::from(has_groups(run));
        if let Outcome::Violation(v) = &r.outcome {
            panic!("seed {}: {v}\n{:#?}", run.seed, r.trace_tail);
        }
    });
    let g = summary.stats.groups;
    assert!(with_groups > 60, "{with_groups} of 200 seeds have groups");
    assert!(g.groups > 100 && g.calls > 1000, "{g:?}");
    assert!(
        g.merged_commits > 100,
        "batches merged several calls: {g:?}"
    );
    assert!(g.answered_committed > 500, "{g:?}");
    assert!(g.answered_own_error > 50, "calls failing by design: {g:?}");
    assert!(
        g.answered_commit_failed > 10,
        "faults and cuts inside groups: {g:?}"
    );
}

#[test]
fn a_batch_committed_with_its_failed_call_is_caught_and_the_clean_twin_passes() {
    let found = (0..300u64).find_map(|seed| {
        let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
        if !has_groups(&cfg) {
            return None;
        }
        assert!(
            !run::<CrashlabDb>(&cfg).outcome.is_violation(),
            "seed {seed}: the twin passes"
        );
        cfg.engine = cfg
            .engine
            .with_control(Control::BatchKeepsFailedCall)
            .unwrap();
        match run::<CrashlabDb>(&cfg).outcome {
            Outcome::Violation(v) => Some((seed, v)),
            _ => None,
        }
    });
    let (seed, v) = found.expect("the control is caught within 300 seeds");
    assert_eq!(v.verdict, Verdict::ModelMismatch, "seed {seed}: {v}");
    assert!(v.detail.starts_with("group: call "), "seed {seed}: {v}");
}

/// Control (o): the seed draws the merge strategy, so a bug in one strategy's merge is reached
/// by the seeds that draw it; on the other strategy's seeds the hook changes nothing at all.
#[test]
fn both_merge_strategies_are_drawn_and_a_rebuild_merge_that_drops_a_call_is_caught() {
    let drawn = |seed| RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
    let rebuild = (0..400)
        .filter(|&s| drawn(s).engine.merge_strategy == MergeStrategy::Rebuild)
        .count();
    assert!(
        (120..=280).contains(&rebuild),
        "{rebuild} of 400 draw Rebuild"
    );

    let (mut caught, mut inert) = (0, 0);
    for seed in 0..150 {
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
        if !has_groups(&cfg) {
            continue;
        }
        let clean = run::<CrashlabDb>(&cfg);
        assert!(
            !clean.outcome.is_violation(),
            "seed {seed}: the twin passes"
        );
        let mut bug = cfg.clone();
        bug.engine = bug
            .engine
            .with_control(Control::RebuildDropsLastCall)
            .unwrap();
        let r = run::<CrashlabDb>(&bug);
        if cfg.engine.merge_strategy == MergeStrategy::Append {
            assert_eq!(r.trace_hash, clean.trace_hash, "seed {seed}: inert");
            assert_eq!(r.image_hash, clean.image_hash, "seed {seed}: inert");
            inert += 1;
        } else {
            caught += u32::from(r.outcome.is_violation());
        }
    }
    assert!(inert >= 10, "{inert} Append seeds with groups");
    assert!(caught >= 10, "{caught} Rebuild seeds caught");
}

/// The saved case of control (o) fails, and both its twins pass: the same group merged by
/// `Append`, and by `Rebuild` without the hook.
#[test]
fn the_saved_rebuild_drops_last_call_case_fails_and_its_twins_pass() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/rebuild-drops-last-call.case");
    let case = Case::<Options>::load(&path).unwrap();
    assert_eq!(case.run.engine.merge_strategy, MergeStrategy::Rebuild);
    assert!(run::<CrashlabDb>(&case.run).outcome.is_violation());

    let mut append = case.run.clone();
    append.engine.merge_strategy = MergeStrategy::Append;
    assert!(!run::<CrashlabDb>(&append).outcome.is_violation());
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    assert!(!run::<CrashlabDb>(&clean).outcome.is_violation());
}

/// Controls (q) and (r): the seed draws the batch limit, so batches that reach it exist; with
/// the engine's default limit, which no group of at most 64 callers reaches, either hook
/// changes nothing.
#[test]
fn small_batch_limits_are_drawn_and_bugs_at_the_limit_are_caught() {
    let limit = |seed| RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
    let small = (0..400)
        .filter(|&s| limit(s).engine.max_batch_size < 64)
        .count();
    assert!(
        (60..=180).contains(&small),
        "{small} of 400 draw a small limit"
    );

    for control in [Control::FullBatchDropsLastCall, Control::BatchExceedsLimit] {
        let (mut caught, mut inert) = (0, 0);
        for seed in 0..150 {
            let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
            if !has_groups(&cfg) {
                continue;
            }
            let clean = run::<CrashlabDb>(&cfg);
            assert!(
                !clean.outcome.is_violation(),
                "seed {seed}: the twin passes"
            );
            let mut bug = cfg.clone();
            bug.engine = bug.engine.with_control(control).unwrap();
            let r = run::<CrashlabDb>(&bug);
            if cfg.engine.max_batch_size >= 64 {
                assert_eq!(
                    r.trace_hash, clean.trace_hash,
                    "{control}, seed {seed}: inert"
                );
                inert += 1;
            } else if let Outcome::Violation(v) = r.outcome {
                if control == Control::BatchExceedsLimit {
                    assert!(v.detail.contains("batch limit"), "seed {seed}: {v}");
                }
                caught += 1;
            }
        }
        assert!(
            inert >= 20,
            "{control}: {inert} seeds with the default limit"
        );
        assert!(
            caught >= 10,
            "{control}: {caught} seeds with a small limit caught"
        );
    }
}

/// The saved case of control (q) fails; its clean twin passes, and so does the same case with
/// the engine's default batch limit.
#[test]
fn the_saved_full_batch_drops_last_call_case_fails_and_its_twins_pass() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/full-batch-drops-last-call.case");
    let case = Case::<Options>::load(&path).unwrap();
    assert_eq!(case.run.engine.max_batch_size, 8);
    assert!(run::<CrashlabDb>(&case.run).outcome.is_violation());

    let mut default_limit = case.run.clone();
    default_limit.engine.max_batch_size = Options::default().max_batch_size;
    assert!(!run::<CrashlabDb>(&default_limit).outcome.is_violation());
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    assert!(!run::<CrashlabDb>(&clean).outcome.is_violation());
}

/// The saved case of control (r) fails on the batch-limit rule alone; without the hook, or with
/// the engine's default limit, it passes.
#[test]
fn the_saved_batch_exceeds_limit_case_fails_and_its_twins_pass() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/batch-exceeds-limit.case");
    let case = Case::<Options>::load(&path).unwrap();
    match run::<CrashlabDb>(&case.run).outcome {
        Outcome::Violation(v) => {
            assert!(v.detail.contains("more than the engine's batch limit of 8"))
        }
        other => panic!("{other:?}"),
    }
    let mut default_limit = case.run.clone();
    default_limit.engine.max_batch_size = Options::default().max_batch_size;
    assert!(!run::<CrashlabDb>(&default_limit).outcome.is_violation());
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    assert!(!run::<CrashlabDb>(&clean).outcome.is_violation());
}
