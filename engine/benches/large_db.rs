//! bbolt's "large DB once" finding (docs/DESIGN.md, "The three findings", item 1), reproduced on
//! crashlab's engine.
//!
//! A database that once grew large keeps a huge free set even when empty. The template is
//! built once, untimed: 2,000 values of 1 MiB (20 per transaction, `no_sync`, synced array
//! freelist), then all deleted, leaving ~2,000 × 257 free pages. Every variant runs on its own
//! copy of the template (the file format is the same for all variants), first opened and
//! committed once with the variant's options so the file is in that variant's steady state
//! (a `no_freelist_sync` commit replaces the stored freelist with the sentinel).
//!
//! Variants: freelist `Array` / `Hashmap` × freelist synced / not synced (`no_freelist_sync`).
//!
//! | group       | one iteration                                                          |
//! |-------------|------------------------------------------------------------------------|
//! | `large_set` | one write tx putting a fresh 16-byte key, 100-byte value (`no_sync`), on the large DB and on a fresh DB |
//! | `reopen`    | `Db::open_path` of the large file with the variant's options, then drop |
//!
//! After the criterion groups, the deterministic counters per Set (over 200 Sets) and per
//! reopen are printed with ratios, then a scaling series over largest-ever sizes of 1k, 10k,
//! 100k and 500k pages (64 KiB values) shows each variant's growth law.
//! `CRASHLAB_LARGE_DB_PARTS=counters` (or `criterion`, `scaling`, comma separated) runs only
//! those parts, and `CRASHLAB_LARGE_DB_VARIANTS=array-synced,...` limits the criterion groups
//! and the counters part to those variants (for a profile of one row).

use crashlab_engine::{Counters, Db, FreelistKind, Options};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BUCKET: &[u8] = b"b";
const VALUE: [u8; 100] = [0x5a; 100];
/// The large template: this many values of `LARGE_VALUE_SIZE` bytes.
const LARGE_VALUES: u64 = 2_000;
const LARGE_VALUE_SIZE: usize = 1 << 20;
/// Values per transaction while filling a template.
const FILL_BATCH: u64 = 20;
/// Keys per transaction while emptying a template.
const DELETE_BATCH: u64 = 500;
/// Set keys start here, far above every template key.
const SET_BASE: u64 = 1 << 40;
/// Sets in each counted (and simply timed) run.
const COUNTED_SETS: u64 = 200;
/// Opens per simply timed reopen; the minimum is reported.
const REOPENS: u32 = 5;
/// Scaling series: largest-ever sizes in pages, built from values of `SCALE_VALUE_SIZE`.
const SCALE_PAGES: [u64; 4] = [1_000, 10_000, 100_000, 500_000];
const SCALE_VALUE_SIZE: usize = 64 << 10;
/// Pages one `SCALE_VALUE_SIZE` value occupies (16 data pages plus the leaf header).
const SCALE_VALUE_PAGES: u64 = 17;

/// One freelist configuration.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    freelist: FreelistKind,
    no_freelist_sync: bool,
}

const VARIANTS: [Variant; 4] = [
    variant("array-synced", FreelistKind::Array, false),
    variant("array-nosync", FreelistKind::Array, true),
    variant("hashmap-synced", FreelistKind::Hashmap, false),
    variant("hashmap-nosync", FreelistKind::Hashmap, true),
];

const fn variant(name: &'static str, freelist: FreelistKind, no_freelist_sync: bool) -> Variant {
    Variant {
        name,
        freelist,
        no_freelist_sync,
    }
}

impl Variant {
    /// The variant's options; `no_sync` always, so the comparison is CPU-bound.
    fn options(self) -> Options {
        Options {
            freelist: self.freelist,
            no_freelist_sync: self.no_freelist_sync,
            no_sync: true,
            ..Options::default()
        }
    }
}

fn key(n: u64) -> [u8; 16] {
    u128::from(n).to_be_bytes()
}

/// A database file in its own temporary directory (removed on drop).
struct DbFile {
    path: PathBuf,
    _dir: TempDir,
}

fn new_file() -> DbFile {
    let dir = tempfile::tempdir_in("/tmp").expect("create temp dir");
    DbFile {
        path: dir.path().join("bench.db"),
        _dir: dir,
    }
}

