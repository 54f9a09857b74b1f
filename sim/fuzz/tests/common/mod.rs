//! Running the `crashlab-fuzz` binary from a test: the campaign runs in worker processes with
//! the capped allocator, exactly as the long run does.
#![allow(dead_code)]

use crashlab_fuzz::summary::Summary;
use std::path::Path;
use std::process::Command;

pub fn fixtures() -> String {
    crashlab_fuzz::bases::default_fixtures()
        .display()
        .to_string()
}

/// `crashlab-fuzz run --json ARGS`, saving failures under `save`: the summary and stderr.
pub fn run(args: &[&str], save: &Path) -> (Summary, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_crashlab-fuzz"))
        .arg("run")
        .arg("--json")
        .arg(format!("--save={}", save.display()))
        .arg(format!("--fixtures={}", fixtures()))
        .args(args)
        .output()
        .expect("crashlab-fuzz runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "crashlab-fuzz run {args:?} exited {code:?}: {stderr}"
    );
    let summary: Summary = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("a JSON summary ({e}); stderr: {stderr}"));
    assert_eq!(
        code == Some(0),
        summary.failures() == 0,
        "exit code follows the failures"
    );
    (summary, stderr)
}

/// The failure kinds a summary found, by name.
pub fn failure_kinds(s: &Summary) -> Vec<String> {
    let mut kinds: Vec<String> = s.classes.values().map(|c| c.kind.name()).collect();
    kinds.sort();
    kinds.dedup();
    kinds
}
