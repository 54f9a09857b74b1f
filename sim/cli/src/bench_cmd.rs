//! `crashlab bench`: the simulator's throughput figures side by side, from one fixed workload
//! each — simulated operations per second of a sweep with every check on (what `explore` prints
//! as `ops/s`) at each `--jobs` count asked for, in interleaved rounds, and crash states per
//! second of the exhaustive checker (what `check` prints as `states/s`) — each with the peak
//! resident memory of its part. The wall clock is read here only; it never feeds a run, so both
//! workloads, and every figure but the rates and the peaks, are the same on every machine.
//!
//! The job counts of one round run one after another, and the rounds repeat that order, so a
//! machine that gets busier or quieter during the run moves every count alike: the ratios are
//! taken within a round. Every run's seeds must come back the same (an order-sensitive digest
//! of each seed's outcome, trace hash and image hash, in the order the sweep handed them over),
//! whatever the job count; a difference is a bug of the parallel sweep, exit 1.

use crate::engines::WithEngine;
use crate::peak_memory;
use crashlab_check::{self as check, CheckConfig};
use crashlab_sim::adapter::Engine;
use crashlab_sim::disk::ImageHasher;
use crashlab_sim::profile::Profile;
use crashlab_sim::sweep::{sweep, SweepConfig, SweepControl};
use std::process::ExitCode;
use std::time::Instant;

/// Operations per seed of the sweep: `explore`'s default.
const SWEEP_OPS: usize = 300;
/// Operations per seed of the checker: `check`'s default.
const CHECK_OPS: usize = 12;

/// What `crashlab bench` measures.
pub struct Bench {
    /// Sweep seeds `0..sweep_seeds` (default profile).
    pub sweep_seeds: u64,
    /// Check seeds `0..check_seeds` with the checker's defaults.
    pub check_seeds: u64,
    /// The sweep's worker-thread counts, each run once per round (the checker's walk runs on
    /// one thread).
    pub jobs: Vec<usize>,
    /// Rounds of the sweep.
    pub rounds: u32,
    /// A deliberate bug of the parallel sweep (hidden flag), which the digest must catch.
    pub debug_control: SweepControl,
}

/// One sweep run's figures.
struct SweepRun {
    ops: u64,
    violations: u64,
    seconds: f64,
    peak_kib: Option<u64>,
    /// Every seed's outcome and hashes, in the order the sweep handed them over.
    digest: u64,
}

impl SweepRun {
    fn rate(&self) -> f64 {
        self.ops as f64 / self.seconds
    }
}

impl Bench {
    fn sweep<E: Engine>(&self, jobs: usize) -> SweepRun {
        let mut cfg = SweepConfig::new(0..self.sweep_seeds, SWEEP_OPS, Profile::Default);
        cfg.jobs = jobs;
        cfg.debug_control = self.debug_control;
        let mut digest = ImageHasher::new();
        peak_memory::reset();
        let started = Instant::now();
        let summary = sweep::<E>(&cfg, &mut |run, report| {
            digest.update(&run.seed.to_le_bytes());
            digest.update(format!("{:?}", report.outcome).as_bytes());
            digest.update(&report.trace_hash.to_le_bytes());
            digest.update(&report.image_hash.to_le_bytes());
        });
        SweepRun {
            seconds: started.elapsed().as_secs_f64().max(1e-9),
            peak_kib: peak_memory::peak_kib(),
            ops: summary.stats.ops_run,
            violations: summary.violations,
            digest: digest.digest(),
        }
    }

    /// The sweep at every job count, `rounds` times; true when every run gave the same seeds.
    fn sweeps<E: Engine>(&self) -> (bool, u64) {
        println!(
            "sweep: seeds 0..{} × {SWEEP_OPS} ops, default profile, --jobs {} in {} interleaved \
             round(s)",
            self.sweep_seeds,
            list(&self.jobs),
            self.rounds
        );
        let mut runs: Vec<Vec<SweepRun>> = Vec::new();
        for round in 1..=self.rounds {
            let row: Vec<SweepRun> = self.jobs.iter().map(|&j| self.sweep::<E>(j)).collect();
            let cells: Vec<String> = self
                .jobs
                .iter()
                .zip(&row)
                .map(|(j, r)| {
                    format!(
                        "--jobs {j} {:.3} s {:.0} ops/s ({}, ×{:.2})",
                        r.seconds,
                        r.rate(),
                        peak_memory::describe(r.peak_kib),
                        r.rate() / row[0].rate()
                    )
                })
                .collect();
            println!("  round {round}: {}", cells.join(" · "));
            runs.push(row);
        }
        let first = &runs[0][0];
        println!(
            "  {} ops, {} violations per run",
            first.ops, first.violations
        );
        for (k, &j) in self.jobs.iter().enumerate().skip(1) {
            let ratios: Vec<String> = runs
                .iter()
                .map(|row| format!("{:.2}×", row[k].rate() / row[0].rate()))
                .collect();
            println!(
                "  --jobs {j} ÷ --jobs {}: {}",
                self.jobs[0],
                ratios.join(" ")
            );
        }
        let same = runs.iter().flatten().all(|r| r.digest == first.digest);
        println!(
            "  the same seeds, outcomes and hashes in the same order at every job count: {}",
            if same {
                "yes"
            } else {
                "NO (a bug of the parallel sweep)"
            }
        );
        (same, first.violations)
    }

    fn check<E: Engine>(&self) -> u64 {
        let (mut states, mut violating) = (0, 0);
        peak_memory::reset();
        let started = Instant::now();
        for seed in 0..self.check_seeds {
            let report = check::check::<E>(&CheckConfig::from_seed(seed, CHECK_OPS));
            states += report.states();
            violating += report.violating_states;
        }
        let check_s = started.elapsed().as_secs_f64().max(1e-9);
        println!(
            "check: seeds 0..{} × {CHECK_OPS} ops: {states} crash states, {violating} violating, \
             in {check_s:.3} s: {:.0} crash states/s ({})",
            self.check_seeds,
            states as f64 / check_s,
            peak_memory::describe(peak_memory::peak_kib())
        );
        violating
    }
}

fn list(jobs: &[usize]) -> String {
    let items: Vec<String> = jobs.iter().map(usize::to_string).collect();
    items.join(",")
}

impl WithEngine for Bench {
    type Output = ExitCode;

    fn call<E: Engine>(self) -> ExitCode {
        assert!(
            !self.jobs.is_empty() && self.rounds > 0,
            "the parser asks for a job count and a round"
        );
        let (same, violations) = self.sweeps::<E>();
        let violating = self.check::<E>();
        // A bench that met a violation says so: its figures are not the correct engine's.
        if !same || violations > 0 || violating > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}
