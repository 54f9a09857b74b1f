//! The crash-state checker on the standard small workloads (`corpus/check/*.case`): for every
//! freelist kind × freelist synced or not × batched or not × pre-size policy, every crash point is
//! enumerated exhaustively and no state breaks the durability promise. `no_sync` engines are held
//! to their weaker promise, and a check is deterministic.

use crashlab_check::CheckConfig;
use crashlab_engine::Options;
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;
use std::path::Path;

fn check(cfg: &CheckConfig<Options>) -> crashlab_check::CheckReport {
    crashlab_check::check::<CrashlabDb>(cfg)
}

const STANDARD: [&str; 3] = ["small", "readers", "buckets"];

fn standard(name: &str) -> CheckConfig<Options> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/check")
        .join(format!("{name}.case"));
    CheckConfig::from_case(&Case::load(&path).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn every_variant_of_the_standard_workloads_survives_every_crash_state() {
    for name in STANDARD {
        let variants = standard(name).variants().expect("crashlab has variants");
        assert_eq!(variants.len(), 24, "freelist × synced × pre-size × batched");
        for cfg in variants {
            let what = format!(
                "{name}: {:?} no_freelist_sync={} batched={} {:?}",
                cfg.engine.freelist,
                cfg.engine.no_freelist_sync,
                cfg.params.batched,
                cfg.engine.presize
            );
            let r = check(&cfg);
            assert_eq!(r.violating_states, 0, "{what}: {:#?}", r.found);
            assert_eq!(
                r.coverage.exhaustive, r.crash_points,
                "{what}: every crash point enumerated exhaustively"
            );
            assert!(
                r.crash_points >= 10,
                "{what}: {} crash points",
                r.crash_points
            );
            assert!(r.power_states > r.crash_points, "{what}: {r:?}");
            assert!(r.distinct > 0 && r.distinct <= r.states(), "{what}: {r:?}");
        }
    }
}

#[test]
fn readers_are_checked_and_recoveries_are_crashed_again() {
    let r = check(&standard("readers"));
    assert!(r.reader_states > 0, "{r:?}");
    let mut cfg = standard("small");
    cfg.recrash_one_in = 1;
    let r = check(&cfg);
    assert_eq!(r.violating_states, 0, "{:#?}", r.found);
    assert!(
        r.recovery.sessions > 10 && r.recovery.states > r.recovery.sessions,
        "{:?}",
        r.recovery
    );
}

#[test]
fn no_sync_promises_only_what_survives_a_process_crash() {
    // Without syncs nothing written after creation is durable, the file's growth included, so
    // a power cut can keep only the rewrites of the first pages (metas, first freelist, first
    // root); it may leave anything but a panic. A process crash must lose nothing acknowledged.
    let mut cfg = standard("small");
    cfg.engine.no_sync = true;
    let r = check(&cfg);
    assert_eq!(r.violating_states, 0, "{:#?}", r.found);
    assert_eq!(r.process_states, r.crash_points);
    assert!(
        r.pending_rewrites > 0,
        "the meta slots are rewritten unsynced"
    );
}

#[test]
fn a_check_is_deterministic() {
    let mut cfg = standard("buckets");
    cfg.params.sector_size = 128;
    cfg.params.max_states = 64;
    let (a, b) = (check(&cfg), check(&cfg));
    assert_eq!(a, b);
    assert!(a.coverage.sampled + a.coverage.pages_and_tears > 0, "{a:?}");
}
