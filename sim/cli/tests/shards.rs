//! `explore` takes its shard from the scheduler that started it: a Kubernetes Indexed Job's
//! `JOB_COMPLETION_INDEX` (with the count by `--shard-count` or `CRASHLAB_SHARD_COUNT`), a Slurm
//! array's `SLURM_ARRAY_TASK_*`, or `--shard i/n`. What does not add up is exit 2 with the
//! variable named. (Every rule is tested in `shard_env.rs`; these run the binary.)

use crate::common;

use common::text;
use std::process::{Command, Output};

const VARS: [&str; 6] = [
    "JOB_COMPLETION_INDEX",
    "CRASHLAB_SHARD_COUNT",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
];

/// `crashlab explore --seeds 0..7 --ops 20 --profile none ARGS` with exactly `env` set.
fn explore(env: &[(&str, &str)], args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_crashlab"));
    c.args([
        "explore",
        "--seeds",
        "0..7",
        "--ops",
        "20",
        "--profile",
        "none",
    ])
    .args(args)
    .current_dir(dir.path());
    for v in VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied()).output().unwrap()
}

fn first_line(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string()
}

fn refused(o: &Output, needles: &[&str]) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for n in needles {
        assert!(t.contains(n), "missing `{n}` in: {t}");
    }
}

#[test]
fn a_kubernetes_index_and_a_slurm_task_run_the_shard_the_flag_names() {
    let by_flag = first_line(&explore(&[], &["--shard", "1/3"]));
    assert!(by_flag.contains("shard 1/3 (2 seeds)"), "{by_flag}");
    let k8s = [("JOB_COMPLETION_INDEX", "1"), ("CRASHLAB_SHARD_COUNT", "3")];
    assert_eq!(first_line(&explore(&k8s, &[])), by_flag);
    let k8s_flag = [("JOB_COMPLETION_INDEX", "1")];
    assert_eq!(
        first_line(&explore(&k8s_flag, &["--shard-count", "3"])),
        by_flag
    );
    // `sbatch --array=1-3`: tasks 1, 2, 3 are shards 0, 1, 2.
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
    ];
    assert_eq!(first_line(&explore(&slurm, &[])), by_flag);
    // An explicit --shard (a CI matrix) wins over the environment.
    let flag_wins = first_line(&explore(&k8s, &["--shard", "0/2"]));
    assert!(flag_wins.contains("shard 0/2 (4 seeds)"), "{flag_wins}");
    assert!(first_line(&explore(&[], &[])).contains("shard 0/1 (7 seeds)"));
}

#[test]
fn a_shard_that_does_not_add_up_is_exit_2_with_the_reason() {
    refused(
        &explore(
            &[("JOB_COMPLETION_INDEX", "3"), ("CRASHLAB_SHARD_COUNT", "3")],
            &[],
        ),
        &["JOB_COMPLETION_INDEX=3", "shard count 3"],
    );
    refused(
        &explore(&[("JOB_COMPLETION_INDEX", "0")], &[]),
        &["CRASHLAB_SHARD_COUNT", "--shard-count"],
    );
    refused(
        &explore(
            &[
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ],
            &[],
        ),
        &["SLURM_ARRAY_TASK_ID=5", "shard count 4"],
    );
    refused(
        &explore(&[], &["--shard-count", "4"]),
        &["--shard-count", "no shard index"],
    );
    refused(
        &explore(
            &[("CRASHLAB_SHARD_COUNT", "0"), ("JOB_COMPLETION_INDEX", "0")],
            &[],
        ),
        &["CRASHLAB_SHARD_COUNT=0", "1 to 65536"],
    );
}
