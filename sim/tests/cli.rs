//! The `crashlab` binary as a user meets it: output, exit codes, saved cases, error messages.

use std::path::Path;
use std::process::{Command, Output};

fn crashlab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn run_prints_the_configuration_outcome_and_trace_hash() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["run", "--seed", "3", "--ops", "80"], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "seed 3 profile default ops 80",
        "options: page_size=",
        "faults:",
        "outcome: ok",
        "trace:",
        "simulated time",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    // A 40-hex commit hash is a seed too.
    let o = crashlab(
        &[
            "run",
            "--seed",
            "00000000000000030000000000000000000000ff",
            "--ops",
            "80",
        ],
        dir.path(),
    );
    assert!(text(&o).contains("seed 3 profile default"), "{}", text(&o));
}

#[test]
fn a_violation_exits_1_saves_a_case_and_the_case_replays() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "explore",
            "--seeds",
            "0..10",
            "--profile",
            "lying-sync",
            "--found-dir",
            "found",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("repro: crashlab repro found/seed-"), "{t}");
    let case = std::fs::read_dir(dir.path().join("found"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let o = crashlab(&["repro", case.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("as expected (Violation)"), "{}", text(&o));
    let o = crashlab(
        &["shrink", case.to_str().unwrap(), "--budget", "200"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("shrunk 300 ops to"), "{}", text(&o));
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["run", "--seed", "banana"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("decimal u64 or 40-hex"), "{}", text(&o));
    let o = crashlab(&["explore", "--seeds", "5..5"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let o = crashlab(
        &["explore", "--seeds", "0..5", "--shard", "3/2"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("i < n"), "{}", text(&o));
    let o = crashlab(&["run", "--seed", "1", "--profile", "gentle"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("expected one of"), "{}", text(&o));
    std::fs::write(
        dir.path().join("bad.case"),
        "seed = 1\n[ops]\ncreate a\nput a k1 len=ten v=1\n",
    )
    .unwrap();
    let o = crashlab(&["repro", "bad.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("bad.case:4: `ten` is not a valid value for `len`")
            || text(&o).contains("bad.case:4:"),
        "{}",
        text(&o)
    );
    let o = crashlab(&["repro", "missing.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("missing.case"), "{}", text(&o));
    std::fs::write(
        dir.path().join("fine.case"),
        "seed = 1\nprofile = none\nops = 20\n",
    )
    .unwrap();
    let o = crashlab(&["shrink", "fine.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("does not fail"), "{}", text(&o));
}

#[test]
fn compare_prints_tables_or_json_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &["compare", "--scale", "small", "--scenario", "commits"],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.starts_with("== commits (small)"), "{t}");
    assert!(t.contains("64 writers  append"), "{t}");

    let o = crashlab(&["compare", "--scale", "small", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tables: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let names: Vec<&str> = tables
        .as_array()
        .expect("an array of tables")
        .iter()
        .map(|t| t["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["large-db-set", "large-db-reopen", "commits", "buffers"]
    );
    assert_eq!(tables[2]["baseline"], "unbatched");
    assert!(tables[2]["rows"][11]["ratio"].as_f64().unwrap() > 10.0);

    let o = crashlab(&["compare", "--scenario", "nope"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown scenario `nope`"), "{}", text(&o));
    let o = crashlab(&["compare", "--scale", "huge"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("expected small or seed"), "{}", text(&o));
}
