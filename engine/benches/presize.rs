//! Criterion benchmarks of pre-sized buffers (DESIGN.md, "The three questions", item 3), two
//! shapes under the three `PresizePolicy` values, on `MemStorage` with `no_sync` (CPU-bound):
//!
//! | shape  | one iteration                                                                    |
//! |--------|----------------------------------------------------------------------------------|
//! | `iavl` | one `Db::write` of 50 puts of 8–71-byte values; the batch size is not known in advance, so `Estimate` has only a guess (16 bytes a record) |
//! | `geth` | one `Db::write` of 1,000 puts of 100-byte values; the size is known for free (count × record size), so `Estimate` is exact |
//!
//! The policy sizes the batch built by the caller, the merged batch, the commit's page buffer and
//! the freelist page. Wall time only confirms the deterministic counters: after each shape, a
//! fixed run of 100 iterations on a fresh database prints the buffer counters per iteration.
//!
//! The allocator's own view — bytes and allocations per iteration, the B/op and allocs/op of Go
//! benchmarks — comes from a counting global allocator (`stats_alloc`, whose `unsafe` stays in
//! that crate), printed beside the engine's own buffer counters. A batch-size series then shows
//! where each policy wins and where computing the exact size first breaks even.

use crashlab_engine::batch::{Record, WriteBatch};
use crashlab_engine::{Counters, Db, MemStorage, Options, PresizePolicy};
use criterion::{criterion_group, criterion_main, Criterion};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::hint::black_box;
use std::time::Duration;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const POLICIES: [PresizePolicy; 3] = [
    PresizePolicy::Grow,
    PresizePolicy::Exact,
    PresizePolicy::Estimate,
];
const BUCKET: &[u8] = b"bench";
/// Iterations of the fixed run whose counters are printed.
const COUNTER_ITERATIONS: u64 = 100;

/// A shape: records per batch, the value size of record `j` of batch `i`, and the size the
/// caller passes to `Estimate` for `n` records.
struct Shape {
    name: &'static str,
    records: u64,
    value_size: fn(u64, u64) -> usize,
    estimate: fn(usize) -> usize,
}

const SHAPES: [Shape; 2] = [
    Shape {
        name: "iavl",
        records: 50,
        value_size: |i, j| 8 + ((i * 31 + j * 17) % 64) as usize,
        estimate: |n| 4 + 16 * n,
    },
    Shape {
        name: "geth",
        records: 1_000,
        value_size: |_, _| 100,
        // Tag, component count, "bench" with its length, a 16-byte key, a 100-byte value.
        estimate: |n| 4 + (2 + 9 + 20 + 104) * n,
    },
];

fn open(policy: PresizePolicy) -> Db {
    let options = Options {
        no_sync: true,
        presize: policy,
        max_batch_delay: Duration::ZERO,
        ..Options::default()
    };
    let db = Db::open(MemStorage::new(), options).expect("open database");
    db.update(|tx| tx.create_bucket_if_missing(BUCKET).map(drop))
        .expect("create bucket");
    db
}

/// Iteration `i`: build the batch under `policy` and write it.
fn iteration(db: &Db, shape: &Shape, policy: PresizePolicy, i: u64) {
    let keys: Vec<[u8; 16]> = (0..shape.records)
        .map(|j| u128::from(i * shape.records + j).to_be_bytes())
        .collect();
    let value = [0x5a; 128];
    let records: Vec<Record<'_>> = keys
        .iter()
        .enumerate()
        .map(|(j, key)| Record::Put {
            path: vec![BUCKET],
            key,
            value: &value[..(shape.value_size)(i, j as u64)],
        })
        .collect();
    let batch = WriteBatch::with_policy(policy, &records, (shape.estimate)(records.len()));
    db.write(black_box(batch)).expect("write");
}

