//! `crashlab compare` at the small scale: each table's text is pinned by an insta snapshot under
//! `tests/snapshots/` (a diff means the engine's costs changed: review it with
//! `cargo insta review`), and the findings each table exists to show are asserted directly, so a
//! snapshot accepted by mistake cannot hide a lost finding.

use crashlab_compare::{self as compare, EngineKind, Scale, Table};

/// Both engines' rows: what the snapshots pin.
const BOTH: [EngineKind; 2] = [EngineKind::Crashlab, EngineKind::Redb];

fn tables() -> Vec<Table> {
    compare::run(None, Scale::Small, &BOTH).expect("every scenario runs")
}

fn find<'a>(tables: &'a [Table], scenario: &str) -> &'a Table {
    tables
        .iter()
        .find(|t| t.scenario == scenario)
        .unwrap_or_else(|| panic!("no {scenario} table"))
}

#[test]
fn every_small_table_matches_its_snapshot() {
    let tables = tables();
    let names: Vec<&str> = tables.iter().map(|t| t.scenario.as_str()).collect();
    assert_eq!(names, compare::SCENARIOS);
    for t in &tables {
        insta::assert_snapshot!(t.scenario.clone(), t.render());
    }
}

#[test]
fn each_scenario_has_rows_for_the_engines_it_declares_and_refuses_the_others_at_once() {
    let all = compare::run(None, Scale::Small, &EngineKind::ALL).expect("every scenario runs");
    for s in compare::SCENARIOS {
        let rows = &find(&all, s).rows;
        let seen: Vec<EngineKind> = EngineKind::ALL
            .into_iter()
            .filter(|e| rows.iter().any(|r| r.engine == *e))
            .collect();
        assert_eq!(seen, compare::engines_of(s), "{s}");
        for e in EngineKind::ALL.into_iter().filter(|e| !seen.contains(e)) {
            // The seed scale, where running the scenario first would take minutes.
            let err = compare::run(Some(s), Scale::Seed, &[e]).expect_err("no rows");
            assert!(err.contains(&format!("`{s}` has no rows for {e}")), "{err}");
        }
    }
}

#[test]
fn tables_are_deterministic() {
    // As JSON text: a figure a variant lacks is NaN, which is never equal to itself.
    let json = || serde_json::to_string(&tables()).expect("tables serialise");
    assert_eq!(json(), json());
}

#[test]
fn large_db_set_shows_the_freelist_finding() {
    let tables = tables();
    let set = find(&tables, "large-db-set");
    let v =
        |group: &str, variant: &str, column: &str| set.value(group, variant, column).expect("cell");
    // Neither free set moves entries or scans in proportion to the free set (the array kind
    // did, one id per free page, until it kept runs): on the large DB each does at most a few
    // steps more than on a fresh one.
    for variant in [
        "array/synced",
        "array/not-synced",
        "hashmap/synced",
        "hashmap/not-synced",
    ] {
        // Additive, not a ratio: a fresh database's commits take exact runs for their pages
        // (`engine/src/commit/reserve.rs`) and move fewer entries than a large one's, whose
        // commits take pages one by one from its long free run; what must not appear is work
        // in proportion to the 1,024 free pages.
        for column in ["ids_moved", "scan_steps"] {
            let (large, fresh) = (v("large", variant, column), v("fresh", variant, column));
            assert!(
                large < fresh + 6.0,
                "{variant} {column}: large {large} vs fresh {fresh}"
            );
        }
    }
    // A synced freelist writes the whole free set every commit; a not-synced one writes none.
    for kind in ["array", "hashmap"] {
        let synced = v("large", &format!("{kind}/synced"), "freelist_KiB");
        assert!(synced > v("fresh", &format!("{kind}/synced"), "freelist_KiB"));
        assert_eq!(
            v("large", &format!("{kind}/not-synced"), "freelist_KiB"),
            0.0
        );
        let time = v("large", &format!("{kind}/synced"), "sim_us");
        assert!(time > v("large", &format!("{kind}/not-synced"), "sim_us"));
    }
    // Every crashlab variant makes each Set durable with two syncs (data, then meta); redb's
    // one-phase commit makes it durable with one.
    for row in set.rows.iter().filter(|r| r.variant != "redb") {
        let syncs = set.value(&row.group, &row.variant, "syncs").unwrap();
        assert!((2.0..2.1).contains(&syncs), "{}: {syncs}", row.variant);
    }
    assert_eq!(v("large", "redb", "syncs"), 1.0);
    assert!(
        v("large", "redb", "freelist_KiB").is_nan(),
        "not a redb counter"
    );
}

