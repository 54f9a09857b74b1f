//! Single-file engines on one SimFs file: the same storage calls give the same bytes as on a
//! `SimDisk`, and crashlab's engine runs its seeds to the same outcomes and trace hashes.

use super::*;
use crate::config::RunConfig;
use crate::crashlab::CrashlabDb;
use crate::fs::run::run_on_one_file;
use crate::profile::Profile;
use crate::rng::SimRng;
use crate::runner::run;
use crate::verdict::Outcome;

/// A seeded script of storage calls, every error ignored as an engine that carries on would.
fn script(s: &dyn Storage, seed: u64) {
    let mut rng = SimRng::new(seed);
    for _ in 0..200 {
        let offset = rng.below(16_384);
        let _ = match rng.below(10) {
            0..=4 => s.write_at(
                offset,
                &vec![rng.below(256) as u8; rng.range(1, 2000) as usize],
            ),
            5 | 6 => s.read_at(offset, &mut vec![0u8; rng.range(1, 600) as usize]),
            7 => s.sync(),
            8 => s.set_len(rng.below(20_000)),
            _ => s.len().map(drop),
        };
    }
}

#[test]
fn the_same_calls_and_power_cut_give_the_same_bytes_on_a_disk_and_a_file() {
    for seed in 0..24 {
        let disk_cfg = crate::profile::disk_config(seed, Profile::Corruption);
        for model in MetaModel::ALL {
            let fs = SimFs::new(
                seed,
                disk_cfg.clone(),
                FsConfig {
                    model,
                    ..FsConfig::default()
                },
            );
            let file = fs.create("db").unwrap();
            fs.sync_dir().unwrap();
            let disk = SimDisk::new(seed, disk_cfg.clone());
            script(&disk, seed);
            script(&file, seed);
            assert_eq!(
                fs.images()["db"],
                disk.image(),
                "seed {seed} {model}: before the cut"
            );
            let on_disk = disk.crash();
            let on_fs = fs.crash();
            assert_eq!(on_fs.data, on_disk, "seed {seed} {model}");
            assert_eq!(
                fs.images()["db"],
                disk.image(),
                "seed {seed} {model}: after the cut"
            );
            assert_eq!(
                fs.fault_counts(),
                disk.fault_counts(),
                "seed {seed} {model}"
            );
            assert_eq!(fs.io_stats(), disk.io_stats(), "seed {seed} {model}");
        }
    }
}

/// Seeds per profile: every profile but `scale`, negative controls and their storage wrappers
/// included.
const SEEDS: u64 = 24;

#[test]
fn crashlab_seeds_run_the_same_on_one_simfs_file() {
    let (mut crashes, mut violations, mut oks) = (0, 0, 0);
    // `scale` is `default`'s faults with workloads of thousands of operations: a minute and a
    // half of this test for nothing `default` does not reach on the storage.
    for profile in Profile::ALL.into_iter().filter(|p| !p.reaches_scale()) {
        for seed in 0..SEEDS {
            let cfg = RunConfig::from_seed(seed, 60, profile);
            let want = run::<CrashlabDb>(&cfg);
            crashes += want.stats.crashes;
            violations += u64::from(want.outcome.is_violation());
            oks += u64::from(want.outcome == Outcome::Ok);
            for model in MetaModel::ALL {
                let got = run_on_one_file::<CrashlabDb>(
                    &cfg,
                    FsConfig {
                        model,
                        ..FsConfig::default()
                    },
                );
                let at = format!("{profile} seed {seed} {model}");
                assert_eq!(got.outcome, want.outcome, "{at}");
                assert_eq!(got.trace_hash, want.trace_hash, "{at}");
                assert_eq!(got.trace_events, want.trace_events, "{at}");
                assert_eq!(got.image_hash, want.image_hash, "{at}");
                assert_eq!(got.stats, want.stats, "{at}");
                assert_eq!(got.faults, want.faults, "{at}");
                assert_eq!(got.io, want.io, "{at}");
                assert_eq!(got.cut, want.cut, "{at}");
                assert_eq!(got.torn_metas, want.torn_metas, "{at}");
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
