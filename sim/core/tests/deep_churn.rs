//! The `scale` profile's deep pattern churns its tree (`workload/scale.rs`, "Churn"): rounds that
//! let a branch's first separator rise above its parent's, put a key between the two, and merge
//! the branch in that same commit. Negative control (w), `merge-keeps-branch-separator`, puts
//! regression 018 back: the merged branch keeps its own first separator, and the commit's order
//! check refuses a valid commit. The default universe never builds a tree deep enough; the deep
//! pattern without its churn builds one but merges only in commits that delete; with the churn
//! the control is caught, and the correct engine passes the same seeds.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};
use crashlab_sim::workload::{self, scale};

use crate::seeded_control::{saved_case_and_twins, with_control};

/// Seeds of each profile run with control (w) on.
const SEEDS: u64 = 40;

/// `cfg` with control (w) on.
fn buggy(cfg: RunConfig<Options>) -> RunConfig<Options> {
    with_control(cfg, Control::MergeKeepsBranchSeparator)
}

/// Seed `seed`'s scale workload with the deep pattern's churn left out.
fn without_churn(cfg: &RunConfig<Options>) -> RunConfig<Options> {
    let caps = cfg.engine.capabilities();
    let mut ops = workload::generate(cfg.seed, 300, true, &caps);
    scale::add_with(cfg.seed, &mut ops, &caps, scale::Churn::Off);
    assert!(
        ops.len() < cfg.ops.len(),
        "seed {}: churn added ops",
        cfg.seed
    );
    RunConfig { ops, ..cfg.clone() }
}

fn draws_deep(seed: u64) -> bool {
    scale::patterns(seed).contains(&scale::Pattern::Deep)
}

#[test]
fn a_merged_branch_that_keeps_its_separator_is_caught_only_by_the_churn() {
    for seed in 0..SEEDS {
        let cfg = buggy(RunConfig::from_seed(seed, 300, Profile::Default));
        let r = run::<CrashlabDb>(&cfg);
        assert!(!r.outcome.is_violation(), "seed {seed}: {:?}", r.outcome);
    }
    let (mut caught, mut deep) = (0, 0);
    for seed in (0..SEEDS).filter(|&s| draws_deep(s)) {
        deep += 1;
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Scale);
        let clean = run::<CrashlabDb>(&cfg);
        assert!(
            !clean.outcome.is_violation(),
            "seed {seed}: {:?}",
            clean.outcome
        );
        let Outcome::Violation(v) = run::<CrashlabDb>(&buggy(cfg.clone())).outcome else {
            continue;
        };
        // A valid commit refused by the engine's own order check.
        assert!(
            v.detail.contains("out of order across pages"),
            "seed {seed}: {v}"
        );
        assert_ne!(v.verdict, Verdict::ChecksumProbe, "seed {seed}: {v}");
        let bare = run::<CrashlabDb>(&buggy(without_churn(&cfg)));
        assert!(
            !bare.outcome.is_violation(),
            "seed {seed} without churn: {:?}",
            bare.outcome
        );
        caught += 1;
    }
    assert!(deep >= 10, "{deep} seeds draw the deep pattern");
    assert!(
        caught * 8 >= deep,
        "caught on {caught} of {deep} deep seeds"
    );
}

/// The saved case of control (w) fails with the refused commit; its clean twin passes, and so
/// does the case without its last lone delete (and that delete's commit), which is what raised
/// the branch's first separator above its parent's.
#[test]
fn the_saved_merge_case_fails_only_after_a_lone_delete() {
    let (_, v) = saved_case_and_twins("merge-keeps-branch-separator", |run| {
        let lone = (1..run.ops.len() - 1)
            .rev()
            .find(|&i| {
                matches!(run.ops[i], Op::Delete { .. })
                    && matches!(run.ops[i - 1], Op::Commit)
                    && matches!(run.ops[i + 1], Op::Commit)
            })
            .expect("the case's lone delete");
        run.ops.drain(lone..=lone + 1);
    });
    assert_eq!(v.verdict, Verdict::CommitRefused, "{v}");
    assert!(v.detail.contains("out of order across pages"), "{v}");
}
