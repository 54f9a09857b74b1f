//! SQLite through crashlab's own runner (the driver on SimFs, the runner's faults, background
//! readers, timer cuts, the oracle): the drawn modes pass a sweep under the default profile;
//! the positive controls are caught (their shrunk cases are in corpus/sqlite); a seed's trace hash,
//! image hash and outcome are the same run twice, after other seeds and on another thread.

use crashlab_sim::config::RunConfig;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::{run, Report};
use crashlab_sim::sweep::{repro_line, sweep_with, SweepConfig};
use crashlab_sim::verdict::Outcome;
use crashlab_sqlite::{Journal, SqliteChoices, SqliteDb, Synchronous};

fn violations(
    seeds: std::ops::Range<u64>,
    ops: usize,
    profile: Profile,
    mode: Option<SqliteChoices>,
) -> (
    crashlab_sim::sweep::Summary,
    Vec<(RunConfig<SqliteChoices>, String)>,
) {
    let cfg = SweepConfig::new(seeds, ops, profile);
    let adjust = move |c: &mut RunConfig<SqliteChoices>| {
        if let Some(m) = mode {
            c.engine = m;
        }
    };
    let mut found = Vec::new();
    let s = sweep_with::<SqliteDb>(&cfg, &adjust, &mut |c, r: &Report| {
        if let Outcome::Violation(v) = &r.outcome {
            found.push((c.clone(), format!("{v}\n  replay: {}", repro_line(c))));
        }
    });
    (s, found)
}

#[test]
fn the_drawn_modes_pass_a_default_sweep_through_the_runner() {
    let (s, found) = violations(0..150, 200, Profile::Default, None);
    let lines: Vec<&str> = found.iter().map(|(_, v)| v.as_str()).collect();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
    println!("{s:?}");
    assert!(s.stats.commits > 1000, "{} commits", s.stats.commits);
    assert!(s.stats.crashes > 150, "{} power cuts", s.stats.crashes);
    assert!(
        s.faults.sectors_lost_in_crash > 0 && s.faults.sync_eio > 0,
        "{:?}",
        s.faults
    );
    assert!(s.fs.counts.meta_ops_lost_in_crash > 0, "{:?}", s.fs.counts);
}

#[test]
fn the_positive_controls_are_caught_through_the_runner() {
    for mode in [
        SqliteChoices::new(Journal::Delete, Synchronous::Off),
        SqliteChoices::new(Journal::Wal, Synchronous::Off),
        SqliteChoices::new(Journal::Off, Synchronous::Full),
    ] {
        let (_, found) = violations(0..40, 200, Profile::Default, Some(mode));
        assert!(!found.is_empty(), "{mode}: not caught in 40 seeds");
    }
}

fn key(r: &Report) -> (u64, u64, String) {
    (r.trace_hash, r.image_hash, format!("{:?}", r.outcome))
}

#[test]
fn a_seed_is_the_same_run_twice_after_other_seeds_and_on_another_thread() {
    for seed in [1u64, 4, 9, 30] {
        let cfg = RunConfig::<SqliteChoices>::from_seed(seed, 200, Profile::Default);
        let first = key(&run::<SqliteDb>(&cfg));
        assert_eq!(first, key(&run::<SqliteDb>(&cfg)), "seed {seed} twice");
        for other in 50..53 {
            run::<SqliteDb>(&RunConfig::<SqliteChoices>::from_seed(
                other,
                200,
                Profile::Default,
            ));
        }
        assert_eq!(
            first,
            key(&run::<SqliteDb>(&cfg)),
            "seed {seed} after other seeds"
        );
        let c = cfg.clone();
        let on_thread = std::thread::spawn(move || key(&run::<SqliteDb>(&c)))
            .join()
            .unwrap();
        assert_eq!(first, on_thread, "seed {seed} on another thread");
    }
}
