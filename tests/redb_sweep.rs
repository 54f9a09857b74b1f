//! redb, an engine written independently of crashlab, on the same simulated disk, faults,
//! workloads and oracle: a seed replays exactly; a bounded sweep exercises every fault kind and
//! finds no violation; the negative controls are caught against redb too. The exhaustive
//! crash-state checker visits every crash state of small redb workloads, under both of redb's
//! commit protocols, and finds a missing barrier there as it does in crashlab's engine.

use crashlab_check::{CheckConfig, CheckReport, Replayed};
use crashlab_redb::{RedbChoices, RedbDb};
use crashlab_sim::adapter::EngineConfig;
use crashlab_sim::case::Case;
use crashlab_sim::config::RunConfig;
use crashlab_sim::control::Control;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::Report;
use crashlab_sim::spec::CrashState;
use crashlab_sim::sweep::{sweep, SweepConfig};
use crashlab_sim::verdict::{Outcome, Verdict};

fn redb(seed: u64, ops: usize, profile: Profile) -> RunConfig<RedbChoices> {
    RunConfig::from_seed(seed, ops, profile)
}

fn run(cfg: &RunConfig<RedbChoices>) -> Report {
    crashlab_sim::runner::run::<RedbDb>(cfg)
}

fn check(cfg: &CheckConfig<RedbChoices>) -> CheckReport {
    crashlab_check::check::<RedbDb>(cfg)
}

fn replay(cfg: &CheckConfig<RedbChoices>, state: &CrashState) -> Replayed {
    crashlab_check::replay::<RedbDb>(cfg, state)
}

#[test]
fn a_redb_seed_run_twice_gives_the_same_trace_and_image() {
    for seed in [0u64, 1, 7, 42, 273] {
        let cfg = redb(seed, 200, Profile::Default);
        let (a, b) = (run(&cfg), run(&cfg));
        assert_eq!(a.trace_hash, b.trace_hash, "seed {seed}");
        assert_eq!(a.faults, b.faults, "seed {seed}");
        assert_eq!(a.io, b.io, "seed {seed}");
        assert_eq!(a.image_hash, b.image_hash, "seed {seed}");
        assert_eq!(a.outcome, b.outcome, "seed {seed}");
    }
}

#[test]
fn the_redb_workload_has_top_level_buckets_only() {
    for seed in 0..20 {
        for op in redb(seed, 300, Profile::Default).ops {
            if let Some(path) = op.path() {
                assert_eq!(path.len(), 1, "seed {seed}: {op}");
            }
        }
    }
}

#[test]
fn a_redb_sweep_hits_every_fault_kind_and_finds_no_violation() {
    let cfg = SweepConfig::new(0..200, 250, Profile::Default);
    let summary = sweep::<RedbDb>(&cfg, &mut |run, r| {
        if let Outcome::Violation(v) = &r.outcome {
            panic!("redb seed {}: {v}\n{:#?}", run.seed, r.trace_tail);
        }
    });
    let total = summary.faults;
    let (disk_failures, background_checks, commits) = (
        summary.disk_failures,
        summary.stats.background_snapshot_checks,
        summary.stats.commits,
    );
    for (kind, n) in [
        ("read_eio", total.read_eio),
        ("write_eio", total.write_eio),
        ("sync_eio", total.sync_eio),
        ("latent", total.latent_sectors),
        ("enospc", total.enospc),
        ("garbage reads", total.garbage_sector_reads),
        ("power cuts", total.crashes),
        ("torn writes", total.torn_writes_in_crash),
        ("sectors lost", total.sectors_lost_in_crash),
    ] {
        assert!(n > 0, "no {kind} in 200 redb seeds: {total:?}");
    }
    assert!(
        disk_failures < 15,
        "{disk_failures} seeds stopped on disk failures"
    );
    assert!(
        background_checks > 50,
        "{background_checks} background snapshot checks"
    );
    assert!(commits > 1000, "{commits} commits");
}

/// First seed in `0..limit` whose redb run under `profile` is a violation.
fn first_caught(profile: Profile, limit: u64) -> Option<u64> {
    (0..limit).find(|&s| matches!(run(&redb(s, 300, profile)).outcome, Outcome::Violation(_)))
}

#[test]
fn negative_control_lying_sync_is_caught_against_redb() {
    assert!(first_caught(Profile::LyingSync, 10).is_some());
}

