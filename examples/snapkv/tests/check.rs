//! The crash-state checker on snapkv, an engine of several files: at every crash point it
//! visits the metadata subsets the file system's model allows crossed with the files' pending
//! sectors; it finds the planted missing directory sync under each model (at an exhaustive
//! crash point), its minimal state replays alone, and the clean twin passes every state of the
//! same workloads.

use crate::adapter;

use adapter::{SnapConfig, SnapDb};
use crashlab_check::{check_dir, replay_dir, CheckConfig, DirCheckReport};
use crashlab_sim::fs::{FsConfig, MetaModel};
use crashlab_sim::verdict::Verdict;

const SEEDS: std::ops::Range<u64> = 0..4;
const OPS: usize = 24;

fn checked(seed: u64, model: MetaModel, bug: bool) -> (CheckConfig<SnapConfig>, DirCheckReport) {
    let mut cfg = CheckConfig::<SnapConfig>::from_seed(seed, OPS);
    cfg.engine.0.debug_skip_dir_sync = bug;
    let fs = FsConfig {
        model,
        ..FsConfig::default()
    };
    let report = check_dir::<SnapDb>(&cfg, fs);
    (cfg, report)
}

#[test]
fn the_checker_finds_the_missing_directory_sync_and_passes_the_clean_twin() {
    for model in MetaModel::ALL {
        let fs = FsConfig {
            model,
            ..FsConfig::default()
        };
        for seed in SEEDS {
            let (_, clean) = checked(seed, model, false);
            println!("seed {seed}, clean:\n{}", clean.text());
            assert_eq!(clean.live, None, "seed {seed}");
            assert_eq!(clean.violating_states, 0, "{model} seed {seed}");
            assert!(clean.commits > 0 && clean.crash_points > 0, "seed {seed}");
            assert!(clean.meta_exhaustive > 0 && clean.data_exhaustive > 0);
            assert!(
                clean.pending_meta_max >= 2,
                "a rename pending with its create"
            );
            assert!(clean.distinct > 1 && clean.states >= clean.distinct);

            let (cfg, buggy) = checked(seed, model, true);
            println!("seed {seed}, missing directory sync:\n{}", buggy.text());
            // The same workload without the directory syncs: fewer crash points, no more.
            assert!(buggy.crash_points < clean.crash_points, "seed {seed}");
            let f = buggy
                .found
                .iter()
                .find(|f| f.exhaustive)
                .unwrap_or_else(|| panic!("{model} seed {seed}: no exhaustive state caught it"));
            assert_eq!(f.verdict, Verdict::Durability, "{}", f.detail);
            // Lost: the rename; the minimal state keeps no pending data sector.
            assert!(f.state.keep.is_empty(), "{}", f.state);
            // The minimal state, judged again alone, shows the same violation.
            assert_eq!(replay_dir::<SnapDb>(&cfg, fs, &f.state), Some(f.verdict));
        }
    }
}
