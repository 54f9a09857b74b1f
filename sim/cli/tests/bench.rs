//! `crashlab bench`: every job count and round is measured and named, the figures that do not
//! depend on the machine are the same for every run, a parallel sweep that hands seeds back out
//! of order is caught (negative control `worker-order`; its one-job twin is clean), and bad
//! values are refused with exit 2.

use crate::common::{crashlab_within, text};

fn bench(extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["bench", "--seeds", "12", "--check-seeds", "2"];
    args.extend_from_slice(extra);
    let out = crashlab_within(300, &args, dir.path());
    (out.status.code(), text(&out))
}

#[test]
fn job_counts_run_in_interleaved_rounds_with_the_same_seeds() {
    let (code, out) = bench(&["--jobs", "1,2,3", "--rounds", "2"]);
    assert_eq!(code, Some(0), "{out}");
    for round in ["round 1:", "round 2:"] {
        let line = out.lines().find(|l| l.contains(round)).expect(round);
        let jobs: Vec<&str> = ["--jobs 1 ", "--jobs 2 ", "--jobs 3 "]
            .into_iter()
            .filter(|j| line.contains(j))
            .collect();
        assert_eq!(jobs.len(), 3, "{line}");
        assert!(line.contains("ops/s") && line.contains("peak "), "{line}");
    }
    assert!(out.contains("--jobs 2 ÷ --jobs 1: "), "{out}");
    assert!(out.contains("--jobs 3 ÷ --jobs 1: "), "{out}");
    assert!(out.contains("at every job count: yes"), "{out}");
    assert!(out.contains("0 violations per run"), "{out}");
    assert!(out.contains("crash states/s"), "{out}");
}

#[test]
fn the_worker_order_control_is_caught_and_its_one_job_twin_is_clean() {
    // 12 seeds over 2 workers: the control hands a batch back grouped by worker.
    let (code, out) = bench(&["--jobs", "1,2", "--debug-control", "worker-order"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("at every job count: NO"), "{out}");
    let (code, out) = bench(&["--jobs", "1", "--debug-control", "worker-order"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("at every job count: yes"), "{out}");
}

#[test]
fn bad_values_are_refused_with_the_limit() {
    for (args, says) in [
        (&["--jobs", "1,0"][..], "0 is less than 1"),
        (&["--jobs", "1,x"][..], "found `x`"),
        (&["--jobs", "1,2,3,4,5,6,7,8,9"][..], "BENCH_JOB_COUNTS_MAX"),
        (&["--jobs", "2000"][..], "JOBS_MAX"),
        (&["--rounds", "0"][..], "0 is less than 1"),
        (&["--rounds", "101"][..], "BENCH_ROUNDS_MAX"),
    ] {
        let (code, out) = bench(args);
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
    }
}
