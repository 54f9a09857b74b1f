//! Determinism is by construction: no randomly seeded hash maps, no wall clock, no global RNG and
//! no leftover `dbg!` in the code a simulation runs (engine, sim, models). The one allowed use is
//! listed with its reason.

use std::path::Path;

const BANNED: [&str; 8] = [
    "HashMap::new",
    "HashSet::new",
    "RandomState",
    "SystemTime::now",
    "Instant::now",
    "thread_rng",
    "rand::random",
    "dbg!(",
];

/// (file, pattern, why it is fine there)
const ALLOWED: [(&str, &str, &str); 2] = [
    (
        "sim/src/bin/crashlab.rs",
        "Instant::now",
        "wall time for explore's ops/s summary only; it never feeds a run",
    ),
    (
        "sim/src/bin/crashlab/check_cmd.rs",
        "Instant::now",
        "wall time for check's states/s figure only; it never feeds a check",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
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
    for dir in ["engine/src", "sim/src", "models/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 30, "found the sources");
    let mut hits = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for pat in BANNED {
                let allowed = ALLOWED.iter().any(|(f, p, _)| *f == rel && *p == pat);
                if code.contains(pat) && !allowed {
                    hits.push(format!("{rel}:{}: {pat}", n + 1));
                }
            }
        }
    }
    assert!(hits.is_empty(), "determinism hazards:\n{}", hits.join("\n"));
}
