//! Criterion benchmarks of the seed shapes for crashlab's engine (each freelist × freelist-sync
//! configuration) and for redb, LMDB and SQLite, side by side. bbolt runs the same shapes from
//! `tools/bbolt/bench`; `tools/bench/run-all.sh` runs both and joins the results.
//!
//! Every database is a real file in its own temporary directory under `/tmp` (or `TMPDIR`),
//! pre-filled with 10,000 keys in transactions of 1,000 (see `crashlab_bench::shape`).
//!
//! | group       | one iteration                                                            |
//! |-------------|--------------------------------------------------------------------------|
//! | `get`       | one read transaction, one get (keys visited in a scattered fixed order)  |
//! | `get100`    | one read transaction, 100 gets                                           |
//! | `get_value` | as `get`, and the value's last byte read (reported, no target)           |
//! | `set`       | one write transaction putting one new key                                |
//! | `set100`    | one write transaction putting 100 new keys                               |
//! | `delete`    | one write transaction deleting one existing key (refilled untimed)       |
//! | `large_set` | one write transaction putting one new key on the large DB (`large.rs`)   |
//! | `reopen`    | open the large DB and close it (mode `sync`: durable settings; `no_sync`), before the `large_set` runs |
//! | `group_commit` | one durable put of a new key, by one of N concurrent writers (below)  |
//!
//! The `set` and `set100` groups first measure their first engine once more on a throwaway
//! database, under the id `group/settle/engine`, which the joined table leaves out (`settle`).
//!
//! Benchmark ids are `group/engine/mode`; reads use the durable settings and mode `read`;
//! `group_commit` ids are `group_commit/engine/wN` for N writers (always durable).
//! Set `CRASHLAB_BENCH_ENGINES` and/or `CRASHLAB_BENCH_GROUPS` to comma-separated names to run
//! a subset (their setup is skipped too, unlike criterion's own filter), and
//! `CRASHLAB_BENCH_MODES` (`sync`, `no_sync`) to keep only those modes of the `set`, `set100`
//! and `delete` groups. The Set, Set100 and Delete of crashlab beside LMDB (no_sync) and bbolt
//! (durable), and the large-DB durable Set beside bbolt's, are measured again by
//! `interleaved.rs`, every engine taking turns in short blocks.

use crashlab_bench::engines::{Engine, Which, ENGINES};
use crashlab_bench::prefill::{fill, open_filled, refill_for_deletes};
use crashlab_bench::select::selected;
use crashlab_bench::shape::{BATCH, PREFILL, VALUE};
use crashlab_bench::{large, Concurrent, Kv, Mode, Read};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Short settings, so that the whole run (every engine, sync included) takes minutes.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

fn engines() -> impl Iterator<Item = &'static Engine> {
    ENGINES
        .iter()
        .filter(|e| selected("CRASHLAB_BENCH_ENGINES", e.name))
}

fn tempdir() -> TempDir {
    tempfile::tempdir().expect("create temp dir")
}

/// One iteration of a shape: operation number `i` on the database.
type Op = fn(&mut dyn Kv, u64);

fn get_one(kv: &mut dyn Kv, i: u64) {
    kv.get(i..i + 1, Read::Held);
}

fn get_hundred(kv: &mut dyn Kv, i: u64) {
    kv.get(i * BATCH..(i + 1) * BATCH, Read::Held);
}

fn get_value(kv: &mut dyn Kv, i: u64) {
    kv.get(i..i + 1, Read::LastByte);
}

fn set_one(kv: &mut dyn Kv, i: u64) {
    kv.put(PREFILL + i..PREFILL + i + 1, &VALUE);
}

fn set_hundred(kv: &mut dyn Kv, i: u64) {
    let start = PREFILL + i * BATCH;
    kv.put(start..start + BATCH, &VALUE);
}

/// Measure `op` under criterion; a running count gives every iteration a fresh `i`.
fn measure(g: &mut BenchmarkGroup<'_, WallTime>, id: BenchmarkId, kv: &mut dyn Kv, op: Op) {
    let mut i = 0;
    g.bench_function(id, |b| {
        b.iter(|| {
            op(kv, i);
            i += 1;
        })
    });
}

/// The modes of `e` that `CRASHLAB_BENCH_MODES` keeps (all when it is unset).
fn modes(e: &Engine) -> impl Iterator<Item = &'static Mode> {
    e.modes
        .iter()
        .filter(|m| selected("CRASHLAB_BENCH_MODES", m.name()))
}

/// A read shape: one database per engine, durable settings.
fn bench_reads(c: &mut Criterion, name: &str, op: Op) {
    if !selected("CRASHLAB_BENCH_GROUPS", name) {
        return;
    }
    let mut g = c.benchmark_group(name);
    for e in engines().filter(|e| e.measures_reads()) {
        let dir = tempdir();
        let mut kv = open_filled(e, Mode::Sync, dir.path(), PREFILL);
        measure(&mut g, BenchmarkId::new(e.name, "read"), &mut *kv, op);
    }
    g.finish();
}

