//! The page escapes what it shows: keys, values and bucket names are arbitrary bytes, messages
//! are engine text, and none of them may become markup.

use super::{render, Input};
use crashlab_models::KvModel;
use crashlab_sim::events::{Event, EventLog, Recovery, What};

/// A recovery that lost two keys of bucket `<script>`: one printable (`<img src=x>`), one raw.
fn hostile_log() -> EventLog {
    let mut allowed = KvModel::new();
    let bucket = allowed
        .root
        .buckets
        .entry(b"<script>".to_vec())
        .or_default();
    bucket
        .values
        .insert(b"<img src=x>".to_vec(), b"<em>v</em>".to_vec());
    bucket.values.insert(vec![0x00, 0xff, b'<'], vec![b'"'; 3]);
    let mut observed = allowed.clone();
    observed
        .root
        .buckets
        .get_mut(b"<script>".as_slice())
        .unwrap()
        .values
        .clear();
    let recovery = Recovery {
        after_power_cut: true,
        allowed: (1, 1),
        allowed_states: vec![allowed],
        observed,
        found: None,
        problems: Ok(vec!["page 3: <b>bad</b>".into()]),
    };
    EventLog {
        events: vec![Event {
            seq: 0,
            op: 0,
            sim_time_ns: 1_000,
            pending_sectors: 0,
            what: What::Recovery(Box::new(recovery)),
        }],
        lines: vec!["0 put 0x3c -> </script><i>".into()],
    }
}

fn hostile_page(log: &EventLog) -> String {
    render(&Input {
        title: "t </title><script>x()</script>".into(),
        header: vec![("seed".into(), "<u>1</u>".into())],
        outcome: "VIOLATION </script><b>boom</b>".into(),
        violation: true,
        repro: "crashlab repro <x>.case".into(),
        ops: vec!["put 0x3c k len=1 v=1".into()],
        failing_op: Some(0),
        log,
        decode_pages: true,
        pinned: None,
        counters: vec![("work".into(), "<hr>".into())],
        sim_time_ns: 1_000,
        page_size: Some(4096),
    })
}

#[test]
fn bytes_and_messages_from_the_run_never_become_markup() {
    let log = hostile_log();
    let page = hostile_page(&log);
    // The one script element is the inert JSON data block.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(page.contains(r#"<script type="application/json" id="crashlab-data">"#));
    for raw in ["<img", "<b>", "<i>", "<u>", "<hr>", "<em>", "<x>"] {
        assert!(!page.contains(raw), "`{raw}` got into the page unescaped");
    }
    // Printable names are escaped text; raw bytes are hex.
    assert!(
        page.contains("&lt;script&gt;"),
        "the bucket name is shown escaped"
    );
    assert!(
        page.contains("&lt;img src=x&gt;"),
        "the printable key is shown escaped"
    );
    assert!(page.contains("0x00ff3c"), "the raw key is shown as hex");
    assert!(
        page.contains("&lt;b&gt;bad&lt;/b&gt;"),
        "check() problems are escaped"
    );
    // The diff names both missing keys.
    assert_eq!(
        page.matches(r#"<tr class="d-missing">"#).count(),
        2,
        "{page}"
    );
}

#[test]
fn the_data_block_cannot_be_closed_by_what_it_holds() {
    let log = hostile_log();
    let page = hostile_page(&log);
    let start = page.find(r#"id="crashlab-data">"#).unwrap();
    let block = &page[start..];
    let end = block.find("</script>").unwrap();
    let json = &block[r#"id="crashlab-data">"#.len()..end];
    assert!(!json.contains('<'), "{json}");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["outcome"], "VIOLATION </script><b>boom</b>");
    assert_eq!(v["failing_op"], 0);
}

#[test]
fn a_schedule_puts_each_callers_next_call_in_its_batch() {
    // Callers 0, 1, 2 with two calls each (caller-major, as `group_calls` draws them).
    let callers = [0, 0, 1, 1, 2, 2];
    let schedule = vec![vec![0, 2], vec![1], vec![0, 1], vec![2]];
    assert_eq!(
        super::source::batches_of(&schedule, &callers),
        vec![vec![0, 4], vec![2], vec![1, 3], vec![5]]
    );
    // A batch naming a caller with no call left takes nothing of it.
    assert_eq!(
        super::source::batches_of(&[vec![0], vec![0], vec![0]], &[0, 0]),
        vec![vec![0], vec![1], vec![]]
    );
}
