//! The engine's check of bbolt's inline-bucket rule (an inline bucket holds no sub-bucket) in
//! the sweep. Negative control (s), `inline-keeps-sub-buckets`, stores a small bucket inline
//! whatever it holds: the engine reads its own file back and every value the oracle asks for is
//! right, so only the integrity check (live, and after recovery) tells the file from a
//! conforming one. Operations that never nest a bucket cannot show it, and there the control
//! must change nothing. Negative control (x), `inline-up-to-half-page`, breaks the rule's other
//! half, the size: a bucket stays inline while it fits in half a page, not a quarter. Again
//! every read answers right, and only the check sees it.

use crashlab_engine::Options;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::op::Op;
use crashlab_sim::verdict::Verdict;

use crate::seeded_control::{saved_case_and_twins, sweep_control, sweep_control_on};

const RULE: &str = "holds a sub-bucket (bbolt stores only a bucket without sub-buckets inline)";
const SIZE_RULE: &str = "bbolt stores only a bucket that fits a quarter page inline";

/// The same operations on top-level buckets only: each path cut to its last name, so no bucket
/// holds another, and no group of callers (whose calls put into nested buckets).
fn flatten(ops: &mut Vec<Op>) {
    ops.retain(|op| !matches!(op, Op::Group { .. }));
    for op in ops {
        let path = match op {
            Op::CreateBucket(path) | Op::DeleteBucket(path) => path,
            Op::Put { path, .. } | Op::Delete { path, .. } | Op::Get { path, .. } => path,
            Op::Scan { path } | Op::Range { path, .. } => path,
            Op::NextSequence { path } | Op::SetSequence { path, .. } => path,
            _ => continue,
        };
        path.drain(..path.len().saturating_sub(1));
    }
}

#[test]
fn the_sweep_catches_an_inline_bucket_that_holds_a_sub_bucket() {
    // Nearly every seed of 300 operations nests a bucket, so every seed may show it.
    let mut judged = Vec::new();
    let (caught, seeds, _) = sweep_control(
        120,
        Control::InlineKeepsSubBuckets,
        |_| Some(true),
        |seed, v| {
            judged.push((seed, v.to_string()));
        },
    );
    assert!(caught * 4 >= seeds, "{caught} of {seeds} caught");
    for (seed, v) in &judged {
        assert!(v.contains(RULE), "seed {seed}: {v}");
    }
}

/// Without nested buckets the control has nothing to inline: the same run, to the trace and
/// the image.
#[test]
fn the_control_changes_nothing_when_no_bucket_holds_another() {
    let flat = |cfg: &mut RunConfig<Options>| flatten(&mut cfg.ops);
    let never = |_: &RunConfig<Options>| Some(false);
    let control = Control::InlineKeepsSubBuckets;
    let (_, _, inert) = sweep_control_on(40, control, flat, never, |_, _| {});
    assert_eq!(inert, 40);
}

/// The saved case of control (s) fails on the check's rule; its clean twin passes, and so does
/// the case with its nested bucket created at the top level instead.
#[test]
fn the_saved_inline_keeps_sub_buckets_case_fails_only_with_a_nested_bucket() {
    let (_, v) = saved_case_and_twins("inline-keeps-sub-buckets", |run| flatten(&mut run.ops));
    assert!(v.to_string().contains(RULE), "{v}");
}

/// Control (x): caught by the check alone, on a good share of seeds (a bucket must grow past a
/// quarter page and stay under half of one at a commit).
#[test]
fn the_sweep_catches_an_inline_bucket_past_a_quarter_page() {
    let mut judged = Vec::new();
    let control = Control::InlineUpToHalfPage;
    let (caught, seeds, _) = sweep_control(
        120,
        control,
        |_| Some(true),
        |seed, v| {
            judged.push((seed, v.verdict, v.to_string()));
        },
    );
    assert!(caught * 4 >= seeds, "{caught} of {seeds} caught");
    for (seed, verdict, v) in &judged {
        assert_eq!(*verdict, Verdict::IntegrityCheck, "seed {seed}: {v}");
        assert!(v.contains(SIZE_RULE), "seed {seed}: {v}");
    }
}

/// The saved case of control (x) fails; its clean twin passes, and so does the case whose last
/// put's value is cut to fit a quarter page.
#[test]
fn the_saved_inline_size_case_fails_only_past_a_quarter_page() {
    let (_, v) = saved_case_and_twins("inline-up-to-half-page", |run| {
        let last_put = run.ops.iter_mut().rev().find_map(|op| match op {
            Op::Put { len, .. } => Some(len),
            _ => None,
        });
        *last_put.expect("the case's last put") = 900;
    });
    assert!(v.detail.contains(SIZE_RULE), "{v}");
}
