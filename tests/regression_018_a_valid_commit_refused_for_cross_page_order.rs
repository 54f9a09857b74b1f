//! Regression 018, found by `explore --seeds 40000..120000` on 2026-12-04 (seed 48136).
//!
//! Postmortem: rebalancing merges an underfull child into its left sibling. For two branches it
//! appended the right branch's items to the left's as they were. But a branch's first separator
//! bounds nothing: a key below it is routed to the first child all the same, so after inserts
//! (or after the first child was removed) it may exceed keys under it, which is legal where it
//! stands. Appended, it became a lower bound in the merged branch, and the keys under it broke
//! it. The commit's own order check (`spill`'s pair check) saw the leaf below its separator and
//! refused the commit with `CrossPageOrder`: no file was damaged, but a valid database refused a
//! commit, which the runner reports as a violation. It took a tree of three levels whose
//! branches rebalance — long keys (a drawn prefix of hundreds of bytes) on 4 KiB pages, then
//! deletes — which the sweeps reach on few seeds; one in 80,000. The fix gives the right branch's
//! first item the right branch's own separator from the parent, which bounds every key under
//! it. The case is also replayed from `corpus/regressions/` by the corpus test.
//!
//! Where the gap between the two separators comes from: spill keeps the parent's separator when
//! a branch's first key rose and its left neighbour is a page the commit did not read. The
//! engine's own test `engine/tests/branch_merge.rs` drives that sequence directly on a tree
//! built through the public API, and fails with the fix taken out.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::Outcome;
use std::path::Path;

#[test]
fn a_merged_branch_keeps_its_keys_in_order_and_the_commit_goes_through() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "corpus/regressions/018-a-merged-branch-keeps-a-first-separator-that-bounds-nothing.case",
    );
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let report = run::<CrashlabDb>(&case.run);
    assert_eq!(report.outcome, Outcome::Ok);
    assert!(
        report.stats.commits > 30,
        "{} commits",
        report.stats.commits
    );
}
