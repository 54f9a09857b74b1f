//! `crashlab`: run, sweep, replay and shrink simulations of an engine on a faulty disk, check
//! every crash state of a small workload, compare variants, and look inside database files.
//!
//! Exit codes: 0 no violation, 1 a violation was found, 2 bad input.
//!
//! The engine is picked once, here ([`engines::with_engine`]); every command below is generic
//! over the simulator's adapter trait.
#![forbid(unsafe_code)]

mod args;
mod bench_cmd;
mod cases;
mod check_cmd;
mod engines;
mod explore;
mod html;
mod merge;
mod peak_memory;
mod reach;
mod report;
mod run_cmd;
mod saturation_svg;
mod shard_env;

use clap::{Parser, Subcommand};
use crashlab_compare::{self as compare, EngineKind as CompareEngine, Scale};
use crashlab_dbtool::DbCommand;
use crashlab_sim::case::parse_seed;
use crashlab_sim::control::Control;
use crashlab_sim::profile::Profile;
use crashlab_sim::sweep::SweepControl;
use std::path::PathBuf;

/// mimalloc, not the system's malloc: a run allocates and frees many small buffers (models,
/// sector copies, decoded nodes), and its thread-local free lists cost a sweep far less than
/// glibc's malloc did, most of all with `--jobs` above 1 (docs/scale.md, Throughput). The
/// allocator changes no result: nothing the simulator decides depends on an address.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;

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
        #[arg(long, default_value_t = 300, value_parser = args::run_ops)]
        ops: usize,
        /// Fault profile: none, default, corruption, lying-sync, no-barrier, no-growth-sync.
        #[arg(long, default_value = "default")]
        profile: Profile,
        /// Where to save the case of a violation.
        #[arg(long, default_value = "corpus/found")]
        found_dir: PathBuf,
        /// The engine under test: crashlab, redb or sqlite.
        #[arg(long, default_value = "crashlab", value_parser = engines::parse)]
        engine: String,
        /// A negative control built as an engine debug hook (e.g. panic-in-commit), on in the
        /// run; the storage controls are profiles here.
        #[arg(long, default_value = "none")]
        control: Control,
    },
    /// Sweep a range of seeds.
    Explore {
        /// Seeds A..B (B excluded), each decimal or a 40-hex commit hash; at most 2^32 seeds.
        #[arg(long, value_parser = args::seed_range)]
        seeds: (u64, u64),
        /// Run only shard i of n (seeds whose offset from A is i modulo n), e.g. 0/4; n ≤ 65536
        /// [default: from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm), else
        /// 0/1].
        #[arg(long, value_parser = args::shard)]
        shard: Option<(u64, u64)>,
        /// The shard count with a scheduler's index (a Kubernetes Indexed Job's completions)
        /// [default: CRASHLAB_SHARD_COUNT, or SLURM_ARRAY_TASK_COUNT].
        #[arg(long, value_parser = args::shard_count)]
        shard_count: Option<u64>,
        /// Worker threads, 1 to 1024 (JOBS_MAX) [default: the machine's cores]; the output is
        /// the same for any number.
        #[arg(long, value_parser = args::jobs)]
        jobs: Option<usize>,
        /// Write every seed's result as JSON lines here, for `crashlab merge`.
        #[arg(long)]
        report: Option<PathBuf>,
        /// Plot the saturation curve (new behaviour per 1000 seeds) as an SVG chart here.
        #[arg(long)]
        saturation_svg: Option<PathBuf>,
        /// Operations per seed, 1 to 100000 (OPS_MAX).
        #[arg(long, default_value_t = 300, value_parser = args::run_ops)]
        ops: usize,
        #[arg(long, default_value = "default")]
        profile: Profile,
        #[arg(long, default_value = "corpus/found")]
        found_dir: PathBuf,
        /// The engine under test: crashlab, redb or sqlite.
        #[arg(long, default_value = "crashlab", value_parser = engines::parse)]
        engine: String,
        /// A negative control built as an engine debug hook (e.g. panic-in-commit), on in the
        /// run; the storage controls are profiles here.
        #[arg(long, default_value = "none")]
        control: Control,
        /// A deliberate bug for a negative control: `worker-order` (of --jobs) or
        /// `seed-in-signature` (of the saturation curve).
        #[arg(long, hide = true, value_parser = args::sweep_control)]
        debug_control: Option<SweepControl>,
        /// Write a self-contained HTML report of each violation found into DIR (one page per
        /// saved case; the sweep itself keeps no event log).
        #[arg(long)]
        html_dir: Option<PathBuf>,
    },
    /// Replay a case file bit for bit.
    Repro {
        file: PathBuf,
        /// Write the disk's durable image at the end of the run here, for `crashlab db`.
        #[arg(long)]
        save_image: Option<PathBuf>,
        /// Write a self-contained HTML report of the run to FILE (docs/report.md).
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Minimise a failing case's operations and faults; writes FILE.shrunk.case.
    Shrink {
        file: PathBuf,
        /// Most runs to spend, 1 to 100000 (SHRINK_BUDGET_MAX).
        #[arg(long, default_value_t = 2000, value_parser = args::shrink_budget)]
        budget: usize,
    },
    /// Compare variants as deterministic counter tables: large-db-set, large-db-reopen,
    /// commits, buffers.
    Compare {
        /// One scenario (default: all).
        #[arg(long)]
        scenario: Option<String>,
        /// small (seconds) or seed (the size of the findings).
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
        engine: Vec<CompareEngine>,
    },
    /// Inspect, check and dump a database file or a saved disk image (read-only).
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// Check every crash state of a small workload: every crash point × every subset of the
    /// unsynced sectors (exhaustive within --max-states, sampled beyond; the report says which).
    Check(check_cmd::CheckArgs),
    /// Merge the `explore --report` files of a sweep's shards into one report and summary.
    Merge(merge::MergeArgs),
    /// The simulator's throughput and peak memory: simulated ops/s of a sweep with full
    /// checking (seeds 0..N, 300 ops, default profile) at each job count, in interleaved
    /// rounds, and crash states/s of the checker (seeds 0..M, 12 ops).
    Bench {
        /// Sweep seeds 0..N, 1 to 2^32 (SWEEP_SEEDS_MAX).
        #[arg(long, default_value_t = 300, value_parser = args::seed_count)]
        seeds: u64,
        /// Check seeds 0..M, 1 to 2^32 (SWEEP_SEEDS_MAX).
        #[arg(long, default_value_t = 20, value_parser = args::seed_count)]
        check_seeds: u64,
        /// The sweep's worker threads, a comma-separated list of counts compared side by side
        /// (each 1 to 1024, JOBS_MAX; at most 8 counts, BENCH_JOB_COUNTS_MAX).
        #[arg(long, default_value = "1,2", value_parser = args::job_counts)]
        jobs: args::JobCounts,
        /// Rounds of the sweeps, each running every job count once, 1 to 100
        /// (BENCH_ROUNDS_MAX).
        #[arg(long, default_value_t = 1, value_parser = args::rounds)]
        rounds: u32,
        #[arg(long, default_value = "crashlab", value_parser = engines::parse)]
        engine: String,
        /// A deliberate bug of the parallel sweep, for the bench's own negative control:
        /// `worker-order`.
        #[arg(long, hide = true, value_parser = args::sweep_control)]
        debug_control: Option<SweepControl>,
    },
}

