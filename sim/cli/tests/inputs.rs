//! Every input the `crashlab` binary takes is answered within bounded time and memory: files
//! that are not regular files are refused before they are opened, and every count and length
//! past its limit exits 2 naming the file, line and limit.

use crate::common;

use common::{crashlab_within, refused, text};
use std::process::Command;

#[test]
fn fifos_devices_and_directories_are_refused_before_they_are_opened() {
    let dir = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo")
        .arg("pipe")
        .current_dir(dir.path())
        .status();
    assert!(made.unwrap().success(), "mkfifo");
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    std::fs::write(
        dir.path().join("fine.case"),
        "seed = 1\nprofile = none\nops = 20\n",
    )
    .unwrap();
    let inputs = [
        ("pipe", "is a FIFO (named pipe)"),
        ("/dev/null", "is a character device"),
        ("/dev/zero", "is a character device"),
        ("folder", "is a directory"),
    ];
    for (file, what) in inputs {
        for cmd in [
            &["db", "info"][..],
            &["db", "check"],
            &["db", "pages"],
            &["db", "pages", "--page", "2"],
            &["db", "stats"],
            &["db", "dump", "--json"],
        ] {
            let args = [cmd, &[file]].concat();
            refused(&args, dir.path(), &[file, what, "not a database file"]);
        }
        for args in [
            &["repro", file][..],
            &["shrink", file],
            &["check", "--case", file],
        ] {
            refused(args, dir.path(), &[file, what, "not a case file"]);
        }
        // Outputs too: writing to a FIFO with no reader blocks like reading from one.
        let args = ["repro", "fine.case", "--save-image", file];
        refused(
            &args,
            dir.path(),
            &[file, what, "not a regular file to write"],
        );
    }
    // compare's charts are written over too.
    std::fs::create_dir(dir.path().join("charts")).unwrap();
    let made = Command::new("mkfifo")
        .arg("charts/large-db-set-time.svg")
        .current_dir(dir.path())
        .status();
    assert!(made.unwrap().success(), "mkfifo");
    let args = [
        "compare",
        "--scale",
        "small",
        "--scenario",
        "commits",
        "--plot",
        "charts",
    ];
    refused(
        &args,
        dir.path(),
        &["charts/large-db-set-time.svg: is a FIFO (named pipe)"],
    );
    // A symlink is followed: to a FIFO it is refused, to a case it is that case.
    std::os::unix::fs::symlink("pipe", dir.path().join("link")).unwrap();
    refused(&["db", "check", "link"], dir.path(), &["link", "is a FIFO"]);
    std::os::unix::fs::symlink("fine.case", dir.path().join("case-link")).unwrap();
    let o = crashlab_within(60, &["repro", "case-link"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn case_files_past_a_limit_exit_2_naming_the_file_line_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "seed = 1\nops = 100000000\n",
            "c.case:2: ops = 100000000 is more than the limit of 100000 operations (OPS_MAX)",
        ),
        (
            "seed = 1\nops = 18446744073709551615\n",
            "c.case:2: ops = 18446744073709551615 is more than the limit",
        ),
        (
            "seed = 1\nops = 0\n",
            "c.case:2: ops = 0: a case runs at least 1 operation",
        ),
        (
            "seed = 1\nprofile = none\n[ops]\ncreate a\nput a k len=4294967295 v=1\ncommit\n",
            "c.case:5: len 4294967295 is more than the limit of 16777216 (PUT_LEN_MAX)",
        ),
        (
            "seed = 1\ncheck = sector_size=512\ncrash-state = live op=4294967295\nops = 5\n",
            "c.case:3: live op=4294967295 is past the workload's last operation (5 ops",
        ),
        (
            "seed = 1\ncheck = max_states=18446744073709551615\nops = 5\n",
            "c.case:2: max_states 18446744073709551615 is more than the limit of 1048576",
        ),
        (
            "seed = 1\n[ops]\nend-reader 4294967295\n",
            "c.case:3: end-reader 4294967295 is more than the limit of 100000 (READER_INDEX_MAX)",
        ),
        (
            "seed = 1\n[ops]\npower-cut-in 99999999999\n",
            "c.case:3: `99999999999` is too large for `power-cut-in`",
        ),
    ];
    for (case, needle) in cases {
        std::fs::write(dir.path().join("c.case"), case).unwrap();
        refused(&["repro", "c.case"], dir.path(), &[needle]);
        refused(&["shrink", "c.case"], dir.path(), &["c.case:"]);
        refused(&["check", "--case", "c.case"], dir.path(), &["c.case:"]);
    }
    // Invalid UTF-8 is reported on its own line, not line 0.
    std::fs::write(dir.path().join("c.case"), b"seed = 1\nops = 5\n# caf\xff\n").unwrap();
    refused(
        &["repro", "c.case"],
        dir.path(),
        &["c.case:3: invalid UTF-8 at byte 6 of the line"],
    );
    // A file larger than the limit is refused before it is read (sparse: no disk used).
    let big = std::fs::File::create(dir.path().join("big.case")).unwrap();
    big.set_len((16 << 20) + 1).unwrap();
    refused(
        &["repro", "big.case"],
        dir.path(),
        &["big.case: the file is 16777217 bytes, more than the limit of 16777216"],
    );
}

