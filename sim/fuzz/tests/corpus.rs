//! Every input kept in `corpus/fuzz/` replays without breaking an oracle. Each one broke one
//! when it was found (its `note` says how, and which defect it shows); this test holds the
//! engine to the fix.

use crashlab_fuzz::spec::Saved;
use std::path::PathBuf;
use std::process::Command;

fn corpus() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/fuzz");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_saved_input_parses_and_says_what_it_shows() {
    let files = corpus();
    assert!(files.len() >= 9, "the kept inputs are there: {files:?}");
    for f in &files {
        let saved = Saved::load(f).unwrap();
        assert!(
            saved.note.len() > 80,
            "{}: a note says what it shows",
            f.display()
        );
        assert!(
            !saved.spec.edits.is_empty(),
            "{}: an input damages its base",
            f.display()
        );
    }
}

#[test]
fn every_saved_input_replays_clean() {
    let files = corpus();
    let out = Command::new(env!("CARGO_BIN_EXE_crashlab-fuzz"))
        .arg("replay")
        .arg(format!(
            "--fixtures={}",
            crashlab_fuzz::bases::default_fixtures().display()
        ))
        .args(&files)
        .output()
        .expect("crashlab-fuzz runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed: Vec<&str> = stdout.lines().filter(|l| !l.ends_with(": ok")).collect();
    assert_eq!(
        stdout.lines().count(),
        files.len(),
        "one verdict per input: {stdout}"
    );
    assert!(
        failed.is_empty(),
        "inputs that still fail:\n{}",
        failed.join("\n")
    );
    assert!(out.status.success());
}
