//! A bucket written into and deleted in one transaction, with sub-buckets below it. Deleting it
//! frees its tree from the nodes the transaction holds and the sub-buckets stored in them from
//! their pages (those it did not open); the workload's own bucket deletes rarely meet that mix,
//! so the lifecycle fragments (`workload/surface.rs`) build it under `lifecycle`. Negative control
//! (ac), `delete-leaks-sub-buckets`, leaks those sub-buckets' pages: before the fragments, 112
//! seeds of 20,000 showed it.

use crashlab_engine::Options;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::op::Op;
use crashlab_sim::verdict::{Verdict, Violation};

use crate::seeded_control::{saved_case_and_twins, seeds_drawing, sweep_control, sweep_control_on};

const SEEDS: u64 = 200;

/// Whether `op` works under the lifecycle fragments' bucket.
fn in_lifecycle(op: &Op) -> bool {
    let path = match op {
        Op::Put { path, .. } | Op::CreateBucket(path) | Op::DeleteBucket(path) => path,
        _ => return false,
    };
    path.first()
        .is_some_and(|n| n.0 == crashlab_sim::workload::LIFECYCLE[0].as_bytes())
}

/// Whether a seed's run can show the control: with the fragments, yes; with no bucket delete at
/// all, no; with only the workload's own deletes, it may (they reach it rarely).
fn reaches(cfg: &RunConfig<Options>) -> Option<bool> {
    if cfg.ops.iter().any(in_lifecycle) {
        Some(true)
    } else if cfg.ops.iter().any(|op| matches!(op, Op::DeleteBucket(_))) {
        None
    } else {
        Some(false)
    }
}

#[test]
fn the_saved_case_is_caught_by_the_live_check_and_its_twins_pass() {
    // Twins: the hook off, and the fragment's operations taken out with the hook on.
    let (run, v) = saved_case_and_twins("delete-leaks-sub-buckets", |cfg| {
        cfg.ops.retain(|op| !in_lifecycle(op))
    });
    assert_eq!(v.verdict, Verdict::IntegrityCheck, "{v}");
    assert!(matches!(run.ops[v.op_index], Op::Check), "{v}");
    assert!(v.detail.contains("unreachable and not free"), "{v}");
}

#[test]
fn the_fragments_catch_the_control_where_the_workloads_own_deletes_rarely_do() {
    let judge =
        |seed, v: &Violation| assert_eq!(v.verdict, Verdict::IntegrityCheck, "seed {seed}: {v}");
    let (caught, reached, inert) =
        sweep_control(SEEDS, Control::DeleteLeaksSubBuckets, reaches, judge);
    assert!(
        reached >= 50,
        "{reached} of {SEEDS} seeds build the lifecycle"
    );
    assert!(caught * 3 >= reached, "caught on {caught} of {reached}");
    assert!(inert >= 5, "{inert} of {SEEDS} seeds delete no bucket");
    // The same seeds with the fragments taken out: only the workload's own deletes are left.
    let (without, _, _) = sweep_control_on(
        SEEDS,
        Control::DeleteLeaksSubBuckets,
        |cfg| cfg.ops.retain(|op| !in_lifecycle(op)),
        |_| Some(true),
        judge,
    );
    assert!(
        without * 10 <= caught,
        "{without} seeds without the fragments, {caught} with"
    );
}

#[test]
fn only_engines_with_nested_buckets_draw_the_fragments() {
    let (nested, flat) = seeds_drawing(in_lifecycle);
    assert!((25..=70).contains(&nested), "{nested} of 100 seeds");
    assert_eq!(flat, 0);
}
