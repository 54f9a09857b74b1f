//! The HTML report as a person sees it: a few corpus cases — a durability violation, a torn
//! meta, concurrent callers, a redb finding — rendered by `crashlab repro --html` and opened in
//! headless Chromium, which dumps the DOM it built and takes a screenshot. On the rendered DOM:
//! one timeline row per operation, the failing step marked, the diff naming a missing key the
//! workload wrote, nothing loaded from anywhere, no script error logged.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it and runs this file with `--ignored`). The
//! checker of "nothing failed to load, no script error" has its negative control here too: a
//! page with a missing image and a throwing script must be refused by it.

use crate::common;

use common::{crashlab, text};
use std::path::{Path, PathBuf};
use std::process::Command;

const NEEDS: &str =
    "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored";

fn corpus(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

/// What Chromium made of `page`: the DOM it serialised and what it logged; a screenshot is left
/// beside the page.
struct Seen {
    dom: String,
    log: String,
    png: PathBuf,
}

fn chromium(page: &Path, profile: &Path) -> Seen {
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let run = |extra: &[String], tag: &str| {
        let mut args: Vec<String> = common.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.join(tag).display()));
        args.extend_from_slice(extra);
        args.push(url.clone());
        let o = Command::new("chromium")
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run chromium ({e}): {NEEDS}"));
        assert!(o.status.success(), "chromium {args:?}: {}", text(&o));
        o
    };
    let dom = run(&["--dump-dom".into()], "dom");
    let png = page.with_extension("png");
    let shot = run(
        &[
            "--window-size=1280,1600".into(),
            format!("--screenshot={}", png.display()),
        ],
        "shot",
    );
    Seen {
        dom: String::from_utf8_lossy(&dom.stdout).into_owned(),
        log: format!("{}{}", text(&dom), String::from_utf8_lossy(&shot.stderr)),
        png,
    }
}

/// Everything wrong with how a page loaded: a resource it points at, a load failure or a script
/// error Chromium logged.
fn load_problems(seen: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [" src=\"", "<link", "url(", "@import", "<iframe", "<object"] {
        if seen.dom.contains(attr) {
            out.push(format!("the page refers to a resource: `{attr}`"));
        }
    }
    for line in seen.log.lines() {
        let bad = [
            "Uncaught",
            "Failed to load",
            "net::ERR",
            "Not allowed to load",
        ];
        if line.contains("CONSOLE") || bad.iter().any(|b| line.contains(b)) {
            out.push(format!("logged: {line}"));
        }
    }
    out
}

fn render(case: &str, dir: &Path, name: &str) -> Seen {
    let out = dir.join(format!("{name}.html"));
    let o = crashlab(&["repro", case, "--html", &out.display().to_string()], dir);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let seen = chromium(&out, &dir.join(format!("profile-{name}")));
    let png = std::fs::read(&seen.png).unwrap_or_else(|e| panic!("{name}: no screenshot: {e}"));
    assert!(
        png.starts_with(b"\x89PNG"),
        "{name}: the screenshot is a PNG"
    );
    assert!(png.len() > 20_000, "{name}: the screenshot shows something");
    let problems = load_problems(&seen);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
    seen
}

/// The operations under `[ops]` of a case file.
fn ops_in(case: &str) -> Vec<String> {
    let text = std::fs::read_to_string(case).unwrap();
    let ops = text.split_once("[ops]\n").unwrap().1;
    let ops = ops
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    ops.map(str::to_string).collect()
}

/// The `op` rows of the timeline, and the index of the one marked failing (exactly one).
fn timeline(dom: &str) -> (usize, usize) {
    let rows = dom.matches("<tr class=\"op").count();
    let marked: Vec<&str> = dom
        .match_indices("id=\"failing\"")
        .map(|(i, _)| &dom[..i])
        .collect();
    assert_eq!(marked.len(), 1, "one step is marked failing");
    let before = marked[0];
    let at = before.rfind("data-op=\"").unwrap() + "data-op=\"".len();
    let index = before[at..].split('"').next().unwrap().parse().unwrap();
    (rows, index)
}

/// `N` of the page's outcome line `... at op N: ...`.
fn outcome_op(dom: &str) -> usize {
    let at = dom.find("id=\"outcome\"").unwrap();
    let line = &dom[at..at + dom[at..].find("</p>").unwrap()];
    let n = line.split(" at op ").nth(1).unwrap();
    n.split(':').next().unwrap().parse().unwrap()
}

/// The (bucket, key) of each `missing` key row of the diffs (not the rows of missing buckets).
fn missing(dom: &str) -> Vec<(String, String)> {
    let cell = |s: &str| -> (String, usize) {
        let start = s.find("<code>").unwrap() + "<code>".len();
        let end = s[start..].find("</code>").unwrap();
        (s[start..start + end].to_string(), start + end)
    };
    dom.split("<tr class=\"d-missing\">")
        .skip(1)
        .filter(|row| !row.contains("<td class=\"key\">bucket "))
        .map(|row| {
            let (bucket, at) = cell(row);
            let (key, _) = cell(&row[at..]);
            (bucket, key)
        })
        .collect()
}

