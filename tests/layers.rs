//! The dependency direction holds: between crates, Cargo enforces it, and the simulator core
//! depends on no command-line, plotting or third-party engine crate; inside a crate, no two
//! files import each other, directly or around a circle (a parent module declaring its children
//! is structure, not an import).
//!
//! The file graph is read from the sources: every `crate::a::b` and `super::x` path (and the
//! names in a `{...}` group after one) names the deepest file module it reaches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The normal dependencies of a crate's manifest (the `[dependencies]` table's keys).
fn normal_dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && !line.starts_with('#') {
            if let Some((name, spec)) = line.split_once('=') {
                if !spec.contains("optional = true") {
                    out.push(name.trim().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn the_simulator_core_depends_on_no_cli_plotting_or_third_party_engine_crate() {
    let deps = normal_dependencies(&root().join("sim/core/Cargo.toml"));
    assert!(deps.iter().any(|d| d == "crashlab-engine"), "{deps:?}");
    for banned in [
        "clap",
        "indicatif",
        "plotters",
        "redb",
        "rusqlite",
        "proptest",
    ] {
        assert!(
            !deps.iter().any(|d| d == banned),
            "core depends on {banned}"
        );
    }
    // Neither do the crates it depends on, except the engine on its format layer.
    for dep in ["engine/format", "models"] {
        let deps = normal_dependencies(&root().join(dep).join("Cargo.toml"));
        assert!(
            !deps.iter().any(|d| d.contains("crashlab")),
            "{dep}: {deps:?}"
        );
    }
    let deps = normal_dependencies(&root().join("engine/Cargo.toml"));
    let ours: Vec<&String> = deps.iter().filter(|d| d.contains("crashlab")).collect();
    assert_eq!(
        ours,
        ["crashlab-format"],
        "the engine depends only on its format layer"
    );
}

/// The guide's example engine is a user's engine: crashlab comes in through its tests only,
/// so nothing in the engine itself needs a crashlab crate.
#[test]
fn the_example_engine_depends_on_no_crashlab_crate() {
    let deps = normal_dependencies(&root().join("examples/tinykv/Cargo.toml"));
    assert!(deps.iter().any(|d| d == "xxhash-rust"), "{deps:?}");
    let ours: Vec<&String> = deps.iter().filter(|d| d.contains("crashlab")).collect();
    assert!(ours.is_empty(), "tinykv depends on {ours:?}");
}

/// A source file's module path inside its crate (`[]` for the crate root).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
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

/// The module paths `code` (one file's text, comments and tests removed) names, for a file at
/// `me`: each `crate::...` or `super::...` path, and each name of a `{...}` group after one.
fn paths_named(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", me[..me.len().saturating_sub(1)].to_vec()),
    ] {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let mut path = base.clone();
            // `crate::{a::A, b}`: the group opens the path itself.
            let tail0 = match rest.strip_prefix('{') {
                Some(_) => {
                    let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
                    for item in group.split(',') {
                        let mut p = path.clone();
                        p.extend(
                            item.trim()
                                .split("::")
                                .map(|w| w.split_whitespace().next().unwrap_or("").to_string())
                                .filter(|w| !w.is_empty() && w != "self" && w != "{"),
                        );
                        out.push(p);
                    }
                    continue;
                }
                None => rest,
            };
            let mut tail = tail0;
            loop {
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                path.push(tail[..end].to_string());
                tail = &tail[end..];
                match tail.strip_prefix("::") {
                    Some(t) if t.starts_with('{') => {
                        let group = &t[1..t.find('}').unwrap_or(t.len())];
                        for item in group.split(',') {
                            let first = item.trim().split("::").next().unwrap_or("");
                            let name = first.split_whitespace().next().unwrap_or("");
                            if !name.is_empty() && name != "self" {
                                let mut p = path.clone();
                                p.push(name.to_string());
                                out.push(p);
                            }
                        }
                        break;
                    }
                    Some(t) if t.starts_with(|c: char| c.is_alphanumeric() || c == '_') => tail = t,
                    _ => break,
                }
            }
            out.push(path);
        }
    }
    out
}

/// File-level import circles in the crate whose sources are under `src`.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(src, f)).collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let me = module_path(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let deps = graph.entry(me.clone()).or_default();
        for p in paths_named(&code, &me) {
            // The deepest file module the path reaches; the crate root is every file's parent.
            let target = (1..=p.len())
                .rev()
                .map(|n| p[..n].to_vec())
                .find(|m| modules.contains(m));
            if let Some(t) = target.filter(|t| *t != me && !t.is_empty()) {
                // A child naming its parent (`super::`) is structure when the parent declares it.
                deps.insert(t);
            }
        }
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.iter().map(|m| m.join("/")).collect())
        .collect()
}

/// Tarjan's strongly connected components, iteratively over a small graph.
fn strongly_connected(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> Vec<Vec<Vec<String>>> {
    // Reachability closure is plenty for a few hundred files: `a` and `b` are in one component
    // when each reaches the other.
    let nodes: Vec<&Vec<String>> = graph.keys().collect();
    let reach = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in &nodes {
        if done.contains(*n) {
            continue;
        }
        let comp: Vec<Vec<String>> = nodes
            .iter()
            .filter(|m| *m == n || (reaches[*n].contains(**m) && reaches[**m].contains(*n)))
            .map(|m| (*m).clone())
            .collect();
        done.extend(comp.iter().cloned());
        out.push(comp);
    }
    out
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut srcs = vec![
        root().join("models/src"),
        root().join("engine/src"),
        root().join("engine/format/src"),
        root().join("examples/tinykv/src"),
    ];
    for entry in std::fs::read_dir(root().join("sim")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            srcs.push(src);
        }
    }
    let mut found = Vec::new();
    for src in &srcs {
        for c in circles(src) {
            found.push(format!("{}: {}", src.display(), c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_circle_finder_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use crate::{a::A, c};\npub struct B;\n").unwrap();
    std::fs::write(src.join("c.rs"), "// crate::a is only a comment\n").unwrap();
    assert_eq!(circles(src), vec![vec!["a".to_string(), "b".to_string()]]);
    std::fs::write(src.join("b.rs"), "use crate::c;\n").unwrap();
    assert!(circles(src).is_empty());
}
