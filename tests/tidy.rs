//! Determinism is by construction: no randomly seeded hashing, no wall clock, no global RNG and
//! no leftover `dbg!` in the code a simulation runs (engine, sim, models).
//!
//! The hashing rule bans the hasher, not a constructor: a default-hashed map can be built with
//! `new`, `default`, `with_capacity`, `collect` or `from`, under any imported alias, so the
//! identifiers themselves (`HashMap`, `HashSet` and crates' look-alikes such as `IndexMap` or
//! `AHashMap`, all seeded per process by default) may appear only on the exact lines listed in
//! [`ALLOWED_LINES`], each naming a fixed hasher and saying so; `RandomState` and `DefaultHasher`
//! never. Each allowance must still match a line, so a stale one fails too. The scanner is tested
//! on small snippets below, so the rule itself cannot silently stop working.

use std::path::{Path, PathBuf};

/// Banned anywhere in code (comments are not code).
const BANNED: [&str; 7] = [
    "RandomState",
    "DefaultHasher",
    "SystemTime::now",
    "Instant::now",
    "thread_rng",
    "rand::random",
    "dbg!(",
];

/// Identifier fragments of hash-based collections whose default hasher is seeded at random.
const HASHED: [&str; 4] = ["HashMap", "HashSet", "IndexMap", "IndexSet"];

/// (file, pattern, why it is fine there) for the patterns in [`BANNED`].
const ALLOWED: [(&str, &str, &str); 6] = [
    (
        "sim/cli/src/bench_cmd.rs",
        "Instant::now",
        "wall time for crashlab bench's two rates only; the sweep and the checks it times are \
         functions of their seeds",
    ),
    (
        "sim/cli/src/explore.rs",
        "Instant::now",
        "wall time for explore's ops/s summary only; it never feeds a run",
    ),
    (
        "sim/cli/src/check_cmd.rs",
        "Instant::now",
        "wall time for check's states/s figure only; it never feeds a check",
    ),
    (
        "sim/fuzz/src/bin/crashlab-fuzz/campaign.rs",
        "Instant::now",
        "the fuzz campaign's --seconds budget, inputs/s and slowest-input figures; inputs are a \
         function of (seed, index) alone",
    ),
    (
        "sim/fuzz/src/bin/crashlab-fuzz/proc.rs",
        "Instant::now",
        "the per-input watchdog that kills a hung worker; it never decides an input",
    ),
    (
        "sim/fuzz/src/bin/crashlab-fuzz/replay.rs",
        "Instant::now",
        "the replay's per-input deadline and its time per input; it never decides an input",
    ),
];

/// (file, the whole line trimmed, why it is fine) for lines that name a hashed collection.
const ALLOWED_LINES: [(&str, &str, &str); 2] = [
    (
        "engine/src/page_map.rs",
        "use std::collections::HashMap;",
        "imported only for the PageMap alias below",
    ),
    (
        "engine/src/page_map.rs",
        "pub(crate) type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageIdHasher>>;",
        "a fixed hasher (PageIdHasher), so iteration order and cost do not vary per process",
    ),
];

/// Every hazard in `text`, the source of file `rel`, as `rel:line: what`. `used` counts the
/// uses of each allowance, by position in [`ALLOWED`] then [`ALLOWED_LINES`].
fn hazards(rel: &str, text: &str, used: &mut [usize]) -> Vec<String> {
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for pat in BANNED.into_iter().filter(|p| code.contains(p)) {
            match ALLOWED.iter().position(|(f, p, _)| *f == rel && *p == pat) {
                Some(i) => used[i] += 1,
                None => hits.push(format!("{rel}:{}: {pat}", n + 1)),
            }
        }
        let hashed = identifiers(code).find(|id| HASHED.iter().any(|h| id.contains(h)));
        if let Some(id) = hashed {
            let allowed = ALLOWED_LINES
                .iter()
                .position(|(f, l, _)| *f == rel && *l == code.trim());
            match allowed {
                Some(i) => used[ALLOWED.len() + i] += 1,
                None => hits.push(format!(
                    "{rel}:{}: {id} (use BTreeMap/BTreeSet or a fixed hasher)",
                    n + 1
                )),
            }
        }
    }
    hits
}

