//! Life after a failed commit: seeds choose whether the application restarts, retries on the same
//! handle or carries on. crashlab's engine latches, so after a failed commit every write on the
//! handle must be refused and nothing may reach the disk. Negative control `no-latch` forgets the
//! latch: the seeds that retry or carry on catch it, the seeds that restart cannot, and the
//! correct engine passes every one of the same runs.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::{AfterFailure, RunConfig};
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::driver::Settings;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::{run_with, Report};
use crashlab_sim::verdict::{Outcome, Verdict};

const SEEDS: u64 = 120;
const OPS: usize = 300;

fn run(cfg: &RunConfig<Options>) -> Report {
    run_with::<CrashlabDb>(cfg, Settings::default())
}

/// The same seed with the application's choice forced and the control on or off.
fn variant(seed: u64, after: AfterFailure, control: Control) -> RunConfig<Options> {
    let mut cfg = RunConfig::<Options>::from_seed(seed, OPS, Profile::Default);
    cfg.after_failure = after;
    cfg.engine = cfg.engine.with_control(control).unwrap();
    cfg
}

#[test]
fn a_handle_whose_commit_failed_must_refuse_writes_until_reopened() {
    let mut caught = [0u32; 3];
    let mut failed_commits = 0;
    let mut refusals = [0u64; 3];
    for seed in 0..SEEDS {
        for (i, after) in AfterFailure::ALL.into_iter().enumerate() {
            let clean = run(&variant(seed, after, Control::None));
            assert!(
                !clean.outcome.is_violation(),
                "seed {seed} {after}: {:?}",
                clean.outcome
            );
            failed_commits += clean.stats.failed_commits;
            refusals[i] += clean.stats.latched_refusals;
            if after == AfterFailure::Retry {
                // Every retry meets the latch (a commit the power cut is no retry).
                assert_eq!(
                    clean.stats.latched_refusals, clean.stats.retries,
                    "seed {seed}: retries that did not meet the latch"
                );
            }
            let buggy = run(&variant(seed, after, Control::NoLatch));
            if let Outcome::Violation(v) = &buggy.outcome {
                assert_eq!(v.verdict, Verdict::Latch, "seed {seed} {after}: {v}");
                // Concurrent callers share the handle whatever the application does after the
                // group: the group's own latch check.
                if !v.detail.starts_with("group:") {
                    caught[i] += 1;
                }
            }
        }
    }
    let [restart, retry, carry_on] = caught;
    eprintln!(
        "caught outside groups {caught:?}, refusals {refusals:?}, failed commits {failed_commits}"
    );
    assert!(failed_commits > 0, "no commit failed in {SEEDS} seeds");
    assert_eq!(
        restart, 0,
        "outside groups, a restart never reuses the handle"
    );
    assert_eq!(refusals[0], 0, "a restart never writes on a latched handle");
    assert!(refusals[1] > 0 && refusals[2] > 0, "refusals: {refusals:?}");
    assert!(
        retry >= 10,
        "retries caught the missing latch on {retry} seeds"
    );
    assert!(
        carry_on >= 10,
        "carrying on caught the missing latch on {carry_on} seeds"
    );
}

#[test]
fn every_policy_is_chosen_by_some_seed_and_kept_by_its_case() {
    let mut seen = [false; 3];
    for seed in 0..30 {
        let cfg = RunConfig::<Options>::from_seed(seed, 10, Profile::Default);
        seen[AfterFailure::ALL
            .iter()
            .position(|a| *a == cfg.after_failure)
            .unwrap()] = true;
        let case = Case {
            run: cfg.clone(),
            expect: Expect::Ok,
            explicit_ops: false,
            check: None,
            crash_state: None,
        };
        let back = Case::<Options>::parse(&case.to_text(), "case").unwrap();
        assert_eq!(back.run.after_failure, cfg.after_failure, "seed {seed}");
    }
    assert_eq!(seen, [true; 3]);
}
