//! One name for both kinds of item. A key of a bucket holds a value or a sub-bucket, never both:
//! bbolt refuses a put over a sub-bucket's key, a bucket created over a value's key, and a plain
//! delete or a bucket delete of the other kind ("incompatible value"). The workload's keys and
//! bucket names never meet, so the collision fragments (`workload/surface.rs`) use one name,
//! `crossed`, for both in one bucket. Negative control (ab), `put-over-bucket`, takes a plain put
//! over a sub-bucket's key: before the fragments, 0 seeds of 20,000 showed it.

use crashlab_sim::control::Control;
use crashlab_sim::op::Op;
use crashlab_sim::verdict::Verdict;

use crate::seeded_control::{saved_case_and_twins, seeds_drawing, sweep_control, sweep_control_on};

const CROSSED: &[u8] = crashlab_sim::workload::CROSSED.as_bytes();

/// Whether `op` names the collision fragments' item.
fn names_crossed(op: &Op) -> bool {
    match op {
        Op::Put { key, .. } | Op::Get { key, .. } | Op::Delete { key, .. } => key.0 == CROSSED,
        Op::CreateBucket(path) | Op::DeleteBucket(path) => {
            path.last().is_some_and(|n| n.0 == CROSSED)
        }
        _ => false,
    }
}

#[test]
fn the_saved_put_over_bucket_case_is_caught_at_the_put_and_its_twins_pass() {
    // Twins: the hook off, and the fragment's operations taken out with the hook on.
    let (run, v) = saved_case_and_twins("put-over-bucket", |cfg| {
        cfg.ops.retain(|op| !names_crossed(op))
    });
    assert_eq!(v.verdict, Verdict::ModelMismatch, "{v}");
    let op = &run.ops[v.op_index];
    assert!(matches!(op, Op::Put { .. }) && names_crossed(op), "{v}");
}

#[test]
fn the_fragments_catch_the_control_and_nothing_else_moves() {
    let (caught, reached, inert) = sweep_control(
        60,
        Control::PutOverBucket,
        |cfg| Some(cfg.ops.iter().any(names_crossed)),
        |seed, v| assert_eq!(v.verdict, Verdict::ModelMismatch, "seed {seed}: {v}"),
    );
    assert!(reached >= 15, "{reached} of 60 seeds cross a name");
    assert!(caught * 3 >= reached, "caught on {caught} of {reached}");
    assert!(inert >= 15, "{inert} of 60 seeds cross no name");
}

#[test]
fn without_the_fragments_no_seed_reaches_the_control() {
    // The same seeds with every operation on the crossed name taken out: the control must leave
    // each run's trace and image as the clean run's.
    let (caught, reached, inert) = sweep_control_on(
        60,
        Control::PutOverBucket,
        |cfg| cfg.ops.retain(|op| !names_crossed(op)),
        |_| Some(false),
        |seed, v| panic!("seed {seed}: {v}"),
    );
    assert_eq!((caught, reached, inert), (0, 0, 60));
}

#[test]
fn only_engines_with_nested_buckets_draw_the_fragments() {
    let (nested, flat) = seeds_drawing(names_crossed);
    assert!((30..=70).contains(&nested), "{nested} of 100 seeds");
    assert_eq!(flat, 0);
}
