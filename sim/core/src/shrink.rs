//! Shrinking a failing case: fewer operations and fewer faults, while the violation persists.
//!
//! Operations are removed by delta debugging (chunks of half the list, then quarters, … down to
//! single operations); then each fault kind is switched off in turn. Every attempt is one run, so
//! the budget bounds the work. The result always still fails: only changes that keep the
//! violation are kept.

use crate::disk::FaultConfig;
use crate::runner::{run_guarded, Outcome, RunConfig};

pub struct Shrunk {
    pub run: RunConfig,
    pub attempts: usize,
}

fn fails(cfg: &RunConfig) -> bool {
    matches!(run_guarded(cfg).outcome, Outcome::Violation(_))
}

/// Shrink `cfg`, which must fail, using at most `budget` runs.
pub fn shrink(cfg: &RunConfig, budget: usize) -> Shrunk {
    let mut best = cfg.clone();
    let mut attempts = 0;
    let mut chunk = best.ops.len().div_ceil(2).max(1);
    while chunk >= 1 && attempts < budget {
        let mut start = 0;
        while start < best.ops.len() && attempts < budget {
            let mut trial = best.clone();
            let end = (start + chunk).min(trial.ops.len());
            trial.ops.drain(start..end);
            attempts += 1;
            if fails(&trial) {
                best = trial; // keep `start`: the next chunk slid into place
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    for knock_out in FAULT_KNOCKOUTS {
        if attempts >= budget {
            break;
        }
        let mut trial = best.clone();
        if !knock_out(&mut trial.disk.faults) {
            continue;
        }
        attempts += 1;
        if fails(&trial) {
            best = trial;
        }
    }
    Shrunk {
        run: best,
        attempts,
    }
}

/// Each switches one fault kind off; `false` when it was already off.
type KnockOut = fn(&mut FaultConfig) -> bool;

const FAULT_KNOCKOUTS: [KnockOut; 8] = [
    |f| std::mem::replace(&mut f.read_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.write_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.sync_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.latent, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.bit_flip, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.misdirect, 0.0) > 0.0,
    |f| f.enospc_capacity.take().is_some(),
    |f| std::mem::replace(&mut f.garbage_unwritten, false),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    #[test]
    fn shrinking_a_lying_sync_violation_keeps_it_failing_and_gets_smaller() {
        let seed = (0..200)
            .find(|&s| fails(&RunConfig::from_seed(s, 120, Profile::LyingSync)))
            .expect("the lying sync is caught within 200 seeds");
        let cfg = RunConfig::from_seed(seed, 120, Profile::LyingSync);
        let s = shrink(&cfg, 400);
        assert!(fails(&s.run), "the shrunk case still fails");
        assert!(
            s.run.ops.len() < cfg.ops.len() / 2,
            "{} of {} ops left",
            s.run.ops.len(),
            cfg.ops.len()
        );
    }
}
