//! `crashlab repro --html`, `explore --html-dir`, `check --html-dir`: the page is written, is
//! the same bytes for the same case, names what broke, escapes a hostile key read back from a
//! real run, and stays small for a 300-operation case. (The browser's view of the same pages
//! is `html_browser.rs`.)

use crate::common;

use common::{crashlab, text};
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

/// `crashlab repro CASE --html OUT` in `dir`; the page.
fn page_of(case: &str, dir: &Path, out: &str) -> String {
    let o = crashlab(&["repro", case, "--html", out], dir);
    let t = text(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{t}");
    assert!(t.contains(&format!("wrote the report {out}")), "{t}");
    std::fs::read_to_string(dir.join(out)).unwrap()
}

/// The operations under `[ops]` of a case file.
fn ops_in(case: &str) -> usize {
    let text = std::fs::read_to_string(case).unwrap();
    let ops = text.split_once("[ops]\n").unwrap().1;
    ops.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count()
}

#[test]
fn the_same_case_gives_the_same_page_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (case, name) in [
        ("corpus/report/durability-no-barrier.case", "run"),
        ("corpus/check/negative/b-meta-same-slot.case", "state"),
        ("corpus/report/callers-no-barrier.case", "callers"),
        ("corpus/report/interleaved-lone-call.case", "interleaved"),
    ] {
        let a = page_of(&corpus(case), dir.path(), &format!("{name}-a.html"));
        let b = page_of(&corpus(case), dir.path(), &format!("{name}-b.html"));
        assert!(a.len() > 5_000, "{case}: a page was written");
        assert!(a == b, "{case}: two renderings differ");
    }
}

