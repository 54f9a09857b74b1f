//! The timeline: one row per operation of the workload (`tr.op`, the failing one marked
//! `failing`), and under each the events it caused — commits, faults, power cuts, recoveries,
//! trace notes — and, for a group of concurrent callers, one lane per caller.

use super::Input;
use crashlab_sim::events::{Event, GroupLanes, What};
use maud::{html, Markup};
use std::collections::BTreeSet;

pub fn section(input: &Input<'_>) -> Markup {
    let log = input.log;
    let mut by_op: Vec<Vec<Row>> = vec![Vec::new(); input.ops.len().max(1)];
    let mut results: Vec<Option<Done<'_>>> = vec![None; input.ops.len()];
    let mut groups: Vec<Option<&GroupLanes>> = vec![None; input.ops.len()];
    let mut skip: BTreeSet<u64> = BTreeSet::new();
    for e in &log.events {
        let slot = e.op.min(by_op.len() - 1);
        match &e.what {
            What::Op {
                index,
                result,
                failed,
                ..
            } => {
                skip.insert(e.seq);
                if let Some(r) = results.get_mut(*index) {
                    *r = Some(Done {
                        result: result.as_str(),
                        failed: *failed,
                        t: Some(e.sim_time_ns),
                    });
                }
            }
            What::Group(g) => {
                if let Some(s) = groups.get_mut(e.op) {
                    *s = Some(g);
                }
            }
            other => {
                if matches!(other, What::PowerCut(_) | What::Recovery(_)) {
                    skip.insert(e.seq);
                }
                by_op[slot].push(Row::Event(e));
            }
        }
    }
    // Trace lines the structured events do not already say: after the event before them.
    let mut at = 0usize;
    for (k, line) in log.lines.iter().enumerate() {
        let k = k as u64;
        while at < log.events.len() && log.events[at].seq <= k {
            at += 1;
        }
        if skip.contains(&k) || line.starts_with("outcome ") {
            continue;
        }
        // An operation the session ended (a failed commit, a power cut) is only a trace line.
        if let Some((i, result)) = op_line(line, input.ops.len()) {
            if results[i].is_none() {
                let failed = crashlab_sim::events::result_failed(result);
                results[i] = Some(Done {
                    result,
                    failed,
                    t: None,
                });
                continue;
            }
        }
        let op = at.checked_sub(1).map_or(0, |i| log.events[i].op);
        let slot = op.min(by_op.len() - 1);
        by_op[slot].push(Row::Note(line));
    }
    // An operation that cut the power (`crash`, `power-cut-in` firing) ends its session
    // without a result of its own.
    for (i, rows) in by_op.iter().enumerate().take(results.len()) {
        let cut = rows
            .iter()
            .any(|r| matches!(r, Row::Event(e) if matches!(e.what, What::PowerCut(_))));
        if results[i].is_none() && cut {
            results[i] = Some(Done {
                result: "power cut",
                failed: false,
                t: None,
            });
        }
    }
    html! {
        section id="timeline" {
            h2 { "Timeline" }
            p class="note" {
                (input.ops.len()) " operations; under each, what it caused. "
                "Commits: durable, acknowledged (not synced) or failed; faults with their kind, offset and page."
            }
            table class="timeline" {
                thead { tr { th { "#" } th { "operation" } th { "result" } th { "t (ms)" } } }
                tbody {
                    @for (i, op) in input.ops.iter().enumerate() {
                        (op_row(input, i, op, results[i], &by_op[i]))
                        @if let Some(g) = groups[i] { (lanes(g)) }
                        @for r in &by_op[i] { (event_row(input, r)) }
                    }
                }
            }
        }
    }
}

/// How an operation ended.
#[derive(Clone, Copy)]
struct Done<'a> {
    result: &'a str,
    failed: bool,
    t: Option<u64>,
}

/// `I OP -> RESULT`: operation `I`'s trace line, if `line` is one.
fn op_line(line: &str, ops: usize) -> Option<(usize, &str)> {
    let (i, rest) = line.split_once(' ')?;
    let i: usize = i.parse().ok()?;
    let (_, result) = rest.split_once(" -> ")?;
    (i < ops).then_some((i, result))
}

