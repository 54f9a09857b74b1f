//! README's "What a report means" shows `crashlab run --seed 42`'s output; the run is
//! deterministic, so the block must be what the binary prints today, line for line. A line that
//! README cuts short with ` ...` must be a prefix of the printed one.

use crate::common::{crashlab_within, text};

const README: &str = include_str!("../../../README.md");

/// The console block that follows the sentence introducing `run --seed 42`'s output.
fn readme_block() -> Vec<&'static str> {
    let intro = README
        .find("`crashlab run --seed 42` prints")
        .expect("README introduces the seed-42 example");
    let rest = &README[intro..];
    let start = rest.find("```console\n").expect("a console block") + "```console\n".len();
    let end = rest[start..].find("```").expect("the block ends");
    rest[start..start + end].lines().collect()
}

#[test]
fn readme_seed_42_block_is_what_the_binary_prints() {
    let dir = tempfile::tempdir().unwrap();
    let out = crashlab_within(120, &["run", "--seed", "42"], dir.path());
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let printed: Vec<&str> = printed.lines().collect();
    let shown = readme_block();
    assert!(shown.len() >= 10, "README's block is {} lines", shown.len());
    for (i, line) in shown.iter().enumerate() {
        let actual = printed.get(i).copied().unwrap_or("<no line>");
        match line.strip_suffix(" ...") {
            Some(prefix) => assert!(
                actual.starts_with(prefix),
                "README line {i} `{line}` is not a prefix of `{actual}`"
            ),
            None => assert_eq!(*line, actual, "README line {i}"),
        }
    }
}
