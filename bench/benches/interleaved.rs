//! The no_sync write commits (Set, Set100, Delete) of crashlab's four configurations and LMDB,
//! measured in interleaved blocks: every engine's database is open at once, and the engines
//! take turns, one block of operations each, round after round, the order rotating each round.
//! An engine's figure is the median of its blocks' time per operation; issue 20's no_sync
//! write targets compare these medians (`tools/bench/join.py`).
//!
//! Why not criterion's figures: criterion measures one engine for four seconds, then the next.
//! These shapes grow their files, and a page the page cache takes for the first time costs
//! what the machine's memory costs at that moment: on this VM, whose freed memory the host
//! takes back (free page reporting), that moves from run to run by more than the engines
//! differ (BENCHMARKS.md, "Why the missed rows miss"). Taking turns in blocks of a few
//! milliseconds gives every engine the same minutes of the machine.
//!
//! Output: one JSON line per engine and shape on stdout, `{"id":
//! "interleaved/set100/crashlab-array-synced/no_sync", "median_ns": …, "blocks": …}`; a summary
//! on stderr. `CRASHLAB_BENCH_GROUPS` and `CRASHLAB_BENCH_ENGINES` run a subset (as for
//! `peers`); `CRASHLAB_INTERLEAVED_BLOCKS` (default 200) is the number of timed blocks per
//! engine.

use crashlab_bench::engines::{Engine, Which, ENGINES};
use crashlab_bench::interleave::{median, schedule};
use crashlab_bench::prefill::{fill, open_filled};
use crashlab_bench::select::selected;
use crashlab_bench::shape::{BATCH, PREFILL, VALUE};
use crashlab_bench::{Kv, Mode};
use std::time::Instant;
use tempfile::TempDir;

/// A no_sync write shape: its group name, its operation, the operations in one block, and
/// whether it deletes (and so needs keys refilled, untimed, before each block).
struct Shape {
    group: &'static str,
    op: fn(&mut dyn Kv, u64),
    block: u64,
    deletes: bool,
}

/// Blocks of a few milliseconds each (Set about 5 ms, Set100 7–13, Delete about 7): short
/// against the seconds a slow spell lasts (in a trace every engine switched in the same round),
/// long against a timer's resolution and a commit.
const SHAPES: [Shape; 3] = [
    Shape {
        group: "set",
        op: |kv, i| kv.put(PREFILL + i..PREFILL + i + 1, &VALUE),
        block: 1_000,
        deletes: false,
    },
    Shape {
        group: "set100",
        op: |kv, i| kv.put(PREFILL + i * BATCH..PREFILL + (i + 1) * BATCH, &VALUE),
        block: 200,
        deletes: false,
    },
    Shape {
        group: "delete",
        op: |kv, i| kv.delete(i..i + 1),
        block: 1_000,
        deletes: true,
    },
];

const DEFAULT_BLOCKS: usize = 200;

/// One engine's database and what it has done so far.
struct Turn {
    engine: &'static Engine,
    kv: Box<dyn Kv>,
    _dir: TempDir,
    /// The next operation's number: every operation gets a fresh key.
    next: u64,
    /// Keys `next..filled` are present (for deletes).
    filled: u64,
    /// Nanoseconds per operation, one per timed block.
    blocks: Vec<f64>,
}

impl Turn {
    fn open(engine: &'static Engine) -> Turn {
        let dir = tempfile::tempdir().expect("create temp dir");
        let kv = open_filled(engine, Mode::NoSync, dir.path(), PREFILL);
        Turn {
            engine,
            kv,
            _dir: dir,
            next: 0,
            filled: PREFILL,
            blocks: Vec::new(),
        }
    }

    /// Run one block of `shape`; the time per operation in nanoseconds. A delete block first
    /// appends, untimed, as many keys as it will delete, so 10,000 remain after it (as the
    /// criterion `delete` group does before each sample).
    fn block(&mut self, shape: &Shape) -> f64 {
        if shape.deletes {
            let want = self.next + shape.block + PREFILL;
            fill(&mut *self.kv, self.filled..want);
            self.filled = want;
        }
        let start = Instant::now();
        for i in self.next..self.next + shape.block {
            (shape.op)(&mut *self.kv, i);
        }
        self.next += shape.block;
        start.elapsed().as_nanos() as f64 / shape.block as f64
    }
}

/// The engines the no_sync write targets compare: crashlab's four configurations and LMDB,
/// narrowed by `CRASHLAB_BENCH_ENGINES`.
fn engines() -> Vec<&'static Engine> {
    ENGINES
        .iter()
        .filter(|e| matches!(e.which, Which::Crashlab(..) | Which::Lmdb))
        .filter(|e| selected("CRASHLAB_BENCH_ENGINES", e.name))
        .collect()
}

fn blocks_wanted() -> usize {
    let Ok(text) = std::env::var("CRASHLAB_INTERLEAVED_BLOCKS") else {
        return DEFAULT_BLOCKS;
    };
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => n,
        _ => {
            eprintln!(
                "CRASHLAB_INTERLEAVED_BLOCKS={text:?}: expected a whole number from 1 to 100000"
            );
            std::process::exit(2);
        }
    }
}

/// Every engine one untimed block, then the timed blocks in `interleave::schedule`'s order.
fn interleave(shape: &Shape, turns: &mut [Turn], blocks: usize) {
    for t in turns.iter_mut() {
        t.block(shape);
    }
    for e in schedule(turns.len(), blocks) {
        let t = &mut turns[e];
        let ns = t.block(shape);
        t.blocks.push(ns);
    }
}

fn report(shape: &Shape, turns: &[Turn]) {
    for t in turns {
        let med = median(&t.blocks).expect("at least one block");
        println!(
            "{{\"id\": \"interleaved/{}/{}/no_sync\", \"median_ns\": {med:.1}, \"blocks\": {}}}",
            shape.group,
            t.engine.name,
            t.blocks.len()
        );
        let mut sorted = t.blocks.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize] / 1e3;
        eprintln!(
            "{:>8} {:<26} median {:>8.2} µs  (tenth {:.2}, ninth tenth {:.2})",
            shape.group,
            t.engine.name,
            med / 1e3,
            at(0.1),
            at(0.9)
        );
    }
}

fn main() {
    let blocks = blocks_wanted();
    let engines = engines();
    if engines.is_empty() {
        eprintln!(
            "interleaved: CRASHLAB_BENCH_ENGINES names none of crashlab's configurations or lmdb"
        );
        std::process::exit(2);
    }
    for shape in SHAPES
        .iter()
        .filter(|s| selected("CRASHLAB_BENCH_GROUPS", s.group))
    {
        let mut turns: Vec<Turn> = engines.iter().map(|e| Turn::open(e)).collect();
        interleave(shape, &mut turns, blocks);
        report(shape, &turns);
    }
}
