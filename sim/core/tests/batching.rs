//! Batched commits under the simulator: concurrent madsim clients, disk faults and power cuts.

use crashlab_engine::batch::MergeStrategy;
use crashlab_sim::batching::{run_batched, BatchRunConfig};
use crashlab_sim::profile::Profile;

#[test]
fn batched_calls_keep_the_oracle_under_faults_and_power_cuts() {
    let (mut acked, mut failed_own, mut unknown, mut cuts, mut batches, mut calls) =
        (0, 0, 0, 0, 0, 0);
    let mut disk_failures = 0;
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        for seed in 0..120u64 {
            let r = run_batched(&BatchRunConfig::from_seed(seed, Profile::Default, strategy));
            assert_eq!(r.violation, None, "seed {seed} {strategy:?}");
            disk_failures += u64::from(r.disk_failure.is_some());
            acked += r.acked;
            failed_own += r.failed_own;
            unknown += r.unknown;
            cuts += u64::from(r.power_cut_fired);
            batches += r.counters.batches;
            calls += r.counters.batched_calls;
        }
    }
    assert!(
        acked > 500 && failed_own > 20 && unknown > 0,
        "{acked} {failed_own} {unknown}"
    );
    assert!(
        cuts > 20,
        "{cuts} power cuts landed during the clients' work"
    );
    assert!(
        disk_failures <= 5,
        "{disk_failures} of 240 runs lost data to latent sector errors"
    );
    assert!(
        calls > batches,
        "calls were coalesced: {calls} calls in {batches} batches"
    );
}

#[test]
fn a_seed_replays_exactly() {
    let cfg = BatchRunConfig::from_seed(11, Profile::Default, MergeStrategy::Append);
    let (a, b) = (run_batched(&cfg), run_batched(&cfg));
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.recovered, b.recovered);
    assert_eq!(a.counters, b.counters);
}

#[test]
fn append_and_rebuild_give_identical_databases() {
    for seed in 0..30u64 {
        let mut runs = [MergeStrategy::Append, MergeStrategy::Rebuild].map(|s| {
            let mut cfg = BatchRunConfig::from_seed(seed, Profile::None, s);
            cfg.power_cut_at = None;
            run_batched(&cfg)
        });
        let [a, b] = &mut runs;
        assert_eq!(a.violation, None);
        assert_eq!(b.violation, None);
        assert!(!a.recovered.is_empty(), "seed {seed}");
        assert_eq!(a.recovered, b.recovered, "seed {seed}");
        assert_eq!(
            b.counters.merge_records_decoded,
            b.counters.merge_records_encoded
        );
        assert_eq!(
            a.counters.merge_records_decoded, 0,
            "append copies bytes, decodes nothing"
        );
    }
}

#[test]
fn a_lying_sync_loses_acknowledged_batches() {
    let caught = (0..40u64)
        .filter(|&s| {
            run_batched(&BatchRunConfig::from_seed(
                s,
                Profile::LyingSync,
                MergeStrategy::Append,
            ))
            .violation
            .is_some()
        })
        .count();
    assert!(caught >= 10, "only {caught} of 40 lying-sync seeds caught");
}