/// A template that once held `values` values of `size` bytes, all deleted again. Setup uses
/// the synced array freelist (bbolt's default) and `no_sync`.
fn build_template(values: u64, size: usize) -> DbFile {
    let file = new_file();
    let db = Db::open_path(&file.path, VARIANTS[0].options()).expect("open template");
    let value = vec![0xa5; size];
    for start in (0..values).step_by(FILL_BATCH as usize) {
        let end = (start + FILL_BATCH).min(values);
        db.update(|tx| {
            let mut b = tx.create_bucket_if_missing(BUCKET)?;
            (start..end).try_for_each(|n| b.put(&key(n), &value))
        })
        .unwrap_or_else(|e| panic!("template fill {start}..{end}: {e}"));
    }
    for start in (0..values).step_by(DELETE_BATCH as usize) {
        let end = (start + DELETE_BATCH).min(values);
        db.update(|tx| {
            let mut b = tx.bucket_mut(BUCKET)?.expect("template bucket");
            (start..end).try_for_each(|n| b.delete(&key(n)).map(drop))
        })
        .unwrap_or_else(|e| panic!("template delete {start}..{end}: {e}"));
    }
    // Two empty commits move the last deletes' pages from pending to free.
    for _ in 0..2 {
        db.update(|_| Ok(())).expect("template release");
    }
    let (free, pending) = db.freelist_counts();
    let high_water = db.meta().high_water.0;
    eprintln!(
        "template {values} x {size} B: high water {high_water} pages, free {free}, pending {pending}"
    );
    file
}

/// A copy of `template` (or an empty file), opened and committed once with `v`'s options.
fn prepare(template: Option<&Path>, v: Variant) -> DbFile {
    let file = new_file();
    if let Some(t) = template {
        std::fs::copy(t, &file.path).expect("copy template");
        // Write the 2 GB copy back now, untimed: otherwise the kernel flushes it while the
        // Sets run, and they measure the writeback.
        std::fs::File::open(&file.path)
            .and_then(|f| f.sync_all())
            .expect("sync template copy");
    }
    let db = open(&file.path, v);
    db.update(|tx| tx.create_bucket_if_missing(BUCKET).map(drop))
        .expect("steady-state commit");
    file
}

fn open(path: &Path, v: Variant) -> Db {
    Db::open_path(path, v.options()).unwrap_or_else(|e| panic!("open {}: {e}", v.name))
}

/// Put the fresh key `SET_BASE + i` in one write transaction.
fn set_one(db: &Db, i: u64) {
    db.update(|tx| {
        let mut b = tx.bucket_mut(BUCKET)?.expect("bucket exists");
        b.put(&key(SET_BASE + i), &VALUE)
    })
    .unwrap_or_else(|e| panic!("set {i}: {e}"));
}

/// Criterion config: short settings, so the whole binary runs in a few minutes.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

/// Measure Sets on `file` under criterion; a running count gives every Set a fresh key.
fn measure_set(group: &mut BenchmarkGroup<'_, WallTime>, id: &str, file: &DbFile, v: Variant) {
    let db = open(&file.path, v);
    let mut i = 0;
    group.bench_function(id, |b| {
        b.iter(|| {
            set_one(&db, i);
            i += 1;
        })
    });
}

/// Group `large_set`: every variant on the large DB and on a fresh DB, side by side.
fn bench_large_set(c: &mut Criterion, template: &Path) {
    let mut group = c.benchmark_group("large_set");
    for v in VARIANTS.into_iter().filter(|&v| selected(v)) {
        for (size, t) in [("large", Some(template)), ("fresh", None)] {
            let file = prepare(t, v);
            measure_set(&mut group, &format!("{}/{size}", v.name), &file, v);
        }
    }
    group.finish();
}

/// Group `reopen`: open and drop the large file per variant, plus a fresh baseline.
fn bench_reopen(c: &mut Criterion, template: &Path) {
    let mut group = c.benchmark_group("reopen");
    let fresh = VARIANTS[3];
    let cases = VARIANTS
        .into_iter()
        .filter(|&v| selected(v))
        .map(|v| (v, "large", Some(template)));
    for (v, size, t) in cases.chain([(fresh, "fresh", None)]) {
        let file = prepare(t, v);
        group.bench_function(format!("{}/{size}", v.name), |b| {
            b.iter(|| drop(black_box(open(&file.path, v))))
        });
    }
    group.finish();
}

/// Per-Set cost over `COUNTED_SETS` Sets: simple wall time and counters.
#[derive(Clone, Copy, Default)]
struct SetCost {
    us: f64,
    /// On-CPU time of this thread per Set: what a loaded machine's wall time hides.
    cpu_us: f64,
    scan_steps: f64,
    ids_moved: f64,
    freelist_bytes: f64,
    pages_written: f64,
    write_calls: f64,
}

