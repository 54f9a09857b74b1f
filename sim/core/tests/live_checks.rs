//! Integrity while the process lives: `check` operations run the engine's integrity check and a
//! whole-state comparison on the open database. Negative control (i), `leak-freed-pages`, leaks
//! every page a commit frees; with the freelist rebuilt on open (`no_freelist_sync`) the next
//! open heals the leak, so only the live check sees it. The correct engine passes the same runs.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::driver::Settings;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run_with;
use crashlab_sim::verdict::{Outcome, Verdict};

const SEEDS: u64 = 60;

/// Seed `seed`'s run with the freelist rebuilt at every open: in every session, so no session
/// switches the setting off and persists a list (`RunConfig::switch_settings`).
fn rebuilt_freelist(seed: u64) -> RunConfig<Options> {
    let mut cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
    cfg.engine.no_freelist_sync = true;
    cfg.switch_settings = false;
    cfg
}

#[test]
fn a_leak_the_next_open_heals_is_caught_while_the_process_lives() {
    let off = Settings {
        live_checks: false,
        ..Settings::default()
    };
    let (mut caught, mut checks) = (0, 0);
    for seed in 0..SEEDS {
        let clean = rebuilt_freelist(seed);
        let twin = run_with::<CrashlabDb>(&clean, Settings::default());
        assert!(
            !twin.outcome.is_violation(),
            "seed {seed}: {:?}",
            twin.outcome
        );
        checks += twin.stats.live_checks;
        let mut buggy = clean.clone();
        buggy.engine = buggy.engine.with_control(Control::LeakFreedPages).unwrap();
        let without = run_with::<CrashlabDb>(&buggy, off).outcome;
        assert!(
            !without.is_violation(),
            "seed {seed} without live checks: {without:?}"
        );
        if let Outcome::Violation(v) = run_with::<CrashlabDb>(&buggy, Settings::default()).outcome {
            assert_eq!(v.verdict, Verdict::IntegrityCheck, "seed {seed}: {v}");
            assert!(
                v.detail.contains("unreachable and not free"),
                "seed {seed}: {v}"
            );
            caught += 1;
        }
    }
    assert!(checks > SEEDS, "{checks} live checks in {SEEDS} seeds");
    assert!(caught >= SEEDS / 2, "caught on {caught} of {SEEDS} seeds");
}
