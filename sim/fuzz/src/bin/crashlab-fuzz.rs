//! `crashlab-fuzz`: run a fuzzing campaign on the engine's file format, or replay a saved
//! failure.
//!
//! ```text
//! crashlab-fuzz run --seconds 600 --jobs 2 --seed 1     # a long campaign
//! crashlab-fuzz run --inputs 3000 --bases small         # what `cargo test` runs
//! crashlab-fuzz replay fuzz-failures/s1-i17.json        # one saved failure
//! crashlab-fuzz minimize fuzz-failures/s1-i17.json      # its fewest edits that still fail
//! crashlab-fuzz show --seed 1 --index 17 > i17.json    # any input, to replay or study
//! ```
//!
//! The parent never runs an input itself: it starts worker processes (this binary, `worker`
//! subcommand), reads which input each is on, kills one that passes the per-input deadline,
//! and records an input whose worker died (abort on the memory cap, stack overflow, signal),
//! then starts a new worker after it. The wall clock here only decides timeouts and prints
//! rates; it never chooses an input.
#![forbid(unsafe_code)]

#[path = "crashlab-fuzz/campaign.rs"]
mod campaign;
#[path = "crashlab-fuzz/proc.rs"]
mod proc;
#[path = "crashlab-fuzz/replay.rs"]
mod replay;

use cap::Cap;
use clap::{Parser, Subcommand};
use crashlab_fuzz::bases::{default_fixtures, BasePool};
use crashlab_fuzz::spec::{BaseSet, Draw, Saved};
use crashlab_fuzz::storage::Control;
use crashlab_fuzz::worker::{self, Inputs, MemoryLimit};
use std::alloc::System;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Counts the live heap; a worker lowers the limit per input (the memory cap).
#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

struct Limit;

impl MemoryLimit for Limit {
    fn allocated(&self) -> usize {
        ALLOC.allocated()
    }

    fn set_limit(&self, limit: usize) {
        // Fails only when the heap already exceeds the limit; the next allocation then fails,
        // which is the cap doing its job.
        let _ = ALLOC.set_limit(limit);
    }
}