#[test]
fn negative_control_no_barrier_is_caught_against_redb() {
    // Only redb's two-phase commit relies on the sync between data and header; the control
    // forces it (one-phase commit with checksums needs no barrier and must not be caught).
    assert!(first_caught(Profile::NoBarrier, 40).is_some());
}

fn redb_check(seed: u64, ops: usize) -> CheckConfig<RedbChoices> {
    CheckConfig::from_seed(seed, ops)
}

fn two_phase(seed: u64) -> bool {
    RedbChoices::from_seed(seed, Profile::None).two_phase
}

#[test]
fn every_crash_state_of_small_redb_workloads_recovers_as_allowed() {
    // Seeds 2 and 5 commit two-phase, 3 and 4 one-phase; 2 and 4 make some commits with
    // Durability::None, 3 and 5 none.
    let seeds = [2u64, 3, 4, 5];
    assert!(seeds.iter().any(|&s| two_phase(s)) && seeds.iter().any(|&s| !two_phase(s)));
    let (mut states, mut recoveries) = (0, 0);
    for seed in seeds {
        // 4 KiB sectors (redb's page): every crash point exhaustive, recoveries crashed too.
        let mut cfg = redb_check(seed, 10);
        cfg.params.sector_size = 4096;
        cfg.recrash_one_in = 4;
        let r = check(&cfg);
        assert_eq!(r.violating_states, 0, "redb seed {seed}: {:#?}", r.found);
        assert!(r.commits > 0 && r.crash_points > 10, "seed {seed}: {r:?}");
        assert_eq!(r.coverage.exhaustive, r.crash_points, "seed {seed}: {r:?}");
        assert!(
            r.distinct > 50,
            "seed {seed}: {} distinct images",
            r.distinct
        );
        states += r.states();
        recoveries += r.recovery.sessions;

        // 512-byte sectors: torn pages, page-level subsets where a commit leaves many sectors.
        cfg.params.sector_size = 512;
        cfg.recrash_one_in = 0;
        let r = check(&cfg);
        assert_eq!(r.violating_states, 0, "redb seed {seed}: {:#?}", r.found);
        assert_eq!(r.coverage.sampled, 0, "seed {seed}: {r:?}");
        assert!(
            r.coverage.exhaustive * 3 >= r.crash_points * 2,
            "seed {seed}: most crash points are enumerated exhaustively: {r:?}"
        );
        states += r.states();
    }
    assert!(states > 5_000, "{states} states");
    assert!(recoveries > 0, "some recoveries are crashed again");
}

#[test]
fn the_checker_finds_the_storage_controls_in_redb_and_each_finding_replays_from_its_case() {
    let seed = 5;
    assert!(
        two_phase(seed),
        "the twin runs the protocol no-barrier forces"
    );
    // (a) no barrier between data and header; (d) growth not made durable, on a disk whose data
    // sync does not persist the size — its twin is that disk with the growth sync kept.
    for (bug, twin) in [
        (Control::NoBarrier, Control::None),
        (Control::NoGrowthSync, Control::FdatasyncDisk),
    ] {
        let mut cfg = redb_check(seed, 12);
        cfg.recrash_one_in = 0;
        // 4 KiB sectors: the bugs show without torn pages.
        cfg.params.sector_size = 4096;
        cfg.params.control = twin;
        let r = check(&cfg);
        assert_eq!(r.violating_states, 0, "{twin}: {:#?}", r.found);

        cfg.params.control = bug;
        let r = check(&cfg);
        assert!(r.violating_states > 0, "{bug} is found on redb: {r:?}");
        for f in &r.found {
            assert!(!matches!(f.state, CrashState::Live { .. }), "{bug}: {f:?}");
            let text = cfg.to_case(f.state.clone()).to_text();
            assert!(text.contains("engine = redb"), "{text}");
            let case =
                Case::<RedbChoices>::parse(&text, "redb.case").unwrap_or_else(|e| panic!("{e}"));
            match replay(&CheckConfig::from_case(&case), &f.state) {
                Replayed::Violation { verdict, .. } => {
                    assert_eq!(verdict, f.verdict, "{bug}: {f:?}")
                }
                other => panic!("{bug}: {} does not replay: {other:?}", f.state),
            }
        }
    }
}

