//! `--jobs N` changes how fast a sweep or a check runs, never what it says: the same lines
//! printed, the same cases saved, the same report and exit code for one job and for two. The
//! negative control (`--debug-control worker-order`) hands results back in an order that depends
//! on the job count; the comparison here must see it, and its one-job twin must be clean.

use crate::common;

use common::text;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// Lines that carry the wall clock, the only ones allowed to differ between job counts.
fn timing_line(line: &str) -> bool {
    line.contains(" ops/s") || line.contains(" wall (") || line.starts_with("checked in ")
}

/// What a user sees of a run: its exit code, its stdout without the timing lines, and every
/// file it saved under `dir` (name → bytes).
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    code: Option<i32>,
    stdout: Vec<String>,
    files: BTreeMap<String, Vec<u8>>,
}

fn run_in(dir: &Path, args: &[&str]) -> (Seen, Output) {
    let o = Command::new(env!("CARGO_BIN_EXE_crashlab"))
        .args(args)
        .current_dir(dir)
        // A test run inside a scheduler's task must not pick up its shard.
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !timing_line(l))
        .map(str::to_string)
        .collect();
    let mut files = BTreeMap::new();
    collect(dir, dir, &mut files);
    let seen = Seen {
        code: o.status.code(),
        stdout,
        files,
    };
    (seen, o)
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(root, &p, out);
        } else {
            let name = p.strip_prefix(root).unwrap().display().to_string();
            out.insert(name, std::fs::read(&p).unwrap());
        }
    }
}

/// Run `args` plus `--jobs N` in a fresh directory of its own.
fn with_jobs(args: &[&str], jobs: &str) -> (Seen, Output) {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args.to_vec();
    a.extend(["--jobs", jobs]);
    run_in(dir.path(), &a)
}

const SWEEP: [&str; 11] = [
    "explore",
    "--seeds",
    "0..40",
    "--ops",
    "120",
    "--profile",
    "lying-sync",
    "--found-dir",
    "found",
    "--report",
    "sweep.jsonl",
];

#[test]
fn explore_prints_saves_and_reports_the_same_for_one_and_two_jobs() {
    let (one, o) = with_jobs(&SWEEP, "1");
    let (two, _) = with_jobs(&SWEEP, "2");
    // The comparison means something only if the sweep found and saved violations.
    assert_eq!(one.code, Some(1), "{}", text(&o));
    let cases = one.files.keys().filter(|f| f.ends_with(".case")).count();
    assert!(cases >= 5, "{cases} cases saved: {:?}", one.files.keys());
    assert!(one.stdout.iter().any(|l| l.starts_with("behaviours ")));
    assert!(one.files["sweep.jsonl"].len() > 40 * 100, "a line per seed");
    assert_eq!(one, two);
}

#[test]
fn the_worker_order_control_is_caught_and_its_one_job_twin_is_clean() {
    let (clean, _) = with_jobs(&SWEEP, "1");
    let mut control = SWEEP.to_vec();
    control.extend(["--debug-control", "worker-order"]);
    let (twin, _) = with_jobs(&control, "1");
    assert_eq!(clean, twin, "one job has no workers to misorder");
    let (bug, _) = with_jobs(&control, "2");
    // Every seed's result is right, so the summary and the saved cases agree...
    assert_eq!(bug.code, clean.code);
    assert_eq!(
        bug.files.keys().collect::<Vec<_>>(),
        clean.files.keys().collect::<Vec<_>>()
    );
    // ...but the order of the lines printed and reported depends on the job count.
    assert_ne!(bug.stdout, clean.stdout);
    assert_ne!(bug.files["sweep.jsonl"], clean.files["sweep.jsonl"]);
    let mut sorted = bug.stdout.clone();
    sorted.sort();
    let mut clean_sorted = clean.stdout.clone();
    clean_sorted.sort();
    assert_eq!(sorted, clean_sorted, "the same lines, in another order");
}

#[test]
fn check_reports_and_saves_the_same_for_one_and_two_jobs() {
    let args = [
        "check",
        "--seed",
        "5",
        "--ops",
        "12",
        "--control",
        "no-barrier",
        "--found-dir",
        "found",
    ];
    let (one, o) = with_jobs(&args, "1");
    let (two, _) = with_jobs(&args, "2");
    assert_eq!(one.code, Some(1), "{}", text(&o));
    assert!(one.files.len() >= 2, "{:?}", one.files.keys());
    assert_eq!(one, two);
    // Re-crashed recoveries and sampled crash points are recovered ahead too.
    let sampled = [
        "check",
        "--seed",
        "7",
        "--ops",
        "40",
        "--max-states",
        "8",
        "--recrash-one-in",
        "2",
        "--found-dir",
        "found",
    ];
    let (one, o) = with_jobs(&sampled, "1");
    let (two, _) = with_jobs(&sampled, "2");
    let t = text(&o);
    assert!(
        !t.contains("sampled 0)") && !t.contains("in 0 re-crashed"),
        "{t}"
    );
    assert_eq!(one, two);
}
