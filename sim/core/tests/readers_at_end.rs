//! Readers still open when a session ends are checked then: a freed page reused under a
//! reader (negative control `reuse-under-readers`) that no later operation reads is caught by
//! that check and by nothing else, and the correct engine passes the same runs.

use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::driver::Settings;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run_with;
use crashlab_sim::verdict::{During, Outcome, Verdict};

#[test]
fn a_snapshot_changed_under_a_reader_left_open_is_caught_at_the_sessions_end() {
    let off = Settings {
        readers_checked_at_end: false,
        ..Settings::default()
    };
    let (mut only_at_end, mut seeds) = (0, 0);
    for seed in 0..40u64 {
        let clean = RunConfig::<Options>::from_seed(seed, 300, Profile::None);
        let twin = run_with::<CrashlabDb>(&clean, Settings::default());
        assert!(
            !twin.outcome.is_violation(),
            "seed {seed}: {:?}",
            twin.outcome
        );
        let mut buggy = clean.clone();
        buggy.engine = buggy
            .engine
            .with_control(Control::ReuseUnderReaders)
            .unwrap();
        let without = run_with::<CrashlabDb>(&buggy, off).outcome;
        let with = run_with::<CrashlabDb>(&buggy, Settings::default()).outcome;
        seeds += 1;
        if let (false, Outcome::Violation(v)) = (without.is_violation(), &with) {
            let moved = [Verdict::SnapshotMoved, Verdict::Failed(During::Reader)];
            assert!(moved.contains(&v.verdict), "seed {seed}: {v}");
            assert!(v.detail.contains("still open at the session's end"), "{v}");
            only_at_end += 1;
        }
    }
    assert!(
        only_at_end >= 5,
        "{only_at_end} of {seeds} seeds show the bug only at the session's end"
    );
}