fn print_counters(shape: &Shape, policy: PresizePolicy) {
    let db = open(policy);
    let before = db.counters();
    let region = Region::new(GLOBAL);
    for i in 0..COUNTER_ITERATIONS {
        iteration(&db, shape, policy, i);
    }
    let heap = region.change();
    let after = db.counters();
    eprintln!(
        "{}/{policy:?} allocator per iteration: {:.0} B/op  {:.1} allocs/op  {:.1} reallocs/op",
        shape.name,
        heap.bytes_allocated as f64 / COUNTER_ITERATIONS as f64,
        heap.allocations as f64 / COUNTER_ITERATIONS as f64,
        heap.reallocations as f64 / COUNTER_ITERATIONS as f64,
    );
    let per = |f: fn(&Counters) -> u64| (f(&after) - f(&before)) as f64 / COUNTER_ITERATIONS as f64;
    eprintln!(
        "{}/{policy:?} per iteration: buffer_allocations {:.2}  buffer_reallocations {:.2}  \
         buffer_bytes_copied_by_growth {:.1}  size_computation_steps {:.1}  write_calls {:.2}  \
         write_calls_saved {:.2}",
        shape.name,
        per(|c| c.buffer_allocations),
        per(|c| c.buffer_reallocations),
        per(|c| c.buffer_bytes_copied_by_growth),
        per(|c| c.size_computation_steps),
        per(|c| c.write_calls),
        per(|c| c.write_calls_saved),
    );
}

fn presize(c: &mut Criterion) {
    for shape in &SHAPES {
        let mut group = c.benchmark_group(shape.name);
        // Every iteration adds keys to an in-memory file: keep the runs short.
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        for policy in POLICIES {
            let db = open(policy);
            let mut i = 0;
            group.bench_function(format!("{policy:?}"), |b| {
                b.iter(|| {
                    iteration(&db, shape, policy, i);
                    i += 1;
                })
            });
        }
        group.finish();
        for policy in POLICIES {
            print_counters(shape, policy);
        }
    }
}

/// Batch sizes for the break-even series.
const SERIES: [u64; 6] = [4, 16, 64, 256, 1024, 4096];

/// Per batch size and policy: µs per batch (best of 3 timed loops), allocator bytes and calls,
/// size steps and growth copies — where Exact's extra pass stops paying for the growth it saves.
fn break_even_series() {
    eprintln!(
        "\n=== break-even: IAVL-shaped batches (size unknown, Estimate guesses 16 B/record) ==="
    );
    eprintln!(
        "{:>6} {:<9} {:>9} {:>10} {:>8} {:>11} {:>12}",
        "recs", "policy", "us/batch", "B/op", "allocs", "size_steps", "grow_copied"
    );
    for records in SERIES {
        let shape = Shape {
            name: "series",
            records,
            value_size: SHAPES[0].value_size,
            estimate: SHAPES[0].estimate,
        };
        for policy in POLICIES {
            series_row(&shape, policy);
        }
    }
}

fn series_row(shape: &Shape, policy: PresizePolicy) {
    let iterations = (20_000 / shape.records).max(4);
    let mut best = f64::MAX;
    let mut i = 0;
    for _ in 0..3 {
        let db = open(policy);
        let start = std::time::Instant::now();
        for _ in 0..iterations {
            iteration(&db, shape, policy, i);
            i += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / iterations as f64);
    }
    let db = open(policy);
    let before = db.counters();
    let region = Region::new(GLOBAL);
    for j in 0..iterations {
        iteration(&db, shape, policy, j);
    }
    let heap = region.change();
    let after = db.counters();
    let per = |v: u64| v as f64 / iterations as f64;
    eprintln!(
        "{:>6} {:<9} {:>9.1} {:>10.0} {:>8.1} {:>11.1} {:>12.0}",
        shape.records,
        format!("{policy:?}"),
        best,
        per(heap.bytes_allocated as u64),
        per(heap.allocations as u64),
        per(after.size_computation_steps - before.size_computation_steps),
        per(after.buffer_bytes_copied_by_growth - before.buffer_bytes_copied_by_growth),
    );
}

fn presize_and_series(c: &mut Criterion) {
    presize(c);
    break_even_series();
}

criterion_group!(benches, presize_and_series);
criterion_main!(benches);
