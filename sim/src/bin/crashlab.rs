//! `crashlab`: run, sweep, replay and shrink simulations of the engine on a faulty disk, and check
//! every crash state of a small workload.
//!
//! Exit codes: 0 no violation, 1 a violation was found, 2 bad input.

#[path = "crashlab/check_cmd.rs"]
mod check_cmd;

use clap::{Parser, Subcommand};
use crashlab_sim::case::{parse_seed, Case, Expect};
use crashlab_sim::check::spec::{max_states_valid, sector_size_valid};
use crashlab_sim::check::{CheckConfig, Control};
use crashlab_sim::compare::{self, Scale};
use crashlab_sim::db_cli::DbCommand;
use crashlab_sim::disk::capture::{capture, save_durable_image};
use crashlab_sim::disk::FaultCounts;
use crashlab_sim::engines::EngineKind;
use crashlab_sim::input::writable_target;
use crashlab_sim::limits::{
    CHECK_OPS_MAX, OPS_MAX, RECRASH_ONE_IN_MAX, SHARDS_MAX, SHRINK_BUDGET_MAX,
    STATES_PER_CRASH_POINT_MAX, SWEEP_SEEDS_MAX,
};
use crashlab_sim::profile::Profile;
use crashlab_sim::report;
use crashlab_sim::runner::{run_guarded, Outcome, Report, RunConfig};
use crashlab_sim::shrink::shrink;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// crashlab: does a storage-engine change lose or corrupt data when disks misbehave and the
/// power fails? Every run is decided by one seed and reproduces from one line.
#[derive(Parser)]
#[command(name = "crashlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one seed and report it.
    Run {
        /// Seed: decimal u64 or a 40-hex commit hash.
        #[arg(long, value_parser = parse_seed)]
        seed: u64,
        /// Operations to generate, 1 to 100000 (OPS_MAX).
        #[arg(long, default_value_t = 300, value_parser = run_ops)]
        ops: usize,
        /// Fault profile: none, default, corruption, lying-sync, no-barrier.
        #[arg(long, default_value = "default")]
        profile: Profile,
        /// Where to save the case of a violation.
        #[arg(long, default_value = "corpus/found")]
        found_dir: PathBuf,
        /// The engine under test: crashlab or redb.
        #[arg(long, default_value = "crashlab")]
        engine: EngineKind,
    },
    /// Sweep a range of seeds.
    Explore {
        /// Seeds A..B (B excluded), each decimal or a 40-hex commit hash; at most 2^32 seeds.
        #[arg(long, value_parser = parse_range)]
        seeds: (u64, u64),
        /// Run only shard i of n (seeds whose offset from A is i modulo n), e.g. 0/4; n ≤ 65536.
        #[arg(long, value_parser = parse_shard)]
        shard: Option<(u64, u64)>,
        /// Operations per seed, 1 to 100000 (OPS_MAX).
        #[arg(long, default_value_t = 300, value_parser = run_ops)]
        ops: usize,
        #[arg(long, default_value = "default")]
        profile: Profile,
        #[arg(long, default_value = "corpus/found")]
        found_dir: PathBuf,
        /// The engine under test: crashlab or redb.
        #[arg(long, default_value = "crashlab")]
        engine: EngineKind,
    },
    /// Replay a case file bit for bit.
    Repro {
        file: PathBuf,
        /// Write the disk's durable image at the end of the run here, for `crashlab db`.
        #[arg(long)]
        save_image: Option<PathBuf>,
    },
    /// Minimise a failing case's operations and faults; writes FILE.shrunk.case.
    Shrink {
        file: PathBuf,
        /// Most runs to spend, 1 to 100000 (SHRINK_BUDGET_MAX).
        #[arg(long, default_value_t = 2000, value_parser = shrink_budget)]
        budget: usize,
    },
    /// Compare variants as deterministic counter tables: large-db-set, large-db-reopen,
    /// commits, buffers.
    Compare {
        /// One scenario (default: all).
        #[arg(long)]
        scenario: Option<String>,
        /// small (seconds) or seed (the size of the findings in docs/DESIGN.md).
        #[arg(long, default_value = "seed")]
        scale: Scale,
        /// Print the tables as JSON.
        #[arg(long)]
        json: bool,
        /// Also write SVG charts into this directory (crashlab's variants).
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Whose rows: crashlab, redb, or both (`--engine crashlab,redb`) [default: crashlab].
        #[arg(long, value_delimiter = ',')]
        engine: Vec<EngineKind>,
    },
    /// Inspect, check and dump a database file or a saved disk image (read-only).
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// Check every crash state of a small workload: every crash point × every subset of the
    /// unsynced sectors (exhaustive within --max-states, sampled beyond; the report says which).
    Check {
        /// The case whose workload, options and check parameters to use.
        #[arg(long, required_unless_present = "seed", conflicts_with = "seed")]
        case: Option<PathBuf>,
        /// Generate the workload and the engine options from this seed instead.
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Operations to generate with --seed, 1 to 1000 (CHECK_OPS_MAX).
        #[arg(long, default_value_t = 12, value_parser = check_ops)]
        ops: usize,
        /// Most states per crash point before the checker samples, 2 to 2^20
        /// (STATES_PER_CRASH_POINT_MAX) [default: 4096].
        #[arg(long, value_parser = max_states)]
        max_states: Option<u64>,
        /// The disk's sector (atomic write unit) in bytes, a power of two in [16, 4096]
        /// [default: 512].
        #[arg(long, value_parser = sector_size)]
        sector_size: Option<u32>,
        /// Commit through `Db::write` of `WriteBatch`es instead of `Db::update`.
        #[arg(long)]
        batched: bool,
        /// A negative control: no-barrier, meta-same-slot, meta-unchecked, no-growth-sync,
        /// reuse-under-readers (or fdatasync-disk, the disk model of no-growth-sync without the bug).
        #[arg(long)]
        control: Option<Control>,
        /// Crash again during the recovery of one distinct state in N (0: never), N ≤ 2^20
        /// (RECRASH_ONE_IN_MAX).
        #[arg(long, default_value_t = crashlab_sim::check::RECRASH_ONE_IN_DEFAULT,
              value_parser = recrash_one_in)]
        recrash_one_in: u64,
        /// Check every freelist × freelist-synced × batched × pre-size variant of the workload.
        #[arg(long)]
        variants: bool,
        /// Stop at the first violating state instead of counting them all.
        #[arg(long)]
        stop_at_first: bool,
        /// Where to save a case for each violation.
        #[arg(long, default_value = "corpus/found")]
        found_dir: PathBuf,
        /// The engine under test with --seed: crashlab or redb (a case names its own engine).
        #[arg(long, conflicts_with = "case")]
        engine: Option<EngineKind>,
    },
}

fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected A..B, found `{s}`"))?;
    let (a, b) = (parse_seed(a)?, parse_seed(b)?);
    if a >= b {
        return Err(format!("empty seed range {a}..{b}"));
    }
    if b - a > SWEEP_SEEDS_MAX {
        return Err(format!(
            "the range holds {} seeds, more than the limit of {SWEEP_SEEDS_MAX} \
             (SWEEP_SEEDS_MAX): split a larger sweep into ranges",
            b - a
        ));
    }
    Ok((a, b))
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("expected i/n with i < n ≤ {SHARDS_MAX}, found `{s}`");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<u64>().map_err(|_| bad())?,
        n.parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n || n > SHARDS_MAX {
        return Err(bad());
    }
    Ok((i, n))
}

/// A decimal count in `lo..=max`; `name` is the limit's constant.
fn count(s: &str, lo: u64, max: u64, name: &str) -> Result<u64, String> {
    let n = s
        .parse::<u64>()
        .map_err(|_| format!("expected a number from {lo} to {max}, found `{s}`"))?;
    if n < lo {
        return Err(format!("{n} is less than {lo}"));
    }
    if n > max {
        return Err(format!("{n} is more than the limit of {max} ({name})"));
    }
    Ok(n)
}

/// `--ops` of `run` and `explore`. 0 is refused: a run of no operations tests nothing.
fn run_ops(s: &str) -> Result<usize, String> {
    count(s, 1, OPS_MAX as u64, "OPS_MAX").map(|n| n as usize)
}

fn check_ops(s: &str) -> Result<usize, String> {
    count(s, 1, CHECK_OPS_MAX as u64, "CHECK_OPS_MAX").map(|n| n as usize)
}

fn shrink_budget(s: &str) -> Result<usize, String> {
    count(s, 1, SHRINK_BUDGET_MAX as u64, "SHRINK_BUDGET_MAX").map(|n| n as usize)
}

fn max_states(s: &str) -> Result<u64, String> {
    let n = count(
        s,
        2,
        STATES_PER_CRASH_POINT_MAX,
        "STATES_PER_CRASH_POINT_MAX",
    )?;
    max_states_valid(n)
}

fn sector_size(s: &str) -> Result<u32, String> {
    let n = s
        .parse::<u32>()
        .map_err(|_| format!("expected a sector size in bytes, found `{s}`"))?;
    sector_size_valid(n)
}

