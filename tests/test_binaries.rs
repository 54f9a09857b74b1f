//! Every file under a crate's `tests/` is compiled. A crate whose test files are the modules of
//! one binary (`autotests = false`, `tests/suite.rs`) no longer has cargo find its files: a new
//! file that nobody names in a `mod` line or a `[[test]]` would never build or run, and its
//! tests would pass by not existing. The scanner is tested on a small crate below.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The `.rs` files directly under `crate_dir/tests` that no test target compiles: not a
/// `[[test]]` root and not named by a `mod NAME;` line of one. Empty when cargo discovers the
/// files itself (no `autotests = false`).
fn uncompiled_test_files(crate_dir: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let tests = crate_dir.join("tests");
    if !manifest.contains("autotests = false") || !tests.is_dir() {
        return Vec::new();
    }
    let roots: Vec<String> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("path = \"tests/"))
        .filter_map(|l| l.strip_suffix(".rs\""))
        .map(str::to_string)
        .collect();
    let mut compiled: BTreeSet<String> = roots.iter().cloned().collect();
    for root in &roots {
        let text = std::fs::read_to_string(tests.join(format!("{root}.rs"))).unwrap();
        let mods = text.lines().filter_map(|l| l.strip_prefix("mod "));
        compiled.extend(mods.filter_map(|m| m.strip_suffix(';')).map(str::to_string));
    }
    let mut missing: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|stem| !compiled.contains(stem))
        .collect();
    missing.sort();
    missing
}

/// The workspace's crates: the root package and each member directory with a manifest.
fn crates(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![
        root.to_path_buf(),
        root.join("engine"),
        root.join("engine/format"),
    ];
    out.push(root.join("models"));
    for group in ["sim", "examples"] {
        for entry in std::fs::read_dir(root.join(group)).unwrap() {
            let dir = entry.unwrap().path();
            if dir.join("Cargo.toml").is_file() {
                out.push(dir);
            }
        }
    }
    out
}

#[test]
fn every_test_file_of_every_crate_is_compiled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = crates(root);
    assert!(crates.len() >= 14, "found the crates: {crates:?}");
    let folded = crates
        .iter()
        .filter(|c| {
            std::fs::read_to_string(c.join("Cargo.toml"))
                .unwrap()
                .contains("autotests = false")
        })
        .count();
    assert!(
        folded >= 7,
        "the crates whose tests are one binary: {folded}"
    );
    let mut found = Vec::new();
    for c in &crates {
        for stem in uncompiled_test_files(c) {
            found.push(format!("{}/tests/{stem}.rs", c.display()));
        }
    }
    assert!(
        found.is_empty(),
        "test files no target compiles (add a `mod` line to tests/suite.rs): {found:?}"
    );
}

#[test]
fn the_scanner_finds_a_file_that_no_target_names() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path();
    std::fs::create_dir(c.join("tests")).unwrap();
    let manifest =
        "[package]\nautotests = false\n\n[[test]]\nname = \"suite\"\npath = \"tests/suite.rs\"\n";
    std::fs::write(c.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(c.join("tests/suite.rs"), "//! mod commented;\nmod a;\n").unwrap();
    std::fs::write(c.join("tests/a.rs"), "").unwrap();
    assert!(uncompiled_test_files(c).is_empty());
    std::fs::write(c.join("tests/b.rs"), "").unwrap();
    std::fs::write(c.join("tests/commented.rs"), "").unwrap();
    assert_eq!(uncompiled_test_files(c), ["b", "commented"]);
    // Without `autotests = false` cargo builds every file itself.
    std::fs::write(c.join("Cargo.toml"), "[package]\n").unwrap();
    assert!(uncompiled_test_files(c).is_empty());
}
