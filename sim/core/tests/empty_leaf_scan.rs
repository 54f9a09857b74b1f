//! A scan inside a transaction that emptied a leaf. Deletes leave a leaf empty until the commit
//! rebalances the tree, so only a cursor that runs between the deletes and the commit meets one:
//! the workload's fragment pattern (large values, most of them deleted) scans its bucket there.
//! Negative control (aa), `empty-leaf-ends-scan`, stops a forward step at an empty leaf; before
//! the pattern scanned, one seed of 20,000 showed it.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Outcome, Verdict};

use crate::seeded_control::sweep_control;

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
