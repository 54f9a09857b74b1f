//! snapkv crash-tested on SimFs: the driver runs an engine of several files (capability
//! `directory`) under both metadata models, and the planted metadata bug
//! (`Options::debug_skip_dir_sync`: no directory sync after the rename) is this capability's
//! negative control — caught under each model, shrunk, replayed from its case; passed by the
//! clean twin; and hidden by SimFs's own control `renames_durable_at_once`, which shows that
//! modelling pending renames is what catches it.

use crate::adapter;

use adapter::{SnapConfig, SnapDb};
use crashlab_sim::case::{Case, Expect};
use crashlab_sim::config::RunConfig;
use crashlab_sim::fs::MetaModel;
use crashlab_sim::profile::Profile;
use crashlab_sim::runner::{header, run, Report};
use crashlab_sim::shrink::shrink;
use crashlab_sim::sweep::{repro_line, sweep_with, Summary, SweepConfig};
use crashlab_sim::verdict::{Outcome, Verdict, Violation};

const SEEDS: u64 = 200;
const OPS: usize = 120;

fn violation(r: &Report) -> Option<&Violation> {
    match &r.outcome {
        Outcome::Violation(v) => Some(v),
        _ => None,
    }
}

/// A sweep of `SEEDS` seeds on `model`, with `bug` and SimFs's `at_once` switch as given.
fn swept(
    model: MetaModel,
    bug: bool,
    at_once: bool,
) -> (Summary, Vec<(RunConfig<SnapConfig>, Violation)>) {
    let cfg = SweepConfig::new(0..SEEDS, OPS, Profile::Default);
    let adjust = move |c: &mut RunConfig<SnapConfig>| {
        c.fs.model = model;
        c.fs.renames_durable_at_once = at_once;
        c.engine.0.debug_skip_dir_sync = bug;
    };
    let mut found = Vec::new();
    let s = sweep_with::<SnapDb>(&cfg, &adjust, &mut |run_cfg, report| {
        if let Some(v) = violation(report) {
            found.push((run_cfg.clone(), v.clone()));
        }
    });
    println!(
        "{model} bug={bug} renames_durable_at_once={at_once}: {} seeds, {} commits, {} power \
         cuts, metadata ops {} (kept by cuts {}, lost {}), {} violations",
        s.seeds,
        s.stats.commits,
        s.stats.crashes,
        s.fs.counts.meta_ops,
        s.fs.counts.meta_ops_kept_in_crash,
        s.fs.counts.meta_ops_lost_in_crash,
        s.violations
    );
    (s, found)
}

/// What a sweep must have exercised for its verdict to mean anything (a sweep that finds a
/// violation stops each seed at it: fewer commits).
fn assert_exercised(s: &Summary, model: MetaModel) {
    assert_eq!(s.seeds, SEEDS);
    assert_eq!(s.fs.seeds_by_model.get(&model), Some(&SEEDS));
    assert!(s.stats.commits > 2 * SEEDS, "{} commits", s.stats.commits);
    assert!(s.stats.crashes > SEEDS, "{} power cuts", s.stats.crashes);
    assert!(
        s.fs.counts.meta_ops > 2 * s.stats.commits,
        "{:?}",
        s.fs.counts
    );
}

#[test]
fn the_clean_engine_passes_a_sweep_under_both_models() {
    for model in MetaModel::ALL {
        let (s, found) = swept(model, false, false);
        let lines: Vec<String> = found
            .iter()
            .map(|(c, v)| format!("{v}\n  replay: {}", repro_line(c)))
            .collect();
        assert!(lines.is_empty(), "{model}: {}", lines.join("\n"));
        assert_exercised(&s, model);
        assert!(
            s.fs.counts.dir_syncs >= s.stats.commits,
            "{:?}",
            s.fs.counts
        );
        assert!(
            s.faults.sectors_lost_in_crash > 0,
            "{model}: no cut lost a sector"
        );
        // Cuts landed between a commit's rename and its directory sync, and lost some.
        assert!(
            s.fs.counts.meta_ops_lost_in_crash > 0,
            "{model}: {:?}",
            s.fs.counts
        );
    }
}

