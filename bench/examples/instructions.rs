//! Run one shape a fixed number of times, with no timing, so that `valgrind --tool=cachegrind`
//! can count its instructions: repeatable figures where wall time on a shared VM is not.
//!
//! ```sh
//! cargo build --release --example instructions
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/instructions ENGINE SHAPE MODE N
//! ```
//!
//! ENGINE is a name from `engines::ENGINES`; SHAPE is `get`, `get100`, `get_value`, `set`,
//! `set100` or `delete`; MODE is `sync`, `normal` or `no_sync` (reads ignore it). The database
//! is pre-filled as in the benchmarks. `delete` runs as the benchmark does: before every 1,000
//! deletes from the left edge, 1,000 keys are appended at the right edge, so each round's refill
//! is counted too (`CRASHLAB_DELETE_REFILL=R`: every R deletes, R keys, as a criterion sample of
//! R iterations refills).
//! Instructions per operation = (count at N − count at 0) / N: the difference removes the
//! setup (and, for `delete`, what remains is the deletes plus the refills, 1:1).
//!
//! The large-DB Set: `CRASHLAB_LARGE_DIR=DIR instructions ENGINE build MODE 0` builds the
//! template in DIR (natively: it writes 2 GB), then `CRASHLAB_LARGE_DIR=DIR instructions ENGINE
//! large_set MODE N` under cachegrind, at N = 0 and N = k; shape `reopen` opens and closes it N
//! more times (what the `reopen` benchmark times).

use crashlab_bench::engines::{Engine, ENGINES};
use crashlab_bench::large;
use crashlab_bench::prefill::open_filled;
use crashlab_bench::shape::{BATCH, FILL_BATCH, PREFILL, VALUE};
use crashlab_bench::{Mode, Read};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [engine, shape, mode, n] = &args[..] else {
        eprintln!("usage: instructions ENGINE SHAPE MODE N");
        std::process::exit(2);
    };
    let engine = ENGINES
        .iter()
        .find(|e| e.name == engine)
        .unwrap_or_else(|| panic!("no engine {engine}"));
    let mode = match mode.as_str() {
        "sync" => Mode::Sync,
        "normal" => Mode::Normal,
        "no_sync" => Mode::NoSync,
        other => panic!("no mode {other}"),
    };
    let n: u64 = n.parse().expect("N is a number");
    if let Ok(large) = std::env::var("CRASHLAB_LARGE_DIR") {
        large_db(engine, mode, shape, n, Path::new(&large));
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut kv = open_filled(engine, mode, dir.path(), PREFILL);
    // The criterion benchmark refills before each sample of `iters` deletes, so its free set
    // grows with a sample's length: `CRASHLAB_DELETE_REFILL=iters` replays that here.
    let refill: u64 = std::env::var("CRASHLAB_DELETE_REFILL")
        .map(|r| r.parse().expect("CRASHLAB_DELETE_REFILL is a number"))
        .unwrap_or(FILL_BATCH);
    assert!(refill > 0, "CRASHLAB_DELETE_REFILL must be at least 1");
    for i in 0..n {
        if shape == "delete" && i % refill == 0 {
            kv.put(PREFILL + i..PREFILL + i + refill, &VALUE);
        }
        match shape.as_str() {
            "get" => kv.get(i..i + 1, Read::Held),
            "get100" => kv.get(i * BATCH..(i + 1) * BATCH, Read::Held),
            "get_value" => kv.get(i..i + 1, Read::LastByte),
            "set" => kv.put(PREFILL + i..PREFILL + i + 1, &VALUE),
            "set100" => kv.put(PREFILL + i * BATCH..PREFILL + (i + 1) * BATCH, &VALUE),
            "delete" => kv.delete(i..i + 1),
            other => panic!("no shape {other}"),
        }
    }
}

/// With `CRASHLAB_LARGE_DIR` set: shape `build` builds the large template in that directory
/// (run it natively, once); shape `large_set` opens it and runs N one-key Sets, each with a key
/// no earlier run used (the run number is N, so the N = 0 and N = k runs of one measurement
/// never collide). The open is in both runs and cancels out. Shape `reopen` closes it and opens
/// and closes it N more times.
fn large_db(engine: &Engine, mode: Mode, shape: &str, n: u64, dir: &Path) {
    let mut kv = engine.open(dir, mode);
    match shape {
        "build" => large::build_template(&mut *kv),
        "large_set" => {
            for i in 0..n {
                let k = large::set_key(1_000 + n, i);
                kv.put(k..k + 1, &VALUE);
            }
        }
        "reopen" => {
            drop(kv);
            for _ in 0..n {
                drop(engine.open(dir, mode));
            }
        }
        other => panic!("no large-DB shape {other}"),
    }
}