/// Time and count `COUNTED_SETS` Sets on `file`.
fn count_sets(file: &DbFile, v: Variant) -> SetCost {
    let db = open(&file.path, v);
    let before = db.counters();
    let cpu_before = thread_cpu_ns();
    let start = Instant::now();
    (0..COUNTED_SETS).for_each(|i| set_one(&db, i));
    let elapsed = start.elapsed();
    let cpu_ns = thread_cpu_ns() - cpu_before;
    let after = db.counters();
    let d = |f: fn(&Counters) -> u64| (f(&after) - f(&before)) as f64 / COUNTED_SETS as f64;
    SetCost {
        us: elapsed.as_secs_f64() * 1e6 / COUNTED_SETS as f64,
        cpu_us: cpu_ns as f64 / 1e3 / COUNTED_SETS as f64,
        scan_steps: d(|c| c.freelist_scan_steps),
        ids_moved: d(|c| c.freelist_ids_moved),
        freelist_bytes: d(|c| c.freelist_bytes_written),
        pages_written: d(|c| c.pages_written),
        write_calls: d(|c| c.write_calls),
    }
}

/// Cost of one open: the best of `REOPENS` wall times (`no_sync`, and with the durable
/// settings, whose open first syncs the file), and the open's counters.
#[derive(Default)]
struct ReopenCost {
    ms: f64,
    durable_ms: f64,
    rebuild_pages: u64,
    pages_read: u64,
}

fn count_reopen(file: &DbFile, v: Variant) -> ReopenCost {
    let mut counters = Counters::default();
    let mut best_of = |options: Options| {
        let mut best = Duration::MAX;
        for _ in 0..REOPENS {
            let start = Instant::now();
            let db = Db::open_path(&file.path, options.clone())
                .unwrap_or_else(|e| panic!("open {}: {e}", v.name));
            best = best.min(start.elapsed());
            counters = db.counters();
        }
        best.as_secs_f64() * 1e3
    };
    let durable_ms = best_of(Options {
        no_sync: false,
        ..v.options()
    });
    let ms = best_of(v.options());
    ReopenCost {
        ms,
        durable_ms,
        rebuild_pages: counters.rebuild_pages_visited,
        pages_read: counters.pages_read,
    }
}

/// The large/fresh Set costs and large reopen cost of one variant.
struct Row {
    v: Variant,
    large: SetCost,
    fresh: SetCost,
    reopen: ReopenCost,
}

fn measure_row(template: &Path, v: Variant) -> Row {
    if !selected(v) {
        return Row {
            v,
            large: SetCost::default(),
            fresh: SetCost::default(),
            reopen: ReopenCost::default(),
        };
    }
    let large_file = prepare(Some(template), v);
    let large = count_sets(&large_file, v);
    // Reopen after the Sets: the file is in the variant's steady state either way.
    let reopen = count_reopen(&large_file, v);
    drop(large_file);
    let fresh = count_sets(&prepare(None, v), v);
    Row {
        v,
        large,
        fresh,
        reopen,
    }
}

/// Nanoseconds this thread has run on a CPU, user and kernel (`/proc/thread-self/schedstat`,
/// Linux; 0 elsewhere): unlike wall time, it does not count waiting for a CPU that other
/// processes hold.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn print_set(label: &str, s: &SetCost) {
    eprintln!(
        "  {label:<6} {:>10.1} us/op  cpu {:>10.1} us/op  scan_steps {:>10.1}  ids_moved {:>10.1}  \
         freelist_bytes {:>11.1}  pages_written {:>7.2}  write_calls {:>6.2}",
        s.us, s.cpu_us, s.scan_steps, s.ids_moved, s.freelist_bytes, s.pages_written, s.write_calls
    );
}

