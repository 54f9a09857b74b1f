//! `shrink` minimises the crash itself: a case found by the `no-barrier` control shrinks to a
//! pinned power cut of few sectors that still fails on replay, every one of whose surviving
//! sectors is needed (lose it and the case no longer fails with the same verdict: the shrinker
//! keeps the failure it was given, so a sector whose loss shows a different bug stays), and the
//! clean twin — the same case without the wrapper — passes.

use crashlab_engine::Options;
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::RunConfig;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::disk::PinnedCut;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::shrink::shrink;
use crashlab_sim::verdict::Outcome;

fn fails(cfg: &RunConfig<Options>) -> bool {
    run::<CrashlabDb>(cfg).outcome.is_violation()
}

#[test]
fn a_no_barrier_case_shrinks_to_a_minimal_crash_state_that_replays() {
    let seed = (0..60)
        .find(|&s| fails(&RunConfig::from_seed(s, 120, Profile::NoBarrier)))
        .expect("no-barrier is caught within 60 seeds");
    let found = RunConfig::<Options>::from_seed(seed, 120, Profile::NoBarrier);
    let s = shrink::<CrashlabDb>(&found, 2000);
    let crash = s.crash.clone().expect("the violation follows a power cut");
    assert!(crash.pinned, "the minimal cut is the pinned one");
    assert_eq!(s.run.pinned_cut.as_ref(), Some(&crash.cut));
    let survivors = crash.cut.pin.survivors();
    assert!(survivors.len() <= 4, "seed {seed}: {}", crash.cut);
    let words = s.crash_words().unwrap();
    assert!(
        words.starts_with(&format!("power cut {} of the run: ", crash.cut.cut)),
        "{words}"
    );

    // Saved and read back, the case replays the same crash and fails.
    let case = Case {
        run: s.run.clone(),
        expect: Expect::Violation,
        explicit_ops: true,
        check: None,
        crash_state: None,
    };
    let text = case.to_text();
    assert!(
        text.contains(&format!("power-cut = {}\n", crash.cut)),
        "{text}"
    );
    let back = Case::<Options>::parse(&text, "shrunk.case").unwrap();
    assert_eq!(back, case);
    let replay = run::<CrashlabDb>(&back.run);
    assert!(replay.outcome.is_violation(), "{:?}", replay.outcome);
    assert_eq!(replay.cut.as_ref(), Some(&crash));

    // Minimal: losing any one surviving sector loses the failure (the case passes, or fails
    // otherwise).
    let verdict = match &replay.outcome {
        Outcome::Violation(v) => v.verdict,
        other => panic!("{other:?}"),
    };
    for sector in &survivors {
        let mut fewer = s.run.clone();
        fewer.pinned_cut = Some(PinnedCut {
            cut: crash.cut.cut,
            pin: crash.cut.pin.without(*sector),
            dir: None,
        });
        let r = run::<CrashlabDb>(&fewer);
        assert!(
            !matches!(&r.outcome, Outcome::Violation(v) if v.verdict == verdict),
            "sector {sector} is not needed: {:?}",
            r.outcome
        );
    }

    // The clean twin: the same operations, faults and pinned cut, with the barrier kept.
    let twin = RunConfig {
        profile: Profile::Default,
        ..s.run.clone()
    };
    assert!(
        !fails(&twin),
        "the engine with its barrier passes the same crash"
    );
}

#[test]
fn pinning_a_cut_to_what_it_drew_changes_nothing() {
    let cfg = RunConfig::<Options>::from_seed(11, 150, Profile::Default);
    let free = run::<CrashlabDb>(&cfg);
    let record = free.cut.clone().expect("seed 11 cuts the power");
    let pinned = RunConfig {
        pinned_cut: Some(record.cut.clone()),
        ..cfg.clone()
    };
    let again = run::<CrashlabDb>(&pinned);
    assert_eq!(again.trace_hash, free.trace_hash);
    assert_eq!(again.image_hash, free.image_hash);
}
