//! The `crashlab` binary as a user meets it: output, exit codes, saved cases, error messages.

use crate::common;

use common::{crashlab, text};
use std::path::Path;

#[test]
fn run_prints_the_configuration_outcome_and_trace_hash() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["run", "--seed", "3", "--ops", "80"], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "seed 3 profile default ops 80",
        "options: page_size=",
        "faults:",
        "disk:    sector_size=",
        "outcome: ok",
        "trace:",
        "simulated time",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    // A 40-hex commit hash is a seed too.
    let o = crashlab(
        &[
            "run",
            "--seed",
            "00000000000000030000000000000000000000ff",
            "--ops",
            "80",
        ],
        dir.path(),
    );
    assert!(text(&o).contains("seed 3 profile default"), "{}", text(&o));
}

#[test]
fn a_violation_exits_1_saves_a_case_and_the_case_replays() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "explore",
            "--seeds",
            "0..10",
            "--profile",
            "lying-sync",
            "--found-dir",
            "found",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("repro: crashlab repro found/seed-"), "{t}");
    let case = std::fs::read_dir(dir.path().join("found"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let o = crashlab(&["repro", case.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("as expected (Violation)"), "{}", text(&o));
    let o = crashlab(
        &["shrink", case.to_str().unwrap(), "--budget", "200"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("shrunk 300 ops to"), "{}", text(&o));
}

#[test]
fn explore_prints_the_disk_coverage_and_catches_the_growth_control() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["explore", "--seeds", "0..40", "--ops", "100"], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let line = t
        .lines()
        .find_map(|l| l.strip_prefix("disk: seeds per sector size: "))
        .unwrap_or_else(|| panic!("no disk coverage in:\n{t}"));
    let (sizes, lengths) = line
        .split_once(" · per length model: ")
        .expect("both halves");
    let count = |part: &str| -> u64 {
        part.split(", ")
            .map(|w| w.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(count(sizes), 40, "{line}");
    assert_eq!(count(lengths), 40, "{line}");
    assert!(
        t.contains("sub-sector tears ") && t.contains("torn metas "),
        "{t}"
    );
    // The other dimensions, each on its line, each reached by 40 default seeds.
    let after = |prefix: &str| -> &str {
        t.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{t}"))
    };
    let first_number = |s: &str| -> u64 {
        let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no number at `{s}`"))
    };
    assert!(first_number(after("callers: groups ")) > 0, "{t}");
    assert!(first_number(after("live checks ")) > 0, "{t}");
    let api = after("api (");
    assert!(first_number(api) >= 10, "{api}");
    for call in ["seek absent", "prev", "next-seq", "range"] {
        assert!(api.contains(call), "`{call}` not in {api}");
    }

    let o = crashlab(
        &[
            "explore",
            "--seeds",
            "0..5",
            "--profile",
            "no-growth-sync",
            "--found-dir",
            "found",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = crashlab(
        &[
            "check",
            "--seed",
            "1",
            "--control",
            "fdatasync-disk",
            "--length",
            "with-data",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("runs on an own-barrier disk"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["run", "--seed", "banana"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("decimal u64 or 40-hex"), "{}", text(&o));
    let o = crashlab(&["explore", "--seeds", "5..5"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let o = crashlab(
        &["explore", "--seeds", "0..5", "--shard", "3/2"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("i < n"), "{}", text(&o));
    let o = crashlab(&["run", "--seed", "1", "--profile", "gentle"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("expected one of"), "{}", text(&o));
    std::fs::write(
        dir.path().join("bad.case"),
        "seed = 1\n[ops]\ncreate a\nput a k1 len=ten v=1\n",
    )
    .unwrap();
    let o = crashlab(&["repro", "bad.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("bad.case:4: `ten` is not a valid value for `len`")
            || text(&o).contains("bad.case:4:"),
        "{}",
        text(&o)
    );
    let o = crashlab(&["repro", "missing.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("missing.case"), "{}", text(&o));
    std::fs::write(
        dir.path().join("fine.case"),
        "seed = 1\nprofile = none\nops = 20\n",
    )
    .unwrap();
    let o = crashlab(&["shrink", "fine.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("does not fail"), "{}", text(&o));
}

#[test]
fn compare_prints_one_scenario_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &["compare", "--scale", "small", "--scenario", "commits"],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.starts_with("== commits (small)"), "{t}");
    assert!(t.contains("64 writers  append"), "{t}");

    assert!(!t.contains("redb"), "crashlab's rows only by default: {t}");
    let o = crashlab(&["compare", "--engine", "lmdb"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown engine `lmdb`"), "{}", text(&o));

    let o = crashlab(&["compare", "--scenario", "nope"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown scenario `nope`"), "{}", text(&o));
    let o = crashlab(&["compare", "--scale", "huge"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("expected small or seed"), "{}", text(&o));
}

// The three runs of every scenario are three tests, so that they run side by side.
#[test]
fn compare_json_holds_every_table_and_null_for_a_figure_an_engine_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "compare",
            "--scale",
            "small",
            "--json",
            "--engine",
            "crashlab,redb",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tables: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let names: Vec<&str> = tables
        .as_array()
        .expect("an array of tables")
        .iter()
        .map(|t| t["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "large-db-set",
            "large-db-reopen",
            "commits",
            "commit-batch-sizes",
            "buffers"
        ]
    );
    assert_eq!(tables[2]["baseline"], "unbatched");
    let rows = tables[2]["rows"].as_array().expect("rows");
    let append64 = rows
        .iter()
        .find(|r| r["group"] == "64 writers" && r["variant"] == "append")
        .expect("the 64-writer append row");
    assert!(append64["ratio"].as_f64().unwrap() > 10.0);
    // A figure redb does not have is null in JSON.
    let redb = rows
        .iter()
        .find(|r| r["variant"] == "redb")
        .expect("a redb row");
    assert!(redb["values"][5].is_null(), "{redb}");
    assert_eq!(redb["engine"], "redb");
}

#[test]
fn compare_of_redb_alone_has_the_scenarios_it_shares() {
    // redb alone: its rows in the scenarios it shares, ratios still against crashlab's baseline.
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &["compare", "--scale", "small", "--engine", "redb"],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("== large-db-set") && t.contains("== commits"),
        "{t}"
    );
    assert!(!t.contains("== buffers") && !t.contains("append"), "{t}");
    let o = crashlab(
        &[
            "compare",
            "--scale",
            "small",
            "--engine",
            "redb",
            "--scenario",
            "buffers",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("`buffers` has no rows for redb"),
        "{}",
        text(&o)
    );
}

#[test]
fn check_reports_states_and_exits_0_on_a_correct_engine() {
    let dir = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/check/small.case");
    let o = crashlab(&["check", "--case", case.to_str().unwrap()], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for needle in [
        "check seed 1 ops 19",
        // 23 in the workload and one in the final reopen, which syncs.
        "crash points 24 (exhaustive 24",
        "states generated",
        "distinct images opened",
        "states/s",
        "violations: 0 states",
    ] {
        assert!(t.contains(needle), "missing `{needle}` in:\n{t}");
    }
    let o = crashlab(&["check", "--seed", "4", "--ops", "10"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_check_violation_exits_1_and_its_case_replays_its_crash_state() {
    let dir = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/check/small.case");
    let o = crashlab(
        &[
            "check",
            "--case",
            case.to_str().unwrap(),
            "--control",
            "no-barrier",
            "--found-dir",
            "found",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("crash state: call="), "{t}");
    assert!(
        t.contains("repro: crashlab repro found/check-1-no-barrier-crashlab-0.case"),
        "{t}"
    );
    let o = crashlab(
        &["repro", "found/check-1-no-barrier-crashlab-0.case"],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("as expected (Violation)"), "{t}");
    let o = crashlab(
        &[
            "check",
            "--case",
            case.to_str().unwrap(),
            "--control",
            "no-barrier",
            "--stop-at-first",
            "--found-dir",
            "found",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("violations: 1 states, the first after"), "{t}");
}

#[test]
fn check_rejects_bad_input_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(&["check"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = crashlab(
        &["check", "--seed", "1", "--sector-size", "100"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("power of two"), "{}", text(&o));
    let o = crashlab(&["check", "--seed", "1", "--control", "chaos"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("expected one of"), "{}", text(&o));
    std::fs::write(
        dir.path().join("bad.case"),
        "seed = 1\ncheck = sector_size=512\ncrash-state = call=3 keep=x\nops = 5\n",
    )
    .unwrap();
    let o = crashlab(&["repro", "bad.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("bad.case:3: `x` is not a valid value for `keep`"),
        "{}",
        text(&o)
    );
    std::fs::write(
        dir.path().join("gone.case"),
        "seed = 1\ncheck = sector_size=512\ncrash-state = call=999 keep=none\nops = 5\n",
    )
    .unwrap();
    let o = crashlab(&["repro", "gone.case"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("cannot replay"), "{}", text(&o));
}

#[test]
fn check_runs_against_redb_and_rejects_what_redb_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let seed = ["check", "--seed", "5", "--ops", "10", "--engine", "redb"];
    let o = crashlab(
        &[&seed[..], &["--sector-size", "4096"]].concat(),
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("engine: redb · two-phase commit"), "{t}");
    assert!(t.contains("violations: 0 states"), "{t}");

    let args = [
        &seed[..],
        &["--sector-size", "4096", "--control", "no-barrier"],
        &["--stop-at-first", "--found-dir", "found"],
    ]
    .concat();
    let o = crashlab(&args, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let saved = "found/check-5-no-barrier-redb-0.case";
    assert!(t.contains(&format!("repro: crashlab repro {saved}")), "{t}");
    let case = std::fs::read_to_string(dir.path().join(saved)).unwrap();
    assert!(case.contains("engine = redb"), "{case}");
    let o = crashlab(&["repro", saved], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("as expected (Violation)"), "{}", text(&o));

    for (extra, needle) in [
        (
            &["--control", "meta-same-slot"][..],
            "debug hook in crashlab's engine",
        ),
        (
            &["--batched"][..],
            "(--batched) need write batches; redb has none",
        ),
        (
            &["--variants"][..],
            "--variants: redb has no option variants to check",
        ),
    ] {
        let o = crashlab(&[&seed[..], extra].concat(), dir.path());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{extra:?}: {}", text(&o));
    }
    let o = crashlab(&["check", "--case", saved, "--engine", "redb"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // A redb case that names what redb lacks is malformed: file, line, reason.
    for (case, needle) in [
        (
            "engine = redb\nseed = 1\n[ops]\ncreate a\ncreate a/b\n",
            "bad.case:5: redb has no nested buckets: `create a/b`",
        ),
        (
            "engine = redb\nseed = 1\ncheck = batched=true\ncrash-state = call=1 keep=none\nops = 5\n",
            "bad.case:3: batched commits (--batched)",
        ),
        (
            &format!("engine = redb\nseed = 1\n[ops]\ncreate a\nput a {} len=1 v=1\n", "k".repeat(32_769)),
            "bad.case:5: `put` names a key or bucket of 32769 bytes, but redb declares no key limit, \
             so names take at most 32768 bytes (KEY_LEN_MAX)",
        ),
    ] {
        std::fs::write(dir.path().join("bad.case"), case).unwrap();
        let o = crashlab(&["repro", "bad.case"], dir.path());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(needle), "{}", text(&o));
    }
}

/// Control (l): an engine panic in a commit is a reported violation — exit 1, the panic and the
/// operation named, a case saved that replays — from `check`, `run` and `explore` alike.
#[test]
fn an_engine_panic_is_a_violation_with_a_case_in_check_run_and_explore() {
    let dir = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/check/small.case");
    let case = case.to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &["check", "--case", case, "--control", "panic-in-commit"],
        &[
            "run",
            "--seed",
            "3",
            "--ops",
            "100",
            "--control",
            "panic-in-commit",
        ],
        &[
            "explore",
            "--seeds",
            "0..3",
            "--ops",
            "100",
            "--control",
            "panic-in-commit",
        ],
    ];
    for args in runs {
        let o = crashlab(args, dir.path());
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {t}");
        assert!(t.contains("panic at op "), "{args:?}: {t}");
        assert!(
            t.contains("the engine panicked: debug hook: the commit of tx 3 panics"),
            "{t}"
        );
        assert!(t.contains("(during op "), "{args:?}: {t}");
        let saved = t
            .lines()
            .find_map(|l| l.trim().strip_prefix("repro: crashlab repro "))
            .unwrap_or_else(|| panic!("{args:?}: no case saved: {t}"));
        let r = crashlab(&["repro", saved], dir.path());
        assert_eq!(r.status.code(), Some(1), "{saved}: {}", text(&r));
        assert!(text(&r).contains("as expected (Violation)"), "{}", text(&r));
    }
    let o = crashlab(
        &["run", "--seed", "3", "--control", "no-barrier"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `shrink` prints the minimal crash state and saves it; the shrunk case replays it.
#[test]
fn shrink_prints_and_saves_the_minimal_crash_state() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "run",
            "--seed",
            "21",
            "--ops",
            "120",
            "--profile",
            "no-barrier",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let case = "corpus/found/seed-21-no-barrier-crashlab.case";
    let o = crashlab(&["shrink", case], dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("minimal crash state: power cut "), "{t}");
    assert!(t.contains(" survived"), "{t}");
    let shrunk = dir
        .path()
        .join("corpus/found/seed-21-no-barrier-crashlab.shrunk.case");
    let saved = std::fs::read_to_string(&shrunk).unwrap();
    assert!(saved.contains("\npower-cut = cut="), "{saved}");
    let r = crashlab(&["repro", shrunk.to_str().unwrap()], dir.path());
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("as expected (Violation)"), "{}", text(&r));
}
