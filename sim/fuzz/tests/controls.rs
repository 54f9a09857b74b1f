//! Negative controls: each harness capability catches its own deliberate fault (`--control`),
//! on undamaged bases (`--max-mutations 0`) where the clean twin — the same inputs without the
//! fault — passes. A capability that stopped working would let its control pass.

mod common;

use common::failure_kinds;

/// Run `inputs` undamaged inputs with `control`; the summary's failure kinds.
fn kinds_with(control: &str, inputs: &str, extra: &[&str]) -> Vec<String> {
    let save = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--seed=3",
        "--max-mutations=0",
        "--bases=small",
        "--inputs",
        inputs,
    ];
    let control = format!("--control={control}");
    args.push(&control);
    args.extend_from_slice(extra);
    let (s, _) = common::run(&args, save.path());
    assert_eq!(s.counts.get("unmutated"), s.counts.get("inputs") - lost(&s));
    failure_kinds(&s)
}

/// Inputs whose worker died (they report no counts of their own).
fn lost(s: &crashlab_fuzz::summary::Summary) -> u64 {
    ["memory-cap", "timeout", "crash"]
        .iter()
        .map(|k| s.counts.get(&format!("failure:{k}")))
        .sum()
}

#[test]
fn the_clean_twin_passes() {
    assert_eq!(kinds_with("none", "60", &[]), Vec::<String>::new());
}

#[test]
fn catch_unwind_reports_a_panic() {
    assert_eq!(kinds_with("panic-on-write", "12", &[]), ["panic"]);
}

#[test]
fn the_memory_cap_stops_a_hog() {
    assert_eq!(kinds_with("hog-on-write", "6", &[]), ["memory-cap"]);
}

#[test]
fn the_watchdog_kills_a_hang() {
    assert_eq!(
        kinds_with("hang-on-write", "2", &["--timeout-secs=3"]),
        ["timeout"]
    );
}

#[test]
fn the_model_sees_a_commit_that_never_landed() {
    // A later commit of the same input may reuse pages the lost one freed, which `check()`
    // then sees first: either way the write-path oracle holds the commit to account.
    let kinds = kinds_with("lose-meta-writes", "20", &[]);
    assert!(kinds.contains(&"commit-lost-data".to_owned()), "{kinds:?}");
    assert!(
        kinds
            .iter()
            .all(|k| k == "commit-lost-data" || k == "commit-corrupted"),
        "{kinds:?}"
    );
}

#[test]
fn check_after_commit_sees_pages_that_were_never_written() {
    let kinds = kinds_with("lose-data-writes", "20", &[]);
    assert!(kinds.contains(&"commit-corrupted".to_owned()), "{kinds:?}");
    assert!(
        kinds
            .iter()
            .all(|k| k == "commit-corrupted" || k == "commit-lost-data"),
        "{kinds:?}"
    );
}

#[test]
fn the_writable_reopen_sees_a_file_its_options_no_longer_open() {
    // Only the inputs that write with the array freelist fail; the file reads and checks clean.
    let save = tempfile::tempdir().unwrap();
    let args = [
        "--seed=3",
        "--max-mutations=0",
        "--bases=small",
        "--inputs=30",
        "--control=inflate-meta-writes",
    ];
    let (s, _) = common::run(&args, save.path());
    assert_eq!(failure_kinds(&s), ["commit-corrupted"]);
    for signature in s.classes.keys() {
        assert!(
            signature.contains("verify-write-open: opened for writing before, not after"),
            "{signature}"
        );
    }
}

/// Replay corpus inputs with `control`: the verdict line of each.
fn replay_with(control: &str, names: &[&str]) -> Vec<String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/fuzz");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crashlab-fuzz"))
        .arg("replay")
        .arg(format!("--fixtures={}", common::fixtures()))
        .arg(format!("--control={control}"))
        .args(names.iter().map(|n| dir.join(n)))
        .output()
        .expect("crashlab-fuzz runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), names.len(), "{stdout}");
    lines
}

/// Inputs whose damage (a live page listed free, a cycle, a reference past the high-water mark,
/// the last txid) makes the oracle scope what a commit may change.
const SCOPED: [&str; 4] = [
    "015-freelist-lists-a-live-page-and-a-commit-reuses-it.json",
    "016-cycle-shared-page-freed-by-the-path-the-commit-rewrote.json",
    "017-damaged-file-commit-takes-the-last-txid.json",
    "002-txid-264m2.json",
];

#[test]
fn a_scoped_oracle_still_sees_damage_clear_of_what_it_scopes() {
    for line in replay_with("none", &SCOPED) {
        assert!(line.ends_with(": ok"), "the clean twin: {line}");
    }
    // Pages never written lie clear of any page at risk, and are no txid problem.
    for line in replay_with("lose-data-writes", &SCOPED) {
        assert!(
            line.contains("FAIL commit-made-worse") || line.contains("FAIL commit-corrupted"),
            "{line}"
        );
    }
}
