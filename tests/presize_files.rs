//! Pre-sized buffers change how bytes are buffered, never which bytes land in the file: for
//! random workloads (buckets, puts of 0–3000-byte values, deletes, commits, write batches through
//! `Db::write`) the database file is byte-for-byte identical under `Grow`, `Exact` and
//! `Estimate`, and `check()` passes under each.

use crashlab_engine::batch::{MergeStrategy, Record, WriteBatch};
use crashlab_engine::{Db, MemStorage, Options, PresizePolicy};
use proptest::prelude::*;
use std::time::Duration;

const BUCKETS: [&[u8]; 3] = [b"alpha", b"beta", b"gamma"];
const POLICIES: [PresizePolicy; 3] = [
    PresizePolicy::Grow,
    PresizePolicy::Exact,
    PresizePolicy::Estimate,
];

#[derive(Clone, Debug)]
enum Op {
    Put {
        bucket: usize,
        key: u8,
        value_len: usize,
        fill: u8,
    },
    Delete {
        bucket: usize,
        key: u8,
    },
}

#[derive(Clone, Debug)]
enum Step {
    /// One `Db::update` applying the ops.
    Update(Vec<Op>),
    /// One `Db::write` of a batch of the ops (puts in a nested bucket when `nested`).
    Write { ops: Vec<Op>, nested: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..BUCKETS.len(), any::<u8>(), 0usize..=3000, any::<u8>()).prop_map(
            |(bucket, key, value_len, fill)| Op::Put { bucket, key, value_len, fill }
        ),
        1 => (0..BUCKETS.len(), any::<u8>()).prop_map(|(bucket, key)| Op::Delete { bucket, key }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let ops = || prop::collection::vec(op(), 1..12);
    prop_oneof![
        ops().prop_map(Step::Update),
        (ops(), any::<bool>()).prop_map(|(ops, nested)| Step::Write { ops, nested }),
    ]
}

fn key_bytes(key: u8) -> Vec<u8> {
    format!("key-{key:03}").into_bytes()
}

fn value_bytes(len: usize, fill: u8) -> Vec<u8> {
    (0..len).map(|i| fill.wrapping_add(i as u8)).collect()
}

fn apply_update(db: &Db, ops: &[Op]) {
    db.update(|tx| {
        for op in ops {
            match *op {
                Op::Put {
                    bucket,
                    key,
                    value_len,
                    fill,
                } => {
                    let mut b = tx.create_bucket_if_missing(BUCKETS[bucket])?;
                    b.put(&key_bytes(key), &value_bytes(value_len, fill))?;
                }
                Op::Delete { bucket, key } => {
                    if let Some(mut b) = tx.bucket_mut(BUCKETS[bucket])? {
                        b.delete(&key_bytes(key))?;
                    }
                }
            }
        }
        Ok(())
    })
    .expect("update commits");
}

fn apply_write(db: &Db, ops: &[Op], nested: bool, policy: PresizePolicy) {
    let keys: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match *op {
            Op::Put { key, .. } | Op::Delete { key, .. } => key_bytes(key),
        })
        .collect();
    let values: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match *op {
            Op::Put {
                value_len, fill, ..
            } => value_bytes(value_len, fill),
            Op::Delete { .. } => Vec::new(),
        })
        .collect();
    let records: Vec<Record<'_>> = ops
        .iter()
        .zip(keys.iter().zip(&values))
        .map(|(op, (key, value))| match *op {
            Op::Put { bucket, .. } => {
                let mut path = vec![BUCKETS[bucket]];
                if nested {
                    path.push(&b"nested"[..]);
                }
                Record::Put { path, key, value }
            }
            Op::Delete { bucket, .. } => Record::Delete {
                path: vec![BUCKETS[bucket]],
                key,
            },
        })
        .collect();
    // The estimate a caller might know for free: a fixed guess per record.
    let batch = WriteBatch::with_policy(policy, &records, 4 + 64 * records.len());
    db.write(batch).expect("write commits");
}

/// Run `steps` on a fresh in-memory database under `policy`; return the file's bytes.
fn run(steps: &[Step], page_size: u32, strategy: MergeStrategy, policy: PresizePolicy) -> Vec<u8> {
    let storage = MemStorage::new();
    let options = Options {
        page_size,
        merge_strategy: strategy,
        presize: policy,
        max_batch_delay: Duration::ZERO,
        ..Options::default()
    };
    let db = Db::open(storage.clone(), options).expect("open");
    for step in steps {
        match step {
            Step::Update(ops) => apply_update(&db, ops),
            Step::Write { ops, nested } => apply_write(&db, ops, *nested, policy),
        }
    }
    let problems = db.check().expect("check runs");
    assert!(problems.is_empty(), "{policy:?}: {problems:?}");
    drop(db);
    storage.snapshot()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_file_is_the_same_under_every_policy(
        steps in prop::collection::vec(step(), 1..16),
        page_size in prop::sample::select(vec![512u32, 1024, 4096]),
        strategy in prop::sample::select(vec![MergeStrategy::Append, MergeStrategy::Rebuild]),
    ) {
        let files: Vec<Vec<u8>> =
            POLICIES.iter().map(|&policy| run(&steps, page_size, strategy, policy)).collect();
        prop_assert!(files[0] == files[1], "Grow and Exact files differ");
        prop_assert!(files[0] == files[2], "Grow and Estimate files differ");
    }
}

