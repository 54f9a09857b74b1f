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
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::sweep::{sweep, SweepConfig};
use crashlab_sim::verdict::{Outcome, Verdict};

use crate::seeded_control::{saved_case_and_twins, sweep_control};

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

    let rebuild_groups = |cfg: &RunConfig<Options>| {
        has_groups(cfg).then_some(cfg.engine.merge_strategy == MergeStrategy::Rebuild)
    };
    let (caught, _, inert) = sweep_control(
        150,
        Control::RebuildDropsLastCall,
        rebuild_groups,
        |_, _| {},
    );
    assert!(inert >= 10, "{inert} Append seeds with groups");
    assert!(caught >= 10, "{caught} Rebuild seeds caught");
}

/// The saved case of control (o) fails, and both its twins pass: the same group merged by
/// `Append`, and by `Rebuild` without the hook.
#[test]
fn the_saved_rebuild_drops_last_call_case_fails_and_its_twins_pass() {
    let (run, _) = saved_case_and_twins("rebuild-drops-last-call", |r| {
        r.engine.merge_strategy = MergeStrategy::Append;
    });
    assert_eq!(run.engine.merge_strategy, MergeStrategy::Rebuild);
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

    let small_limit_groups =
        |cfg: &RunConfig<Options>| has_groups(cfg).then_some(cfg.engine.max_batch_size < 64);
    for control in [Control::FullBatchDropsLastCall, Control::BatchExceedsLimit] {
        let (caught, _, inert) = sweep_control(150, control, small_limit_groups, |seed, v| {
            if control == Control::BatchExceedsLimit {
                assert!(v.detail.contains("batch limit"), "seed {seed}: {v}");
            }
        });
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
    let (run, _) = saved_case_and_twins("full-batch-drops-last-call", default_limit);
    assert_eq!(run.engine.max_batch_size, 8);
}

/// The saved case of control (r) fails on the batch-limit rule alone; without the hook, or with
/// the engine's default limit, it passes.
#[test]
fn the_saved_batch_exceeds_limit_case_fails_and_its_twins_pass() {
    let (_, v) = saved_case_and_twins("batch-exceeds-limit", default_limit);
    assert!(
        v.detail.contains("more than the engine's batch limit of 8"),
        "{v}"
    );
}

/// The engine's default batch limit, which no group reaches.
fn default_limit(run: &mut RunConfig<Options>) {
    run.engine.max_batch_size = Options::default().max_batch_size;
}
