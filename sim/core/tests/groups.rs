//! Concurrent callers under faults and power cuts: groups of madsim callers submit write
//! batches and batch functions through crashlab's own coalescer, some failing by design. Every
//! caller's answer must be true of the commits the engine made (the call oracle) and of the
//! recovered state (the durability oracle); and a coalescer that commits a batch whose call
//! failed — the negative control only groups of callers can see — is caught.

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
