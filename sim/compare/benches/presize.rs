//! Pre-sized buffers (docs/DESIGN.md, "The three findings", item 3): the two shapes of
//! `crashlab_sim::shapes` under the three `PresizePolicy` values, on `MemStorage` with `no_sync`
//! (CPU-bound).
//!
//! | shape  | one operation |
//! |--------|---------------|
//! | `iavl` | one version of an IAVL-shaped tree preloaded with 20,000 keys: 50 inserts (16-byte keys, 8–71-byte values), `save` (walk the new nodes, hash, encode, batch), `Db::write` |
//! | `geth` | one flush of 1,000 buffered trie nodes (32-byte keys, 100–499-byte values): `flush` (batch), `Db::write` |
//!
//! The policy sizes the application's batch, and (through `Options::presize`) the engine's
//! commit page buffer and freelist page. Criterion times whole operations; then a fixed run per
//! shape and policy prints, per operation: the time of the batch-building step alone, the bytes
//! and allocations a counting global allocator (`stats_alloc`, whose `unsafe` stays in that
//! crate) saw — the B/op and allocs/op of Go benchmarks — and the engine's buffer counters. A
//! batch-size series then shows where computing the exact size first breaks even.

use crashlab_compare::shapes::workload::{BatchBuilder, GethWorkload, IavlWorkload};
use crashlab_compare::shapes::BUCKET;
use crashlab_engine::batch::WriteBatch;
use crashlab_engine::{Counters, Db, MemStorage, Options, PresizePolicy};
use criterion::{criterion_group, criterion_main, Criterion};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const POLICIES: [PresizePolicy; 3] = [
    PresizePolicy::Grow,
    PresizePolicy::Exact,
    PresizePolicy::Estimate,
];
/// Keys in the IAVL tree before measuring.
const PRELOAD: u64 = 20_000;
const IAVL_INSERTS: u64 = 50;
const GETH_NODES: u64 = 1_000;
/// Operations in each fixed (counted) run.
const COUNTED_OPS: u64 = 200;

/// Builds a fresh shape (preloaded where the shape needs it).
type MakeShape = fn() -> Box<dyn BatchBuilder>;

fn iavl() -> Box<dyn BatchBuilder> {
    Box::new(IavlWorkload::preloaded(1, PRELOAD))
}

fn geth() -> Box<dyn BatchBuilder> {
    Box::new(GethWorkload::new(2))
}

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

fn operation(db: &Db, shape: &mut dyn BatchBuilder, n: u64, policy: PresizePolicy) {
    shape.prepare(n);
    let batch = shape.build(policy);
    db.write(batch).expect("write");
}

fn presize(c: &mut Criterion) {
    let shapes: [(&str, u64, MakeShape); 2] =
        [("iavl", IAVL_INSERTS, iavl), ("geth", GETH_NODES, geth)];
    for (name, n, make) in shapes {
        let mut group = c.benchmark_group(name);
        // Every operation adds to an in-memory file: keep the runs short.
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for policy in POLICIES {
            let (db, mut shape) = (open(policy), make());
            group.bench_function(format!("{policy:?}"), |b| {
                b.iter(|| operation(&db, shape.as_mut(), n, policy))
            });
        }
        group.finish();
        for policy in POLICIES {
            counted_run(name, make().as_mut(), n, policy);
        }
    }
}

/// A fixed run: per operation, the build step's time, heap use and buffer work, then the whole
/// operation's heap use and the engine's buffer counters (the application's batch plus the
/// commit's page buffer and freelist page). Allocations count a growth as one, as Go does.
fn counted_run(name: &str, shape: &mut dyn BatchBuilder, n: u64, policy: PresizePolicy) {
    let db = open(policy);
    let before = db.counters();
    let mut build = Round::default();
    let whole = Region::new(GLOBAL);
    for _ in 0..COUNTED_OPS {
        shape.prepare(n);
        let region = Region::new(GLOBAL);
        let start = Instant::now();
        let batch = shape.build(policy);
        build.time += start.elapsed();
        build.add(&region.change(), &batch);
        db.write(batch).expect("write");
    }
    let heap = whole.change();
    let after = db.counters();
    let per = |v: u64| v as f64 / COUNTED_OPS as f64;
    let engine = |f: fn(&Counters) -> u64| per(f(&after) - f(&before));
    eprintln!(
        "{name}/{policy:?} build: {:.2} us  {:.0} heap B  {:.1} allocs  {:.0} reserved B  \
         {:.2} reallocs  {:.0} B copied by growth  {:.1} size steps",
        build.time.as_secs_f64() * 1e6 / COUNTED_OPS as f64,
        per(build.heap_bytes),
        per(build.allocs),
        per(build.reserved),
        per(build.reallocs),
        per(build.copied),
        per(build.steps),
    );
    eprintln!(
        "{name}/{policy:?} whole op: {:.0} heap B  {:.1} allocs | commit buffers: {:.0} reserved B  \
         {:.2} reallocs  {:.0} B copied  {:.1} size steps | write calls saved {:.2}",
        per(heap.bytes_allocated as u64),
        per((heap.allocations + heap.reallocations) as u64),
        engine(|c| c.buffer_bytes_reserved) - per(build.reserved),
        engine(|c| c.buffer_reallocations) - per(build.reallocs),
        engine(|c| c.buffer_bytes_copied_by_growth) - per(build.copied),
        engine(|c| c.size_computation_steps) - per(build.steps),
        engine(|c| c.write_calls_saved),
    );
}

