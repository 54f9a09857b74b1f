//! `crashlab check --from-image SHAPE` as a user meets it: the image's facts and the thresholds
//! the checked workload crossed in the report, negative control (n) caught with a line that
//! reruns it and its clean twin passing, and every combination that makes no sense refused
//! with exit 2.

use crate::common;

use common::{crashlab_within, refused, text};

/// A check from the escaped-freelist image, small: few states per crash point, 512-byte
/// sectors, no re-crashed recoveries.
const SMALL: [&str; 14] = [
    "check",
    "--seed",
    "17",
    "--ops",
    "6",
    "--from-image",
    "escaped-freelist",
    "--max-states",
    "8",
    "--sector-size",
    "512",
    "--recrash-one-in",
    "0",
    "--jobs=2",
];

#[test]
fn the_freelist_control_is_caught_from_the_image_and_its_twin_passes() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab_within(600, &SMALL, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "image built in ",
        "image: escaped-freelist · ",
        "building it crossed: freelist-escape 1×",
        "thresholds the checked workload crossed: freelist-escape ",
        "violations: 0 states",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }

    let mut bug = SMALL.to_vec();
    bug.extend(["--control", "freelist-count-wraps"]);
    let o = crashlab_within(600, &bug, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("claims more pages than"), "{t}");
    assert!(
        t.contains(
            "repro: crashlab check --engine crashlab --seed 17 --ops 6 --from-image \
             escaped-freelist --max-states 8 --sector-size 512"
        ) && t.contains("--control freelist-count-wraps"),
        "{t}"
    );
    // A case file cannot carry the image: none is saved.
    assert!(!dir.path().join("corpus/found").exists(), "{t}");
}

#[test]
fn what_makes_no_sense_with_an_image_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        &["check", "--seed", "1", "--from-image", "huge"],
        d,
        &[
            "unknown image shape `huge`",
            "expected one of: escaped-freelist, deep-tree, many-buckets, long-overflow",
        ],
    );
    let image = ["check", "--seed", "1", "--from-image", "deep-tree"];
    for (extra, other) in [
        (&["--all-workloads", "--depth", "1"][..], "--all-workloads"),
        (&["--variants"][..], "--variants"),
        (&["--interleavings", "4"][..], "--interleavings"),
    ] {
        let args: Vec<&str> = image.iter().chain(extra).copied().collect();
        refused(&args, d, &["cannot be used with", other]);
    }
    let redb: Vec<&str> = image.iter().chain(&["--engine", "redb"]).copied().collect();
    refused(
        &redb,
        d,
        &["sized for 512-byte pages", "redb's pages are 4096 bytes"],
    );
}