#[test]
#[ignore = "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored"]
fn a_durability_violation_reads_in_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let case = corpus("corpus/report/durability-no-barrier.case");
    let seen = render(&case, dir.path(), "durability");
    let ops = ops_in(&case);
    let (rows, failing) = timeline(&seen.dom);
    assert_eq!(rows, ops.len());
    assert_eq!(failing, outcome_op(&seen.dom));
    // The diff names a missing key, and it is one the workload put into that bucket.
    let lost = missing(&seen.dom);
    let keys: Vec<&(String, String)> = lost
        .iter()
        .filter(|(_, k)| !k.starts_with("bucket"))
        .collect();
    assert!(!keys.is_empty(), "no missing key named: {lost:?}");
    for (bucket, key) in keys {
        let put = format!("put {bucket} {key} ");
        assert!(
            ops.iter().any(|op| op.starts_with(&put)),
            "`{put}` is not in the workload"
        );
    }
}

#[test]
#[ignore = "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored"]
fn a_torn_meta_shows_its_sectors_half_kept() {
    let dir = tempfile::tempdir().unwrap();
    let case = corpus("corpus/check/negative/b-meta-same-slot.case");
    let seen = render(&case, dir.path(), "torn-meta");
    let (rows, _) = timeline(&seen.dom);
    assert_eq!(rows, ops_in(&case).len());
    // The meta page's sectors: the state keeps one and loses the other, outlined as pinned.
    assert!(
        seen.dom.contains("class=\"sec survived pinned\""),
        "{}",
        seen.dom
    );
    let meta = |fate: &str| {
        seen.dom
            .split("<div class=\"sec ")
            .skip(1)
            .any(|d| d.starts_with(fate) && d.contains("data-kind=\"meta\""))
    };
    assert!(
        meta("survived") && meta("lost"),
        "a meta torn across its sectors"
    );
    assert!(seen.dom.contains("VIOLATION corrupt"));
}

#[test]
#[ignore = "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored"]
fn concurrent_callers_get_a_lane_each() {
    let dir = tempfile::tempdir().unwrap();
    let case = corpus("corpus/report/callers-no-barrier.case");
    let seen = render(&case, dir.path(), "callers");
    let ops = ops_in(&case);
    let (rows, failing) = timeline(&seen.dom);
    assert_eq!(rows, ops.len());
    assert_eq!(failing, outcome_op(&seen.dom));
    let group = ops
        .iter()
        .find(|o| o.starts_with("group callers="))
        .unwrap();
    let callers: u32 = group["group callers=".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let lanes = seen.dom.split("<table class=\"lanes\">").nth(1).unwrap();
    let lanes = &lanes[..lanes.find("</table>").unwrap()];
    for c in 0..callers {
        assert!(lanes.contains(&format!("<th>caller {c}</th>")), "{lanes}");
    }
    assert_eq!(
        lanes.matches("<td class=\"lane\">").count(),
        callers as usize
    );
    // The same callers under a pinned schedule, on the checker's page of one crash state: a
    // lane each, every call in the batch the schedule names.
    let case = corpus("corpus/report/interleaved-lone-call.case");
    let seen = render(&case, dir.path(), "interleaved");
    let (rows, failing) = timeline(&seen.dom);
    assert_eq!(rows, ops_in(&case).len());
    assert_eq!(failing, rows - 1, "the crash is in the group, the last op");
    let lanes = seen.dom.split("<table class=\"lanes\">").nth(1).unwrap();
    let lanes = &lanes[..lanes.find("</table>").unwrap()];
    assert_eq!(lanes.matches("<td class=\"lane\">").count(), 3, "{lanes}");
    for k in 0..3 {
        assert!(
            lanes.contains(&format!("batch {k} of the pinned schedule")),
            "{lanes}"
        );
    }
}

#[test]
#[ignore = "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored"]
fn redb_findings_read_in_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let case = corpus("corpus/redb/finding-001-panic-on-corrupt-page.case");
    let seen = render(&case, dir.path(), "redb-run");
    let (rows, failing) = timeline(&seen.dom);
    assert_eq!(rows, ops_in(&case).len());
    assert_eq!(failing, outcome_op(&seen.dom));
    assert!(seen.dom.contains("VIOLATION panic"));
    let case = corpus("corpus/redb/finding-001-via-missing-barrier.case");
    let seen = render(&case, dir.path(), "redb-state");
    let (rows, _) = timeline(&seen.dom);
    assert_eq!(rows, ops_in(&case).len());
    assert!(seen.dom.contains("VIOLATION panic"));
    assert!(
        seen.dom.contains("<td><code>redb</code></td>"),
        "the engine is named"
    );
}

#[test]
#[ignore = "needs chromium (Debian's package): .ci/run installs it and runs this with --ignored"]
fn a_page_that_fails_to_load_or_throws_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><p>x</p><img src=\"missing.png\">\
         <script>throw new Error('boom')</script></body></html>",
    )
    .unwrap();
    let problems = load_problems(&chromium(&bad, &dir.path().join("profile-bad")));
    assert!(problems.iter().any(|p| p.contains("src=")), "{problems:?}");
    assert!(
        problems.iter().any(|p| p.contains("Uncaught Error: boom")),
        "{problems:?}"
    );
    let good = dir.path().join("good.html");
    std::fs::write(
        &good,
        "<!DOCTYPE html><html><body><p>fine</p></body></html>",
    )
    .unwrap();
    let problems = load_problems(&chromium(&good, &dir.path().join("profile-good")));
    assert!(problems.is_empty(), "{problems:?}");
}