#[test]
fn large_db_reopen_rebuilds_instead_of_reading_the_freelist() {
    let tables = tables();
    let reopen = find(&tables, "large-db-reopen");
    let v = |variant: &str, column: &str| reopen.value("", variant, column).expect("cell");
    for kind in ["array", "hashmap"] {
        let synced = format!("{kind}/synced");
        let not_synced = format!("{kind}/not-synced");
        assert_eq!(v(&synced, "rebuild_pages"), 0.0);
        assert!(v(&not_synced, "rebuild_pages") > 0.0);
        assert!(v(&not_synced, "KiB_read") < v(&synced, "KiB_read"));
    }
}

#[test]
fn commits_show_group_commit_amortising_syncs() {
    let tables = tables();
    let commits = find(&tables, "commits");
    let v = |group: &str, variant: &str, column: &str| {
        commits.value(group, variant, column).expect("cell")
    };
    // One writer: nothing to merge, so batching changes nothing.
    assert_eq!(
        v("1 writer", "append", "sim_us"),
        v("1 writer", "unbatched", "sim_us")
    );
    let mut last = 1.0;
    for writers in ["4 writers", "16 writers", "64 writers"] {
        let ratio = commits
            .rows
            .iter()
            .find(|r| r.group == writers && r.variant == "append")
            .and_then(|r| r.ratio)
            .expect("ratio");
        assert!(ratio > last, "{writers}: {ratio} after {last}");
        last = ratio;
        // Both strategies build the same batches; only Rebuild decodes and encodes, and only the
        // records of batches that merged two calls or more.
        assert_eq!(
            v(writers, "append", "syncs"),
            v(writers, "rebuild", "syncs")
        );
        assert_eq!(v(writers, "append", "decoded"), 0.0);
        let decoded = v(writers, "rebuild", "decoded");
        assert!(decoded > 0.0 && decoded <= 1.0, "{writers}: {decoded}");
        assert_eq!(decoded, v(writers, "rebuild", "encoded"));
    }
    assert!(last > 10.0, "64 writers: {last}x");
    // redb commits each transaction alone, one sync each, whatever the writers.
    assert_eq!(v("64 writers", "redb", "syncs"), 1.0);
    assert_eq!(
        v("1 writer", "redb", "sim_us"),
        v("64 writers", "redb", "sim_us")
    );
    // Write amplification: bytes written over the 116 bytes a transaction carries.
    let amp = v("1 writer", "unbatched", "write_amp");
    let kib = v("1 writer", "unbatched", "KiB_written");
    assert!(
        (amp - kib * 1024.0 / 116.0).abs() < 0.01,
        "{amp} vs {kib} KiB"
    );
}

#[test]
fn buffers_show_what_each_policy_pays() {
    let tables = tables();
    let buffers = find(&tables, "buffers");
    for group in ["iavl ×50", "geth ×200"] {
        let v = |variant: &str, column: &str| buffers.value(group, variant, column).expect("cell");
        // The policy changes how bytes are buffered, never what is written or its device time.
        assert_eq!(v("grow", "sim_us"), v("exact", "sim_us"));
        assert_eq!(v("grow", "sim_us"), v("estimate", "sim_us"));
        assert_eq!(v("grow", "records"), v("exact", "records"));
        // Grow pays in growth; Exact pays in sizing steps, one per record (plus none for the
        // IAVL root record); only Grow copies.
        assert!(v("grow", "batch_allocs") > v("exact", "batch_allocs"));
        assert!(v("grow", "batch_copied_KiB") > 0.0);
        assert_eq!(v("exact", "batch_copied_KiB"), 0.0);
        assert_eq!(v("estimate", "batch_copied_KiB"), 0.0);
        assert!(v("exact", "size_steps") >= v("exact", "records") - 1.0);
        assert_eq!(v("estimate", "size_steps"), 0.0);
        assert!(v("exact", "all_reserved_KiB") < v("grow", "all_reserved_KiB"));
    }
    // Where the size is known for free, Estimate is as tight as Exact.
    let geth = |variant: &str| {
        buffers
            .value("geth ×200", variant, "batch_reserved_KiB")
            .unwrap()
    };
    assert_eq!(geth("estimate"), geth("exact"));
}

