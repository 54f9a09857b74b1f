//! Batched commits (docs/DESIGN.md, "The three findings", item 2: BlueStore over RocksDB), on
//! crashlab's engine. BlueStore found that merging many small transactions into one batch and
//! one sync raised 4K append throughput by ≈14 %, that merging by appending the encoded batches
//! (a memcpy) won, and that decoding and rebuilding one batch was slower than not merging at all
//! on overwrites.
//!
//! Workload: `writers` threads (1, 4, 16, 64), released together by a `Barrier`, each commit
//! `txns_per_writer` transactions of one put (16-byte key, 100-byte value). Each database is a
//! real file in its own `tempfile::tempdir()`, opened with sync on (every commit is durable),
//! default options except `max_batch_delay` = 1 ms: a batch's leader waits out the delay, so
//! bbolt's 10 ms default would dominate a single writer's latency (one extra run shows it).
//!
//! | variant         | one transaction                                        |
//! |-----------------|--------------------------------------------------------|
//! | `unbatched`     | `Db::update`                                           |
//! | `batch`         | `Db::batch(closure)`                                   |
//! | `write-append`  | `Db::write(WriteBatch)`, `MergeStrategy::Append`       |
//! | `write-rebuild` | `Db::write(WriteBatch)`, `MergeStrategy::Rebuild`      |
//!
//! | workload    | every put                                                           |
//! |-------------|---------------------------------------------------------------------|
//! | `insert`    | a fresh key in the writer's own key range (bucket created up front) |
//! | `overwrite` | one of `HOT_KEYS` keys shared by all writers, put up front          |
//!
//! One criterion iteration is one round: every writer finishing its transactions. Throughput
//! counts transactions. After the groups, one counted round per configuration on a fresh
//! database gives the counters per transaction and a modelled time with the sim crate's default
//! `CostModel`: syncs × 100 µs + write calls × 10 µs + bytes written / 1 GB/s (device time
//! only, the batch delay not included). Batch composition depends on thread scheduling, so the
//! batched variants' counters may differ a little between runs; the unbatched ones do not.

use crashlab_engine::batch::{MergeStrategy, WriteBatch};
use crashlab_engine::{Counters, Db, Options, Result, WriteTx};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use std::collections::BTreeMap;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BUCKET: &[u8] = b"bench";
const VALUE: [u8; 100] = [0x5a; 100];
const INSERT_WRITERS: [usize; 4] = [1, 4, 16, 64];
const OVERWRITE_WRITERS: [usize; 3] = [4, 16, 64];
/// Keys every overwrite transaction picks from: few, so batches overwrite the same keys.
const HOT_KEYS: u64 = 8;
/// The batch delay of every measured configuration (bbolt's default is 10 ms).
const BATCH_DELAY: Duration = Duration::from_millis(1);
/// Transactions in a round, spread over the writers (4 to 32 per writer), so that the
/// unbatched 64-writer round stays around 50 ms with synced commits.
const ROUND_TXNS: usize = 256;
/// The sim crate's default `CostModel`: sync and write latency, and bandwidth.
const SYNC_US: f64 = 100.0;
const WRITE_US: f64 = 10.0;
const BYTES_PER_US: f64 = 1_000.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Variant {
    Unbatched,
    Batch,
    WriteAppend,
    WriteRebuild,
}

const VARIANTS: [Variant; 4] = [
    Variant::Unbatched,
    Variant::Batch,
    Variant::WriteAppend,
    Variant::WriteRebuild,
];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Unbatched => "unbatched",
            Variant::Batch => "batch",
            Variant::WriteAppend => "write-append",
            Variant::WriteRebuild => "write-rebuild",
        }
    }

    fn options(self, delay: Duration) -> Options {
        let merge_strategy = match self {
            Variant::WriteRebuild => MergeStrategy::Rebuild,
            _ => MergeStrategy::Append,
        };
        Options {
            max_batch_delay: delay,
            merge_strategy,
            ..Options::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Workload {
    Insert,
    Overwrite,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Overwrite => "overwrite",
        }
    }
}

/// One measured configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config {
    workload: Workload,
    writers: usize,
    variant: Variant,
}