/// An engine panic in a run is a violation reported like any other: the operation it happened
/// in, the trace up to it and the run's figures, with the panic's source line.
#[test]
fn a_panic_in_a_run_keeps_its_operation_trace_and_figures() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let case =
        Case::<RedbChoices>::load(&root.join("corpus/redb/finding-001-panic-on-corrupt-page.case"))
            .unwrap();
    let r = run(&case.run);
    let Outcome::Violation(v) = &r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!(v.verdict, Verdict::Panic);
    // The panic's source line, then the operation and the file it ran on.
    assert!(
        v.detail
            .contains("(at redb-4.6.0/src/tree_store/btree.rs:1110:22) (during op "),
        "{v:?}"
    );
    assert!(
        v.detail
            .contains("on the file as recovered after power cut"),
        "{v:?}"
    );
    assert!(v.op_index > 0 && v.op_index < case.run.ops.len(), "{v:?}");
    assert!(r.stats.commits > 0 && r.io.writes > 0, "{r:?}");
    assert!(
        r.trace_tail.iter().any(|l| l.contains("power cut")),
        "{:#?}",
        r.trace_tail
    );
    assert_eq!(r.trace_hash, run(&case.run).trace_hash);
}

/// Open `image` with redb's own file backend (no crashlab code on the path) and read every
/// table: the panic message and location, if redb panics.
fn open_with_redbs_file_backend(image: &[u8]) -> Option<String> {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition, TableHandle};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("image.redb");
    std::fs::write(&path, image).unwrap();
    let read_all = || -> Result<(), redb::Error> {
        let db = redb::Database::open(&path)?;
        let tx = db.begin_read()?;
        for handle in tx.list_tables()? {
            let def = TableDefinition::<&[u8], &[u8]>::new(handle.name());
            for item in tx.open_table(def)?.iter()? {
                item?;
            }
        }
        Ok(())
    };
    crashlab_sim::guard::catch(read_all).err()
}

/// Finding redb-001 (docs/findings): both saved images make redb's own `Database::open` panic,
/// outside the simulator. When this fails, redb changed: re-triage the finding.
#[test]
fn finding_redb_001_images_panic_in_redbs_own_open() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in [
        "redb-001-crash-image.db",
        "redb-001-missing-barrier-image.db",
    ] {
        let image = std::fs::read(root.join("docs/findings").join(name)).unwrap();
        let panic = open_with_redbs_file_backend(&image);
        assert_eq!(
            panic.as_deref(),
            Some(
                "internal error: entered unreachable code \
                 (at redb-4.6.0/src/tree_store/btree.rs:1110:22)"
            ),
            "{name}"
        );
    }
    // The missing-barrier image is exactly what its case's crash state leaves.
    let case =
        Case::<RedbChoices>::load(&root.join("corpus/redb/finding-001-via-missing-barrier.case"))
            .unwrap();
    let state = case.crash_state.clone().expect("a crash state");
    let image =
        crashlab_check::state_image::<RedbDb>(&CheckConfig::from_case(&case), &state).unwrap();
    assert_eq!(
        image,
        std::fs::read(root.join("docs/findings/redb-001-missing-barrier-image.db")).unwrap()
    );
}

/// The finding of docs/redb.md, "after a failed fsync on an own-barrier disk": its shrunk case
/// fails as it did (redb's header names a layout past the durable length), and needs both the
/// failed sync and the disk whose data sync does not persist growth — either alone passes.
#[test]
fn the_growth_lost_after_a_failed_fsync_needs_both_the_failure_and_the_own_barrier_disk() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/redb/finding-growth-lost-after-failed-fsync.case");
    let case = Case::<RedbChoices>::load(&path).unwrap_or_else(|e| panic!("{e}"));
    match run(&case.run).outcome {
        Outcome::Violation(v) => assert!(
            v.detail.contains("File truncated below stored layout"),
            "{v}"
        ),
        other => panic!("{other:?}"),
    }
    let mut no_failed_sync = case.run.clone();
    no_failed_sync.disk.faults.sync_eio = 0.0;
    assert!(!run(&no_failed_sync).outcome.is_violation());
    let mut with_data = case.run.clone();
    with_data.disk.length = crashlab_sim::disk::LengthModel::WithData;
    assert!(!run(&with_data).outcome.is_violation());
}
