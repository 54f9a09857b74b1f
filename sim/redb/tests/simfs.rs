//! redb on one SimFs file: a seed runs to the same outcome, trace, image and figures as on the
//! bare simulated disk, under both metadata models. redb keeps one file, so the file system
//! must be invisible to it; a difference here would be SimFs changing what a single-file engine
//! sees (its file's seed, a call's accounting, a power cut's draws).

use crashlab_redb::RedbDb;
use crashlab_sim::config::RunConfig;
use crashlab_sim::fs::run::run_on_one_file;
use crashlab_sim::fs::{FsConfig, MetaModel};
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::Outcome;

/// Seeds per profile (every profile but `scale`, whose long workloads reach nothing on the
/// storage that `default` does not), at 40 operations each.
const SEEDS: u64 = 10;

#[test]
fn redb_seeds_run_the_same_on_one_simfs_file() {
    let (mut crashes, mut violations, mut oks) = (0, 0, 0);
    for profile in Profile::ALL.into_iter().filter(|p| !p.reaches_scale()) {
        for seed in 0..SEEDS {
            let cfg = RunConfig::from_seed(seed, 40, profile);
            let want = run::<RedbDb>(&cfg);
            crashes += want.stats.crashes;
            violations += u64::from(want.outcome.is_violation());
            oks += u64::from(want.outcome == Outcome::Ok);
            for model in MetaModel::ALL {
                let fs = FsConfig {
                    model,
                    ..FsConfig::default()
                };
                let got = run_on_one_file::<RedbDb>(&cfg, fs);
                let at = format!("{profile} seed {seed} {model}");
                assert_eq!(got.outcome, want.outcome, "{at}");
                assert_eq!(got.trace_hash, want.trace_hash, "{at}");
                assert_eq!(got.trace_events, want.trace_events, "{at}");
                assert_eq!(got.image_hash, want.image_hash, "{at}");
                assert_eq!(got.stats, want.stats, "{at}");
                assert_eq!(got.faults, want.faults, "{at}");
                assert_eq!(got.io, want.io, "{at}");
            }
        }
    }
    assert!(crashes >= SEEDS, "the seeds cut the power: {crashes} cuts");
    // Both kinds of outcome are compared: the negative controls' violations and clean passes.
    assert!(
        violations > 0 && oks > 0,
        "{violations} violations, {oks} passes"
    );
}