#[test]
fn unknown_scenarios_are_an_error() {
    let e = compare::run(Some("nope"), Scale::Small, &BOTH).unwrap_err();
    assert!(e.contains("unknown scenario `nope`"), "{e}");
    assert!(e.contains("large-db-set"), "{e}");
}

#[test]
fn plots_are_svg_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = compare::plot::write_all(dir.path(), Scale::Small).expect("plots");
    assert_eq!(files.len(), 5);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        assert!(text.starts_with("<svg"), "{}", f.display());
        assert!(
            text.contains("<polyline") || text.contains("<path"),
            "{}",
            f.display()
        );
    }
}

#[test]
fn engine_selection_keeps_rows_and_ratios() {
    let both = tables();
    let only = |engines: &[EngineKind]| compare::run(None, Scale::Small, engines).unwrap();
    let crashlab = only(&[EngineKind::Crashlab]);
    let redb = only(&[EngineKind::Redb]);
    assert_eq!(crashlab.len(), 5);
    for t in &crashlab {
        assert!(t
            .rows
            .iter()
            .all(|r| r.engine == EngineKind::Crashlab && r.variant != "redb"));
    }
    let names: Vec<&str> = redb.iter().map(|t| t.scenario.as_str()).collect();
    assert_eq!(names, ["large-db-set", "large-db-reopen", "commits"]);
    for t in &redb {
        let full = find(&both, &t.scenario);
        assert!(!t.rows.is_empty());
        for r in &t.rows {
            assert_eq!((r.engine, r.variant.as_str()), (EngineKind::Redb, "redb"));
            let same = full
                .rows
                .iter()
                .find(|x| x.group == r.group && x.variant == r.variant)
                .expect("the row is in the full table");
            // Against crashlab's baseline, which the redb-only table does not show.
            assert!(r.ratio.is_some(), "{}: {r:?}", t.scenario);
            assert_eq!(same.ratio, r.ratio);
        }
    }
    // crashlab's rows do not depend on whether redb was measured beside them.
    for t in &crashlab {
        let full = find(&both, &t.scenario);
        let kept: Vec<_> = full
            .rows
            .iter()
            .filter(|r| r.engine == EngineKind::Crashlab)
            .collect();
        assert_eq!(kept, t.rows.iter().collect::<Vec<_>>());
    }
}

#[test]
fn simulated_writers_make_batches_of_the_sizes_their_timing_gives() {
    let tables = tables();
    let sizes = find(&tables, "commit-batch-sizes");
    let v = |group: &str, variant: &str, column: &str| {
        sizes.value(group, variant, column).expect("cell")
    };
    // One writer, or a batch size of one: every commit holds one transaction.
    assert_eq!(v("1 writer", "append", "1"), 1.0);
    assert_eq!(v("64 writers", "unbatched", "1"), 1.0);
    // 64 writers that think between their transactions do not all make every batch: the sizes
    // spread over more than one bucket, and the mean lies between one and the writer count.
    let mean = v("64 writers", "append", "mean");
    assert!(mean > 4.0 && mean < 64.0, "{mean}");
    let buckets = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64"];
    let used = buckets
        .iter()
        .filter(|b| v("64 writers", "append", b) > 0.0)
        .count();
    assert!(used >= 2, "{used} sizes seen");
    let shares: f64 = buckets.iter().map(|b| v("64 writers", "append", b)).sum();
    assert!((shares - 1.0).abs() < 0.01, "{shares}");
    // More writers, bigger batches.
    assert!(v("16 writers", "append", "mean") > v("4 writers", "append", "mean"));
    assert!(mean > v("16 writers", "append", "mean"));
}
