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
