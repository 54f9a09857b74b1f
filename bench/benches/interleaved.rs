//! The write commits (Set, Set100, Delete) of crashlab's four configurations beside the
//! engines issue 20 compares them with, measured in interleaved blocks: every engine's database
//! is open at once, and the engines take turns, one block of operations each, round after
//! round, the order rotating each round. An engine's figure is the median of its blocks' time
//! per operation. Two modes, each against its reference:
//!
//! - `no_sync` against LMDB (the no_sync write targets);
//! - `sync` against bbolt's four configurations (the durable rows), which run in
//!   `bbolt-bench -serve` processes (`tools/bbolt/bench`, through `crashlab_bench::served`):
//!   `CRASHLAB_BBOLT_BENCH` names that program, and without it the durable blocks cannot run
//!   (keep only `CRASHLAB_BENCH_MODES=no_sync`). The large-DB durable Set runs this way too,
//!   one configuration at a time, each engine on a large-DB template of its own.
//!
//! Why not criterion's figures: criterion measures one engine for four seconds, then the next,
//! and the Go benchmark runs minutes later. The no_sync shapes grow their files, and a page the
//! page cache takes for the first time costs what the machine's memory costs at that moment:
//! on this VM, whose freed memory the host takes back (free page reporting), that moves from
//! run to run by more than the engines differ (BENCHMARKS.md, "Why the missed rows miss"). The
//! durable shapes wait for the disk, whose syncs are as uneven. Taking turns in blocks of a few
//! milliseconds gives every engine the same minutes of the machine.
//!
//! Output: one JSON line per engine, shape and mode on stdout, `{"id":
//! "interleaved/set100/crashlab-array-synced/no_sync", "median_ns": …, "blocks": …}`; a summary
//! on stderr. `CRASHLAB_BENCH_GROUPS`, `CRASHLAB_BENCH_ENGINES` (bbolt's names too) and
//! `CRASHLAB_BENCH_MODES` run a subset (as for `peers`); `CRASHLAB_INTERLEAVED_BLOCKS` (default
//! 200) is the number of timed blocks per engine.

use crashlab_bench::engines::{Engine, Which, ENGINES};
use crashlab_bench::interleave::{median, schedule};
use crashlab_bench::large;
use crashlab_bench::prefill::{open_filled, refill_for_deletes};
use crashlab_bench::select::selected;
use crashlab_bench::served::Served;
use crashlab_bench::shape::{BATCH, LARGE_SET_BASE, PREFILL, VALUE};
use crashlab_bench::{Kv, Mode};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tempfile::TempDir;

/// A write shape: its group name, its operation, the operations in one block in each mode, and
/// whether it deletes (and so needs keys refilled, untimed, before each block). The operations
/// are numbered as `tools/bbolt/bench`'s `writeOp` numbers them.
struct Shape {
    group: &'static str,
    op: fn(&mut dyn Kv, u64),
    block: u64,
    durable_block: u64,
    deletes: bool,
}

/// Blocks of a few milliseconds each (no_sync: Set about 5 ms, Set100 7–13, Delete about 7;
/// durable: 5–15 ms): short against the seconds a slow spell lasts (in a trace every engine
/// switched in the same round), long against a timer's resolution and a commit.
const SHAPES: [Shape; 3] = [
    Shape {
        group: "set",
        op: |kv, i| kv.put(PREFILL + i..PREFILL + i + 1, &VALUE),
        block: 1_000,
        durable_block: 50,
        deletes: false,
    },
    Shape {
        group: "set100",
        op: |kv, i| kv.put(PREFILL + i * BATCH..PREFILL + (i + 1) * BATCH, &VALUE),
        block: 200,
        durable_block: 20,
        deletes: false,
    },
    Shape {
        group: "delete",
        op: |kv, i| kv.delete(i..i + 1),
        block: 1_000,
        durable_block: 50,
        deletes: true,
    },
];

/// The large-DB Set (durable only): a one-key commit on a file that once held 2 GB, about 2–3 ms
/// with a synced freelist (4 MB of it written per commit), so blocks of four.
const LARGE: Shape = Shape {
    group: "large_set",
    op: |kv, i| kv.put(LARGE_SET_BASE + i..LARGE_SET_BASE + i + 1, &VALUE),
    block: 4,
    durable_block: 4,
    deletes: false,
};

impl Shape {
    fn block(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Sync => self.durable_block,
            _ => self.block,
        }
    }
}

/// bbolt's four configurations, as `tools/bbolt/bench` names them.
const BBOLT: [&str; 4] = [
    "bbolt-array-synced",
    "bbolt-array-nosync",
    "bbolt-hashmap-synced",
    "bbolt-hashmap-nosync",
];

const DEFAULT_BLOCKS: usize = 200;

/// An engine's database: in this process, or a `bbolt-bench -serve` process.
enum Db {
    Local {
        kv: Box<dyn Kv>,
        /// The database's own directory, removed with it (`None` for a large-DB copy, which
        /// `large_blocks` removes).
        _dir: Option<TempDir>,
        /// The next operation's number: every operation gets a fresh key.
        next: u64,
        /// Keys `next..filled` are present (for deletes).
        filled: u64,
    },
    Served(Served),
}

