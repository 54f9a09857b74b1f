//! The crash-state checker runs the workload's live checks too (the one session driver runs
//! `check` operations in its recorded run): a leak that the next open's freelist rebuild heals
//! (control `leak-freed-pages` with `no_freelist_sync`) is found by the recorded run, while every
//! crash state before it recovers clean; the correct engine passes it all.

use crashlab_check::CheckConfig;
use crashlab_engine::Options;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::spec::CrashState;
use crashlab_sim::verdict::Verdict;

fn workload() -> Vec<Op> {
    let a = || vec![Name::new("a")];
    let put = |k: &str, version| Op::Put {
        path: a(),
        key: Name::new(k),
        len: 300,
        version,
    };
    vec![
        Op::CreateBucket(a()),
        put("k1", 1),
        Op::Commit,
        put("k1", 2),
        put("k2", 3),
        Op::Commit,
        Op::Check,
        Op::Delete {
            path: a(),
            key: Name::new("k1"),
        },
        Op::Commit,
    ]
}

fn config(control: Control) -> CheckConfig<Options> {
    let engine = Options {
        page_size: 512,
        no_freelist_sync: true,
        ..Options::default()
    };
    let mut cfg = CheckConfig::new(7, engine, workload());
    cfg.params.control = control;
    cfg
}

#[test]
fn the_checker_runs_live_checks_and_finds_a_leak_that_recovery_heals() {
    let twin = crashlab_check::check::<CrashlabDb>(&config(Control::None));
    assert_eq!(twin.violating_states, 0, "{:#?}", twin.found);
    assert!(twin.states() > 0);

    let bug = crashlab_check::check::<CrashlabDb>(&config(Control::LeakFreedPages));
    // The recorded run stops at the live check's violation; the crash states before it were
    // all visited.
    assert!(bug.states() > 0);
    let live: Vec<_> = bug
        .found
        .iter()
        .filter(|f| matches!(f.state, CrashState::Live { .. }))
        .collect();
    assert_eq!(live.len(), 1, "{:#?}", bug.found);
    assert_eq!(live[0].verdict, Verdict::IntegrityCheck);
    assert_eq!(
        bug.found.len(),
        1,
        "every crash state before it recovers clean (the rebuild heals the leak): {:#?}",
        bug.found
    );
}
