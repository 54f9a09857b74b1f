//! Every saved case under corpus/ (except corpus/found/, where new findings land) replays to
//! its expected outcome, with the engine it names. A case naming a crash state replays through
//! the crash-state checker.

use crashlab_check::{CheckConfig, Replayed};
use crashlab_redb::RedbDb;
use crashlab_sim::adapter::Engine;
use crashlab_sim::case::{self, Case, Expect};
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sqlite::SqliteDb;
use std::path::{Path, PathBuf};

fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path.file_name() != Some("found".as_ref()) {
            cases(&path, out);
        } else if path.extension() == Some("case".as_ref()) {
            out.push(path);
        }
    }
}

/// Replay one case of engine `E`: its expected outcome and what it gave.
fn replay<E: Engine>(file: &Path, text: &str) -> (Expect, Expect) {
    let case = Case::<E::Config>::parse(text, &file.display().to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(state) = &case.crash_state {
        let got = match crashlab_check::replay::<E>(&CheckConfig::from_case(&case), state) {
            Replayed::Violation { .. } => Expect::Violation,
            Replayed::Clean => Expect::Ok,
            Replayed::Missing(m) => panic!("{}: {m}", file.display()),
        };
        return (case.expect, got);
    }
    // A case may expect an engine panic (redb finding 001): the runner reports it.
    let r = run::<E>(&case.run);
    (case.expect, Expect::of(&r.outcome))
}

#[test]
fn every_corpus_case_reaches_its_expected_outcome() {
    let mut files = Vec::new();
    cases(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        &mut files,
    );
    assert!(files.len() >= 10, "the corpus holds cases: {files:?}");
    let mut engines = Vec::new();
    for file in files {
        let text = case::read(&file).unwrap_or_else(|e| panic!("{e}"));
        let (engine, _) = case::engine_name(&text);
        let (want, got) = match engine.as_str() {
            "crashlab" => replay::<CrashlabDb>(&file, &text),
            "redb" => replay::<RedbDb>(&file, &text),
            "sqlite" => replay::<SqliteDb>(&file, &text),
            other => panic!("{}: no engine `{other}` in this test", file.display()),
        };
        assert_eq!(got, want, "{}", file.display());
        engines.push(engine);
    }
    for e in ["crashlab", "redb", "sqlite"] {
        assert!(engines.iter().any(|x| x == e), "no {e} case replayed");
    }
}
