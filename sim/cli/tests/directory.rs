//! An engine of several files (SQLite, on SimFs) on the command line: it runs, and the flags
//! and profiles that wrap one file's storage are refused up front with exit 2, never run
//! without the control they name.

use crate::common;

use common::{crashlab, refused, text};

#[test]
fn a_sqlite_run_prints_its_mode_and_file_system_model() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "run",
            "--engine",
            "sqlite",
            "--seed",
            "3",
            "--ops",
            "40",
            "--profile",
            "none",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("journal_mode="), "{t}");
    assert!(t.contains("model="), "{t}");
}

#[test]
fn storage_wrapper_profiles_and_flags_are_refused_for_an_engine_of_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let why = "keeps several files";
    refused(
        &[
            "run",
            "--engine",
            "sqlite",
            "--seed",
            "1",
            "--profile",
            "no-barrier",
        ],
        d,
        &[why],
    );
    refused(
        &[
            "explore",
            "--engine",
            "sqlite",
            "--seeds",
            "0..2",
            "--profile",
            "no-growth-sync",
        ],
        d,
        &[why],
    );
    let case = "engine = sqlite\nseed = 1\nprofile = no-barrier\nops = 10\n";
    std::fs::write(d.join("wrapped.case"), case).unwrap();
    refused(&["repro", "wrapped.case"], d, &["wrapped.case:3:", why]);
    let several = "an engine of several files";
    for flag in [
        &["--variants"][..],
        &["--batched"],
        &["--interleavings", "2"],
    ] {
        let mut args = vec!["check", "--engine", "sqlite", "--seed", "1"];
        args.extend_from_slice(flag);
        refused(&args, d, &[flag[0], several]);
    }
    refused(
        &[
            "check",
            "--engine",
            "sqlite",
            "--seed",
            "1",
            "--control",
            "no-barrier",
        ],
        d,
        &["--control", several],
    );
    // The profiles without a storage wrapper run (here, a clean one).
    let o = crashlab(
        &[
            "explore",
            "--engine",
            "sqlite",
            "--seeds",
            "0..2",
            "--ops",
            "30",
            "--profile",
            "lying-sync",
        ],
        d,
    );
    assert_ne!(o.status.code(), Some(2), "{}", text(&o));
}
