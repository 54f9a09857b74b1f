//! Settings that change between sessions. An application may reopen a file with other settings
//! than it wrote it with; for a quarter of the seeds, each crashlab session after the first may
//! open with `no_freelist_sync` or the free set's kind switched (`EngineConfig::at_open`).
//! Turning `no_freelist_sync` on drops a persisted freelist at the next commit, which a run
//! whose settings never change reaches only with a new file's one-page list. Negative control
//! (ag), `dropped-freelist-frees-first-page`, frees only the first page of the dropped list.
//! A case says whether its run switches (`sessions = switch`); one without the line (every case
//! saved before) keeps its settings.

use crashlab_engine::Options;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::Op;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::{Verdict, Violation};

use crate::seeded_control::{saved_case_and_twins, sweep_control};

/// The leak the control makes, as the live check reports it.
fn caught_by_the_live_check(v: &Violation) {
    assert_eq!(v.verdict, Verdict::IntegrityCheck, "{v}");
    assert!(v.detail.contains("unreachable and not free"), "{v}");
}

#[test]
fn the_saved_case_is_caught_and_its_twins_pass() {
    // Twins: the hook off, and the case without its last reopen, whose session switches.
    let (_, v) = saved_case_and_twins("dropped-freelist-frees-first-page", |cfg| {
        let last = cfg.ops.iter().rposition(|op| matches!(op, Op::Reopen));
        cfg.ops.remove(last.expect("the saved case reopens"));
    });
    caught_by_the_live_check(&v);
}

#[test]
fn only_seeds_whose_settings_switch_reach_the_control() {
    // Seeds that keep their settings are left exactly as they were (trace and image); some of
    // the others are caught, each by the live check.
    let (caught, switching, inert) = sweep_control(
        400,
        Control::DroppedFreelistFreesFirstPage,
        |cfg| Some(cfg.switch_settings),
        |_, v| caught_by_the_live_check(v),
    );
    assert!(inert >= 250, "{inert} of 400 seeds keep their settings");
    assert!(switching >= 60, "{switching} of 400 seeds switch");
    assert!(caught >= 3, "caught on {caught} of {switching}");
}

#[test]
fn switching_seeds_open_sessions_with_other_settings_and_pass() {
    let mut switched = 0;
    for seed in 0..40 {
        let cfg = RunConfig::<Options>::from_seed(seed, 300, Profile::Default);
        let r = run::<CrashlabDb>(&cfg);
        assert!(!r.outcome.is_violation(), "seed {seed}: {:?}", r.outcome);
        let opened = r.stats.api_calls.get("open with other options").copied();
        if cfg.switch_settings {
            switched += u64::from(opened.unwrap_or(0) > 0);
        } else {
            assert_eq!(opened, None, "seed {seed} keeps its settings");
        }
    }
    assert!(
        switched >= 5,
        "{switched} seeds of 40 opened with other settings"
    );
}

#[test]
fn a_case_keeps_its_settings_unless_it_says_it_switches() {
    // The saved case switches; read without its `sessions` line (as a case saved before the
    // choice existed), it runs one configuration for every session and passes.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/negative/dropped-freelist-frees-first-page.case");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\nsessions = switch\n"));
    let case = crashlab_sim::case::Case::<Options>::parse(&text, "saved").unwrap();
    assert!(case.run.switch_settings);
    assert!(
        case.to_text().contains("\nsessions = switch\n"),
        "written back"
    );
    let same = text.replace("\nsessions = switch\n", "\n");
    let case = crashlab_sim::case::Case::<Options>::parse(&same, "without").unwrap();
    assert!(!case.run.switch_settings);
    let r = run::<CrashlabDb>(&case.run);
    assert!(!r.outcome.is_violation(), "{:?}", r.outcome);
    assert_eq!(r.stats.api_calls.get("open with other options"), None);
}
