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

/// A file that is not a saved input is bad input: `replay` and `minimize` exit 2 naming it and
/// where it stops being one, and replay nothing. `replay` had started a worker per file and
/// reported a malformed one as "FAIL crash in replay: the worker stopped", exit 1, as though
/// the engine had failed (found by replaying 600 mutated corpus inputs). A base fixture is one
/// of the seven by name: any other name was joined to the fixture directory and read. Hex
/// that is not bytes was read with its stray digits as zeros, and a write with an empty bucket
/// name reached the engine and came back as an "unexpected error" failure, exit 1.
#[test]
fn a_file_that_is_not_a_saved_input_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = &corpus()[0];
    let text = std::fs::read_to_string(good).unwrap();
    let cut = text.find("\"spec\"").expect("a saved input has a spec");
    // Corpus inputs with a write op and with exact writes, to damage.
    let with = |needle: &str| {
        let file = corpus()
            .into_iter()
            .find(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(needle)));
        std::fs::read_to_string(file.expect(needle)).unwrap()
    };
    let with_ops = with("\"op\": \"write\"");
    let with_writes = with("\"writes\": [");
    let first_name = with_writes
        .split("\"path\": [")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .expect("a write names its bucket")
        .to_string();
    let cases = [
        (
            "truncated.json",
            text[..cut + 12].to_string(),
            "EOF while parsing",
        ),
        (
            "negative.json",
            text.replacen("\"seed\": ", "\"seed\": -1", 1),
            "expected u64",
        ),
        (
            "garbage.json",
            "hello".to_string(),
            "expected value at line 1 column 1",
        ),
        (
            "elsewhere.json",
            text.replacen("\"name\": \"", "\"name\": \"../", 1),
            "spec.base: fixture `../",
        ),
        (
            "oddhex.json",
            with_ops.replacen("\"hex\": \"", "\"hex\": \"0", 1),
            "spec.edits[0].ops[0].hex: ",
        ),
        (
            "nobucket.json",
            with_writes.replacen(&format!("\"{first_name}\""), "\"\"", 1),
            "spec.writes[0].path[0]: 0 bytes, where a name or key takes 1 to 32768",
        ),
    ];
    for (name, body, _) in &cases {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    std::fs::write(dir.path().join("bytes.json"), b"{\n\"note\": \"\xe9\"}").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_crashlab-fuzz"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("crashlab-fuzz runs")
    };
    let text_of = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
    };
    for (name, _, why) in &cases {
        let o = run(&["replay", good.to_str().unwrap(), name]);
        let said = text_of(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {said}");
        assert!(said.contains(name) && said.contains(why), "{name}: {said}");
        assert!(
            !said.contains(": ok"),
            "{name}: replayed the good file: {said}"
        );
    }
    let o = run(&["replay", "bytes.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text_of(&o));
    assert!(
        text_of(&o).contains("bytes.json:2: invalid UTF-8"),
        "{}",
        text_of(&o)
    );
    for args in [&["replay", "/dev/zero"][..], &["replay", "."], &["replay"]] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text_of(&o));
    }
    let o = run(&["minimize", "garbage.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text_of(&o));
}
