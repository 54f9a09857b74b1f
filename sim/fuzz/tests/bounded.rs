//! The bounded campaign `cargo test` runs: fixed seed, fixed budget, deterministic. It asserts
//! first that the inputs reached the deep paths (so it cannot pass by rejecting everything at
//! open), then that every oracle held on every input. When one breaks, the summary it prints
//! names each failure class with its first input and the saved file to replay.

use crate::common;

use crashlab_fuzz::edit::MutationKind;
use crashlab_fuzz::summary::Summary;

/// Inputs of the bounded run: a few seconds at the test profile's opt-level 1.
const INPUTS: &str = "2000";

/// Paths and outcomes every bounded run must reach at least once.
const REACHED: [&str; 26] = [
    "inspect-opened",
    "inspect-clean",
    "inspect-damaged",
    "read-opened",
    "read-walk-done",
    "read-clean-agreed",
    "write-opened",
    "commit-attempted",
    "commit-ok-clean",
    "commit-ok-damaged",
    "commit-refused",
    "reopened",
    "verified-clean",
    "verified-damaged",
    "verified-unseen-damage",
    "took-last-txid",
    "sparse",
    "unmutated",
    "base:inline",
    "base:pagesize1k",
    "base:nofreelist",
    "base:generated",
    "error:Corrupted",
    "error:NoValidMeta",
    "error:Truncated",
    "meta-slot:ChecksumMismatch",
];

fn assert_reached(s: &Summary) {
    let missing: Vec<&str> = REACHED
        .iter()
        .copied()
        .filter(|n| s.counts.get(n) == 0)
        .collect();
    assert!(
        missing.is_empty(),
        "never reached: {missing:?}\n{}",
        s.text()
    );
    let unused: Vec<String> = MutationKind::ALL
        .iter()
        .map(|k| k.name())
        .filter(|k| s.counts.get(&format!("mutation:{k}")) == 0)
        .collect();
    assert!(unused.is_empty(), "mutations never applied: {unused:?}");
}

#[test]
fn bounded_campaign_reaches_deep_and_every_oracle_holds() {
    let save = tempfile::tempdir().unwrap();
    let args = ["--seed=1", "--inputs", INPUTS, "--bases=small", "--jobs=2"];
    let (s, _) = common::run(&args, save.path());
    assert_eq!(s.inputs.to_string(), INPUTS, "every input ran");
    assert_eq!(s.counts.get("inputs"), s.inputs);
    assert_reached(&s);
    assert!(
        s.failures() == 0,
        "{} inputs broke an oracle (replay one with `crashlab-fuzz replay FILE`):\n{}",
        s.failures(),
        s.text()
    );
}

/// The same inputs give the same summary whatever the number of workers (each input is a
/// function of the seed and its index alone).
#[test]
fn a_bounded_run_is_the_same_with_one_worker_or_two() {
    let summary = |jobs: &str| {
        let save = tempfile::tempdir().unwrap();
        let args = ["--seed=7", "--inputs=150", "--bases=small", jobs];
        let (mut s, _) = common::run(&args, save.path());
        for class in s.classes.values_mut() {
            class.saved.clear();
        }
        s
    };
    let one = summary("--jobs=1");
    assert_eq!(one.inputs, 150);
    assert!(one.counts.get("commit-ok") > 0, "the run did work");
    assert_eq!(one, summary("--jobs=2"));
}