/// The identifiers (and numbers) in a line of code.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_determinism_hazards_in_simulated_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    // tinykv runs under the simulator too, and so does its adapter (in its tests).
    let mut dirs = vec![
        root.join("engine/src"),
        root.join("models/src"),
        root.join("examples/tinykv/src"),
        root.join("examples/tinykv/tests"),
    ];
    // Every crate of the simulator: sim/core, sim/check, sim/cli, ...
    for entry in std::fs::read_dir(root.join("sim")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    assert!(dirs.len() >= 8, "found the simulator's crates: {dirs:?}");
    for dir in dirs {
        rust_files(&dir, &mut files);
    }
    assert!(files.len() > 30, "found the sources");
    let mut used = [0; ALLOWED.len() + ALLOWED_LINES.len()];
    let mut hits = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file).unwrap();
        hits.extend(hazards(&rel, &text, &mut used));
    }
    assert!(hits.is_empty(), "determinism hazards:\n{}", hits.join("\n"));
    let stale: Vec<String> = ALLOWED
        .iter()
        .map(|(f, p, _)| format!("{f}: {p}"))
        .chain(ALLOWED_LINES.iter().map(|(f, l, _)| format!("{f}: {l}")))
        .zip(used)
        .filter(|(_, n)| *n == 0)
        .map(|(a, _)| a)
        .collect();
    assert!(
        stale.is_empty(),
        "allowances that match nothing:\n{}",
        stale.join("\n")
    );
}

/// The scanner on `text` as file `rel`: its hazards' descriptions, line numbers dropped.
fn scan(rel: &str, text: &str) -> Vec<String> {
    let mut used = [0; ALLOWED.len() + ALLOWED_LINES.len()];
    hazards(rel, text, &mut used)
        .into_iter()
        .map(|h| h.splitn(3, ':').nth(2).unwrap().trim().to_string())
        .collect()
}

#[test]
fn the_scanner_catches_default_hashing_however_it_is_built() {
    for snippet in [
        "let m: HashMap<u64, u64> = pairs.into_iter().collect();",
        "let s = HashSet::<u32>::with_capacity(8);",
        "let m: std::collections::HashMap<u8, u8> = Default::default();",
        "use std::collections::HashMap as Map;",
        "fn f() -> indexmap::IndexMap<u8, u8> { todo!() }",
        "let m = ahash::AHashMap::<u8, u8>::default();",
    ] {
        let hits = scan("sim/src/x.rs", snippet);
        assert_eq!(hits.len(), 1, "{snippet}: {hits:?}");
        assert!(hits[0].contains("fixed hasher"), "{snippet}: {hits:?}");
    }
    let hits = scan("engine/src/x.rs", "let h = std::hash::RandomState::new();");
    assert_eq!(hits, ["RandomState"]);
    let hits = scan("models/src/x.rs", "let h = DefaultHasher::new();");
    assert_eq!(hits, ["DefaultHasher"]);
}

#[test]
fn the_scanner_allows_only_the_listed_lines_and_ignores_comments() {
    let alias =
        "pub(crate) type PageMap<V> = HashMap<PageId, V, BuildHasherDefault<PageIdHasher>>;";
    assert!(scan("engine/src/page_map.rs", &format!("    {alias}\n")).is_empty());
    // The same line elsewhere, or another line in the same file, is not allowed.
    assert_eq!(scan("engine/src/tree.rs", alias).len(), 1);
    let other = "let m: HashMap<PageId, u8> = HashMap::default();";
    assert_eq!(scan("engine/src/page_map.rs", other).len(), 1);
    assert!(scan("sim/src/x.rs", "// a HashMap would do; Instant::now too").is_empty());
    assert!(scan("sim/cli/src/explore.rs", "let t = Instant::now();").is_empty());
    assert_eq!(
        scan("sim/core/src/runner/mod.rs", "let t = Instant::now();"),
        ["Instant::now"]
    );
}
