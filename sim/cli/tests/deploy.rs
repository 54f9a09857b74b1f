//! The recipes under `deploy/` run as written: each is read (the Kubernetes and CI manifests
//! parsed as YAML, the Slurm script's `#SBATCH --array` line), its commands are run here with
//! the variables its scheduler would set — every index of the Job, every task of the array,
//! every cell of the matrix — over a small seed range, and its merge step's report must be
//! the unsharded sweep's report byte for byte: the recipe's shard arithmetic is crashlab's,
//! no shard is missing or doubled. No kubectl, Slurm or CI runner is needed.

use crate::common;

use common::text;
use serde_yaml::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The small sweep the recipes are run over instead of their own range.
const SEEDS: &str = "0..23";
const OPS: &str = "40";

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(file)
}

fn yaml(file: &str) -> Value {
    let text = std::fs::read_to_string(deploy(file)).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// A `sh` running `script` in `dir`, with the crashlab under test first on PATH and only the
/// scheduler variables given in `env`.
fn sh(dir: &Path, program: &str, script: &[&str], env: &[(String, String)]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_crashlab")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut c = Command::new(program);
    c.args(script).current_dir(dir).env("PATH", path);
    for v in [
        "JOB_COMPLETION_INDEX",
        "CRASHLAB_SHARD_COUNT",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_STEP",
        "SLURM_CPUS_PER_TASK",
    ] {
        c.env_remove(v);
    }
    c.envs(env.iter().map(|(k, v)| (k, v))).output().unwrap()
}

fn ok(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", text(o));
}

/// The report of the unsharded sweep of `SEEDS`, by the same binary.
fn unsharded(dir: &Path) -> Vec<u8> {
    let o = sh(
        dir,
        "crashlab",
        &[
            "explore",
            "--seeds",
            SEEDS,
            "--ops",
            OPS,
            "--report",
            "whole.jsonl",
            "--found-dir",
            "whole-found",
        ],
        &[],
    );
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    std::fs::read(dir.join("whole.jsonl")).unwrap()
}

fn merged(results: &Path) -> Vec<u8> {
    std::fs::read(results.join("merged.jsonl")).unwrap()
}

/// A container's env as pairs, and its `sh -c` script.
fn container(job: &Value) -> (Vec<(String, String)>, String) {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], serde_yaml::to_value(["sh", "-c"]).unwrap());
    let env = c["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| {
            let (k, v) = (e["name"].as_str().unwrap(), e["value"].as_str().unwrap());
            (k.to_string(), v.to_string())
        })
        .collect();
    (env, c["args"][0].as_str().unwrap().to_string())
}

/// `env` with the sweep shrunk to `SEEDS` and the results sent to `results`.
fn local(env: Vec<(String, String)>, results: &Path) -> Vec<(String, String)> {
    env.into_iter()
        .map(|(k, v)| match k.as_str() {
            "SEEDS" => (k, SEEDS.to_string()),
            "OPS" => (k, OPS.to_string()),
            "RESULTS" => (k, results.display().to_string()),
            _ => (k, v),
        })
        .collect()
}

#[test]
fn the_kubernetes_indexed_job_and_its_merge_give_the_unsharded_report() {
    let job = yaml("kubernetes/sweep-job.yaml");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    let completions = job["spec"]["completions"].as_u64().unwrap();
    let (env, script) = container(&job);
    let count = env
        .iter()
        .find(|(k, _)| k == "CRASHLAB_SHARD_COUNT")
        .unwrap();
    assert_eq!(
        count.1,
        completions.to_string(),
        "the shard count is the Job's completions"
    );
    let mount = &job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0];
    let results_env = env.iter().find(|(k, _)| k == "RESULTS").unwrap();
    assert_eq!(mount["mountPath"].as_str(), Some(results_env.1.as_str()));
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    for index in 0..completions {
        let mut env = local(env.clone(), &results);
        env.push(("JOB_COMPLETION_INDEX".into(), index.to_string()));
        ok(&sh(dir.path(), "sh", &["-c", &script], &env), "a pod");
    }
    let merge = yaml("kubernetes/merge-job.yaml");
    let (env, script) = container(&merge);
    let o = sh(dir.path(), "sh", &["-c", &script], &local(env, &results));
    ok(&o, "the merge pod");
    assert!(results.join("summary.txt").is_file() && results.join("saturation.svg").is_file());
    assert!(
        merged(&results) == unsharded(dir.path()),
        "merged ≠ unsharded"
    );
    // A pod that did not run fails the merge pod.
    std::fs::remove_file(results.join("shard-3.jsonl")).unwrap();
    let (env, script) = container(&merge);
    let o = sh(dir.path(), "sh", &["-c", &script], &local(env, &results));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("no report of shard 3/{completions}")),
        "{}",
        text(&o)
    );
}

