//! Criterion benchmarks of the storage engine, in the shapes of bbolt's seed benchmark table.
//!
//! Sizes: every key is 16 bytes (a `u128` counter, big-endian, so key order is counter order
//! and new keys append at the right edge of the tree); every value is 100 bytes. Each database
//! is a real file in its own `tempfile::tempdir()`, opened with the default options (4096-byte
//! pages, array freelist) except `no_sync`, and pre-filled with 10,000 keys in transactions of
//! 1,000 keys. Unless a shape says otherwise, a write transaction touches one key.
//!
//! | shape    | one iteration                                                  |
//! |----------|----------------------------------------------------------------|
//! | `get`    | one read transaction, one `get` (keys visited in a fixed order) |
//! | `get100` | one read transaction, 100 `get`s (throughput: 100 elements)    |
//! | `set`    | one write transaction putting one new key (`sync`, `no_sync`)  |
//! | `set100` | one write transaction putting 100 new keys (`sync`, `no_sync`) |
//! | `delete` | one write transaction deleting one existing key (`no_sync`)    |
//!
//! Wall time only confirms the deterministic counters, which are the primary evidence: after
//! each shape's criterion measurements, a fixed run of 1,000 operations on a fresh database
//! (same pre-fill, counters taken after the pre-fill) prints the counters per operation to
//! stderr, and a counting global allocator the heap bytes and allocations per operation (the
//! B/op and allocs/op of Go benchmarks).

use crashlab_engine::{Counters, Db, Options, Result};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::hint::black_box;
use std::ops::Range;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BUCKET: &[u8] = b"bench";
const KEY_SIZE: usize = 16;
const VALUE_SIZE: usize = 100;
const VALUE: [u8; VALUE_SIZE] = [0x5a; VALUE_SIZE];
/// Keys in every database before a shape starts.
const PREFILL: u64 = 10_000;
/// Keys per transaction while pre-filling (and refilling, for `delete`).
const FILL_BATCH: u64 = 1_000;
/// Keys per transaction in `get100` and `set100`.
const BATCH: u64 = 100;
/// Operations in the fixed run whose counters are printed.
const COUNTER_OPS: u64 = 1_000;
/// A prime coprime with `PREFILL`: read `i` visits key `i * STRIDE % PREFILL`, so every
/// 10,000 reads touch each key once, in an order that jumps around the tree.
const STRIDE: u64 = 7_919;
/// The durability variants of the write shapes: (benchmark id, `no_sync`).
const MODES: [(&str, bool); 2] = [("sync", false), ("no_sync", true)];

/// Counts heap bytes and allocations per operation (its `unsafe` stays in `stats_alloc`).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One benchmark operation: operation number `i` on the database.
type Op = fn(&Db, u64) -> Result<()>;

fn key(n: u64) -> [u8; KEY_SIZE] {
    u128::from(n).to_be_bytes()
}

/// The pre-filled key read by read number `i`.
fn scattered(i: u64) -> u64 {
    (i % PREFILL) * STRIDE % PREFILL
}

/// A database file and the temporary directory holding it (removed on drop).
struct BenchDb {
    db: Db,
    _dir: TempDir,
}

/// A fresh database holding keys `0..keys`.
fn open_filled(no_sync: bool, keys: u64) -> BenchDb {
    let dir = tempfile::tempdir().expect("create temp dir");
    let options = Options {
        no_sync,
        ..Options::default()
    };
    let db = Db::open_path(dir.path().join("bench.db"), options).expect("open database");
    db.update(|tx| tx.create_bucket_if_missing(BUCKET).map(drop))
        .expect("create bucket");
    fill(&db, 0..keys);
    BenchDb { db, _dir: dir }
}

/// Put keys `range`, `FILL_BATCH` keys per transaction.
fn fill(db: &Db, range: Range<u64>) {
    for start in range.clone().step_by(FILL_BATCH as usize) {
        let end = (start + FILL_BATCH).min(range.end);
        put_range(db, start..end).unwrap_or_else(|e| panic!("fill {start}..{end}: {e}"));
    }
}

/// Put keys `range` in one write transaction.
fn put_range(db: &Db, range: Range<u64>) -> Result<()> {
    db.update(|tx| {
        let mut b = tx.bucket_mut(BUCKET)?.expect("bench bucket exists");
        for n in range {
            b.put(&key(n), &VALUE)?;
        }
        Ok(())
    })
}

/// Get the pre-filled keys `reads` (read numbers, mapped by `scattered`) in one read
/// transaction.
fn get_range(db: &Db, reads: Range<u64>) -> Result<()> {
    db.view(|tx| {
        let b = tx.bucket(BUCKET)?.expect("bench bucket exists");
        for i in reads {
            let n = scattered(i);
            let v = b.get(&key(n))?;
            assert!(v.is_some(), "get: pre-filled key {n} is missing");
            black_box(v);
        }
        Ok(())
    })
}

fn get_one(db: &Db, i: u64) -> Result<()> {
    get_range(db, i..i + 1)
}

fn get_hundred(db: &Db, i: u64) -> Result<()> {
    get_range(db, i * BATCH..(i + 1) * BATCH)
}

/// Put the fresh key `PREFILL + i`.
fn set_one(db: &Db, i: u64) -> Result<()> {
    put_range(db, PREFILL + i..PREFILL + i + 1)
}