/// A write shape in every mode of every engine.
fn bench_writes(c: &mut Criterion, name: &str, op: Op) {
    if !selected("CRASHLAB_BENCH_GROUPS", name) {
        return;
    }
    let mut g = c.benchmark_group(name);
    if let Some(first) = engines().next() {
        settle(&mut g, first, op);
    }
    for e in engines() {
        for &mode in modes(e) {
            let dir = tempdir();
            let mut kv = open_filled(e, mode, dir.path(), PREFILL);
            measure(&mut g, BenchmarkId::new(e.name, mode.name()), &mut *kv, op);
        }
    }
    g.finish();
}

/// Measure `op` once on a throwaway database of `engine` (no_sync, its fastest writer, when it
/// has that mode) under the id `settle/…`, which the joined table leaves out, before a write
/// group's first benchmark. On this machine the first heavy writer after a quiet spell runs a
/// quarter slower for the whole of its measurement, whatever it is (BENCHMARKS.md): memory left
/// free a while has gone back to the VM's host, and each page's first touch costs a host fault
/// (`tools/bench/touch_probe.py`). A group always starts with the same engine: without this,
/// that cost would always be the first one's. It does not settle the machine for the rest of
/// the group; the no_sync write targets are judged on the interleaved blocks instead
/// (`interleaved.rs`).
fn settle(g: &mut BenchmarkGroup<'_, WallTime>, engine: &Engine, op: Op) {
    let mode = if engine.modes.contains(&Mode::NoSync) {
        Mode::NoSync
    } else {
        engine.modes[0]
    };
    let dir = tempdir();
    let mut kv = open_filled(engine, mode, dir.path(), PREFILL);
    measure(g, BenchmarkId::new("settle", engine.name), &mut *kv, op);
}

/// Deletes run from the left edge of the tree in key order. Before each timed batch of `iters`
/// deletes, an untimed refill appends keys at the right edge so that the batch only deletes
/// keys that exist and 10,000 keys remain after it.
fn bench_delete(c: &mut Criterion) {
    if !selected("CRASHLAB_BENCH_GROUPS", "delete") {
        return;
    }
    let mut g = c.benchmark_group("delete");
    for e in engines() {
        for &mode in modes(e) {
            let dir = tempdir();
            let mut kv = open_filled(e, mode, dir.path(), PREFILL);
            // Keys `next..filled` are present.
            let (mut next, mut filled) = (0, PREFILL);
            g.bench_function(BenchmarkId::new(e.name, mode.name()), |b| {
                b.iter_custom(|iters| {
                    refill_for_deletes(&mut *kv, next, iters, &mut filled);
                    let start = Instant::now();
                    for n in next..next + iters {
                        kv.delete(n..n + 1);
                    }
                    next += iters;
                    start.elapsed()
                })
            });
        }
    }
    g.finish();
}

/// The engine family that can share one large template (crashlab's four configurations open
/// the same file; each first commit puts it in that configuration's steady state).
fn family(e: &Engine) -> &'static str {
    match e.which {
        Which::Crashlab(_, _) => "crashlab",
        _ => e.name,
    }
}

/// Groups `large_set` and `reopen`, one template per engine family.
fn bench_large(c: &mut Criterion) {
    let want_set = selected("CRASHLAB_BENCH_GROUPS", "large_set");
    let want_reopen = selected("CRASHLAB_BENCH_GROUPS", "reopen");
    if !want_set && !want_reopen {
        return;
    }
    let mut families: Vec<&str> = engines().map(family).collect();
    families.dedup();
    for fam in families {
        let members: Vec<&Engine> = engines().filter(|e| family(e) == fam).collect();
        let dir = tempdir();
        let start = Instant::now();
        large::build_template(&mut *members[0].open(dir.path(), Mode::NoSync));
        large::flush_os_cache();
        large::evict_from_os_cache(dir.path());
        eprintln!("large template for {fam}: built in {:.1?}", start.elapsed());
        // Reopens first, while the tree is the template's (a few pages): a freelist that is not
        // synced is rebuilt by walking the tree, so the thousands of keys the Sets add would
        // make it a measure of their number. Runs are numbered across both loops.
        let mut run = 0;
        if want_reopen {
            for e in &members {
                bench_reopen(c, e, dir.path(), run);
                run += 1;
            }
        }
        if want_set {
            for e in &members {
                // Each configuration starts from a cold file, as the first did: the runs before
                // it wrote pages (a synced freelist writes megabytes per Set) that it must not
                // inherit in the page cache.
                large::flush_os_cache();
                large::evict_from_os_cache(dir.path());
                let mut g = c.benchmark_group("large_set");
                g.sample_size(10);
                for &mode in e.modes {
                    let mut kv = e.open(dir.path(), mode);
                    let mut i = 0;
                    g.bench_function(BenchmarkId::new(e.name, mode.name()), |b| {
                        b.iter(|| {
                            let k = large::set_key(run, i);
                            kv.put(k..k + 1, &VALUE);
                            i += 1;
                        })
                    });
                    run += 1;
                }
                g.finish();
            }
        }
    }
}