#[test]
fn the_missing_directory_sync_is_caught_under_each_model_shrunk_and_replayed() {
    for model in MetaModel::ALL {
        let (s, found) = swept(model, true, false);
        assert_exercised(&s, model);
        let (first, v) = found
            .first()
            .cloned()
            .unwrap_or_else(|| panic!("{model}: the missing directory sync escaped {SEEDS} seeds"));
        // An acknowledged commit lost, never anything else: the snapshot itself is whole.
        assert!(
            found.iter().all(|(_, v)| v.verdict == Verdict::Durability),
            "{model}: {:?}",
            found.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>()
        );
        println!("{model}: first violation at seed {}: {v}", first.seed);

        let small = shrink::<SnapDb>(&first, 300);
        let crash = small.crash_words().expect("the loss follows a power cut");
        println!("{model}: shrunk in {} runs; {crash}", small.attempts);
        let shrunk = small.run;
        let pinned = shrunk.pinned_cut.clone().expect("the cut is pinned");
        assert!(
            pinned.dir.is_some(),
            "a directory engine's cut pins the file system's"
        );
        assert!(
            shrunk.ops.len() < first.ops.len(),
            "{} ops",
            shrunk.ops.len()
        );
        let before = run::<SnapDb>(&shrunk);
        let bv = violation(&before)
            .expect("the shrunk case still fails")
            .clone();
        assert_eq!(bv.verdict, Verdict::Durability);

        let case = Case {
            run: shrunk.clone(),
            expect: Expect::Violation,
            explicit_ops: true,
            check: None,
            crash_state: None,
        };
        let text = case.to_text();
        println!("{text}");
        assert!(text.contains(&format!("fs = model={model}")), "{text}");
        let back = Case::<SnapConfig>::parse(&text, "shrunk.case").expect("the case parses");
        assert_eq!(back.run, shrunk);
        let after = run::<SnapDb>(&back.run);
        assert_eq!(violation(&after), Some(&bv));
        assert_eq!(after.trace_hash, before.trace_hash);

        // The clean twin survives the very same case, pinned cut and all.
        let mut clean = shrunk;
        clean.engine.0.debug_skip_dir_sync = false;
        assert_eq!(run::<SnapDb>(&clean).outcome, Outcome::Ok);
    }
}

#[test]
fn renames_made_durable_at_once_hide_the_missing_directory_sync() {
    for model in MetaModel::ALL {
        let (s, found) = swept(model, true, true);
        assert_exercised(&s, model);
        let seeds: Vec<u64> = found.iter().map(|(c, _)| c.seed).collect();
        assert!(
            found.is_empty(),
            "{model}: caught anyway at seeds {seeds:?}"
        );
    }
}

#[test]
fn a_seed_draws_its_model_and_the_header_and_case_say_which() {
    let drawn: Vec<MetaModel> = (0..64)
        .map(|s| {
            RunConfig::<SnapConfig>::from_seed(s, 10, Profile::Default)
                .fs
                .model
        })
        .collect();
    for model in MetaModel::ALL {
        assert!(drawn.contains(&model), "no seed of 64 drew {model}");
    }
    let cfg = RunConfig::<SnapConfig>::from_seed(3, 10, Profile::Default);
    assert!(
        header(&cfg).contains(&format!("\n  fs:      model={}\n", cfg.fs.model)),
        "{}",
        header(&cfg)
    );
    // A run is a function of its seed: twice the same trace and the same directory.
    let (a, b) = (run::<SnapDb>(&cfg), run::<SnapDb>(&cfg));
    assert_eq!((a.trace_hash, a.image_hash), (b.trace_hash, b.image_hash));
    assert!(a.fs.is_some_and(|c| c.meta_ops > 0));

    let text = "engine = snapkv\nseed = 3\nops = 10\nfs = model=ext3\n";
    let e = Case::<SnapConfig>::parse(text, "bad.case").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("bad.case", 4));
    assert!(e.message.contains("expected ordered or strict"), "{e}");
    let e = Case::<SnapConfig>::parse(
        "engine = snapkv\nseed = 3\nops = 10\nfs = durable=yes\n",
        "b",
    )
    .unwrap_err();
    assert!(e.message.contains("unknown fs setting `durable`"), "{e}");
    let case = Case::<SnapConfig>::parse("engine = snapkv\nseed = 3\nops = 10\n", "b").unwrap();
    assert_eq!(case.run.fs, cfg.fs, "absent, the model is the seed's");
}

/// Regression: snapkv was first written without the `set_len` + sync barrier before writing
/// `db.tmp`, and the first clean sweep caught it at once — on `own-barrier` disks (POSIX
/// `fdatasync`: a data sync does not persist growth) a power cut kept the rename of a synced
/// `db.tmp` and lost its length, leaving `db` empty: `corrupt snapshot "db": 0 bytes, below the
/// 32-byte header`. The bug stays behind `debug_skip_grow_barrier`: the sweep must catch it on
/// the seeds whose disk is `own-barrier` and on no other.
#[test]
fn regression_the_snapshot_without_its_growth_barrier_is_lost_on_own_barrier_disks() {
    use crashlab_sim::disk::LengthModel;
    let cfg = SweepConfig::new(0..SEEDS, OPS, Profile::Default);
    let adjust = |c: &mut RunConfig<SnapConfig>| c.engine.0.debug_skip_grow_barrier = true;
    let (mut caught, mut own_barrier) = (Vec::new(), 0);
    sweep_with::<SnapDb>(&cfg, &adjust, &mut |run_cfg, report| {
        let own = run_cfg.disk.length == LengthModel::OwnBarrier;
        own_barrier += u64::from(own);
        if let Some(v) = violation(report) {
            assert!(own, "seed {} on a with-data disk: {v}", run_cfg.seed);
            assert!(
                v.detail.contains("0 bytes, below the 32-byte header"),
                "{v}"
            );
            caught.push(run_cfg.seed);
        }
    });
    println!("{} of {own_barrier} own-barrier seeds caught", caught.len());
    assert!(
        own_barrier > 0 && !caught.is_empty(),
        "{own_barrier} own-barrier seeds"
    );
}
