//! Negative controls: each harness capability catches its own deliberate fault (`--control`),
//! on undamaged bases (`--max-mutations 0`) where the clean twin — the same inputs without the
//! fault — passes. A capability that stopped working would let its control pass.

use crate::common;

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

/// Inputs whose damage (a live page listed free, the freelist listing itself, a damaged node's
/// run holding free pages, the last txid) is of the kinds a commit does not read by itself,
/// which the engine steps around (FORMAT.md §10), so that their commits succeed. (A commit on
/// a page reached twice, such as 016's, is refused, and writes nothing a control could lose.)
const UNSEEN: [&str; 5] = [
    "015-freelist-lists-a-live-page-and-a-commit-reuses-it.json",
    "019-freelist-lists-its-own-page.json",
    "021-damaged-node-whose-run-claims-free-pages.json",
    "017-damaged-file-commit-takes-the-last-txid.json",
    "002-txid-264m2.json",
];

#[test]
fn on_damage_a_commit_cannot_see_the_oracle_still_sees_lost_writes() {
    for line in replay_with("none", &UNSEEN) {
        assert!(line.ends_with(": ok"), "the clean twin: {line}");
    }
    // Pages never written are damage the damaged file did not have, and no txid problem.
    for line in replay_with("lose-data-writes", &UNSEEN) {
        assert!(
            line.contains("FAIL commit-made-worse") || line.contains("FAIL commit-corrupted"),
            "{line}"
        );
    }
}
