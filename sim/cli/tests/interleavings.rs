//! `crashlab check --interleavings N`: every schedule of a workload's groups, exit 1 and a case
//! that pins the schedule on a violation, and exit 2 on a workload with no group.

use crate::common;

use common::{crashlab, refused, text};

/// Three callers, one call each, none failing by design (group seed 1).
const CASE: &str = "seed = 11
profile = none
expect = ok
options = page_size=4096 fill_percent=0.5 no_sync=false no_freelist_sync=false freelist=array page_cache_pages=0 presize=exact
[ops]
create a
put a k1 len=20 v=1
commit
group callers=3 seed=1
";

#[test]
fn every_schedule_is_checked_and_a_correct_engine_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.case"), CASE).unwrap();
    let o = crashlab(
        &["check", "--case", "g.case", "--interleavings", "100"],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "group at op 3: 3 callers × 1 calls: 13 schedules",
        "interleavings: 13 of 13 combinations checked (exhaustive)",
        "violations: 0 states in 0 of 13 combinations",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
}

#[test]
fn control_m_exits_1_and_its_case_replays_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.case"), CASE).unwrap();
    let args = [
        "check",
        "--case",
        "g.case",
        "--interleavings",
        "100",
        "--control",
        "lone-call-skips-data-sync",
        "--found-dir",
        "found",
    ];
    let o = crashlab(&args, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    // The timing's schedule (all three together) is not among the violating ones.
    assert!(!t.contains("  batches=0+1+2:"), "{t}");
    assert!(t.contains("  batches=0/1/2: "), "{t}");
    let saved = "found/check-interleaved-11-lone-call-skips-data-sync-crashlab-0.case";
    let case = std::fs::read_to_string(dir.path().join(saved)).unwrap();
    assert!(case.contains("group callers=3 seed=1 batches="), "{case}");
    let r = crashlab(&["repro", saved], dir.path());
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    // Without the interleavings, the same workload passes with the bug: the timing commits the
    // three calls together.
    let o = crashlab(
        &args[..3]
            .iter()
            .chain(&args[5..7])
            .copied()
            .collect::<Vec<_>>(),
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_workload_without_a_group_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let no_group = CASE.replace("group callers=3 seed=1\n", "");
    std::fs::write(dir.path().join("n.case"), no_group).unwrap();
    refused(
        &["check", "--case", "n.case", "--interleavings", "10"],
        dir.path(),
        &["no group of concurrent callers"],
    );
    refused(
        &["check", "--case", "n.case", "--interleavings", "0"],
        dir.path(),
        &["INTERLEAVINGS_MAX"],
    );
}