/// Print the per-variant counter tables and the ratios the issue asks about.
fn report_counters(template: &Path) {
    eprintln!("\n=== per Set over {COUNTED_SETS} Sets (no_sync), and reopen of the large DB ===");
    let rows: Vec<Row> = VARIANTS.iter().map(|&v| measure_row(template, v)).collect();
    for r in rows.iter().filter(|r| selected(r.v)) {
        eprintln!("{}", r.v.name);
        print_set("large", &r.large);
        print_set("fresh", &r.fresh);
        eprintln!(
            "  reopen {:>10.3} ms, durable {:.3} ms (best of {REOPENS})  \
             rebuild_pages_visited {}  pages_read {}",
            r.reopen.ms, r.reopen.durable_ms, r.reopen.rebuild_pages, r.reopen.pages_read
        );
        eprintln!(
            "  large/fresh: wall {:.1}x  cpu {:.2}x  scan_steps {:.1}x  freelist_bytes {:.1}x",
            r.large.us / r.fresh.us,
            r.large.cpu_us / r.fresh.cpu_us,
            ratio(r.large.scan_steps, r.fresh.scan_steps),
            ratio(r.large.freelist_bytes, r.fresh.freelist_bytes)
        );
    }
    if rows.iter().all(|r| selected(r.v)) {
        print_hashmap_ratios(&rows);
    }
}

/// `a / b`, taking 0 / 0 as 1 (equal costs).
fn ratio(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 {
        1.0
    } else {
        a / b
    }
}

/// Array vs hashmap on the large DB (same freelist syncing), and hashmap vs array fresh.
fn print_hashmap_ratios(rows: &[Row]) {
    for (array, hashmap) in [
        (&rows[0], &rows[2]),
        (&rows[1], &rows[3]),
        (&rows[0], &rows[3]),
    ] {
        eprintln!(
            "{} / {}: large Set wall {:.1}x  scan_steps {:.1}x;  fresh Set hashmap/array wall {:.3}",
            array.v.name,
            hashmap.v.name,
            array.large.us / hashmap.large.us,
            ratio(array.large.scan_steps, hashmap.large.scan_steps),
            hashmap.fresh.us / array.fresh.us
        );
    }
}

/// Scaling series: per-Set cost and reopen time against the largest-ever size.
fn scaling_series() {
    eprintln!(
        "\n=== scaling: largest-ever size vs per-Set cost (no_sync, {COUNTED_SETS} Sets) ==="
    );
    eprintln!(
        "{:>8} {:<15} {:>10} {:>12} {:>12} {:>15} {:>10} {:>14}",
        "pages",
        "variant",
        "us/op",
        "scan_steps",
        "ids_moved",
        "freelist_bytes",
        "reopen_ms",
        "rebuild_pages"
    );
    for pages in SCALE_PAGES {
        let template = build_template(pages / SCALE_VALUE_PAGES, SCALE_VALUE_SIZE);
        VARIANTS
            .iter()
            .for_each(|&v| scale_row(pages, &template.path, v));
    }
}

/// One scaling row: `COUNTED_SETS` Sets and, for the no-sync variants, the reopen time.
fn scale_row(pages: u64, template: &Path, v: Variant) {
    let file = prepare(Some(template), v);
    let s = count_sets(&file, v);
    let (ms, rebuild) = if v.no_freelist_sync {
        let r = count_reopen(&file, v);
        (format!("{:.3}", r.ms), r.rebuild_pages.to_string())
    } else {
        ("-".into(), "-".into())
    };
    eprintln!(
        "{pages:>8} {:<15} {:>10.1} {:>12.1} {:>12.1} {:>15.1} {ms:>10} {rebuild:>14}",
        v.name, s.us, s.scan_steps, s.ids_moved, s.freelist_bytes
    );
}

/// Whether the part `name` runs: `CRASHLAB_LARGE_DB_PARTS` lists the parts to run, comma
/// separated, of `criterion`, `counters` and `scaling` (all of them when unset), so a profile
/// of one row need not build the scaling series' templates.
fn part(name: &str) -> bool {
    std::env::var("CRASHLAB_LARGE_DB_PARTS")
        .map(|parts| parts.split(',').any(|p| p.trim() == name))
        .unwrap_or(true)
}

/// Whether the criterion groups and the counters part measure `v`: `CRASHLAB_LARGE_DB_VARIANTS`
/// lists variant names, comma separated (all when unset), so a profile can hold one variant.
fn selected(v: Variant) -> bool {
    std::env::var("CRASHLAB_LARGE_DB_VARIANTS")
        .map(|names| names.split(',').any(|n| n.trim() == v.name))
        .unwrap_or(true)
}

fn main() {
    let mut c = config();
    let large = build_template(LARGE_VALUES, LARGE_VALUE_SIZE);
    if part("criterion") {
        bench_large_set(&mut c, &large.path);
        bench_reopen(&mut c, &large.path);
        c.final_summary();
    }
    if part("counters") {
        report_counters(&large.path);
    }
    drop(large);
    if part("scaling") {
        scaling_series();
    }
}