#[test]
fn a_300_operation_case_stays_under_a_megabyte_with_a_row_per_operation() {
    let dir = tempfile::tempdir().unwrap();
    let case = corpus("corpus/report/durability-no-barrier.case");
    assert_eq!(ops_in(&case), 300);
    let page = page_of(&case, dir.path(), "big.html");
    assert!(page.len() < 1_000_000, "{} bytes", page.len());
    assert_eq!(page.matches(r#"<tr class="op"#).count(), 300);
    // The violation is at op 48 (the outcome line says so); that row is marked.
    assert!(page.contains("VIOLATION durability at op 48"));
    assert!(
        page.contains(r#"data-op="48" id="failing""#),
        "the failing step is marked"
    );
    // Self-contained: nothing is fetched.
    for attr in [" src=", "<link", "@import", "url("] {
        assert!(!page.contains(attr), "the page loads something: `{attr}`");
    }
}

/// Bucket and key names that read as markup (`<script>`, `<img src=x>`) and raw bytes, in a
/// real run: the timeline shows them as hex, and nothing of them becomes markup. (The diff of
/// such keys is `html::tests`, on a recovery built to lack them.)
const HOSTILE: &str = "seed = 1
profile = lying-sync
expect = violation
options = page_size=4096 fill_percent=0.5 no_sync=false no_freelist_sync=false freelist=array page_cache_pages=0 presize=exact
faults = read_eio=0 write_eio=0 sync_eio=0 latent=0 bit_flip=0 misdirect=0 enospc=none lying_sync=true garbage_unwritten=false
[ops]
create 0x3c7363726970743e
commit
put 0x3c7363726970743e 0x3c696d67207372633d783e len=20 v=1
put 0x3c7363726970743e 0x00ff3c len=20 v=2
commit
crash
";

#[test]
fn hostile_names_in_a_real_run_never_become_markup() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.case"), HOSTILE).unwrap();
    let page = page_of("h.case", dir.path(), "h.html");
    assert!(page.contains("VIOLATION"), "{page}");
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the inert data block"
    );
    assert!(!page.contains("<img"));
    assert!(page.contains("put 0x3c7363726970743e 0x3c696d67207372633d783e len=20 v=1"));
    assert_eq!(page.matches(r#"<tr class="op"#).count(), 6);
}

#[test]
fn explore_and_check_write_a_page_per_failure() {
    let dir = tempfile::tempdir().unwrap();
    let o = crashlab(
        &[
            "explore",
            "--seeds",
            "21..22",
            "--ops",
            "300",
            "--profile",
            "no-barrier",
            "--found-dir",
            "found",
            "--html-dir",
            "pages",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let page: PathBuf = dir.path().join("pages/seed-21-no-barrier-crashlab.html");
    assert!(
        t.contains("report: pages/seed-21-no-barrier-crashlab.html"),
        "{t}"
    );
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("crashlab repro found/seed-21-no-barrier-crashlab.case"));
    assert!(page.contains(r#"id="failing""#));

    let case = corpus("corpus/check/negative/b-meta-same-slot.case");
    let o = crashlab(
        &[
            "check",
            "--case",
            &case,
            "--stop-at-first",
            "--found-dir",
            "found",
            "--html-dir",
            "states",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let pages: Vec<_> = std::fs::read_dir(dir.path().join("states"))
        .unwrap()
        .collect();
    assert_eq!(pages.len(), 1, "{t}");
    let page = std::fs::read_to_string(pages[0].as_ref().unwrap().path()).unwrap();
    // The pinned state's surviving sectors are outlined, and decoded as the meta page.
    assert!(page.contains(r#"class="sec survived pinned""#), "{page}");
    let decoded = ["meta", "leaf", "branch", "freelist", "overflow"];
    assert!(
        decoded
            .iter()
            .any(|k| page.contains(&format!(r#"data-kind="{k}""#))),
        "pages are typed by the engine's decoder: {page}"
    );
}

/// The sectors outlined as pinned on power cut `n`'s map (`crash-n`), and on every other map.
fn pinned_sectors(page: &str, n: usize) -> (Vec<u64>, usize) {
    let maps: Vec<&str> = page
        .split(r#"<div class="crash" id="crash-"#)
        .skip(1)
        .collect();
    let pinned = |map: &str| -> Vec<u64> {
        map.split(r#"<div class="sec "#)
            .skip(1)
            .filter(|d| d.split('"').next().unwrap().ends_with(" pinned"))
            .map(|d| {
                let at = d.find(r#"data-sector=""#).unwrap() + r#"data-sector=""#.len();
                d[at..].split('"').next().unwrap().parse().unwrap()
            })
            .collect()
    };
    let others = maps
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != n)
        .map(|(_, m)| pinned(m).len())
        .sum();
    (pinned(maps[n]), others)
}

#[test]
fn a_shrunk_case_outlines_its_minimal_surviving_set_on_its_cut() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("d.case");
    std::fs::copy(corpus("corpus/report/durability-no-barrier.case"), &case).unwrap();
    let o = crashlab(&["shrink", "d.case"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let shrunk = std::fs::read_to_string(dir.path().join("d.shrunk.case")).unwrap();
    // `power-cut = cut=N keep=a,b,...`: the cut the shrinker pinned and what it keeps.
    let line = shrunk
        .lines()
        .find(|l| l.starts_with("power-cut = "))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let cut: usize = words[2].strip_prefix("cut=").unwrap().parse().unwrap();
    let keep: Vec<u64> = match words[3].strip_prefix("keep=").unwrap() {
        "none" => Vec::new(),
        list => list.split(',').map(|s| s.parse().unwrap()).collect(),
    };
    assert!(!keep.is_empty(), "the shrunk cut keeps a sector: {line}");
    let page = page_of("d.shrunk.case", dir.path(), "shrunk.html");
    let (outlined, elsewhere) = pinned_sectors(&page, cut - 1);
    assert_eq!(
        outlined, keep,
        "the pinned cut outlines exactly what it keeps"
    );
    assert_eq!(elsewhere, 0, "no other cut is outlined");
    // And the map draws the disk's decisions: what survived the cut is exactly what it keeps
    // (a sector rewritten with the bytes it held must not read as survived).
    let map = page
        .split(&format!(r#"<div class="crash" id="crash-{}">"#, cut - 1))
        .nth(1)
        .unwrap();
    let map = &map[..map.find("</div></div>").unwrap()];
    assert_eq!(
        map.matches(r#"<div class="sec survived"#).count(),
        keep.len(),
        "{map}"
    );
    // The unshrunk case pins nothing: nothing is outlined.
    let page = page_of("d.case", dir.path(), "whole.html");
    assert!(
        !page.contains(" pinned\""),
        "an unpinned run outlines nothing"
    );
}

#[test]
fn check_interleavings_writes_a_page_per_violation_with_a_lane_per_caller() {
    let dir = tempfile::tempdir().unwrap();
    // The interleaved case's workload without its crash state: `check` finds the states.
    let saved =
        std::fs::read_to_string(corpus("corpus/report/interleaved-lone-call.case")).unwrap();
    let workload: String = saved
        .lines()
        .filter(|l| !l.starts_with("crash-state") && !l.starts_with("check ="))
        .map(|l| match l.split_once(" batches=") {
            Some((group, _)) => format!("{group}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("g.case"), workload).unwrap();
    let args = [
        "check",
        "--case",
        "g.case",
        "--interleavings",
        "100",
        "--control",
        "lone-call-skips-data-sync",
        "--found-dir",
        "found",
        "--html-dir",
        "pages",
    ];
    let o = crashlab(&args, dir.path());
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let cases = t.matches("  repro: crashlab repro found/").count();
    assert!(cases > 0, "{t}");
    assert_eq!(t.matches("  report: pages/").count(), cases, "{t}");
    for entry in std::fs::read_dir(dir.path().join("found")).unwrap() {
        let case_path = entry.unwrap().path();
        let case = std::fs::read_to_string(&case_path).unwrap();
        let stem = case_path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let page = std::fs::read_to_string(dir.path().join(format!("pages/{stem}.html"))).unwrap();
        assert!(page.contains(&format!("crashlab repro found/{stem}.case")));
        assert!(
            page.contains(r#"id="failing""#),
            "{stem}: the step is marked"
        );
        // One lane per caller, each call in the batch the case's pinned schedule gives it.
        let lanes = page.split(r#"<table class="lanes">"#).nth(1).unwrap();
        let lanes = &lanes[..lanes.find("</table>").unwrap()];
        assert_eq!(lanes.matches(r#"<td class="lane">"#).count(), 3, "{stem}");
        let batches = case
            .split(" batches=")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        for (k, batch) in batches.split('/').enumerate() {
            for caller in batch.split('+') {
                let lane = lanes
                    .split(r#"<td class="lane">"#)
                    .nth(1 + caller.parse::<usize>().unwrap());
                assert!(
                    lane.unwrap()
                        .contains(&format!("batch {k} of the pinned schedule")),
                    "{stem}: caller {caller} is in batch {k} of {batches}: {lanes}"
                );
            }
        }
    }
}
