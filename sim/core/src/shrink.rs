//! Shrinking a failing case: fewer operations and fewer faults, while the violation persists.
//!
//! Operations are removed by delta debugging (chunks of half the list, then quarters, … down to
//! single operations); then each fault kind is switched off in turn. Every attempt is one run, so
//! the budget bounds the work. The result always still fails: only changes that keep the
//! violation are kept.

use crate::adapter::Engine;
use crate::config::RunConfig;
use crate::disk::FaultConfig;
use crate::runner::run;

pub struct Shrunk<C> {
    pub run: RunConfig<C>,
    pub attempts: usize,
}

fn fails<E: Engine>(cfg: &RunConfig<E::Config>) -> bool {
    run::<E>(cfg).outcome.is_violation()
}

/// Shrink `cfg`, which must fail, using at most `budget` runs.
pub fn shrink<E: Engine>(cfg: &RunConfig<E::Config>, budget: usize) -> Shrunk<E::Config> {
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
            if fails::<E>(&trial) {
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
        if fails::<E>(&trial) {
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

const FAULT_KNOCKOUTS: [KnockOut; 9] = [
    |f| std::mem::replace(&mut f.read_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.write_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.sync_eio, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.latent, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.bit_flip, 0.0) > 0.0,
    |f| std::mem::replace(&mut f.misdirect, 0.0) > 0.0,
    |f| f.enospc_capacity.take().is_some(),
    |f| std::mem::replace(&mut f.garbage_unwritten, false),
    |f| std::mem::replace(&mut f.sub_sector_tear, 0.0) > 0.0,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crashlab::CrashlabDb;
    use crate::profile::Profile;

    #[test]
    fn shrinking_a_lying_sync_violation_keeps_it_failing_and_gets_smaller() {
        let from_seed = |s| RunConfig::from_seed(s, 120, Profile::LyingSync);
        let seed = (0..200)
            .find(|&s| fails::<CrashlabDb>(&from_seed(s)))
            .expect("the lying sync is caught within 200 seeds");
        let cfg = from_seed(seed);
        let s = shrink::<CrashlabDb>(&cfg, 400);
        assert!(fails::<CrashlabDb>(&s.run), "the shrunk case still fails");
        assert!(
            s.run.ops.len() < cfg.ops.len() / 2,
            "{} of {} ops left",
            s.run.ops.len(),
            cfg.ops.len()
        );
    }
}
