//! The simulator's own guarantees: a seed replays exactly; a sweep exercises every fault kind
//! of its profile (each counted kind asserted) and finds no violation in a correct engine; the negative controls are caught within a
//! bounded number of seeds.

use crashlab_engine::Options;
use crashlab_sim::control::Control;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::disk::FaultCounts;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::Report;
use crashlab_sim::sweep::{sweep, SweepConfig};
use crashlab_sim::verdict::{During, Outcome, Verdict};

type RunConfig = crashlab_sim::config::RunConfig<Options>;

fn run(cfg: &RunConfig) -> Report {
    crashlab_sim::runner::run::<CrashlabDb>(cfg)
}

#[test]
fn a_seed_run_twice_gives_the_same_trace_counters_and_image() {
    for seed in [0u64, 1, 7, 42, 273, 1916, 99_999] {
        for profile in [Profile::Default, Profile::Corruption] {
            let cfg = RunConfig::from_seed(seed, 200, profile);
            let (a, b) = (run(&cfg), run(&cfg));
            assert_eq!(a.trace_hash, b.trace_hash, "seed {seed} {profile}");
            assert_eq!(a.counters, b.counters, "seed {seed} {profile}");
            assert_eq!(a.faults, b.faults, "seed {seed} {profile}");
            assert_eq!(a.image_hash, b.image_hash, "seed {seed} {profile}");
            assert_eq!(a.outcome, b.outcome, "seed {seed} {profile}");
        }
    }
    let (x, y) = (
        run(&RunConfig::from_seed(1, 200, Profile::Default)),
        run(&RunConfig::from_seed(2, 200, Profile::Default)),
    );
    assert_ne!(
        x.trace_hash, y.trace_hash,
        "different seeds, different runs"
    );
}

#[test]
fn a_default_sweep_hits_every_fault_kind_and_finds_no_violation() {
    let mut garbage_armed = 0;
    let cfg = SweepConfig::new(0..300, 300, Profile::Default);
    let summary = sweep::<CrashlabDb>(&cfg, &mut |run, r| {
        garbage_armed += u32::from(run.disk.faults.garbage_unwritten);
        if let Outcome::Violation(v) = &r.outcome {
            panic!("seed {}: {v}\n{:#?}", run.seed, r.trace_tail);
        }
    });
    let total = summary.faults;
    let disk_failures = summary.disk_failures;
    let background_checks = summary.stats.background_snapshot_checks;
    let timer_cuts = summary.stats.timer_power_cuts;
    eprintln!("300 default seeds: {total:?}");
    // Destructured so that a fault kind added to the disk must be placed here: asserted, or
    // named as another profile's.
    let FaultCounts {
        read_eio,
        write_eio,
        sync_eio,
        sectors_dropped_by_failed_sync,
        latent_sectors,
        latent_read_errors,
        bit_flips,
        misdirected_writes,
        enospc,
        lying_syncs,
        crashes,
        sectors_lost_in_crash,
        sectors_kept_in_crash,
        torn_writes_in_crash,
        sub_sector_tears,
        garbage_sector_reads,
    } = total;
    for (kind, n) in [
        ("read EIO", read_eio),
        ("write EIO", write_eio),
        ("sync EIO", sync_eio),
        (
            "sector dropped by a failed sync",
            sectors_dropped_by_failed_sync,
        ),
        ("latent sector", latent_sectors),
        ("read failing on a latent sector", latent_read_errors),
        ("ENOSPC", enospc),
        ("power cut", crashes),
        ("sector lost in a power cut", sectors_lost_in_crash),
        ("sector kept in a power cut", sectors_kept_in_crash),
        ("torn write", torn_writes_in_crash),
        ("sub-sector tear", sub_sector_tears),
    ] {
        assert!(n > 0, "no {kind} in 300 seeds: {total:?}");
    }
    // Never-written sectors read as garbage on about half the seeds, and crashlab's engine must
    // never read one: every page its durable meta reaches was synced first, and a session reads
    // only pages it wrote (2,000 seeds: none). A read would be the engine following a reference
    // into space it never wrote, e.g. a meta whose pages were lost. That the disk counts them
    // is tested in `disk/tests.rs`, and redb, which does read space it never wrote, shows them
    // in `redb_sweep.rs`.
    assert!(
        garbage_armed > 100,
        "garbage_unwritten on in {garbage_armed} seeds"
    );
    assert_eq!(garbage_sector_reads, 0, "{total:?}");
    // Not in the default profile: bit flips and misdirected writes are the corruption
    // profile's (the next test), a lying sync is a negative control (the last tests).
    assert_eq!(
        (bit_flips, misdirected_writes, lying_syncs),
        (0, 0, 0),
        "{total:?}"
    );
    assert!(
        disk_failures < 30,
        "{disk_failures} seeds stopped on disk failures"
    );
    // madsim tasks ran beside the writer: readers held snapshots across commits, and timers cut
    // the power at simulated instants.
    assert!(
        background_checks > 100,
        "{background_checks} background snapshot checks"
    );
    assert!(timer_cuts > 10, "{timer_cuts} timer power cuts");
    // The disk's own dimensions: every sector size and both length models ran, tears were on
    // for about half the seeds, and some power cuts tore a meta.
    let d = &summary.disk;
    let sizes: Vec<u32> = d.seeds_by_sector_size.keys().copied().collect();
    assert_eq!(sizes, [64, 128, 256, 512, 1024, 2048, 4096], "{d:?}");
    assert!(d.seeds_by_sector_size.values().all(|&n| n >= 15), "{d:?}");
    assert!(d.seeds_by_length.values().all(|&n| n >= 100), "{d:?}");
    assert_eq!(d.seeds_by_length.len(), 2, "{d:?}");
    assert!((100..200).contains(&d.seeds_with_tears_on), "{d:?}");
    assert!(d.torn_metas > 0, "{d:?}");
}