/// A message about bad input, and exit code 2.
fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// Run `f` with the engine `name`, or exit 2 when there is no such engine.
fn engine_or_exit<F: engines::WithEngine<Output = ExitCode>>(name: &str, f: F) -> ExitCode {
    engines::with_engine(name, f).unwrap_or_else(bad_input)
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
            control,
        } => {
            let run = run_cmd::RunSeed {
                seed,
                ops,
                profile,
                found_dir,
                control,
            };
            engine_or_exit(&engine, run)
        }
        Command::Explore {
            seeds,
            shard,
            shard_count,
            jobs,
            ops,
            profile,
            found_dir,
            engine,
            control,
            report,
            saturation_svg,
            debug_control,
            html_dir,
        } => {
            let env = shard_env::SchedulerEnv::from_process();
            let shard = match shard_env::resolve(shard, shard_count, &env) {
                Ok(s) => s,
                Err(m) => return bad_input(m),
            };
            let sweep = explore::Explore {
                seeds: seeds.0..seeds.1,
                shard,
                ops,
                profile,
                found_dir,
                control,
                jobs: args::jobs_default(jobs),
                debug_control: debug_control.unwrap_or_default(),
                report,
                saturation_svg,
                html_dir,
            };
            engine_or_exit(&engine, sweep)
        }
        Command::Repro {
            file,
            save_image,
            html,
        } => cases::with_case(&file, |text| run_cmd::Repro {
            file: file.clone(),
            text,
            save_image,
            html,
        }),
        Command::Shrink { file, budget } => cases::with_case(&file, |text| run_cmd::Shrink {
            file: file.clone(),
            text,
            budget,
        }),
        Command::Compare {
            scenario,
            scale,
            json,
            plot,
            engine,
        } => {
            let engines = if engine.is_empty() {
                vec![CompareEngine::Crashlab]
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
        Command::Db { command } => crashlab_dbtool::run(&command),
        Command::Check(args) => check_cmd::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Bench {
            seeds,
            check_seeds,
            jobs,
            rounds,
            engine,
            debug_control,
        } => {
            let bench = bench_cmd::Bench {
                sweep_seeds: seeds,
                check_seeds,
                jobs: jobs.0,
                rounds,
                debug_control: debug_control.unwrap_or_default(),
            };
            engine_or_exit(&engine, bench)
        }
    }
}