#[derive(Clone, Copy)]
enum Row<'a> {
    Event(&'a Event),
    Note(&'a String),
}

fn op_row(
    input: &Input<'_>,
    i: usize,
    op: &str,
    result: Option<Done<'_>>,
    rows: &[Row<'_>],
) -> Markup {
    let failing = input.failing_op == Some(i);
    let mut class = String::from("op");
    match result {
        None => class.push_str(" notrun"),
        Some(d) if d.failed => class.push_str(" failed"),
        Some(_) => {}
    }
    if failing {
        class.push_str(" failing");
    }
    let t = result.and_then(|d| d.t).or_else(|| {
        rows.iter().find_map(|r| match r {
            Row::Event(e) => Some(e.sim_time_ns),
            Row::Note(_) => None,
        })
    });
    html! {
        tr class=(class) data-op=(i) id=[failing.then_some("failing")] {
            td class="idx" { (i) }
            td { code { (op) } }
            td {
                @match result {
                    Some(d) => { (d.result) },
                    None => { span class="dim" { "not run" } },
                }
                @if failing { " " span class="flag" { "◀ violation here" } }
            }
            td class="num" { @if let Some(t) = t.filter(|_| input.sim_time_ns > 0) { (format!("{:.3}", t as f64 / 1e6)) } }
        }
    }
}

fn event_row(input: &Input<'_>, r: &Row<'_>) -> Markup {
    let (class, text, t) = match r {
        Row::Note(line) => ("ev note".to_string(), (*line).clone(), None),
        Row::Event(e) => {
            let (c, s) = describe(input, e);
            (format!("ev {c}"), s, Some(e.sim_time_ns))
        }
    };
    html! {
        tr class=(class) {
            td {}
            td colspan="2" { (text) }
            td class="num" { @if let Some(t) = t.filter(|_| input.sim_time_ns > 0) { (format!("{:.3}", t as f64 / 1e6)) } }
        }
    }
}

fn describe(input: &Input<'_>, e: &Event) -> (&'static str, String) {
    match &e.what {
        What::Commit { state, outcome } => (
            outcome.name(),
            format!("commit of S[{state}]: {}", outcome.name()),
        ),
        What::Fault(f) => {
            let page = input
                .page_size
                .map(|ps| format!(", page {}", f.offset / ps))
                .unwrap_or_default();
            let what = if f.kind.contains("sync") {
                format!("fault {} (a sync)", f.kind)
            } else {
                let (kind, at, len) = (f.kind, f.offset, f.len);
                format!("fault {kind} at offset {at}{page} ({len} bytes)")
            };
            ("fault", what)
        }
        What::PowerCut(c) => {
            let n = |fate| c.sectors.iter().filter(|s| s.1 == fate).count();
            use crashlab_sim::events::Fate;
            (
                "cut",
                format!(
                    "⚡ power cut: {} pending sectors — {} survived, {} lost, {} torn (see Crashes)",
                    c.sectors.len(),
                    n(Fate::Survived),
                    n(Fate::Lost),
                    n(Fate::Torn)
                ),
            )
        }
        What::Recovery(r) => {
            let how = if r.after_power_cut {
                "after the power cut"
            } else {
                "after a reopen"
            };
            let found = match r.found {
                Some(i) => format!("recovered S[{i}] {how}"),
                None => format!(
                    "recovered a state none of S[{}..={}] {how} (see Judgement)",
                    r.allowed.0, r.allowed.1
                ),
            };
            (
                if r.found.is_some() {
                    "recovery"
                } else {
                    "recovery bad"
                },
                found,
            )
        }
        What::Op { .. } | What::Group(_) => ("", String::new()),
    }
}

fn lanes(g: &GroupLanes) -> Markup {
    let commit_of = |call: usize| {
        let k = g
            .commits
            .iter()
            .position(|(calls, _)| calls.contains(&call))?;
        Some(match g.commits[k].1 {
            Some(end) => format!("commit {k} ({})", end.name()),
            None => format!("batch {k} of the pinned schedule"),
        })
    };
    html! {
        tr class="ev lanes" {
            td {}
            td colspan="3" {
                table class="lanes" {
                    thead { tr { @for c in 0..g.callers { th { "caller " (c) } } } }
                    tbody { tr {
                        @for c in 0..g.callers {
                            td class="lane" {
                                @for (i, call) in g.calls.iter().enumerate().filter(|(_, k)| k.caller == c) {
                                    div class="call" {
                                        b { "call " (i) } @if call.fails { " (fails by design)" }
                                        ": " (call.ops.join("; "))
                                        br;
                                        "→ " @if call.answer.is_empty() { "no answer" } @else { (call.answer) }
                                        @if let Some(k) = commit_of(i) { " · " (k) }
                                    }
                                }
                            }
                        }
                    } }
                }
            }
        }
    }
}
