//! Regression 003, found by the first `default`-profile seed sweep of the simulator.
//!
//! Postmortem: a commit's meta sync failed, so the commit reported an error and the database
//! latched. The application restarted and reopened the file; open read the failed commit's meta
//! from the page cache — present, but not durable — and the engine built on it, reusing the
//! pages that commit had freed. The next commit's sync failed too, and with Linux fsync
//! semantics the failure dropped the still-dirty meta sector. The file now pointed at the older
//! meta, whose pages had just been overwritten: a corrupt tree ("keys out of order") after the
//! next reopen. The fix: a writable open syncs before it trusts what it read, so the state it
//! builds on is durable (or the open fails). The harness caught it because the simulated disk
//! drops dirty sectors on a failed sync and the runner reopens after every failed commit.
//!
//! The case below was shrunk by `crashlab shrink` (with the fix reverted) from 300 operations to
//! six; it is also replayed from `corpus/regressions/` by the corpus test.

use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::Outcome;
use std::path::Path;

#[test]
fn reopen_after_failed_sync_does_not_build_on_an_unsynced_meta() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/regressions/003-open-trusts-unsynced-meta.case");
    let case = Case::<Options>::load(&file).unwrap();
    assert!(
        case.explicit_ops,
        "the shrunk operations are pinned, not regenerated"
    );
    let report = run::<CrashlabDb>(&case.run);
    assert_eq!(
        report.outcome,
        Outcome::Ok,
        "trace tail: {:#?}",
        report.trace_tail
    );
}