/// Per batch size: each policy's build step — time (best of 7 interleaved rounds), allocator
/// bytes (net of growth) and allocations (a growth counted as one, as Go does), the batch
/// buffer's bytes reserved (every growth in full: Go's B/op for it), size steps and growth
/// copies — and the sizing pass timed alone. No database here: only building the batch differs
/// between policies. Exact breaks even where its pass costs no more than the growth it saves.
fn break_even_series() {
    let series: [(&str, &[u64], MakeShape); 2] = [
        (
            "iavl (inserts per version)",
            &[1, 4, 16, 64, 256, 1024, 4096],
            iavl,
        ),
        (
            "geth (nodes per flush)",
            &[16, 64, 256, 1024, 4096, 16384],
            geth,
        ),
    ];
    for (name, sizes, make) in series {
        eprintln!("\n=== break-even: {name} ===");
        eprintln!(
            "{:>6} {:<9} {:>9} {:>9} {:>10} {:>7} {:>11} {:>10} {:>11} {:>12}",
            "n",
            "policy",
            "records",
            "us/build",
            "heap B",
            "allocs",
            "reserved B",
            "size_steps",
            "grow_copied",
            "vs Grow"
        );
        for &n in sizes {
            series_rows(make, n);
        }
    }
}

/// Totals over one round of builds.
#[derive(Default, Clone, Copy)]
struct Round {
    time: Duration,
    records: u64,
    heap_bytes: u64,
    allocs: u64,
    reserved: u64,
    steps: u64,
    copied: u64,
    reallocs: u64,
}

impl Round {
    /// Count one build: the allocator's view of it and the batch's buffer work.
    fn add(&mut self, heap: &stats_alloc::Stats, batch: &WriteBatch) {
        let work = batch.buffer_work();
        self.records += batch.len() as u64;
        self.heap_bytes += heap.bytes_allocated as u64;
        self.allocs += (heap.allocations + heap.reallocations) as u64;
        self.reserved += work.bytes_reserved;
        self.steps += work.size_computation_steps;
        self.copied += work.bytes_copied_by_growth;
        self.reallocs += work.reallocations;
    }
}

fn series_rows(make: MakeShape, n: u64) {
    let builds = (40_000 / n).clamp(8, 2_000);
    let mut best = [Duration::MAX; 4];
    let mut last = [Round::default(); 4];
    for _ in 0..7 {
        for (i, policy) in POLICIES.iter().enumerate() {
            last[i] = round(make().as_mut(), n, builds, Some(*policy));
            best[i] = best[i].min(last[i].time);
        }
        last[3] = round(make().as_mut(), n, builds, None);
        best[3] = best[3].min(last[3].time);
    }
    let per = |v: u64| v as f64 / builds as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / builds as f64;
    for (i, name) in ["Grow", "Exact", "Estimate", "pass alone"]
        .iter()
        .enumerate()
    {
        let r = last[i];
        eprintln!(
            "{:>6} {:<9} {:>9.1} {:>9.2} {:>10.0} {:>7.1} {:>11.0} {:>10.1} {:>11.0} {:>11.1}%",
            n,
            name,
            per(r.records),
            us(best[i]),
            per(r.heap_bytes),
            per(r.allocs),
            per(r.reserved),
            per(r.steps),
            per(r.copied),
            (us(best[i]) / us(best[0]) - 1.0) * 100.0,
        );
    }
}

/// `builds` operations of `n` items on `shape`; times the build under `policy`, or the sizing
/// pass alone when `policy` is `None` (the build then runs untimed, to advance the shape).
fn round(
    shape: &mut dyn BatchBuilder,
    n: u64,
    builds: u64,
    policy: Option<PresizePolicy>,
) -> Round {
    let mut r = Round::default();
    for _ in 0..builds {
        shape.prepare(n);
        let region = Region::new(GLOBAL);
        let start = Instant::now();
        let batch = match policy {
            Some(policy) => shape.build(policy),
            None => {
                std::hint::black_box(shape.size_pass());
                r.time += start.elapsed();
                shape.build(PresizePolicy::Grow);
                continue;
            }
        };
        r.time += start.elapsed();
        r.add(&region.change(), &batch);
    }
    r
}

fn presize_and_series(c: &mut Criterion) {
    presize(c);
    break_even_series();
}

criterion_group!(benches, presize_and_series);
criterion_main!(benches);
