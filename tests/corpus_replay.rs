//! Every saved case under corpus/ (except corpus/found/, where new findings land) replays to
//! its expected outcome. A case naming a crash state replays through the crash-state checker.

use crashlab_sim::case::{Case, Expect};
use crashlab_sim::check::{replay, CheckConfig, Replayed};
use crashlab_sim::runner::run_guarded;
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

#[test]
fn every_corpus_case_reaches_its_expected_outcome() {
    let mut files = Vec::new();
    cases(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        &mut files,
    );
    assert!(!files.is_empty(), "the corpus holds cases");
    for file in files {
        let case = Case::load(&file).unwrap_or_else(|e| panic!("{e}"));
        if let Some(state) = &case.crash_state {
            let got = match replay(&CheckConfig::from_case(&case), state) {
                Replayed::Violation { .. } => Expect::Violation,
                Replayed::Clean => Expect::Ok,
                Replayed::Missing(m) => panic!("{}: {m}", file.display()),
            };
            assert_eq!(got, case.expect, "{}", file.display());
            continue;
        }
        let r = run_guarded(&case.run); // a case may expect an engine panic (redb finding 001)
        assert_eq!(
            Expect::of(&r.outcome),
            case.expect,
            "{}: {:?}\n{:#?}",
            file.display(),
            r.outcome,
            r.trace_tail
        );
    }
}
