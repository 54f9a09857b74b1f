//! Negative controls of the crash-state checker: five deliberate bugs, each of which the checker
//! must find among the crash states of a standard small workload — while a correct engine passes
//! the very same workload on the very same disk model, so the bug and nothing else is what is
//! found. Every minimised violation must replay from its crash state alone.

use crashlab_check::{CheckConfig, Coverage, Replayed};
use crashlab_engine::Options;
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::disk::LengthModel;
use crashlab_sim::profile;
use crashlab_sim::spec::{CheckParams, CrashState};
use std::path::Path;

fn check(cfg: &CheckConfig<Options>) -> crashlab_check::CheckReport {
    crashlab_check::check::<CrashlabDb>(cfg)
}

fn replay(cfg: &CheckConfig<Options>, state: &CrashState) -> Replayed {
    crashlab_check::replay::<CrashlabDb>(cfg, state)
}

fn standard(name: &str) -> CheckConfig<Options> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/check")
        .join(format!("{name}.case"));
    CheckConfig::from_case(&Case::load(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// Check `workload` at `sector_size` with `bug`, and with `twin` (the correct engine on the same
/// disk model); return the states visited before the bug was first found.
fn found_and_twin_passes(workload: &str, sector_size: u32, bug: Control, twin: Control) -> u64 {
    let mut cfg = standard(workload);
    cfg.params.sector_size = sector_size;
    cfg.params.control = twin;
    let r = check(&cfg);
    assert_eq!(r.violating_states, 0, "{twin} passes: {:#?}", r.found);

    cfg.params.control = bug;
    cfg.recrash_one_in = 0;
    let r = check(&cfg);
    assert!(r.violating_states > 0, "{bug} is found: {r:?}");
    let first = r.found.first().expect("a violation is reported");
    assert!(
        !matches!(first.state, CrashState::Live { .. }),
        "{bug} is found at a crash state, not by the recorded run: {first:?}"
    );
    for f in &r.found {
        if let CrashState::PowerCut { .. } = f.state {
            assert_eq!(f.coverage, Some(Coverage::Exhaustive), "{bug}: {f:?}");
        }
        match replay(&cfg, &f.state) {
            Replayed::Violation { verdict, .. } => assert_eq!(verdict, f.verdict, "{bug}: {f:?}"),
            other => panic!("{bug}: {} does not replay: {other:?}", f.state),
        }
    }
    r.first_found_at().expect("found")
}

#[test]
fn a_no_sync_between_data_pages_and_meta_is_found() {
    let n = found_and_twin_passes("small", 512, Control::NoBarrier, Control::None);
    assert!(n < 100, "found after {n} states");
}

#[test]
fn a_meta_written_to_the_same_slot_every_commit_is_found() {
    // The meta is 80 bytes at the start of its page: a 512-byte sector never tears it, so the
    // two slots only matter on a disk whose atomic unit is smaller (here 64 bytes).
    let n = found_and_twin_passes("small", 64, Control::MetaSameSlot, Control::None);
    assert!(n < 1000, "found after {n} states");
}

#[test]
fn a_meta_checksum_not_verified_on_open_is_found() {
    let n = found_and_twin_passes("small", 64, Control::MetaUnchecked, Control::None);
    assert!(n < 1000, "found after {n} states");
}

#[test]
fn file_growth_not_made_durable_before_use_is_found() {
    let n = found_and_twin_passes("small", 512, Control::NoGrowthSync, Control::FdatasyncDisk);
    assert!(n < 100, "found after {n} states");
}

#[test]
fn a_freed_page_reused_under_a_reader_is_found() {
    let n = found_and_twin_passes("readers", 512, Control::ReuseUnderReaders, Control::None);
    assert!(n < 100, "found after {n} states");
}

#[test]
fn debug_hooks_are_off_unless_a_control_turns_them_on() {
    assert_eq!(
        crashlab_engine::Options::default().debug,
        crashlab_engine::DebugHooks::default()
    );
    let d = crashlab_engine::DebugHooks::default();
    assert!(!d.meta_same_slot && !d.skip_meta_checksum && !d.reuse_pages_under_readers);
    let small = standard("small");
    for c in Control::ALL {
        let on = small.engine.with_control(c).unwrap().debug != d;
        assert!(!on || c.is_bug(), "{c} turns a hook on");
    }
    assert_eq!(small.engine_config().debug, d);
}

#[test]
fn the_checkers_default_disk_tears_a_meta_and_its_length_model_comes_from_the_seed() {
    // The defaults alone (64-byte sectors) find (b), which 512-byte sectors cannot.
    let small = standard("small");
    let mut cfg = CheckConfig::new(small.seed, small.engine.clone(), small.ops.clone());
    assert_eq!(cfg.params.sector_size, 64);
    cfg.params.control = Control::MetaSameSlot;
    cfg.recrash_one_in = 0;
    assert!(
        check(&cfg).violating_states > 0,
        "found at the default sector size"
    );
    cfg.params.sector_size = 512;
    assert_eq!(
        check(&cfg).violating_states,
        0,
        "a meta never tears in 512 bytes"
    );

    // `check --seed` draws the length model the seed's runs have; (d) and its twin name theirs.
    let models: Vec<LengthModel> = (0..16)
        .map(|seed| {
            let cfg = CheckConfig::<Options>::from_seed(seed, 5);
            assert_eq!(
                cfg.params.length,
                profile::length_model(seed),
                "seed {seed}"
            );
            assert_eq!(cfg.run_config().disk.length, cfg.params.length);
            cfg.params.length
        })
        .collect();
    assert!(
        LengthModel::ALL.iter().all(|m| models.contains(m)),
        "{models:?}"
    );
    for c in [Control::NoGrowthSync, Control::FdatasyncDisk] {
        let p = CheckParams::default().with_control(c);
        assert_eq!(p.length, LengthModel::OwnBarrier, "{c}");
        let text = p.to_string();
        assert!(text.contains("length=own-barrier"), "{text}");
        assert_eq!(text.parse::<CheckParams>(), Ok(p));
    }
}

/// A run case found under an engine-hook control says so only in its options (`debug=`), and
/// the checker turns hooks on from its own control alone: `check --case` of such a case ran the
/// clean engine and passed. It now takes the control from the options, finds control (o)'s
/// saved case, and passes its clean twin.
#[test]
fn a_run_case_of_an_engine_hook_control_is_checked_with_the_hook_on() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/negative/rebuild-drops-last-call.case");
    let case = Case::<Options>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let cfg = CheckConfig::from_case(&case);
    assert_eq!(cfg.params.control, Control::RebuildDropsLastCall);
    let r = check(&cfg);
    assert!(r.violating_states > 0, "{}", r.text(None));

    let mut twin = case.clone();
    twin.run.engine.debug = Default::default();
    let cfg = CheckConfig::from_case(&twin);
    assert_eq!(cfg.params.control, Control::None);
    let r = check(&cfg);
    assert_eq!(r.violating_states, 0, "{}", r.text(None));
}
