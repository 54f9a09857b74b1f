//! `crashlab check --all-workloads --depth K`: the counts it prints, exit 1 and a replayable case
//! on a violation, and exit 2 on what it cannot run.

use crate::common;

use common::{crashlab, crashlab_within, refused, text};

#[test]
fn depth_one_prints_the_space_every_variant_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["check", "--all-workloads", "--depth", "1"], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "buckets a, a/x · keys k0, k1 · values 16, 513 bytes",
        "raw 1088 = T + … + T^1 with T = 2 readers × 2 endings × (16 + 16^2) = 1088",
        "valid 36 · renamed duplicates 12 · distinct 24",
        "× 24 variants",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    assert_eq!(t.matches("| 24 |").count(), 24, "a row per variant:\n{t}");
    for needle in [
        "total: 24 workloads × 24 variants: 576 checks",
        "pages+tears 0, sampled 0",
        "violations: 0 states in 0 workloads",
        "states/s",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
}

#[test]
fn a_violation_exits_1_and_its_saved_case_replays() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "check",
        "--all-workloads",
        "--depth",
        "2",
        "--control",
        "emptied-bucket-leak",
        "--stop-at-first",
        "--found-dir",
        "found",
    ];
    let o = crashlab_within(120, &args, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("workload: create a; put a k0 len=513 v=2; commit | delete a k0; delete-bucket a; commit"),
        "{t}"
    );
    assert!(t.contains("stopped early"), "{t}");
    let saved = "found/check-all-2-emptied-bucket-leak-crashlab-0.case";
    assert!(t.contains(&format!("repro: crashlab repro {saved}")), "{t}");
    let o = crashlab(&["repro", saved], dir.path());
    let r = text(&o);
    assert_eq!(o.status.code(), Some(1), "{r}");
    assert!(
        r.contains("VIOLATION") && r.contains("unreachable and not free"),
        "{r}"
    );
}

#[test]
fn redb_runs_the_flat_alphabet() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "check",
        "--all-workloads",
        "--depth",
        "1",
        "--tx-ops",
        "1",
        "--engine",
        "redb",
        "--sector-size",
        "4096",
    ];
    let o = crashlab_within(120, &args, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "engine: redb",
        "buckets a, b",
        "values 16, 4097 bytes",
        "× 1 variants",
        "violations: 0 states",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
}

#[test]
fn what_it_cannot_run_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(&["check", "--all-workloads"], d, &["--depth"]);
    refused(
        &["check", "--seed", "1", "--depth", "2"],
        d,
        &["--all-workloads"],
    );
    refused(
        &["check", "--all-workloads", "--depth", "0"],
        d,
        &["DEPTH_MAX"],
    );
    refused(
        &["check", "--all-workloads", "--depth", "9"],
        d,
        &["DEPTH_MAX"],
    );
    refused(
        &["check", "--all-workloads", "--depth", "4"],
        d,
        &["RAW_WORKLOADS_MAX", "lower --depth or --tx-ops"],
    );
    refused(
        &["check", "--all-workloads", "--depth", "1", "--tx-ops", "4"],
        d,
        &["TX_OPS_MAX"],
    );
    refused(
        &["check", "--all-workloads", "--depth", "1", "--variants"],
        d,
        &["--variants"],
    );
    refused(
        &[
            "check",
            "--all-workloads",
            "--depth",
            "1",
            "--engine",
            "redb",
            "--control",
            "meta-same-slot",
        ],
        d,
        &["debug hook in crashlab's engine"],
    );
}
