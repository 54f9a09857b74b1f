//! Regression 018, OPEN: found by `explore --seeds 40000..120000` on 2026-12-04 (seed 48136)
//! and not yet fixed.
//!
//! What is known: on a valid database the engine refuses a group commit with
//! `CrossPageOrder` ("keys out of order across pages: a separator disagrees with its child"),
//! the order check `spill` runs on every node it writes. The run has long keys on 4 KiB pages,
//! the hashmap freelist rebuilt on open, an 8-page cache, failed fsyncs and seven power cuts; it
//! reproduces on the engine as it was before lone sequence transactions entered the workload,
//! which is what first drew it. Not yet known: whether the commit builds a node out of order
//! or the check misjudges a legal one. The shrunk case (242 operations) is in corpus/open/,
//! which the corpus replay skips. When it is fixed, this test loses its `ignore`, gains a
//! postmortem, and the case moves to corpus/regressions/.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::Outcome;
use std::path::Path;

#[test]
#[ignore = "open bug 018: the engine refuses this valid commit (CrossPageOrder); not yet fixed"]
fn a_group_commit_after_lone_sequence_commits_is_not_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/open/018-a-valid-commit-refused-for-cross-page-order.case");
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let outcome = run::<CrashlabDb>(&case.run).outcome;
    assert_eq!(outcome, Outcome::Ok);
}