#[test]
fn flags_past_a_limit_exit_2_naming_the_flag_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let huge = "18446744073709551615";
    refused(
        &["run", "--seed", "1", "--ops", huge],
        d,
        &["--ops", "limit of 100000 (OPS_MAX)"],
    );
    refused(
        &["run", "--seed", "1", "--ops", "0"],
        d,
        &["--ops", "0 is less than 1"],
    );
    refused(
        &["explore", "--seeds", "0..5", "--ops", "100001"],
        d,
        &["(OPS_MAX)"],
    );
    refused(
        &["explore", "--seeds", &format!("0..{huge}")],
        d,
        &["--seeds", "(SWEEP_SEEDS_MAX)"],
    );
    refused(
        &["explore", "--seeds", "0..5", "--shard", "0/65537"],
        d,
        &["--shard", "65536"],
    );
    // A scenario asked of an engine it has no rows for is refused before it runs: at the seed
    // scale (the default) running it first took minutes.
    refused(
        &["compare", "--engine", "sqlite", "--scenario", "buffers"],
        d,
        &["`buffers` has no rows for sqlite: it has rows for crashlab only"],
    );
    refused(
        &[
            "compare",
            "--engine",
            "redb,sqlite",
            "--scenario",
            "commit-batch-sizes",
        ],
        d,
        &["`commit-batch-sizes` has no rows for redb, sqlite"],
    );
    refused(
        &["check", "--seed", "1", "--ops", "1001"],
        d,
        &["--ops", "(CHECK_OPS_MAX)"],
    );
    refused(
        &["check", "--seed", "1", "--max-states", huge],
        d,
        &["(STATES_PER_CRASH_POINT_MAX)"],
    );
    refused(
        &["check", "--seed", "1", "--max-states", "1"],
        d,
        &["--max-states", "less than 2"],
    );
    refused(
        &["check", "--seed", "1", "--sector-size", huge],
        d,
        &["--sector-size"],
    );
    refused(
        &["check", "--seed", "1", "--recrash-one-in", huge],
        d,
        &["(RECRASH_ONE_IN_MAX)"],
    );
    std::fs::write(d.join("fine.case"), "seed = 1\nprofile = none\nops = 20\n").unwrap();
    refused(
        &["shrink", "fine.case", "--budget", "0"],
        d,
        &["--budget", "less than 1"],
    );
    refused(
        &["shrink", "fine.case", "--budget", huge],
        d,
        &["(SHRINK_BUDGET_MAX)"],
    );
    // Seeds are walked, not collected, and a shard's count is exact up to the top of u64.
    let top = [
        "explore",
        "--seeds",
        "18446744073709551605..18446744073709551615",
    ];
    let args = [
        &top[..],
        &["--shard", "1/3", "--ops", "3", "--profile", "none"],
    ]
    .concat();
    let o = crashlab_within(60, &args, d);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("shard 1/3 (3 seeds)") && t.contains("seeds 3 · ok 3"),
        "{t}"
    );
}

/// Regression 017 (`tests/regression_017_…`): the fuzzer's mutant, `scan b/y` turned into
/// `scan #/y`, panicked `shrink` where it must exit 2 naming the line.
#[test]
fn an_op_line_that_lost_its_path_to_a_comment_exits_2_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let case = "seed = 1\nprofile = none\n[ops]\ncreate b\nscan #/y\ncommit\n";
    std::fs::write(d.join("mutant.case"), case).unwrap();
    let line = "mutant.case:5: expected `scan PATH`, found `scan`";
    for args in [
        &["repro", "mutant.case"][..],
        &["shrink", "mutant.case"],
        &["check", "--case", "mutant.case"],
    ] {
        refused(args, d, &[line]);
    }
}