/// Put 100 fresh keys starting at `PREFILL + 100 i`.
fn set_hundred(db: &Db, i: u64) -> Result<()> {
    let start = PREFILL + i * BATCH;
    put_range(db, start..start + BATCH)
}

/// Delete key `i`, which must exist.
fn delete_one(db: &Db, i: u64) -> Result<()> {
    db.update(|tx| {
        let mut b = tx.bucket_mut(BUCKET)?.expect("bench bucket exists");
        let existed = b.delete(&key(i))?;
        assert!(existed, "delete: key {i} is missing");
        Ok(())
    })
}

/// Run operation `i`, panicking with the engine's error if it fails.
fn run(db: &Db, name: &str, op: Op, i: u64) {
    op(db, i).unwrap_or_else(|e| panic!("{name}: operation {i} failed: {e}"));
}

/// Measure `op` under criterion; a running count gives every iteration a fresh `i`.
fn measure(group: &mut BenchmarkGroup<'_, WallTime>, id: &str, db: &Db, op: Op) {
    let mut i = 0;
    group.bench_function(id, |b| {
        b.iter(|| {
            run(db, id, op, i);
            i += 1;
        })
    });
}

/// Measure `delete_one` under criterion. Keys are deleted in order from the left edge of the
/// tree. Before each timed batch of `iters` deletes, an untimed refill appends keys at the
/// right edge so that the batch only deletes keys that exist and `PREFILL` keys remain after
/// it: the tree holds between 10,000 and 10,000 + `iters` keys while it is timed.
fn measure_delete(group: &mut BenchmarkGroup<'_, WallTime>, id: &str, db: &Db) {
    // Keys `next..filled` are present.
    let (mut next, mut filled) = (0, PREFILL);
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let want = next + iters + PREFILL;
            fill(db, filled..want);
            filled = want;
            let start = Instant::now();
            for i in next..next + iters {
                run(db, id, delete_one, i);
            }
            next += iters;
            start.elapsed()
        })
    });
}

/// Print the counters per operation of `COUNTER_OPS` operations on a fresh database holding
/// `keys` keys.
fn report_counters(label: &str, no_sync: bool, keys: u64, op: Op) {
    let bench = open_filled(no_sync, keys);
    let before = bench.db.counters();
    let region = Region::new(GLOBAL);
    for i in 0..COUNTER_OPS {
        run(&bench.db, label, op, i);
    }
    let heap = region.change();
    let after = bench.db.counters();
    eprintln!("counters/op {label:<15} {}", per_op(&before, &after));
    // Go's B/op and allocs/op: a growth (realloc) counts as an allocation.
    let per = |v: usize| v as f64 / COUNTER_OPS as f64;
    eprintln!(
        "heap/op     {label:<15} {:.0} B  {:.1} allocs",
        per(heap.bytes_allocated),
        per(heap.allocations + heap.reallocations),
    );
}

/// The counter increase from `before` to `after`, per operation.
fn per_op(before: &Counters, after: &Counters) -> String {
    let d = |f: fn(&Counters) -> u64| (f(after) - f(before)) as f64 / COUNTER_OPS as f64;
    format!(
        "commits {:.2}  syncs {:.2}  write_calls {:.2}  pages_written {:.2}  \
         bytes_written {:.1}  pages_read {:.2}  cache_hits {:.2}",
        d(|c| c.commits),
        d(|c| c.syncs),
        d(|c| c.write_calls),
        d(|c| c.pages_written),
        d(|c| c.bytes_written),
        d(|c| c.pages_read),
        d(|c| c.page_cache_hits),
    )
}

fn bench_get(c: &mut Criterion) {
    let bench = open_filled(false, PREFILL);
    let mut group = c.benchmark_group("get");
    measure(&mut group, "read_tx", &bench.db, get_one);
    group.finish();
    report_counters("get", false, PREFILL, get_one);
}

fn bench_get100(c: &mut Criterion) {
    let bench = open_filled(false, PREFILL);
    let mut group = c.benchmark_group("get100");
    group.throughput(Throughput::Elements(BATCH));
    measure(&mut group, "read_tx", &bench.db, get_hundred);
    group.finish();
    report_counters("get100", false, PREFILL, get_hundred);
}

/// A write shape in both durability modes, side by side.
fn bench_writes(c: &mut Criterion, name: &str, op: Op) {
    let mut group = c.benchmark_group(name);
    for (id, no_sync) in MODES {
        let bench = open_filled(no_sync, PREFILL);
        measure(&mut group, id, &bench.db, op);
    }
    group.finish();
    for (id, no_sync) in MODES {
        report_counters(&format!("{name}/{id}"), no_sync, PREFILL, op);
    }
}

fn bench_set(c: &mut Criterion) {
    bench_writes(c, "set", set_one);
}

fn bench_set100(c: &mut Criterion) {
    bench_writes(c, "set100", set_hundred);
}

fn bench_delete(c: &mut Criterion) {
    let bench = open_filled(true, PREFILL);
    let mut group = c.benchmark_group("delete");
    measure_delete(&mut group, "no_sync", &bench.db);
    group.finish();
    // Same shape as the timed run: delete keys 0..1,000, leaving `PREFILL` keys.
    report_counters("delete/no_sync", true, PREFILL + COUNTER_OPS, delete_one);
}

/// Short settings: the whole run stays within a few minutes, sync benchmarks included.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_get, bench_get100, bench_set, bench_set100, bench_delete
}
criterion_main!(benches);