/// A fixed workload: 20 updates of 50 puts of 100-byte values, then 10 `Db::write` batches of
/// 20 puts of 200-byte values (4 KiB pages). Returns the counters and the file.
fn fixed_workload(policy: PresizePolicy) -> (crashlab_engine::Counters, Vec<u8>) {
    let storage = MemStorage::new();
    let options = Options {
        presize: policy,
        max_batch_delay: Duration::ZERO,
        ..Options::default()
    };
    let db = Db::open(storage.clone(), options).expect("open");
    for round in 0..20u32 {
        db.update(|tx| {
            let mut b = tx.create_bucket_if_missing(b"small")?;
            for i in 0..50u32 {
                b.put(
                    format!("k{round:02}-{i:02}").as_bytes(),
                    &[round as u8; 100],
                )?;
            }
            Ok(())
        })
        .expect("update");
    }
    for round in 0..10u32 {
        let keys: Vec<Vec<u8>> = (0..20)
            .map(|i| format!("w{round:02}-{i:02}").into_bytes())
            .collect();
        let value = [round as u8; 200];
        let records: Vec<Record<'_>> = keys
            .iter()
            .map(|key| Record::Put {
                path: vec![&b"large"[..]],
                key,
                value: &value,
            })
            .collect();
        // Known for free here: every record has the same size (2 + 9 + 10 + 204 bytes).
        let batch = WriteBatch::with_policy(policy, &records, 4 + 225 * records.len());
        db.write(batch).expect("write");
    }
    assert!(db.check().expect("check").is_empty());
    let counters = db.counters();
    drop(db);
    (counters, storage.snapshot())
}

#[test]
fn fixed_workload_costs_per_policy() {
    let runs: Vec<_> = POLICIES.iter().map(|&p| (p, fixed_workload(p))).collect();
    for (policy, (c, _)) in &runs {
        println!(
            "{policy:?}: commits {} buffer_allocations {} buffer_reallocations {} \
             buffer_bytes_copied_by_growth {} size_computation_steps {} write_calls {} \
             write_calls_saved {} bytes_written {}",
            c.commits,
            c.buffer_allocations,
            c.buffer_reallocations,
            c.buffer_bytes_copied_by_growth,
            c.size_computation_steps,
            c.write_calls,
            c.write_calls_saved,
            c.bytes_written
        );
    }
    let (_, (grow, grow_file)) = &runs[0];
    let (_, (exact, exact_file)) = &runs[1];
    let (_, (estimate, estimate_file)) = &runs[2];
    assert!(grow_file == exact_file && grow_file == estimate_file);
    // Same I/O under every policy; coalescing saved some calls.
    for c in [exact, estimate] {
        assert_eq!(c.write_calls, grow.write_calls);
        assert_eq!(c.write_calls_saved, grow.write_calls_saved);
        assert_eq!(c.bytes_written, grow.bytes_written);
        assert_eq!(c.buffer_allocations, grow.buffer_allocations);
    }
    assert!(grow.write_calls_saved > 0);
    // Only Exact walks anything, and it never grows a buffer.
    assert_eq!(grow.size_computation_steps, 0);
    assert_eq!(estimate.size_computation_steps, 0);
    assert!(exact.size_computation_steps > 0);
    assert_eq!(exact.buffer_reallocations, 0);
    assert_eq!(exact.buffer_bytes_copied_by_growth, 0);
    // Grow pays in growth; the free sizes here (the caller's batches, merges, the commit's
    // page bytes, the freelist page) are all exact, so Estimate never grows a buffer.
    assert!(grow.buffer_reallocations > 0);
    assert_eq!(estimate.buffer_reallocations, 0);
}

/// The simulator's oracle holds under each policy, and a seed's run — every fault, power cut and
/// recovery, whose storage calls would shift if a policy changed a single write — is the same
/// run under all three: same trace, same disk image, same outcome.
#[test]
fn a_simulated_run_is_the_same_under_every_policy() {
    use crashlab_sim::config::RunConfig;
    use crashlab_sim::crashlab::CrashlabDb;
    use crashlab_sim::profile::Profile;
    use crashlab_sim::runner::run;
    use crashlab_sim::verdict::Outcome;
    for seed in 0..60u64 {
        let base = RunConfig::<Options>::from_seed(seed, 200, Profile::Default);
        let reports = POLICIES.map(|policy| {
            let mut cfg = base.clone();
            cfg.engine.presize = policy;
            run::<CrashlabDb>(&cfg)
        });
        for (policy, r) in POLICIES.iter().zip(&reports) {
            if let Outcome::Violation(v) = &r.outcome {
                panic!("seed {seed} under {policy:?}: {v}");
            }
        }
        let [grow, exact, estimate] = &reports;
        for other in [exact, estimate] {
            assert_eq!(other.outcome, grow.outcome, "seed {seed}");
            assert_eq!(other.trace_hash, grow.trace_hash, "seed {seed}");
            assert_eq!(other.image_hash, grow.image_hash, "seed {seed}");
            assert_eq!(other.faults, grow.faults, "seed {seed}");
        }
    }
}