#[derive(Parser)]
#[command(name = "crashlab-fuzz", about = "Fuzz crashlab's database file format")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Per-input deadline; the watchdog kills a worker past it.
    #[arg(long, default_value_t = 60)]
    timeout_secs: u64,
    /// A deliberate harness fault (negative controls).
    #[arg(long, value_enum, default_value = "none")]
    control: Control,
    /// Where the bbolt fixtures are.
    #[arg(long)]
    fixtures: Option<PathBuf>,
    /// A directory where workers share the bases they generate (set by `run`).
    #[arg(long, hide = true)]
    cache: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a campaign and print its summary.
    Run {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Run inputs 0..N (deterministic); without it, run until --seconds.
        #[arg(long)]
        inputs: Option<u64>,
        /// Stop after this many seconds (inputs in flight are not counted).
        #[arg(long)]
        seconds: Option<u64>,
        /// Worker processes.
        #[arg(long, default_value_t = 1)]
        jobs: u64,
        #[arg(long, value_enum, default_value = "all")]
        bases: BaseSet,
        /// Most mutations per input; 0 runs the bases undamaged.
        #[arg(long, default_value_t = 8)]
        max_mutations: usize,
        /// Where failing inputs are saved (a few per failure class).
        #[arg(long, default_value = "fuzz-failures")]
        save: PathBuf,
        /// Print the summary as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Replay saved inputs, each in a worker with the cap and the deadline.
    Replay {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print each result as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Print input INDEX of a campaign as a saved input (JSON), to replay or study it.
    Show {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        index: u64,
        #[arg(long, value_enum, default_value = "all")]
        bases: BaseSet,
        #[arg(long, default_value_t = 8)]
        max_mutations: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Shrink a saved failure to the fewest edits that still fail the same way.
    Minimize {
        file: PathBuf,
        /// Where to write the result (default: FILE with `.min.json`).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Run inputs and report on stdout (started by `run` and `replay`).
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long, default_value_t = 0)]
        start: u64,
        #[arg(long, default_value_t = 1)]
        step: u64,
        #[arg(long)]
        end: Option<u64>,
        #[arg(long, value_enum, default_value = "all")]
        bases: BaseSet,
        #[arg(long, default_value_t = 8)]
        max_mutations: usize,
        #[arg(long)]
        saved: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            seed,
            inputs,
            seconds,
            jobs,
            bases,
            max_mutations,
            save,
            json,
            common,
        } => {
            if inputs.is_none() && seconds.is_none() {
                eprintln!("crashlab-fuzz run: give --inputs N or --seconds S");
                return ExitCode::from(2);
            }
            let draw = Draw {
                seed,
                bases,
                max_mutations,
            };
            let c = campaign::Campaign {
                draw,
                inputs,
                seconds,
                jobs: jobs.max(1),
                save,
                timeout: Duration::from_secs(common.timeout_secs),
                control: common.control,
                fixtures: common.fixtures.unwrap_or_else(default_fixtures),
                json,
            };
            c.run()
        }
        Command::Replay {
            files,
            json,
            common,
        } => replay::replay(
            &files,
            Duration::from_secs(common.timeout_secs),
            common.control,
            &common.fixtures.unwrap_or_else(default_fixtures),
            json,
        ),
        Command::Show {
            seed,
            index,
            bases,
            max_mutations,
            common,
        } => show(
            Draw {
                seed,
                bases,
                max_mutations,
            },
            index,
            common,
        ),
        Command::Minimize { file, out, common } => replay::minimize(
            &file,
            &out.unwrap_or_else(|| file.with_extension("min.json")),
            Duration::from_secs(common.timeout_secs),
            &common.fixtures.unwrap_or_else(default_fixtures),
        ),
        Command::Worker {
            seed,
            start,
            step,
            end,
            bases,
            max_mutations,
            saved,
            common,
        } => worker_main(
            seed,
            (start, step, end),
            bases,
            max_mutations,
            saved,
            common,
        ),
    }
}

fn show(draw: Draw, index: u64, common: Common) -> ExitCode {
    let mut pool = BasePool::new(common.fixtures.unwrap_or_else(default_fixtures));
    match draw.input(index, &mut pool) {
        Ok((spec, _)) => {
            let saved = Saved {
                seed: draw.seed,
                index,
                note: String::new(),
                failure: None,
                writes: Vec::new(),
                spec,
            };
            let text = serde_json::to_string_pretty(&saved).expect("a saved input serialises");
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("crashlab-fuzz show: {e}");
            ExitCode::from(2)
        }
    }
}

fn worker_main(
    seed: Option<u64>,
    (start, step, end): (u64, u64, Option<u64>),
    bases: BaseSet,
    max_mutations: usize,
    saved: Option<PathBuf>,
    common: Common,
) -> ExitCode {
    let inputs = match (saved, seed) {
        (Some(path), _) => match Saved::load(&path) {
            Ok(s) => Inputs::Saved {
                index: s.index,
                spec: Box::new(s.spec),
            },
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        },
        (None, Some(seed)) => Inputs::Drawn {
            draw: Draw {
                seed,
                bases,
                max_mutations,
            },
            start,
            step,
            end,
        },
        (None, None) => {
            eprintln!("crashlab-fuzz worker: give --seed or --saved");
            return ExitCode::from(2);
        }
    };
    let mut pool = BasePool::new(common.fixtures.unwrap_or_else(default_fixtures));
    if let Some(dir) = common.cache {
        pool = pool.with_disk_cache(dir);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match worker::run(inputs, &mut pool, common.control, &Limit, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crashlab-fuzz worker: {e}");
            ExitCode::from(2)
        }
    }
}
