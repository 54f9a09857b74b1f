//! `crashlab explore`: the library sweep with a progress bar, a case saved per violation and a
//! summary. The wall clock is read here only, for the ops/s figure; it never feeds a run.
//!
//! `--jobs N` runs the seeds on N threads; the sweep hands them back in seed order, so every
//! line printed, every case saved and every report line is the same for any N (the wall-clock
//! figures excepted). `--report` and `--saturation-svg` are written by [`crate::report`] and
//! [`crate::saturation_svg`].

use crate::bad_input;
use crate::engines::WithEngine;
use crate::report::{Header, SeedLine, Writer};
use crate::run_cmd::{save_case, with_hook};
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::control::Control;
use crashlab_sim::profile::Profile;
use crashlab_sim::sweep::{sweep, Summary, SweepConfig, SweepControl};
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

pub struct Explore {
    pub seeds: Range<u64>,
    pub shard: (u64, u64),
    pub ops: usize,
    pub profile: Profile,
    pub found_dir: PathBuf,
    pub control: Control,
    pub jobs: usize,
    pub debug_control: SweepControl,
    /// `--report FILE.jsonl`.
    pub report: Option<PathBuf>,
    /// `--saturation-svg FILE`.
    pub saturation_svg: Option<PathBuf>,
    /// Where to write an HTML report per violation found.
    pub html_dir: Option<PathBuf>,
}

impl WithEngine for Explore {
    type Output = ExitCode;
    fn call<E: Engine>(self) -> ExitCode {
        let cfg = SweepConfig {
            seeds: self.seeds.clone(),
            shard: self.shard,
            ops: self.ops,
            profile: self.profile,
            control: self.control,
            jobs: self.jobs,
            debug_control: self.debug_control,
        };
        let header = || {
            Header::new::<E::Config>(
                self.seeds.clone(),
                self.shard,
                self.ops,
                self.profile,
                self.control,
            )
        };
        let mut report_file = match self.report.as_deref().map(|p| Writer::create(p, &header())) {
            Some(Err(m)) => return bad_input(m),
            Some(Ok(w)) => Some(w),
            None => None,
        };
        let engine = E::Config::from_seed(0, self.profile);
        let fits = self
            .profile
            .fits(E::Config::ENGINE, engine.capabilities().directory);
        if let Err(m) = fits.and_then(|()| with_hook(&engine, self.control).map(drop)) {
            return crate::bad_input(m);
        }
        let count = cfg.shard_len();
        let (i, n) = self.shard;
        println!(
            "explore seeds {}..{} shard {i}/{n} ({count} seeds) profile {} ops {} engine {}",
            self.seeds.start,
            self.seeds.end,
            self.profile,
            self.ops,
            E::Config::ENGINE
        );
        let bar = progress_bar(count);
        let started = Instant::now();
        let mut violations = 0u64;
        let summary = sweep::<E>(&cfg, &mut |run, report| {
            let mut case = None;
            if let crashlab_sim::verdict::Outcome::Violation(v) = &report.outcome {
                violations += 1;
                let saved = save_case(run, &self.found_dir);
                if let (Some(dir), Ok(case)) = (&self.html_dir, &saved) {
                    crate::run_cmd::html_of_saved::<E>(run, case, dir);
                }
                let saved = saved.map(|p| p.display().to_string());
                case = saved.as_ref().ok().cloned();
                let repro = saved.unwrap_or_else(|e| format!("(not saved: {e})"));
                // println through the bar: it still prints when the bar is hidden (not a TTY).
                bar.suspend(|| println!("seed {}: {v}\n  repro: crashlab repro {repro}", run.seed));
            }
            if let Some(w) = &mut report_file {
                w.line(&SeedLine::new(run, report, case));
            }
            bar.set_message(format!("{violations} violations"));
            bar.inc(1);
        });
        bar.finish_and_clear();
        print_summary(&summary, started.elapsed().as_secs_f64());
        println!("{}", summary.saturation.line());
        let written = report_file.map_or(Ok(()), Writer::finish).and_then(|()| {
            self.saturation_svg.as_deref().map_or(Ok(()), |p| {
                crate::saturation_svg::write(&summary.saturation, p)
            })
        });
        if let Err(m) = written {
            return bad_input(m);
        }
        if summary.violations > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} seeds · {msg} · {elapsed} (eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn print_summary(t: &Summary, wall_s: f64) {
    let f = &t.faults;
    let ops = t.stats.ops_run;
    println!(
        "seeds {} · ok {} · violations {} · disk failures {}\nops {} · power cuts {} · {:.0} ops/s\nfaults: read_eio {} write_eio {} sync_eio {} latent {} bit_flips {} misdirected {} enospc {} lying_syncs {} garbage_reads {} torn_writes {}\nsimulated {:.3} s in {:.3} s wall ({:.1}x)",
        t.seeds, t.ok, t.violations, t.disk_failures,
        ops, t.stats.crashes, ops as f64 / wall_s.max(1e-9),
        f.read_eio, f.write_eio, f.sync_eio, f.latent_sectors, f.bit_flips, f.misdirected_writes, f.enospc, f.lying_syncs, f.garbage_sector_reads, f.torn_writes_in_crash,
        t.sim_ns as f64 / 1e9, wall_s, t.sim_ns as f64 / 1e9 / wall_s.max(1e-9)
    );
    println!("commits {}", t.stats.commits);
    print!("{}", disk_coverage(t));
    println!("{}", t.thresholds.line());
    print!("{}", crate::reach::reach(&t.stats));
}

/// What the sweep covered of the disk's dimensions: seeds per sector size and per length model,
/// sub-sector tears, and power cuts that tore the engine's meta region (torn metas).
fn disk_coverage(t: &Summary) -> String {
    let d = &t.disk;
    let sizes: Vec<String> = d
        .seeds_by_sector_size
        .iter()
        .map(|(size, n)| format!("{size} B {n}"))
        .collect();
    let lengths: Vec<String> = d
        .seeds_by_length
        .iter()
        .map(|(model, n)| format!("{model} {n}"))
        .collect();
    format!(
        "disk: seeds per sector size: {} · per length model: {}\nsub-sector tears {} (seeds with tears on {}) · torn metas {} (in {} seeds)\n",
        sizes.join(", "),
        lengths.join(", "),
        t.faults.sub_sector_tears,
        d.seeds_with_tears_on,
        d.torn_metas,
        d.seeds_with_torn_metas
    )
}
