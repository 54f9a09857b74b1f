//! The structured event log a report is drawn from (`runner::run_logged`): the logged run is
//! the same run as the plain one, and the log holds every operation, every power cut with the
//! fate of each pending sector the disk counted, and every fault the disk injected.

use crashlab_sim::config::RunConfig;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::events::{Fate, What};
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::{run, run_logged};

#[test]
fn a_logged_run_is_the_same_run_and_its_log_is_complete() {
    let mut cut_seen = false;
    let mut faults_seen = false;
    for seed in 0..12 {
        let cfg = RunConfig::from_seed(seed, 150, Profile::Default);
        let plain = run::<CrashlabDb>(&cfg);
        let (logged, log) = run_logged::<CrashlabDb>(&cfg);
        assert_eq!(plain.trace_hash, logged.trace_hash, "seed {seed}");
        assert_eq!(plain.image_hash, logged.image_hash, "seed {seed}");
        assert_eq!(
            log.lines.len() as u64,
            logged.trace_events,
            "seed {seed}: every line"
        );

        // Each operation's event sits at its own trace line (the report places the other lines
        // between events by this), in the order the operations ran.
        let mut last = None;
        for e in &log.events {
            if let What::Op {
                index, op, result, ..
            } = &e.what
            {
                let line = &log.lines[e.seq as usize];
                assert_eq!(line, &format!("{index} {op} -> {result}"), "seed {seed}");
                assert!(
                    last < Some(*index),
                    "seed {seed}: op {index} after {last:?}"
                );
                last = Some(*index);
            }
        }
        assert!(last.is_some(), "seed {seed}: operations were logged");

        // Power cuts: one event each, and their sectors' fates add up to the disk's counts.
        let cuts: Vec<_> = log
            .events
            .iter()
            .filter_map(|e| match &e.what {
                What::PowerCut(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(cuts.len() as u64, logged.stats.crashes, "seed {seed}");
        let fates = |f: Fate| -> u64 {
            let n = cuts
                .iter()
                .map(|c| c.sectors.iter().filter(|s| s.1 == f).count());
            n.sum::<usize>() as u64
        };
        let f = &logged.faults;
        let pending: u64 = cuts.iter().map(|c| c.sectors.len() as u64).sum();
        assert_eq!(
            pending,
            f.sectors_kept_in_crash + f.sectors_lost_in_crash,
            "seed {seed}"
        );
        assert!(fates(Fate::Torn) <= f.sub_sector_tears, "seed {seed}");
        cut_seen |= pending > 0;

        // Faults: one event per fault the disk counted.
        let logged_faults = log
            .events
            .iter()
            .filter(|e| matches!(e.what, What::Fault(_)))
            .count();
        let counted = f.read_eio
            + f.write_eio
            + f.sync_eio
            + f.latent_sectors
            + f.latent_read_errors
            + f.bit_flips
            + f.misdirected_writes
            + f.enospc
            + f.lying_syncs;
        assert_eq!(logged_faults as u64, counted, "seed {seed}");
        faults_seen |= counted > 0;
    }
    assert!(cut_seen, "some seed cut the power with sectors pending");
    assert!(faults_seen, "some seed injected a fault");
}
