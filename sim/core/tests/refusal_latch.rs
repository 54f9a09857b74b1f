//! A refused commit latches too. crashlab's engine latches after any failed commit, but a run
//! never goes on past a commit refused for damage: under `corruption` the damage the disk made
//! is reported and the run ends. So the driver checks the latch at the refusal itself: a write
//! transaction begun on the handle must be refused with the latch's error, and nothing may
//! reach the disk. A disk that corrupted bytes does not excuse a latch violation: the latch is
//! the handle's state in memory. Negative control (z), `refusal-does-not-latch`, latches only
//! after I/O failures, so only this check catches it; every other run it leaves alone.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};

use crate::seeded_control::sweep_control;

fn saved_case() -> Case<Options> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/refusal-does-not-latch.case");
    Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_handle_whose_commit_was_refused_for_damage_must_refuse_writes() {
    let case = saved_case();
    let Outcome::Violation(v) = run::<CrashlabDb>(&case.run).outcome else {
        panic!("the saved case of control (z) passes");
    };
    assert_eq!(v.verdict, Verdict::Latch, "{v}");
    assert!(v.detail.contains("a write succeeded"), "{v}");
    // The correct engine: the same refusal, the check made and passed, and the run ends as the
    // disk failure it is.
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    let r = run::<CrashlabDb>(&clean);
    let Outcome::DiskFailure(why) = &r.outcome else {
        panic!("clean twin: {:?}", r.outcome);
    };
    assert!(why.contains("corruption detected during commit"), "{why}");
    assert_eq!(r.stats.latched_refusals, 1, "the latch was checked once");
}

/// Without a refused commit the control changes nothing: the same trace and image.
#[test]
fn the_control_is_inert_where_no_commit_is_refused() {
    let (caught, reached, inert) = sweep_control(
        40,
        Control::RefusalDoesNotLatch,
        |_| Some(false),
        |seed, v| panic!("seed {seed}: {v}"),
    );
    assert_eq!((caught, reached, inert), (0, 0, 40));
}