#[test]
fn the_corruption_profile_never_panics_and_injects_its_faults() {
    let cfg = SweepConfig::new(0..150, 200, Profile::Corruption);
    let summary = sweep::<CrashlabDb>(&cfg, &mut |run, r| {
        assert!(
            !r.outcome.is_violation(),
            "seed {}: {:?}",
            run.seed,
            r.outcome
        );
    });
    let total = summary.faults;
    assert!(
        total.bit_flips > 0 && total.misdirected_writes > 0,
        "{total:?}"
    );
}

/// The corruption profile blames the disk for a wrong answer only once the disk has corrupted
/// bytes (a bit flip or a misdirected write); before that, a run is judged as under `default`.
/// The control: a cursor that skips a leaf's last key stepping back
/// (`Control::PrevSkipsLeafEnd`), which the profile used to count as undetected corruption in
/// every seed. Each violation it now reports comes from a run whose disk had corrupted nothing;
/// the clean engine's twin is the test above (no violation in 150 corruption seeds).
#[test]
fn the_corruption_profile_blames_the_disk_only_after_it_corrupted_something() {
    let mut cfg = SweepConfig::new(0..120, 300, Profile::Corruption);
    cfg.control = Control::PrevSkipsLeafEnd;
    let (mut caught, mut excused) = (0, 0);
    sweep::<CrashlabDb>(&cfg, &mut |run, r| match &r.outcome {
        Outcome::Violation(v) => {
            caught += 1;
            // Panics are never excused, corruption or not: one here is a bug of its own.
            assert_ne!(v.verdict, Verdict::Panic, "seed {}: {v}", run.seed);
            assert_eq!(
                r.faults.corrupting(),
                0,
                "seed {}: a violation after the disk corrupted bytes: {v}",
                run.seed
            );
        }
        Outcome::DiskFailure(_) if r.faults.corrupting() > 0 => excused += 1,
        _ => {}
    });
    assert!(caught >= 5, "the control caught in {caught} of 120 seeds");
    assert!(excused > 0, "no seed's disk corrupted anything first");
}

/// A long-lived background reader's engine error is judged by the same rule as the writer's:
/// under the corruption profile it is the disk's only once the disk has corrupted bytes. The
/// control: pages freed while a reader's snapshot still references them are reused
/// (`Control::ReuseUnderReaders`), so a reader task holding that snapshot reads a page that is
/// now something else. The reader task used to log any such error as "corruption detected"
/// under this profile and read on, whatever the disk had done, so none of these was reported.
/// The clean engine's twin is `the_corruption_profile_never_panics_and_injects_its_faults`.
#[test]
fn a_background_readers_error_is_the_disks_only_after_it_corrupted_something() {
    let mut cfg = SweepConfig::new(0..400, 300, Profile::Corruption);
    cfg.control = Control::ReuseUnderReaders;
    let mut seen_by_reader = Vec::new();
    sweep::<CrashlabDb>(&cfg, &mut |run, r| {
        let Outcome::Violation(v) = &r.outcome else {
            return;
        };
        let reader = v.verdict == Verdict::Failed(During::BackgroundReader);
        if reader && v.detail.contains("reader task") && !v.detail.contains("changed while held") {
            assert_eq!(r.faults.corrupting(), 0, "seed {}: {v}", run.seed);
            seen_by_reader.push(run.seed);
        }
    });
    assert!(
        seen_by_reader.len() >= 2,
        "a reader task's error was a violation in seeds {seen_by_reader:?} of 400"
    );
}

/// First seed in `0..limit` whose run under `profile` is a violation.
fn first_caught(profile: Profile, limit: u64) -> Option<u64> {
    (0..limit).find(|&s| {
        matches!(
            run(&RunConfig::from_seed(s, 300, profile)).outcome,
            Outcome::Violation(_)
        )
    })
}

#[test]
fn negative_control_lying_sync_is_caught_within_10_seeds() {
    assert!(first_caught(Profile::LyingSync, 10).is_some());
}

#[test]
fn negative_control_no_barrier_between_data_and_meta_is_caught_within_40_seeds() {
    assert!(first_caught(Profile::NoBarrier, 40).is_some());
}