impl Config {
    fn txns_per_writer(self) -> u64 {
        (ROUND_TXNS / self.writers).clamp(4, 32) as u64
    }

    /// Transactions in one round.
    fn txns(self) -> u64 {
        self.writers as u64 * self.txns_per_writer()
    }

    fn label(self) -> String {
        let (w, v) = (self.workload.name(), self.variant.name());
        format!("{w}/{}w/{v}", self.writers)
    }

    /// The key put by transaction `i` of writer `w` in round `round`. Insert keys carry the
    /// writer in the high 64 bits, so each writer appends at the end of its own range.
    fn key(self, round: u64, w: usize, i: u64) -> [u8; 16] {
        let n = match self.workload {
            Workload::Insert => (w as u128) << 64 | u128::from(round * self.txns_per_writer() + i),
            Workload::Overwrite => u128::from((w as u64 + i) % HOT_KEYS),
        };
        n.to_be_bytes()
    }
}

/// A database file, its temporary directory (removed on drop) and the rounds run on it.
struct BenchDb {
    db: Db,
    rounds: u64,
    _dir: TempDir,
}

/// A fresh database for `cfg`: the bucket exists and, for overwrites, so do the hot keys.
fn open(cfg: Config, delay: Duration) -> BenchDb {
    let dir = tempfile::tempdir().expect("create temp dir");
    let options = cfg.variant.options(delay);
    let db = Db::open_path(dir.path().join("bench.db"), options).expect("open database");
    db.update(|tx| {
        let mut b = tx.create_bucket_if_missing(BUCKET)?;
        match cfg.workload {
            Workload::Insert => Ok(()),
            Workload::Overwrite => (0..HOT_KEYS).try_for_each(|n| b.put(&cfg.key(0, 0, n), &VALUE)),
        }
    })
    .expect("set up bucket");
    BenchDb {
        db,
        rounds: 0,
        _dir: dir,
    }
}

fn put(tx: &mut WriteTx<'_>, key: &[u8]) -> Result<()> {
    let mut b = tx.bucket_mut(BUCKET)?.expect("bench bucket exists");
    b.put(key, &VALUE)
}

/// Commit one transaction putting `key`, the variant's way.
fn commit_one(db: &Db, variant: Variant, key: [u8; 16]) -> Result<()> {
    match variant {
        Variant::Unbatched => db.update(|tx| put(tx, &key)),
        Variant::Batch => db.batch(move |tx| put(tx, &key)),
        Variant::WriteAppend | Variant::WriteRebuild => {
            let mut batch = WriteBatch::new();
            batch.put(&[BUCKET], &key, &VALUE);
            db.write(batch)
        }
    }
}

/// Writer `w`'s transactions of round `round`, one after the other.
fn write_txns(db: &Db, cfg: Config, round: u64, w: usize) {
    for i in 0..cfg.txns_per_writer() {
        commit_one(db, cfg.variant, cfg.key(round, w, i))
            .unwrap_or_else(|e| panic!("{}: writer {w}, transaction {i}: {e}", cfg.label()));
    }
}

/// Run one round; the time from releasing the writers to the last one finishing. Threads are
/// spawned before the clock starts, so spawning is not measured.
fn run_round(bench: &mut BenchDb, cfg: Config) -> Duration {
    let (db, round) = (&bench.db, bench.rounds);
    bench.rounds += 1;
    let barrier = Barrier::new(cfg.writers + 1);
    thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.writers)
            .map(|w| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    write_txns(db, cfg, round, w);
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in handles {
            h.join().expect("writer thread panicked");
        }
        start.elapsed()
    })
}

/// Wall time and transactions over every criterion iteration of a configuration (warm-up
/// included): criterion does not hand its estimates back, and the summary needs them.
#[derive(Clone, Copy, Default)]
struct Timing {
    elapsed: Duration,
    txns: u64,
}

impl Timing {
    fn txns_per_s(self) -> f64 {
        self.txns as f64 / self.elapsed.as_secs_f64()
    }
}

type Timings = BTreeMap<Config, Timing>;

