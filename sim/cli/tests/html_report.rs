//! `crashlab repro --html`, `explore --html-dir`, `check --html-dir`: the page is written, is
//! the same bytes for the same case, names what broke, escapes a hostile key read back from a
//! real run, and stays small for a 300-operation case. (The browser's view of the same pages
//! is `html_browser.rs`.)

mod common;

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
    // The violation is at op 175 (the outcome line says so); that row is marked.
    assert!(page.contains("VIOLATION durability at op 175"));
    assert!(
        page.contains(r#"data-op="175" id="failing""#),
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
            "9..10",
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
    let page: PathBuf = dir.path().join("pages/seed-9-no-barrier-crashlab.html");
    assert!(
        t.contains("report: pages/seed-9-no-barrier-crashlab.html"),
        "{t}"
    );
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("crashlab repro found/seed-9-no-barrier-crashlab.case"));
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