/// One engine's database and its timed blocks.
struct Turn {
    name: &'static str,
    db: Db,
    /// Nanoseconds per operation, one per timed block.
    blocks: Vec<f64>,
}

impl Turn {
    fn local(engine: &'static Engine, mode: Mode) -> Turn {
        let dir = tempfile::tempdir().expect("create temp dir");
        let kv = open_filled(engine, mode, dir.path(), PREFILL);
        Turn::on(engine.name, kv, Some(dir), PREFILL)
    }

    /// Engine `name` on database `kv`, which holds keys below `filled`.
    fn on(name: &'static str, kv: Box<dyn Kv>, dir: Option<TempDir>, filled: u64) -> Turn {
        let db = Db::Local {
            kv,
            _dir: dir,
            next: 0,
            filled,
        };
        Turn {
            name,
            db,
            blocks: Vec::new(),
        }
    }

    /// bbolt configuration `name` in a `-serve` process, which makes its own database (for
    /// `large_set`, its own large-DB template).
    fn served(bbolt_bench: &Path, name: &'static str, shape: &Shape, mode: Mode) -> Turn {
        let spec = format!("{name}/{}/{}", shape.group, mode.name());
        // A failure panics, as a local engine's does (`Kv`): unwinding removes the temporary
        // directories (a large-DB template is 2 GB) and ends the other servers.
        let served = Served::spawn(bbolt_bench, &["-serve", &spec], &spec)
            .unwrap_or_else(|e| panic!("interleaved: {e}"));
        Turn {
            name,
            db: Db::Served(served),
            blocks: Vec::new(),
        }
    }

    /// Run one block of `shape`; the time per operation in nanoseconds. A delete block first
    /// appends, untimed, as many keys as it will delete, so 10,000 remain after it (as the
    /// criterion `delete` group does before each sample).
    fn block(&mut self, shape: &Shape, ops: u64) -> f64 {
        let ns = match &mut self.db {
            Db::Local {
                kv, next, filled, ..
            } => {
                if shape.deletes {
                    refill_for_deletes(&mut **kv, *next, ops, filled);
                }
                let start = Instant::now();
                for i in *next..*next + ops {
                    (shape.op)(&mut **kv, i);
                }
                *next += ops;
                start.elapsed().as_nanos() as f64
            }
            Db::Served(served) => served
                .block(ops)
                .unwrap_or_else(|e| panic!("interleaved: {e}"))
                as f64,
        };
        ns / ops as f64
    }
}

/// The engines mode `mode` compares: crashlab's four configurations and LMDB (no_sync) or
/// bbolt's four (sync), narrowed by `CRASHLAB_BENCH_ENGINES`.
fn turns(mode: Mode, shape: &Shape, bbolt_bench: Option<&Path>) -> Vec<Turn> {
    let reference = |w: &Which| match mode {
        Mode::Sync => false,
        _ => matches!(w, Which::Lmdb),
    };
    let mut turns: Vec<Turn> = ENGINES
        .iter()
        .filter(|e| matches!(e.which, Which::Crashlab(..)) || reference(&e.which))
        .filter(|e| selected("CRASHLAB_BENCH_ENGINES", e.name))
        .map(|e| Turn::local(e, mode))
        .collect();
    if let (Mode::Sync, Some(program)) = (mode, bbolt_bench) {
        turns.extend(
            BBOLT
                .iter()
                .filter(|name| selected("CRASHLAB_BENCH_ENGINES", name))
                .map(|name| Turn::served(program, name, shape, mode)),
        );
    }
    turns
}

/// The large-DB durable Set of each crashlab configuration beside bbolt's same one, one pair at
/// a time (each file is 2 GB), each engine on a template of its own, as in the main runs:
/// crashlab's built once here and copied for each configuration, bbolt's built by its `-serve`
/// process. Both are written back and dropped from the page cache, as after a restart, before
/// the blocks take turns. Whether any block ran.
fn large_blocks(bbolt_bench: &Path, blocks: usize) -> bool {
    let pairs: Vec<(&'static Engine, &'static str)> = ENGINES
        .iter()
        .filter(|e| matches!(e.which, Which::Crashlab(..)))
        .filter_map(|e| {
            let kind = e.name.strip_prefix("crashlab-");
            let bbolt = BBOLT
                .into_iter()
                .find(|b| b.strip_prefix("bbolt-") == kind)?;
            Some((e, bbolt))
        })
        .filter(|(e, b)| {
            selected("CRASHLAB_BENCH_ENGINES", e.name) || selected("CRASHLAB_BENCH_ENGINES", b)
        })
        .collect();
    if pairs.is_empty() {
        return false;
    }
    let dir = tempfile::tempdir().expect("create temp dir");
    let template = dir.path().join("template");
    fs::create_dir(&template).expect("create the template's directory");
    // Built in crashlab's first configuration, as the criterion group builds its own.
    let builder = ENGINES
        .iter()
        .find(|e| matches!(e.which, Which::Crashlab(..)))
        .expect("crashlab has configurations");
    let start = Instant::now();
    large::build_template(&mut *builder.open(&template, Mode::NoSync));
    eprintln!("large template: built in {:.1?}", start.elapsed());
    for (engine, bbolt) in pairs {
        let ours = dir.path().join("ours");
        fs::create_dir_all(&ours).expect("create the copy's directory");
        fs::copy(template.join("bench.db"), ours.join("bench.db")).expect("copy the template");
        large::flush_os_cache();
        for d in [&template, &ours] {
            large::evict_from_os_cache(d);
        }
        let mut turns = Vec::new();
        if selected("CRASHLAB_BENCH_ENGINES", engine.name) {
            turns.push(Turn::on(
                engine.name,
                engine.open(&ours, Mode::Sync),
                None,
                0,
            ));
        }
        if selected("CRASHLAB_BENCH_ENGINES", bbolt) {
            turns.push(Turn::served(bbolt_bench, bbolt, &LARGE, Mode::Sync));
        }
        interleave(&LARGE, LARGE.durable_block, &mut turns, blocks);
        report(&LARGE, Mode::Sync, &turns);
        drop(turns);
        fs::remove_dir_all(&ours).expect("remove the copy");
    }
    true
}