/// Measure `cfg` under criterion on one database; each iteration is a fresh round.
fn measure(group: &mut BenchmarkGroup<'_, WallTime>, cfg: Config, timings: &mut Timings) {
    let mut bench = open(cfg, BATCH_DELAY);
    let timing = timings.entry(cfg).or_default();
    group.bench_function(cfg.variant.name(), |b| {
        b.iter_custom(|iters| {
            let total: Duration = (0..iters).map(|_| run_round(&mut bench, cfg)).sum();
            timing.elapsed += total;
            timing.txns += iters * cfg.txns();
            total
        })
    });
}

/// One group per writer count, the four variants side by side.
fn bench_workload(c: &mut Criterion, workload: Workload, writers: &[usize], t: &mut Timings) {
    for &writers in writers {
        let base = Config {
            workload,
            writers,
            variant: Variant::Unbatched,
        };
        let mut group = c.benchmark_group(format!("{}_w{writers}", workload.name()));
        // Rounds take milliseconds: flat sampling keeps the iteration count small.
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(base.txns()));
        for variant in VARIANTS {
            measure(&mut group, Config { variant, ..base }, t);
        }
        group.finish();
    }
}

/// Counters per transaction of one round.
#[derive(Clone, Copy, Default)]
struct PerTxn {
    commits: f64,
    syncs: f64,
    write_calls: f64,
    bytes_written: f64,
    batches: f64,
    solo_retries: f64,
    bytes_copied: f64,
    decoded: f64,
    encoded: f64,
}

impl PerTxn {
    fn between(before: &Counters, after: &Counters, txns: u64) -> PerTxn {
        let d = |f: fn(&Counters) -> u64| (f(after) - f(before)) as f64 / txns as f64;
        PerTxn {
            commits: d(|c| c.commits),
            syncs: d(|c| c.syncs),
            write_calls: d(|c| c.write_calls),
            bytes_written: d(|c| c.bytes_written),
            batches: d(|c| c.batches),
            solo_retries: d(|c| c.batch_solo_retries),
            bytes_copied: d(|c| c.merge_bytes_copied),
            decoded: d(|c| c.merge_records_decoded),
            encoded: d(|c| c.merge_records_encoded),
        }
    }

    /// Mean transactions per batch, or "-" when nothing went through the batch front end.
    fn txns_per_batch(&self) -> String {
        match self.batches {
            0.0 => "-".into(),
            b => format!("{:.1}", b.recip()),
        }
    }

    /// Device time per transaction under the sim crate's default cost model.
    fn modelled_us(&self) -> f64 {
        self.syncs * SYNC_US + self.write_calls * WRITE_US + self.bytes_written / BYTES_PER_US
    }
}

/// Counters per transaction of one round of `cfg` on a fresh database, and its wall time.
fn count_round(cfg: Config, delay: Duration) -> (PerTxn, Duration) {
    let mut bench = open(cfg, delay);
    let before = bench.db.counters();
    let elapsed = run_round(&mut bench, cfg);
    let after = bench.db.counters();
    assert_eq!(
        bench.db.latched(),
        None,
        "{}: database latched",
        cfg.label()
    );
    (PerTxn::between(&before, &after, cfg.txns()), elapsed)
}

/// A summary row: criterion-run throughput and one counted round.
struct Row {
    cfg: Config,
    txns_per_s: f64,
    cost: PerTxn,
}

fn rows(timings: &Timings) -> Vec<Row> {
    let measured = timings.iter().filter(|(_, t)| t.txns > 0);
    measured
        .map(|(&cfg, &t)| Row {
            cfg,
            txns_per_s: t.txns_per_s(),
            cost: count_round(cfg, BATCH_DELAY).0,
        })
        .collect()
}

/// `a / b`, or NaN when there is no `b`.
fn ratio(a: f64, b: Option<f64>) -> f64 {
    b.map_or(f64::NAN, |b| a / b)
}

fn find(rows: &[Row], cfg: Config) -> Option<&Row> {
    rows.iter().find(|r| r.cfg == cfg)
}