fn recrash_one_in(s: &str) -> Result<u64, String> {
    count(s, 0, RECRASH_ONE_IN_MAX, "RECRASH_ONE_IN_MAX")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            seed,
            ops,
            profile,
            found_dir,
            engine,
        } => {
            let cfg = RunConfig::from_seed_for(engine, seed, ops, profile);
            print!("{}", report::header(&cfg));
            let r = run_guarded(&cfg);
            print!("{}", report::body(&r));
            finish_one(&cfg, &r, &found_dir)
        }
        Command::Explore {
            seeds,
            shard,
            ops,
            profile,
            found_dir,
            engine,
        } => explore(engine, seeds, shard, ops, profile, &found_dir),
        Command::Repro { file, save_image } => repro(&file, save_image.as_deref()),
        Command::Shrink { file, budget } => shrink_file(&file, budget),
        Command::Compare {
            scenario,
            scale,
            json,
            plot,
            engine,
        } => {
            let engines = if engine.is_empty() {
                vec![EngineKind::Crashlab]
            } else {
                engine
            };
            ExitCode::from(compare::cli(
                scenario.as_deref(),
                scale,
                &engines,
                json,
                plot.as_deref(),
            ))
        }
        Command::Db { command } => crashlab_sim::db_cli::run(&command),
        Command::Check {
            case,
            seed,
            ops,
            max_states,
            sector_size,
            batched,
            control,
            recrash_one_in,
            variants,
            stop_at_first,
            found_dir,
            engine,
        } => {
            let base = match (case, seed) {
                (Some(file), _) => match Case::load_for_check(&file) {
                    Ok(case) => CheckConfig::from_case(&case),
                    Err(e) => return bad_case(&e),
                },
                (None, Some(seed)) => {
                    CheckConfig::from_seed_for(engine.unwrap_or_default(), seed, ops)
                }
                (None, None) => unreachable!("clap requires --case or --seed"),
            };
            let overrides = check_cmd::Overrides {
                max_states,
                sector_size,
                batched,
                control,
                recrash_one_in,
                stop_at_first,
            };
            check_cmd::run(base, &overrides, variants, &found_dir)
        }
    }
}

/// On a violation: the trace tail, the saved case and the one-line repro command.
fn finish_one(cfg: &RunConfig, r: &Report, found_dir: &Path) -> ExitCode {
    let Outcome::Violation(_) = r.outcome else {
        return ExitCode::SUCCESS;
    };
    println!("trace tail:");
    for line in &r.trace_tail {
        println!("  {line}");
    }
    match save_case(cfg, found_dir) {
        Ok(path) => println!(
            "saved {}\nrepro: crashlab repro {}",
            path.display(),
            path.display()
        ),
        Err(e) => eprintln!("could not save the case under {}: {e}", found_dir.display()),
    }
    println!(
        "or:    crashlab run --seed {} --ops {} --profile {}{}",
        cfg.seed,
        cfg.ops.len(),
        cfg.profile,
        engine_flag(cfg.engine)
    );
    ExitCode::from(1)
}

/// ` --engine NAME` unless the engine is the default.
fn engine_flag(engine: EngineKind) -> String {
    match engine {
        EngineKind::Crashlab => String::new(),
        other => format!(" --engine {other}"),
    }
}

fn save_case(cfg: &RunConfig, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let engine = match cfg.engine {
        EngineKind::Crashlab => String::new(),
        other => format!("-{other}"),
    };
    let path = dir.join(format!("seed-{}-{}{engine}.case", cfg.seed, cfg.profile));
    writable_target(&path).map_err(std::io::Error::other)?;
    let case = Case {
        run: cfg.clone(),
        expect: Expect::Violation,
        explicit_ops: false,
        check: None,
        crash_state: None,
    };
    std::fs::write(&path, case.to_text())?;
    Ok(path)
}

#[derive(Default)]
struct Sweep {
    seeds: u64,
    ops: u64,
    ok: u64,
    violations: u64,
    disk_failures: u64,
    crashes: u64,
    faults: FaultCounts,
    sim_ns: u64,
}

