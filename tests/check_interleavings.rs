//! The crash-state checker under every interleaving of concurrent callers: each group of the
//! workload pinned to every schedule its coalescer allows, each schedule checked with every
//! crash state. Control (m) — a batch commit of a single call skips its data sync — is a bug
//! that only a schedule committing a call alone shows; the timing of these callers puts all
//! three in one commit, so a check of the timing's one schedule passes it, while the
//! interleavings find it, and every finding replays from its case.

use crashlab_check::{CheckConfig, Interleavings, Replayed};
use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::calls::group_calls;
use crashlab_sim::case::Case;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;

/// A bucket, then a group of three callers making one call each.
fn workload(group_seed: u32) -> CheckConfig<Options> {
    let text = format!("create a\nput a k1 len=20 v=1\ncommit\ngroup callers=3 seed={group_seed}");
    let ops = text.lines().map(|l| l.parse::<Op>().unwrap()).collect();
    let mut cfg = CheckConfig::new(11, Options::default(), ops);
    cfg.recrash_one_in = 0;
    cfg
}

fn interleavings(cfg: &CheckConfig<Options>, limit: usize) -> Interleavings<Options> {
    crashlab_check::check_interleavings::<CrashlabDb>(cfg, limit)
}

/// A group seed none of whose calls fails by design (a failed call is run again alone), whose
/// timing puts the three calls in one commit: the plain check of it cannot see control (m).
fn quiet_seed() -> u32 {
    let caps = Options::default().capabilities();
    (0..64)
        .filter(|&s| !group_calls(3, 1, s, &caps).iter().any(|c| c.fails))
        .find(|&s| {
            let mut cfg = workload(s);
            cfg.params.control = Control::LoneCallSkipsDataSync;
            crashlab_check::check::<CrashlabDb>(&cfg).violating_states == 0
        })
        .expect("some seed's timing commits the three calls together")
}

#[test]
fn every_schedule_of_three_callers_is_checked_and_a_correct_engine_passes_them_all() {
    let cfg = workload(quiet_seed());
    let all = interleavings(&cfg, 1000);
    // One call each: the ordered partitions of three callers.
    assert_eq!(all.combinations, 13);
    assert!(all.exhaustive);
    assert_eq!(all.checked.len(), 13);
    let distinct: std::collections::BTreeSet<_> =
        all.checked.iter().map(|c| c.schedules.clone()).collect();
    assert_eq!(distinct.len(), 13, "each schedule once");
    assert!(all.checked.iter().all(|c| c.report.states() > 0));
    assert_eq!(all.violating_states(), 0, "{}", all.text());
    // The schedules do change what is committed when: not every one makes the same commits.
    let commits: std::collections::BTreeSet<u64> =
        all.checked.iter().map(|c| c.report.commits).collect();
    assert!(commits.len() > 1, "commits per schedule: {commits:?}");
}

#[test]
fn control_m_is_found_by_exactly_the_schedules_that_commit_a_call_alone() {
    let mut cfg = workload(quiet_seed());
    cfg.params.control = Control::LoneCallSkipsDataSync;
    let all = interleavings(&cfg, 1000);
    assert!(all.violating_states() > 0, "{}", all.text());
    for c in &all.checked {
        let alone = c
            .schedules
            .iter()
            .any(|s| s.split('/').any(|b| !b.contains('+')));
        assert_eq!(
            c.report.violating_states > 0,
            alone,
            "batches={}: {} violating states",
            c.schedules.join(" "),
            c.report.violating_states
        );
    }
    // Each finding replays from its case file's text: the schedule is pinned in it.
    let c = all
        .checked
        .iter()
        .find(|c| !c.report.found.is_empty())
        .expect("a finding");
    let f = &c.report.found[0];
    let text = c.cfg.to_case(f.state.clone()).to_text();
    assert!(text.contains(" batches="), "{text}");
    let case = Case::<Options>::parse_for_check(&text, "found.case").unwrap();
    let again = CheckConfig::from_case(&case);
    match crashlab_check::replay::<CrashlabDb>(&again, &f.state) {
        Replayed::Violation { verdict, .. } => assert_eq!(verdict, f.verdict),
        other => panic!("does not replay: {other:?}"),
    }
}

#[test]
fn past_the_limit_a_seeded_sample_is_checked_the_same_way_twice() {
    let cfg = workload(quiet_seed());
    let some = interleavings(&cfg, 5);
    assert!(!some.exhaustive);
    assert_eq!(some.checked.len(), 5);
    let again = interleavings(&cfg, 5);
    let names = |i: &Interleavings<Options>| -> Vec<Vec<String>> {
        i.checked.iter().map(|c| c.schedules.clone()).collect()
    };
    assert_eq!(names(&some), names(&again));
    assert!(some
        .text()
        .contains("5 of 13 combinations checked (a seeded sample)"));
}
