//! A scan inside a transaction that emptied a leaf. Deletes leave a leaf empty until the commit
//! rebalances the tree, so only a cursor that runs between the deletes and the commit meets one:
//! the workload's fragment pattern (large values, most of them deleted) scans its bucket there.
//! Negative control (aa), `empty-leaf-ends-scan`, stops a forward step at an empty leaf; before
//! the pattern scanned, one seed of 20,000 showed it. The pattern then reads its bucket backward
//! too: control (ae), `empty-leaf-ends-reverse-scan`, stops a backward step there, which before
//! that read 41 seeds of 20,000 showed.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};

use crate::seeded_control::{saved_case_and_twins, sweep_control, sweep_control_on};

#[test]
fn a_scan_that_stops_at_an_emptied_leaf_is_caught_and_its_twin_passes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/empty-leaf-ends-scan.case");
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let Outcome::Violation(v) = run::<CrashlabDb>(&case.run).outcome else {
        panic!("the saved case of control (aa) passes");
    };
    assert_eq!(v.verdict, Verdict::ModelMismatch, "{v}");
    assert!(matches!(case.run.ops[v.op_index], Op::Scan { .. }), "{v}");
    let mut clean = case.run.clone();
    clean.engine.debug = Default::default();
    let r = run::<CrashlabDb>(&clean);
    assert!(
        matches!(r.outcome, Outcome::Ok),
        "clean twin: {:?}",
        r.outcome
    );
}

/// Whether a seed's operations scan a bucket right after deleting from it: the fragment pattern.
fn scans_after_deletes(cfg: &RunConfig<Options>) -> bool {
    cfg.ops.windows(2).any(|w| match (&w[0], &w[1]) {
        (Op::Delete { path: d, .. }, Op::Scan { path: s }) => d == s,
        _ => false,
    })
}

#[test]
fn the_fragment_patterns_scan_catches_the_control_and_nothing_else_moves() {
    let (caught, reached, inert) = sweep_control(
        60,
        Control::EmptyLeafEndsScan,
        |cfg| Some(scans_after_deletes(cfg)),
        |seed, v| assert_eq!(v.verdict, Verdict::ModelMismatch, "seed {seed}: {v}"),
    );
    assert!(reached >= 10, "{reached} of 60 seeds scan after deletes");
    assert!(caught * 3 >= reached, "caught on {caught} of {reached}");
    assert!(inert > 0);
}

/// Whether `op` is the fragment pattern's backward read of a whole bucket.
fn reads_backward(op: &Op) -> bool {
    matches!(op, Op::Range { range, .. }
        if range.reverse && range.from.is_none() && range.to.is_none() && range.limit.is_none())
}

#[test]
fn a_reverse_read_that_stops_at_an_emptied_leaf_is_caught_and_its_twins_pass() {
    // Twins: the hook off, and the case without its backward read with the hook on.
    let (run, v) = saved_case_and_twins("empty-leaf-ends-reverse-scan", |cfg| {
        cfg.ops.retain(|op| !reads_backward(op))
    });
    assert_eq!(v.verdict, Verdict::ModelMismatch, "{v}");
    assert!(reads_backward(&run.ops[v.op_index]), "{v}");
}

/// Whether a seed's operations scan a bucket right after deleting from it and then read it
/// backward: the fragment pattern.
fn reads_backward_after_deletes(cfg: &RunConfig<Options>) -> bool {
    cfg.ops.windows(3).any(|w| match (&w[0], &w[1], &w[2]) {
        (Op::Delete { path: d, .. }, Op::Scan { path: s }, r @ Op::Range { path: b, .. }) => {
            d == s && s == b && reads_backward(r)
        }
        _ => false,
    })
}

#[test]
fn the_fragment_patterns_backward_read_catches_the_reverse_control() {
    // Any backward read inside a transaction that emptied a leaf can meet the bug, so every
    // seed that reads backward is judged; the fragment pattern's seeds are the ones it targets.
    let mut caught_seeds = Vec::new();
    sweep_control(
        60,
        Control::EmptyLeafEndsReverseScan,
        |cfg| {
            Some(
                cfg.ops
                    .iter()
                    .any(|op| matches!(op, Op::Range { range, .. } if range.reverse)),
            )
        },
        |seed, v| {
            assert_eq!(v.verdict, Verdict::ModelMismatch, "seed {seed}: {v}");
            caught_seeds.push(seed);
        },
    );
    let fragment: Vec<u64> = (0..60)
        .filter(|&seed| {
            reads_backward_after_deletes(&RunConfig::<Options>::from_seed(seed, 300, Profile::None))
        })
        .collect();
    let hits = fragment.iter().filter(|s| caught_seeds.contains(s)).count();
    assert!(
        fragment.len() >= 10,
        "{} of 60 seeds have the pattern",
        fragment.len()
    );
    assert!(
        hits * 3 >= fragment.len(),
        "caught on {hits} of {}",
        fragment.len()
    );
}

#[test]
fn without_backward_reads_the_reverse_control_changes_nothing() {
    let (caught, reached, inert) = sweep_control_on(
        60,
        Control::EmptyLeafEndsReverseScan,
        |cfg| {
            cfg.ops
                .retain(|op| !matches!(op, Op::Range { range, .. } if range.reverse))
        },
        |_| Some(false),
        |seed, v| panic!("seed {seed}: {v}"),
    );
    assert_eq!((caught, reached, inert), (0, 0, 60));
}