fn explore(
    engine: EngineKind,
    (a, b): (u64, u64),
    shard: Option<(u64, u64)>,
    ops: usize,
    profile: Profile,
    found_dir: &Path,
) -> ExitCode {
    let (i, n) = shard.unwrap_or((0, 1));
    // Walked, never collected: a range may hold billions of seeds.
    let step = usize::try_from(n).expect("--shard n is at most SHARDS_MAX");
    let seeds = (a.saturating_add(i)..b).step_by(step);
    let count = (b - a).saturating_sub(i).div_ceil(n);
    println!(
        "explore seeds {a}..{b} shard {i}/{n} ({count} seeds) profile {profile} ops {ops}{}",
        engine_flag(engine)
    );
    let bar = indicatif::ProgressBar::new(count);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} seeds · {msg} · {elapsed} (eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    // Wall time only for the summary's ops/s and simulated:wall ratio; it never feeds a run.
    let started = Instant::now();
    let mut t = Sweep::default();
    for seed in seeds {
        let cfg = RunConfig::from_seed_for(engine, seed, ops, profile);
        let r = run_guarded(&cfg);
        t.seeds += 1;
        t.ops += r.stats.ops_run;
        t.crashes += r.stats.crashes;
        t.sim_ns += r.io.sim_time_ns;
        t.faults.accumulate(&r.faults);
        match &r.outcome {
            Outcome::Ok => t.ok += 1,
            Outcome::DiskFailure(_) => t.disk_failures += 1,
            Outcome::Violation(v) => {
                t.violations += 1;
                let saved = save_case(&cfg, found_dir).map(|p| p.display().to_string());
                let repro = saved.unwrap_or_else(|e| format!("(not saved: {e})"));
                // println through the bar: it still prints when the bar is hidden (not a TTY).
                bar.suspend(|| println!("seed {seed}: {v}\n  repro: crashlab repro {repro}"));
            }
        }
        bar.set_message(format!("{} violations", t.violations));
        bar.inc(1);
    }
    bar.finish_and_clear();
    print_sweep(&t, started.elapsed().as_secs_f64());
    if t.violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_sweep(t: &Sweep, wall_s: f64) {
    let f = &t.faults;
    println!(
        "seeds {} · ok {} · violations {} · disk failures {}\nops {} · power cuts {} · {:.0} ops/s\nfaults: read_eio {} write_eio {} sync_eio {} latent {} bit_flips {} misdirected {} enospc {} lying_syncs {} garbage_reads {} torn_writes {}\nsimulated {:.3} s in {:.3} s wall ({:.1}x)",
        t.seeds, t.ok, t.violations, t.disk_failures,
        t.ops, t.crashes, t.ops as f64 / wall_s.max(1e-9),
        f.read_eio, f.write_eio, f.sync_eio, f.latent_sectors, f.bit_flips, f.misdirected_writes, f.enospc, f.lying_syncs, f.garbage_sector_reads, f.torn_writes_in_crash,
        t.sim_ns as f64 / 1e9, wall_s, t.sim_ns as f64 / 1e9 / wall_s.max(1e-9)
    );
}

pub(crate) fn load(file: &Path) -> Result<Case, ExitCode> {
    Case::load(file).map_err(|e| bad_case(&e))
}

fn bad_case(e: &crashlab_sim::case::CaseError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// Exit 2 with a message when `path` exists and is not a regular file to write over.
pub(crate) fn refuse_target(path: &Path) -> Result<(), ExitCode> {
    writable_target(path).map_err(|m| {
        eprintln!("error: {m}");
        ExitCode::from(2)
    })
}

fn repro(file: &Path, save_image: Option<&Path>) -> ExitCode {
    let case = match load(file) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(Err(code)) = save_image.map(refuse_target) {
        return code;
    }
    if let Some(state) = &case.crash_state {
        return check_cmd::replay_state(&case, state, save_image);
    }
    print!("{}", report::header(&case.run));
    let (r, disks) = capture(|| run_guarded(&case.run));
    print!("{}", report::body(&r));
    if let (Some(path), Some(disk)) = (save_image, disks.last()) {
        match save_durable_image(disk, path) {
            Ok(n) => println!(
                "saved the durable disk image ({n} bytes): crashlab db check {}",
                path.display()
            ),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    print_expectation(case.expect, Expect::of(&r.outcome), "run");
    if let Outcome::Violation(_) = r.outcome {
        for line in &r.trace_tail {
            println!("  {line}");
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Whether a replay (`what`: the run, the state) ended as its case expects.
pub(crate) fn print_expectation(expected: Expect, got: Expect, what: &str) {
    if got == expected {
        println!("as expected ({got:?})");
    } else {
        println!("NOT as expected: the case expects {expected:?}, the {what} gave {got:?}");
    }
}

fn shrink_file(file: &Path, budget: usize) -> ExitCode {
    let case = match load(file) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = file.with_extension("shrunk.case");
    if let Err(code) = refuse_target(&out) {
        return code;
    }
    if !matches!(run_guarded(&case.run).outcome, Outcome::Violation(_)) {
        eprintln!(
            "error: {}: the case does not fail, so there is nothing to shrink",
            file.display()
        );
        return ExitCode::from(2);
    }
    let s = shrink(&case.run, budget);
    let shrunk = Case {
        run: s.run,
        expect: Expect::Violation,
        explicit_ops: true,
        check: None,
        crash_state: None,
    };
    if let Err(e) = std::fs::write(&out, shrunk.to_text()) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    println!(
        "shrunk {} ops to {} in {} runs: {}\nrepro: crashlab repro {}",
        case.run.ops.len(),
        shrunk.run.ops.len(),
        s.attempts,
        out.display(),
        out.display()
    );
    ExitCode::SUCCESS
}