/// Group `reopen` for `e` on the template in `dir`: one Set in `e`'s configuration first, so
/// that the file's last commit is this configuration's (its freelist written, or not and then
/// rebuilt on open), then open and close it, in mode `sync` (durable settings: crashlab's open
/// syncs the file first) and `no_sync`.
fn bench_reopen(c: &mut Criterion, e: &Engine, dir: &std::path::Path, run: u64) {
    let k = large::set_key(run, 0);
    e.open(dir, Mode::NoSync).put(k..k + 1, &VALUE);
    let mut g = c.benchmark_group("reopen");
    g.sample_size(10);
    for mode in [Mode::Sync, Mode::NoSync] {
        g.bench_function(BenchmarkId::new(e.name, mode.name()), |b| {
            b.iter(|| drop(black_box(e.open(dir, mode))))
        });
    }
    g.finish();
}

/// Writer counts of the `group_commit` group.
const WRITERS: [u64; 3] = [4, 16, 64];

/// Group `group_commit`: N writer threads share one pre-filled database (durable settings) and
/// each commits one-key puts of new keys, its own contiguous range above the pre-fill, each put
/// its own call (see `crashlab_bench::Concurrent` for how each engine takes concurrent writers:
/// crashlab's group commit, redb's and LMDB's writer lock, SQLite behind a mutex). The figure is
/// **µs per committed put**: the wall time from the moment every writer is ready until the last
/// put has committed, divided by the puts; its inverse is the group's durable throughput.
/// The writer counts run in turn on the same database, which keeps growing.
fn bench_group_commit(c: &mut Criterion) {
    if !selected("CRASHLAB_BENCH_GROUPS", "group_commit") {
        return;
    }
    let mut g = c.benchmark_group("group_commit");
    // Durable commits cost 0.1–4 ms each here: few short samples keep the group near 2 minutes.
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for e in engines() {
        let dir = tempdir();
        fill(&mut *e.open(dir.path(), Mode::Sync), 0..PREFILL);
        let mut next = PREFILL;
        let db = e
            .open_concurrent(dir.path(), false)
            .expect("every engine opens");
        group_commit_rows(&mut g, e.name, &*db, &mut next);
        drop(db);
        // The two default configurations again with no batch delay: the engine's best here,
        // where the writers keep a queue full without waiting (bbolt's side does the same).
        if matches!(e.name, "crashlab-array-synced" | "crashlab-hashmap-nosync") {
            if let Some(db) = e.open_concurrent(dir.path(), true) {
                group_commit_rows(&mut g, &format!("{}-nodelay", e.name), &*db, &mut next);
            }
        }
    }
    g.finish();
}

/// One `group_commit/NAME/wN` benchmark per writer count, on `db`, with keys from `next` on.
fn group_commit_rows(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    db: &dyn Concurrent,
    next: &mut u64,
) {
    for writers in WRITERS {
        g.bench_function(BenchmarkId::new(name, format!("w{writers}")), |b| {
            b.iter_custom(|puts| {
                let elapsed = concurrent_puts(db, *next, puts, writers);
                *next += puts;
                elapsed
            })
        });
    }
}

/// Put keys `first..first + puts` from `writers` threads, each a contiguous share (the first
/// `puts % writers` get one more), and return the time from the moment all threads are spawned
/// and ready until the last put is committed.
fn concurrent_puts(db: &dyn Concurrent, first: u64, puts: u64, writers: u64) -> Duration {
    let ready = Barrier::new(writers as usize + 1);
    let start = std::thread::scope(|s| {
        for t in 0..writers {
            let (lo, hi) = (first + puts * t / writers, first + puts * (t + 1) / writers);
            let ready = &ready;
            s.spawn(move || {
                ready.wait();
                for n in lo..hi {
                    db.put_one(n, &VALUE);
                }
            });
        }
        ready.wait();
        Instant::now()
    });
    start.elapsed()
}

fn main() {
    let mut c = config();
    bench_reads(&mut c, "get", get_one);
    bench_reads(&mut c, "get100", get_hundred);
    bench_reads(&mut c, "get_value", get_value);
    bench_writes(&mut c, "set", set_one);
    bench_writes(&mut c, "set100", set_hundred);
    bench_delete(&mut c);
    bench_large(&mut c);
    bench_group_commit(&mut c);
    c.final_summary();
}
