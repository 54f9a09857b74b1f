//! `explore --report` and `crashlab merge`: the reports of a sweep's shards merge into the
//! report of the unsharded sweep, byte for byte, whatever the number of shards; what is missing,
//! doubled or from another sweep is found. The negative control (`merge --debug-control
//! drop-seed`) loses a seed inside the merge, and the merge's own check must refuse it.

use crate::common;

use common::{crashlab_within, refused, text};
use std::path::Path;
use std::process::Output;

const RANGE: &str = "0..30";

/// `explore` of `RANGE` (lying-sync: violations with cases), shard `shard`, report to `out`.
fn explore(dir: &Path, shard: &str, ops: &str, out: &str) -> Output {
    explore_with(dir, shard, ops, out, &[])
}

/// [`explore`] with more arguments.
fn explore_with(dir: &Path, shard: &str, ops: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "explore",
        "--seeds",
        RANGE,
        "--ops",
        ops,
        "--profile",
        "lying-sync",
        "--found-dir",
        "found",
        "--shard",
        shard,
        "--report",
        out,
    ];
    args.extend(extra);
    crashlab_within(120, &args, dir)
}

/// The reports of `n` shards, written under `dir`, in reverse order of shard.
fn shards(dir: &Path, n: u64) -> Vec<String> {
    (0..n)
        .rev()
        .map(|i| {
            let out = format!("shard-{i}-of-{n}.jsonl");
            let o = explore(dir, &format!("{i}/{n}"), "60", &out);
            assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
            out
        })
        .collect()
}

fn merge(dir: &Path, files: &[String], out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--out", out]);
    args.extend(extra);
    crashlab_within(60, &args, dir)
}

#[test]
fn merging_1_2_and_7_shards_gives_the_same_bytes_as_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = shards(d, 1);
    let mut results = Vec::new();
    for (n, files) in [(1, whole.clone()), (2, shards(d, 2)), (7, shards(d, 7))] {
        let out = format!("merged-{n}.jsonl");
        let o = merge(d, &files, &out, &[]);
        assert_eq!(o.status.code(), Some(1), "violations exit 1: {}", text(&o));
        let stdout = String::from_utf8(o.stdout).unwrap();
        results.push((n, std::fs::read(d.join(&out)).unwrap(), stdout));
    }
    let unsharded = std::fs::read(d.join(&whole[0])).unwrap();
    let (_, report, summary) = &results[0];
    assert_eq!(report, &unsharded, "one shard merges to itself");
    for (n, r, s) in &results[1..] {
        assert!(r == report, "{n} shards: the merged report differs");
        assert_eq!(s, summary, "{n} shards: the summary differs");
    }
    assert!(summary.contains("seeds 30 · ok "), "{summary}");
    assert!(summary.contains("behaviours "), "{summary}");
    // Every failure is kept with its case, and the case is where the line says.
    let text = String::from_utf8(report.clone()).unwrap();
    let failures: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["outcome"] == "violation")
        .collect();
    assert!(failures.len() >= 5, "{}", failures.len());
    for f in &failures {
        let case = f["case"].as_str().expect("a violation names its case");
        assert!(d.join(case).is_file(), "{case}");
        assert!(
            summary.contains(&format!("crashlab repro {case}")),
            "{case}"
        );
    }
    assert_eq!(text.lines().count(), 31, "a header and a line per seed");
    assert!(text.lines().next().unwrap().contains(r#""shard":[0,1]"#));
}

#[test]
fn missing_foreign_and_edited_reports_are_refused_and_duplicates_kept_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut files = shards(d, 3);
    let o = merge(d, &files, "clean.jsonl", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let clean = std::fs::read(d.join("clean.jsonl")).unwrap();
    // A shard not given: its seeds are named, and nothing is written.
    let without = files[1..].to_vec();
    refused(
        &["merge", &without[0], &without[1], "--out", "m.jsonl"],
        d,
        &["10 of the 30 seeds", "no report of shard 2/3"],
    );
    assert!(!d.join("m.jsonl").exists());
    // A report passed twice is noted and kept once: the same bytes.
    files.push(files[0].clone());
    let o = merge(d, &files, "twice.jsonl", &[]);
    assert!(text(&o).contains("(identical): kept once"), "{}", text(&o));
    assert_eq!(std::fs::read(d.join("twice.jsonl")).unwrap(), clean);
    // Another sweep's report (other ops) is not a shard of this one.
    let o = explore(d, "1/3", "61", "other.jsonl");
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    refused(
        &[
            "merge",
            &files[0],
            &files[1],
            "other.jsonl",
            "--out",
            "m.jsonl",
        ],
        d,
        &["other.jsonl:1", "ops: 60 against 61"],
    );
    // A negative control's sweep of the same range is not a shard of the real one either: its
    // findings are planted bugs.
    let o = explore_with(
        d,
        "1/3",
        "60",
        "control.jsonl",
        &["--control", "panic-in-commit"],
    );
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    refused(
        &["merge", &files[0], "control.jsonl", "--out", "m.jsonl"],
        d,
        &[
            "control.jsonl:1",
            r#"control: "none" against "panic-in-commit""#,
        ],
    );
    // A seed whose line was edited differs from its twin in a duplicate report.
    let edited = std::fs::read_to_string(d.join(&files[2])).unwrap();
    let edited = edited.replacen(r#""outcome":"ok""#, r#""outcome":"disk-failure""#, 1);
    std::fs::write(d.join("edited.jsonl"), edited).unwrap();
    refused(
        &[
            "merge",
            &files[0],
            &files[1],
            &files[2],
            "edited.jsonl",
            "--out",
            "m.jsonl",
        ],
        d,
        &["differs between", "edited.jsonl"],
    );
    std::fs::write(d.join("junk.jsonl"), "not json\n").unwrap();
    refused(
        &["merge", "junk.jsonl", "--out", "m.jsonl"],
        d,
        &["junk.jsonl:1", "not a crashlab report header"],
    );
}

#[test]
fn the_drop_seed_control_is_refused_and_its_clean_twin_merges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = shards(d, 2);
    let o = merge(d, &files, "clean.jsonl", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = merge(d, &files, "bug.jsonl", &["--debug-control", "drop-seed"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    // The last file given is shard 0/2, whose first seed is 0.
    assert!(
        t.contains("1 of the 30 seeds of 0..30 are in no report: 0 "),
        "{t}"
    );
    assert!(!d.join("bug.jsonl").exists() && !d.join("bug.jsonl.partial").exists());
}