fn print_header(workload: Workload) {
    eprintln!(
        "\n=== {} (sync on, max_batch_delay {BATCH_DELAY:?}); counters per transaction, \
         one counted round; model = syncs x {SYNC_US} us + writes x {WRITE_US} us + bytes / 1 GB/s ===",
        workload.name()
    );
    eprintln!(
        "{:>3} {:<13} {:>9} {:>6} {:>7} {:>6} {:>6} {:>6} {:>9} {:>6} {:>7} {:>6} {:>6} {:>8} {:>6}",
        "w", "variant", "txn/s", "x_unb", "commits", "syncs", "writes", "batch", "bytes_wr",
        "solo", "copied", "dec", "enc", "model_us", "m_x"
    );
}

fn print_row(r: &Row, unbatched: Option<&Row>) {
    let c = &r.cost;
    let speedup = ratio(r.txns_per_s, unbatched.map(|u| u.txns_per_s));
    // Modelled speed-up: unbatched device time over this variant's.
    let modelled = unbatched.map_or(f64::NAN, |u| u.cost.modelled_us() / c.modelled_us());
    eprintln!(
        "{:>3} {:<13} {:>9.0} {:>6.2} {:>7.3} {:>6.3} {:>6.2} {:>6} {:>9.0} {:>6.3} {:>7.1} \
         {:>6.2} {:>6.2} {:>8.1} {:>6.2}",
        r.cfg.writers,
        r.cfg.variant.name(),
        r.txns_per_s,
        speedup,
        c.commits,
        c.syncs,
        c.write_calls,
        c.txns_per_batch(),
        c.bytes_written,
        c.solo_retries,
        c.bytes_copied,
        c.decoded,
        c.encoded,
        c.modelled_us(),
        modelled,
    );
}

/// The Append/Rebuild ratios of one writer count: measured throughput and modelled time.
fn print_append_vs_rebuild(rows: &[Row], base: Config) {
    let get = |variant| find(rows, Config { variant, ..base });
    if let (Some(a), Some(r)) = (get(Variant::WriteAppend), get(Variant::WriteRebuild)) {
        eprintln!(
            "    append/rebuild: throughput {:.3}, modelled speed {:.3}",
            a.txns_per_s / r.txns_per_s,
            r.cost.modelled_us() / a.cost.modelled_us()
        );
    }
}

/// The summary table of one workload.
fn print_table(rows: &[Row], workload: Workload, writers: &[usize]) {
    print_header(workload);
    for &writers in writers {
        let base = Config {
            workload,
            writers,
            variant: Variant::Unbatched,
        };
        let unbatched = find(rows, base);
        for variant in VARIANTS {
            if let Some(r) = find(rows, Config { variant, ..base }) {
                print_row(r, unbatched);
            }
        }
        print_append_vs_rebuild(rows, base);
    }
}

/// The single writer with bbolt's default 10 ms delay: every batch waits it out alone.
fn print_default_delay_note() {
    let delay = Options::default().max_batch_delay;
    eprintln!("\n=== 1 writer, insert, default max_batch_delay {delay:?}: one timed round ===");
    for variant in VARIANTS {
        let cfg = Config {
            workload: Workload::Insert,
            writers: 1,
            variant,
        };
        let (cost, elapsed) = count_round(cfg, delay);
        let txns_per_s = cfg.txns() as f64 / elapsed.as_secs_f64();
        eprintln!(
            "{:<13} {txns_per_s:>9.0} txn/s  {} txns per batch",
            variant.name(),
            cost.txns_per_batch()
        );
    }
}

/// Short settings: a round takes milliseconds and a sync-bound one up to ~60 ms.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

fn main() {
    let mut c = config();
    let mut timings = Timings::new();
    bench_workload(&mut c, Workload::Insert, &INSERT_WRITERS, &mut timings);
    bench_workload(
        &mut c,
        Workload::Overwrite,
        &OVERWRITE_WRITERS,
        &mut timings,
    );
    c.final_summary();
    let rows = rows(&timings);
    print_table(&rows, Workload::Insert, &INSERT_WRITERS);
    print_table(&rows, Workload::Overwrite, &OVERWRITE_WRITERS);
    print_default_delay_note();
}
