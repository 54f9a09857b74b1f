//! The disk's own dimensions in the runner: sector sizes swarmed from 64 B to 4 KiB, sub-sector
//! tears, and the two length models. Each catches a negative control no other dimension can:
//! a meta written to the same slot every commit (b) or trusted without its checksum (c) needs a
//! torn meta, which 512-byte sectors without tears never make (the 80-byte meta fits in one
//! sector); file growth never made durable (d) needs a disk whose data sync does not persist the
//! length. In each case the correct engine passes the same seeds on the same disk. The checksum
//! probe, which flips bits in the metas itself and so catches (c) on any disk
//! (`checksum_probe.rs`), is off here: these tests are about what the disk alone shows.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::disk::{FaultConfig, LengthModel};
use crashlab_sim::driver::Settings;
use crashlab_sim::profile::{self, Profile};
use crashlab_sim::runner::{run, run_with};

fn violates(cfg: &RunConfig<Options>) -> bool {
    run_with::<CrashlabDb>(cfg, NO_PROBE).outcome.is_violation()
}

const NO_PROBE: Settings = Settings {
    batched: false,
    readers_checked_at_end: true,
    live_checks: true,
    checksum_probes: false,
};

/// Seed `seed`'s default run with `control`'s debug hook on, its settings the same in every
/// session: these tests are about what the disk alone shows (the seeds found before sessions
/// could switch settings stay the seeds found).
fn with_hook(seed: u64, control: Control) -> RunConfig<Options> {
    let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
    cfg.engine = cfg
        .engine
        .with_control(control)
        .expect("crashlab has the hook");
    cfg.switch_settings = false;
    cfg
}

/// `cfg` on the disk every sweep had before this dimension: 512-byte sectors, no tears.
fn without_the_dimension(cfg: &RunConfig<Options>) -> RunConfig<Options> {
    let mut old = cfg.clone();
    old.disk.sector_size = 512;
    old.disk.faults.sub_sector_tear = 0.0;
    old
}

#[test]
fn torn_metas_catch_a_same_slot_meta_and_an_unchecked_meta_only_with_the_dimension_on() {
    const SEEDS: u64 = 200;
    for control in [Control::MetaSameSlot, Control::MetaUnchecked] {
        let mut caught = Vec::new();
        for seed in 0..SEEDS {
            let cfg = with_hook(seed, control);
            assert!(
                !violates(&without_the_dimension(&cfg)),
                "{control}, seed {seed}: caught on 512-byte sectors without tears"
            );
            if violates(&cfg) {
                caught.push(seed);
            }
        }
        assert!(!caught.is_empty(), "{control}: not caught in {SEEDS} seeds");
        for &seed in &caught {
            let twin = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
            assert!(!violates(&twin), "seed {seed}: the correct engine passes");
        }
        eprintln!("{control}: caught by seeds {caught:?} of 0..{SEEDS}");
    }
}

#[test]
fn sub_sector_tears_alone_catch_a_same_slot_meta_in_512_byte_sectors() {
    // At 512 bytes a meta tears only inside its sector: seeds whose disk tears, kept at 512.
    let found = (0..1000u64).find(|&seed| {
        let mut cfg = with_hook(seed, Control::MetaSameSlot);
        cfg.disk.sector_size = 512;
        cfg.disk.faults.sub_sector_tear > 0.0 && violates(&cfg)
    });
    let seed = found.expect("meta-same-slot is caught within 1000 seeds by tears alone");
    let mut cfg = with_hook(seed, Control::MetaSameSlot);
    cfg.disk.sector_size = 512;
    assert!(
        !violates(&without_the_dimension(&cfg)),
        "seed {seed}: not without the tears"
    );
    let r = run::<CrashlabDb>(&cfg);
    assert!(
        r.faults.sub_sector_tears > 0 && r.torn_metas > 0,
        "seed {seed}: {r:?}"
    );
}

#[test]
fn dropping_the_growth_sync_is_caught_on_the_own_barrier_disk_which_alone_passes() {
    let mut caught = 0;
    for seed in 0..30u64 {
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::NoGrowthSync);
        assert_eq!(cfg.disk.length, LengthModel::OwnBarrier);
        caught += u32::from(violates(&cfg));
        // The twin (fdatasync-disk): the same disk, the same faults (none), no wrapper.
        let twin = RunConfig {
            profile: Profile::None,
            ..cfg.clone()
        };
        assert_eq!(twin.profile.control().length_model(), None);
        assert!(
            !violates(&twin),
            "seed {seed}: the own-barrier disk alone passes"
        );
    }
    assert!(
        caught >= 20,
        "no-growth-sync caught in {caught} of 30 seeds"
    );
}

#[test]
fn a_default_sweep_passes_on_both_length_models_with_growth_made_durable() {
    // On seeds of the default profile (faults on), both models, and the engine's growth counted.
    let mut by_model = [0u32; 2];
    for seed in 0..40u64 {
        let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        for (i, length) in LengthModel::ALL.into_iter().enumerate() {
            cfg.disk.length = length;
            let r = run::<CrashlabDb>(&cfg);
            assert!(
                !r.outcome.is_violation(),
                "seed {seed} {length}: {:?}",
                r.outcome
            );
            by_model[i] += u32::from(r.counters.file_growths > 0);
        }
    }
    assert!(
        by_model.iter().all(|&n| n > 20),
        "seeds that grew their file: {by_model:?}"
    );
}

/// The saved default-profile seeds 14 and 273 pin the faults the seed drew when they were saved
/// (seed 30's case pins faults of its own choosing, so it is not one of them); the tear is drawn
/// after every one of them, so the seed still draws the same (plus its tear), and a
/// case without a `disk` line replays on 512-byte sectors with `with-data`.
#[test]
fn the_fault_draws_of_saved_seeds_are_unchanged_and_old_cases_replay_on_todays_disk() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/seeds");
    for name in ["seed-14.case", "seed-273.case"] {
        let case = Case::<Options>::load(&root.join(name)).unwrap_or_else(|e| panic!("{e}"));
        let pinned = &case.run.disk;
        assert_eq!(pinned.sector_size, 512, "{name}");
        assert_eq!(pinned.length, LengthModel::WithData, "{name}");
        assert_eq!(pinned.faults.sub_sector_tear, 0.0, "{name}");
        let drawn = profile::disk_config(case.run.seed, Profile::Default).faults;
        let before_tears = FaultConfig {
            sub_sector_tear: 0.0,
            ..drawn
        };
        assert_eq!(before_tears, pinned.faults, "{name}");
    }
}