/// The modes `CRASHLAB_BENCH_MODES` keeps, and for `sync` the bbolt benchmark program it needs.
fn modes() -> (Vec<Mode>, Option<PathBuf>) {
    let modes: Vec<Mode> = [Mode::NoSync, Mode::Sync]
        .into_iter()
        .filter(|m| selected("CRASHLAB_BENCH_MODES", m.name()))
        .collect();
    if !modes.contains(&Mode::Sync) {
        return (modes, None);
    }
    let Some(program) = std::env::var_os("CRASHLAB_BBOLT_BENCH").map(PathBuf::from) else {
        fail(
            "the durable blocks need bbolt: set CRASHLAB_BBOLT_BENCH to tools/bbolt/bench's \
             program (tools/bench/run-all.sh builds it), or CRASHLAB_BENCH_MODES=no_sync",
        );
    };
    if !program.is_file() {
        fail(&format!(
            "CRASHLAB_BBOLT_BENCH={}: expected the path of tools/bbolt/bench's program; no such file",
            program.display()
        ));
    }
    (modes, Some(program))
}

fn blocks_wanted() -> usize {
    let Ok(text) = std::env::var("CRASHLAB_INTERLEAVED_BLOCKS") else {
        return DEFAULT_BLOCKS;
    };
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => n,
        _ => fail(&format!(
            "CRASHLAB_INTERLEAVED_BLOCKS={text:?}: expected a whole number from 1 to 100000"
        )),
    }
}

/// A bad setting: say what was expected and exit with status 2.
fn fail(message: &str) -> ! {
    eprintln!("interleaved: {message}");
    std::process::exit(2);
}

/// Every engine one untimed block, then the timed blocks in `interleave::schedule`'s order.
fn interleave(shape: &Shape, ops: u64, turns: &mut [Turn], blocks: usize) {
    for t in turns.iter_mut() {
        t.block(shape, ops);
    }
    for e in schedule(turns.len(), blocks) {
        let t = &mut turns[e];
        let ns = t.block(shape, ops);
        t.blocks.push(ns);
    }
}

fn report(shape: &Shape, mode: Mode, turns: &[Turn]) {
    for t in turns {
        let med = median(&t.blocks).expect("at least one block");
        println!(
            "{{\"id\": \"interleaved/{}/{}/{}\", \"median_ns\": {med:.1}, \"blocks\": {}}}",
            shape.group,
            t.name,
            mode.name(),
            t.blocks.len()
        );
        let mut sorted = t.blocks.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize] / 1e3;
        eprintln!(
            "{:>8} {:>7} {:<26} median {:>8.2} µs  (tenth {:.2}, ninth tenth {:.2})",
            shape.group,
            mode.name(),
            t.name,
            med / 1e3,
            at(0.1),
            at(0.9)
        );
    }
}

fn main() {
    let blocks = blocks_wanted();
    let (modes, bbolt_bench) = modes();
    let shapes: Vec<&Shape> = SHAPES
        .iter()
        .filter(|s| selected("CRASHLAB_BENCH_GROUPS", s.group))
        .collect();
    let mut ran = false;
    for mode in modes {
        for &shape in &shapes {
            // A mode with none of its engines selected is skipped (CRASHLAB_BENCH_ENGINES=lmdb
            // keeps the no_sync blocks only).
            let mut turns = turns(mode, shape, bbolt_bench.as_deref());
            if !turns.is_empty() {
                interleave(shape, shape.block(mode), &mut turns, blocks);
                report(shape, mode, &turns);
                ran = true;
            }
        }
    }
    let large_wanted = selected("CRASHLAB_BENCH_GROUPS", LARGE.group);
    if let (Some(program), true) = (bbolt_bench.as_deref(), large_wanted) {
        ran |= large_blocks(program, blocks);
    }
    if (!shapes.is_empty() || large_wanted) && !ran {
        fail("CRASHLAB_BENCH_ENGINES names none of the engines these blocks compare");
    }
}
