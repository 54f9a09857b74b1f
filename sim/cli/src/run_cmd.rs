//! `crashlab run`, `repro` and `shrink`: one seed, one saved case, one case made smaller.

use crate::cases::{parse_case, print_expectation};
use crate::engines::WithEngine;
use crate::{bad_input, check_cmd, html};
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::disk::capture::{capture, save_durable_image};
use crashlab_sim::input::writable_target;
use crashlab_sim::profile::Profile;
use crashlab_sim::report;
use crashlab_sim::runner::{header, run, run_logged, Report};
use crashlab_sim::shrink::shrink;
use crashlab_sim::sweep::repro_line;
use crashlab_sim::verdict::Outcome;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `crashlab run --seed S`.
pub struct RunSeed {
    pub seed: u64,
    pub ops: usize,
    pub profile: Profile,
    pub found_dir: PathBuf,
    pub control: Control,
}

impl WithEngine for RunSeed {
    type Output = ExitCode;
    fn call<E: Engine>(self) -> ExitCode {
        let mut cfg = RunConfig::<E::Config>::from_seed(self.seed, self.ops, self.profile);
        let directory = cfg.engine.capabilities().directory;
        if let Err(m) = self.profile.fits(E::Config::ENGINE, directory) {
            return bad_input(m);
        }
        match with_hook(&cfg.engine, self.control) {
            Ok(engine) => cfg.engine = engine,
            Err(m) => return bad_input(m),
        }
        print!("{}", header(&cfg));
        let r = run::<E>(&cfg);
        print!("{}", report::body(&r));
        finish_one(&cfg, &r, &self.found_dir, self.control)
    }
}

/// `engine` with the debug hook of `control` on; `Err` for a control that is no engine hook (a
/// storage control is a profile for `run` and `explore`) or one the engine does not have.
pub fn with_hook<C: EngineConfig>(engine: &C, control: Control) -> Result<C, String> {
    if control == Control::None {
        return Ok(engine.clone());
    }
    if control.is_storage_wrapper() {
        return Err(format!(
            "--control {control} is built in the storage; run and explore take it as a profile \
             where there is one (--profile no-barrier, --profile no-growth-sync)"
        ));
    }
    engine.with_control(control)
}

/// On a violation: the trace tail, the saved case and the one-line repro command.
fn finish_one<C: EngineConfig>(
    cfg: &RunConfig<C>,
    r: &Report,
    found_dir: &Path,
    control: Control,
) -> ExitCode {
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
    match control {
        Control::None => println!("or:    {}", repro_line(cfg)),
        c => println!("or:    {} --control {c}", repro_line(cfg)),
    }
    ExitCode::from(1)
}

/// Save the case of a violating seed under `dir`; its path.
pub fn save_case<C: EngineConfig>(cfg: &RunConfig<C>, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!(
        "seed-{}-{}-{}.case",
        cfg.seed,
        cfg.profile,
        C::ENGINE
    ));
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

/// The HTML report of a violating seed saved as `case`: `dir/<case's stem>.html` (a message on
/// stderr when it cannot be written; the sweep goes on). The run is replayed with the event log
/// on, so the sweep itself keeps none.
pub fn html_of_saved<E: Engine>(cfg: &RunConfig<E::Config>, case: &Path, dir: &Path) {
    let (r, log) = run_logged::<E>(cfg);
    let repro = format!("crashlab repro {}", case.display());
    let stem = case.file_stem().unwrap_or_default().to_string_lossy();
    let path = dir.join(format!("{stem}.html"));
    match html::write_page(&path, &html::from_run(cfg, &r, &log, repro)) {
        Ok(()) => println!("  report: {}", path.display()),
        Err(m) => eprintln!("{m}"),
    }
}

/// `crashlab repro FILE`.
pub struct Repro {
    pub file: PathBuf,
    pub text: String,
    pub save_image: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

impl WithEngine for Repro {
    type Output = ExitCode;
    fn call<E: Engine>(self) -> ExitCode {
        let case = match parse_case::<E::Config>(&self.text, &self.file) {
            Ok(c) => c,
            Err(code) => return code,
        };
        for target in [&self.save_image, &self.html].into_iter().flatten() {
            if let Err(m) = writable_target(target) {
                return bad_input(m);
            }
        }
        let repro = format!("crashlab repro {}", self.file.display());
        if let Some(state) = &case.crash_state {
            if let Some(path) = &self.html {
                let cfg = crashlab_check::CheckConfig::from_case(&case);
                let page = html::from_check::<E>(&cfg, state, repro);
                if let Err(m) = page.and_then(|p| html::write_page(path, &p)) {
                    return bad_input(m);
                }
                println!("wrote the report {}", path.display());
            }
            return check_cmd::replay_state::<E>(&case, state, self.save_image.as_deref());
        }
        print!("{}", header(&case.run));
        let (r, disks) = if let Some(path) = &self.html {
            let ((r, log), disks) = capture(|| run_logged::<E>(&case.run));
            let page = html::from_run(&case.run, &r, &log, repro);
            if let Err(m) = html::write_page(path, &page) {
                return bad_input(m);
            }
            println!("wrote the report {}", path.display());
            (r, disks)
        } else {
            capture(|| run::<E>(&case.run))
        };
        print!("{}", report::body(&r));
        if let (Some(path), Some(disk)) = (&self.save_image, disks.last()) {
            match save_durable_image(disk, path) {
                Ok(n) => println!(
                    "saved the durable disk image ({n} bytes): crashlab db check {}",
                    path.display()
                ),
                Err(e) => return bad_input(format!("cannot write {}: {e}", path.display())),
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
}

/// `crashlab shrink FILE`.
pub struct Shrink {
    pub file: PathBuf,
    pub text: String,
    pub budget: usize,
}

impl WithEngine for Shrink {
    type Output = ExitCode;
    fn call<E: Engine>(self) -> ExitCode {
        let case = match parse_case::<E::Config>(&self.text, &self.file) {
            Ok(c) => c,
            Err(code) => return code,
        };
        let out = self.file.with_extension("shrunk.case");
        if let Err(m) = writable_target(&out) {
            return bad_input(m);
        }
        if !run::<E>(&case.run).outcome.is_violation() {
            return bad_input(format!(
                "{}: the case does not fail, so there is nothing to shrink",
                self.file.display()
            ));
        }
        let s = shrink::<E>(&case.run, self.budget);
        let crash = s.crash_words();
        let shrunk = Case {
            run: s.run,
            expect: Expect::Violation,
            explicit_ops: true,
            check: None,
            crash_state: None,
        };
        if let Err(e) = std::fs::write(&out, shrunk.to_text()) {
            return bad_input(format!("cannot write {}: {e}", out.display()));
        }
        println!(
            "shrunk {} ops to {} in {} runs: {}\nrepro: crashlab repro {}",
            case.run.ops.len(),
            shrunk.run.ops.len(),
            s.attempts,
            out.display(),
            out.display()
        );
        match crash {
            Some(words) => println!("minimal crash state: {words}"),
            None => println!("no power cut precedes the violation: no crash state to minimise"),
        }
        ExitCode::SUCCESS
    }
}
