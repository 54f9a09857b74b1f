//! `crashlab check`: every crash state of a small workload, and the replay of one saved state.
//!
//! The wall clock is read here only, for the states/s figure; it never feeds the check.

use crashlab_sim::case::{format_options, presize_name, Case, Expect};
use crashlab_sim::check::spec::{max_states_valid, sector_size_valid};
use crashlab_sim::check::{self, CheckConfig, CheckReport, Control, CrashState, Replayed};
use crashlab_sim::engines::redb::RedbChoices;
use crashlab_sim::engines::EngineKind;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Command-line settings that replace the case's or the defaults.
pub struct Overrides {
    pub max_states: Option<u64>,
    pub sector_size: Option<u32>,
    pub batched: bool,
    pub control: Option<Control>,
    pub recrash_one_in: u64,
    pub stop_at_first: bool,
}

fn bad_input(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// `base` with the command line's settings.
fn configure(mut cfg: CheckConfig, o: &Overrides) -> Result<CheckConfig, String> {
    if let Some(n) = o.max_states {
        cfg.params.max_states = max_states_valid(n)?;
    }
    if let Some(ss) = o.sector_size {
        cfg.params.sector_size = sector_size_valid(ss)?;
    }
    cfg.params.batched |= o.batched;
    if let Some(c) = o.control {
        cfg.params.control = c;
    }
    cfg.recrash_one_in = o.recrash_one_in;
    if o.stop_at_first {
        cfg.stop_after = Some(1);
    }
    match cfg.unsupported() {
        Some(why) => Err(why),
        None => Ok(cfg),
    }
}

/// Check `base` (from a case or a seed) with the command line's settings.
pub fn run(base: CheckConfig, o: &Overrides, variants: bool, found_dir: &Path) -> ExitCode {
    let cfg = match configure(base, o) {
        Ok(c) => c,
        Err(m) => return bad_input(m),
    };
    if variants {
        if cfg.engine != EngineKind::Crashlab {
            return bad_input(format!(
                "--variants varies crashlab's engine options; {} draws its commit protocol \
                 and durability from the seed",
                cfg.engine
            ));
        }
        return run_variants(&cfg);
    }
    print!("{}", header(&cfg));
    let started = Instant::now();
    let report = check::check(&cfg);
    let wall_s = started.elapsed().as_secs_f64();
    print!("{}", report.text(Some(wall_s)));
    save_found(&cfg, &report, found_dir);
    if report.violating_states > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn header(cfg: &CheckConfig) -> String {
    let engine = match cfg.engine {
        EngineKind::Crashlab => format!("options: {}", format_options(&cfg.options)),
        EngineKind::Redb => {
            let c = RedbChoices::from_seed(cfg.seed, cfg.run_config().profile);
            format!(
                "engine: redb · {} commit · {:.0} % of commits Durability::None",
                if c.two_phase {
                    "two-phase"
                } else {
                    "one-phase"
                },
                100.0 * c.non_durable_share
            )
        }
    };
    format!(
        "check seed {} ops {} · {}\n  {engine}\n",
        cfg.seed,
        cfg.ops.len(),
        cfg.params,
    )
}

/// A case file per reported violation, and the line that replays it.
fn save_found(cfg: &CheckConfig, report: &CheckReport, dir: &Path) {
    for (i, f) in report.found.iter().enumerate() {
        let case = cfg.to_case(f.state.clone());
        let engine = match cfg.engine {
            EngineKind::Crashlab => String::new(),
            other => format!("-{other}"),
        };
        let name = format!(
            "check-{}-{}{engine}-{}.case",
            cfg.seed, cfg.params.control, i
        );
        match save(dir, &name, &case) {
            Ok(path) => println!("  repro: crashlab repro {}", path.display()),
            Err(e) => eprintln!("could not save a case under {}: {e}", dir.display()),
        }
    }
}

fn save(dir: &Path, name: &str, case: &Case) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    crashlab_sim::input::writable_target(&path).map_err(std::io::Error::other)?;
    std::fs::write(&path, case.to_text())?;
    Ok(path)
}

/// Every freelist × freelist-synced × batched × pre-size variant, one row each.
fn run_variants(base: &CheckConfig) -> ExitCode {
    print!("{}", header(base));
    println!("| freelist | freelist synced | batched | presize | crash points | exhaustive | states | distinct | violations | states/s |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let (mut states, mut wall, mut violations) = (0u64, 0f64, 0u64);
    for cfg in base.variants() {
        let started = Instant::now();
        let r = check::check(&cfg);
        let w = started.elapsed().as_secs_f64();
        println!(
            "| {:?} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
            cfg.options.freelist,
            !cfg.options.no_freelist_sync,
            cfg.params.batched,
            presize_name(cfg.options.presize),
            r.crash_points,
            r.coverage.exhaustive,
            r.states(),
            r.distinct,
            r.violating_states,
            r.states() as f64 / w.max(1e-9)
        );
        states += r.states();
        wall += w;
        violations += r.violating_states;
    }
    println!(
        "total: {states} states in {wall:.3} s ({:.0} states/s) · {violations} violating states",
        states as f64 / wall.max(1e-9)
    );
    if violations > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `crashlab repro` of a case that names a crash state; `save_image`: where to write the disk
/// image the state leaves.
pub fn replay_state(case: &Case, state: &CrashState, save_image: Option<&Path>) -> ExitCode {
    let cfg = CheckConfig::from_case(case);
    print!("{}", header(&cfg));
    println!("crash state: {state}");
    if let Some(path) = save_image {
        let image = match check::state_image(&cfg, state) {
            Ok(image) => image,
            Err(m) => return bad_input(format!("cannot save an image: {m}")),
        };
        if let Err(e) = std::fs::write(path, &image) {
            return bad_input(format!("cannot write {}: {e}", path.display()));
        }
        println!(
            "saved the crash state's disk image ({} bytes): crashlab db check {}",
            image.len(),
            path.display()
        );
    }
    let got = match check::replay(&cfg, state) {
        Replayed::Missing(m) => return bad_input(format!("cannot replay this state: {m}")),
        Replayed::Violation { kind, detail } => {
            println!("VIOLATION {kind}: {detail}");
            Expect::Violation
        }
        Replayed::Clean => {
            println!("ok: the state recovers as allowed");
            Expect::Ok
        }
    };
    crate::print_expectation(case.expect, got, "state");
    if got == Expect::Violation {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