/// `#SBATCH --array=A-B[:S]` of the script: its task ids.
fn array_tasks(script: &str) -> (u64, u64, Vec<u64>) {
    let spec = script
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --array="))
        .expect("an --array line");
    let (range, step) = spec.split_once(':').unwrap_or((spec, "1"));
    let (a, b) = range.split_once('-').unwrap();
    let (a, b, step): (u64, u64, u64) = (
        a.parse().unwrap(),
        b.parse().unwrap(),
        step.parse().unwrap(),
    );
    (a, step, (a..=b).step_by(step as usize).collect())
}

#[test]
fn the_slurm_array_script_run_for_every_task_merges_to_the_unsharded_report() {
    let script = deploy("slurm/sweep.sbatch");
    let (min, step, tasks) = array_tasks(&std::fs::read_to_string(&script).unwrap());
    assert!(tasks.len() > 1, "{tasks:?}");
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let base = [
        ("SEEDS".to_string(), SEEDS.to_string()),
        ("OPS".to_string(), OPS.to_string()),
        ("RESULTS".to_string(), results.display().to_string()),
        ("SLURM_CPUS_PER_TASK".to_string(), "1".to_string()),
        (
            "SLURM_ARRAY_TASK_COUNT".to_string(),
            tasks.len().to_string(),
        ),
        ("SLURM_ARRAY_TASK_MIN".to_string(), min.to_string()),
        ("SLURM_ARRAY_TASK_STEP".to_string(), step.to_string()),
    ];
    for id in &tasks {
        let mut env = base.to_vec();
        env.push(("SLURM_ARRAY_TASK_ID".into(), id.to_string()));
        ok(
            &sh(dir.path(), "bash", &[script.to_str().unwrap()], &env),
            "a task",
        );
    }
    let merge = deploy("slurm/merge.sbatch");
    let o = sh(dir.path(), "bash", &[merge.to_str().unwrap()], &base);
    ok(&o, "the merge");
    assert!(
        merged(&results) == unsharded(dir.path()),
        "merged ≠ unsharded"
    );
    // A task id the array does not have is refused, with the reason.
    let mut env = base.to_vec();
    env.push((
        "SLURM_ARRAY_TASK_ID".into(),
        (tasks[tasks.len() - 1] + step).to_string(),
    ));
    let o = sh(dir.path(), "bash", &[script.to_str().unwrap()], &env);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("SLURM_ARRAY_TASK_ID="), "{}", text(&o));
}

#[test]
fn the_ci_matrix_lists_every_shard_of_its_count_and_merges_to_the_unsharded_report() {
    let ci = yaml("ci/github-actions.yml");
    let sweep = &ci["jobs"]["sweep"];
    let matrix: Vec<u64> = sweep["strategy"]["matrix"]["shard"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let step = |job: &Value, name: &str| -> String {
        let steps = job["steps"].as_sequence().unwrap();
        let s = steps.iter().find(|s| s["name"] == name).unwrap();
        s["run"].as_str().unwrap().to_string()
    };
    let run = step(sweep, "sweep");
    let n = run
        .split("--shard ${{ matrix.shard }}/")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .expect("--shard ${{ matrix.shard }}/N");
    let n: u64 = n.parse().unwrap();
    assert_eq!(
        matrix,
        (0..n).collect::<Vec<_>>(),
        "the matrix is every shard of {n}"
    );
    let bin = Path::new(env!("CARGO_BIN_EXE_crashlab"));
    let local_bin = |s: &str| s.replace("target/release/crashlab", bin.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("SEEDS".to_string(), SEEDS.to_string()),
        ("OPS".to_string(), OPS.to_string()),
    ];
    for shard in &matrix {
        let cell = local_bin(&run.replace("${{ matrix.shard }}", &shard.to_string()));
        ok(&sh(dir.path(), "sh", &["-c", &cell], &env), "a matrix cell");
    }
    let o = sh(
        dir.path(),
        "sh",
        &["-c", &local_bin(&step(&ci["jobs"]["merge"], "merge"))],
        &env,
    );
    ok(&o, "the merge");
    assert!(
        merged(dir.path()) == unsharded(dir.path()),
        "merged ≠ unsharded"
    );
}
