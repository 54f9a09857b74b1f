//! `crashlab bench`: the simulator's two throughput figures side by side, from one fixed
//! workload each — simulated operations per second of a sweep with every check on (what
//! `explore` prints as `ops/s`), and crash states per second of the exhaustive checker (what
//! `check` prints as `states/s`). The wall clock is read here only; it never feeds a run, so
//! both workloads, and every figure but the two rates, are the same on every machine.

use crate::engines::WithEngine;
use crashlab_check::{self as check, CheckConfig};
use crashlab_sim::adapter::Engine;
use crashlab_sim::profile::Profile;
use crashlab_sim::sweep::{sweep, SweepConfig};
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
    /// Worker threads of the sweep (the checker's walk runs on one).
    pub jobs: usize,
}

impl WithEngine for Bench {
    type Output = ExitCode;

    fn call<E: Engine>(self) -> ExitCode {
        let mut cfg = SweepConfig::new(0..self.sweep_seeds, SWEEP_OPS, Profile::Default);
        cfg.jobs = self.jobs;
        let started = Instant::now();
        let summary = sweep::<E>(&cfg, &mut |_, _| {});
        let sweep_s = started.elapsed().as_secs_f64().max(1e-9);
        let ops = summary.stats.ops_run;
        println!(
            "sweep: seeds 0..{} × {SWEEP_OPS} ops, default profile, --jobs {}: {ops} ops, {} \
             violations, in {sweep_s:.3} s: {:.0} simulated ops/s with full checking",
            self.sweep_seeds,
            self.jobs,
            summary.violations,
            ops as f64 / sweep_s
        );
        let (mut states, mut violating) = (0, 0);
        let started = Instant::now();
        for seed in 0..self.check_seeds {
            let report = check::check::<E>(&CheckConfig::from_seed(seed, CHECK_OPS));
            states += report.states();
            violating += report.violating_states;
        }
        let check_s = started.elapsed().as_secs_f64().max(1e-9);
        println!(
            "check: seeds 0..{} × {CHECK_OPS} ops: {states} crash states, {violating} violating, \
             in {check_s:.3} s: {:.0} crash states/s",
            self.check_seeds,
            states as f64 / check_s
        );
        // A bench that met a violation says so: its figures are not the correct engine's.
        if summary.violations > 0 || violating > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}
