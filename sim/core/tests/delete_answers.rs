//! A delete's answer. crashlab's delete (like redb's remove and SQLite's count of changed rows)
//! says whether the key was there, and the driver compares that answer with the model's
//! (`Engine::delete_in`). Negative control (ad), `delete-answers-existed`, answers "there" for
//! an absent key: it changes nothing on disk, so before the comparison 0 seeds of 20,000 showed
//! it.

use crashlab_engine::Options;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::verdict::{Verdict, Violation};

use crate::seeded_control::{saved_case_and_twins, sweep_control, sweep_control_on};

fn is_delete(op: &Op) -> bool {
    matches!(op, Op::Delete { .. })
}

/// The violation is the answer comparison's, at a delete.
fn caught_by_the_answer(ops: &[Op], v: &Violation) {
    assert_eq!(v.verdict, Verdict::ModelMismatch, "{v}");
    assert!(is_delete(&ops[v.op_index]), "{v}");
    assert!(
        v.detail
            .contains("the engine answered that the key was there, the model that it was not"),
        "{v}"
    );
}

#[test]
fn the_saved_case_is_caught_at_the_delete_and_its_twins_pass() {
    // Twins: the hook off, and the case without its deletes with the hook on.
    let (run, v) = saved_case_and_twins("delete-answers-existed", |cfg| {
        cfg.ops.retain(|op| !is_delete(op))
    });
    caught_by_the_answer(&run.ops, &v);
}

#[test]
fn every_seed_that_deletes_is_caught_by_the_answer_alone() {
    // Every violation on 60 seeds is the answer comparison's: no state, recovery or file check
    // notices a bug that changes no byte.
    let (caught, reached, _) = sweep_control(
        60,
        Control::DeleteAnswersExisted,
        |cfg| Some(cfg.ops.iter().any(is_delete)),
        |seed, v| {
            let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
            caught_by_the_answer(&cfg.ops, v);
        },
    );
    assert!(reached >= 50, "{reached} of 60 seeds delete");
    assert!(
        caught * 10 >= reached * 9,
        "caught on {caught} of {reached}"
    );
}

#[test]
fn without_deletes_the_control_changes_nothing() {
    // The same seeds with their deletes taken out: the control must leave each run's trace and
    // image as the clean run's.
    let (caught, reached, inert) = sweep_control_on(
        60,
        Control::DeleteAnswersExisted,
        |cfg| cfg.ops.retain(|op| !is_delete(op)),
        |_| Some(false),
        |seed, v| panic!("seed {seed}: {v}"),
    );
    assert_eq!((caught, reached, inert), (0, 0, 60));
}
