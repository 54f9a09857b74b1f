//! A failing case as one self-contained HTML page (`crashlab repro --html`, `explore
//! --html-dir`, `check --html-dir`): the header, a timeline of operations with commits, faults,
//! power cuts and recoveries (and one lane per caller for concurrent callers), a page map of the
//! pending sectors at each crash, the judgement (the recovered state against the allowed ones,
//! key by key, and the integrity check's problems), the counters and a chart.
//!
//! The page loads nothing: its style is inline, its chart inline SVG, its data an inline JSON
//! block no script reads. Every byte from the run (keys, values, messages) goes through maud's
//! escaping, and keys and values that are not printable ASCII are shown as hex
//! ([`bytes::show`]). The same input gives the same bytes: everything comes from the run's
//! event log, in order, and nothing from the clock or the machine.

mod bytes;
mod chart;
mod crash;
mod diff;
mod judge;
mod pages;
mod source;
#[cfg(test)]
mod tests;
mod timeline;

pub use source::{from_check, from_run, write_page};

use crashlab_sim::events::{EventLog, What};
use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = include_str!("style.css");

/// Everything a page shows.
pub struct Input<'a> {
    pub title: String,
    /// Rows of the header: seed, engine and options, fault profile, disk, ...
    pub header: Vec<(String, String)>,
    pub outcome: String,
    pub violation: bool,
    /// The command that replays the case.
    pub repro: String,
    /// The workload, one timeline row each.
    pub ops: Vec<String>,
    /// The operation the violation happened in.
    pub failing_op: Option<usize>,
    pub log: &'a EventLog,
    /// Decode page types with crashlab's inspector.
    pub decode_pages: bool,
    /// The crash state the case pins (a checker's state, a shrunk run's power cut): its
    /// surviving sectors are highlighted on that cut's map.
    pub pinned: Option<Pinned>,
    pub counters: Vec<(String, String)>,
    pub sim_time_ns: u64,
    /// The engine's page size, when known: a fault's offset is then also shown as a page.
    pub page_size: Option<u64>,
}

/// A pinned crash: which of the logged power cuts (from 0) and the sectors it keeps.
#[derive(Clone, Debug)]
pub struct Pinned {
    pub cut: usize,
    pub survivors: Vec<u64>,
}

/// The page, as text.
pub fn render(input: &Input<'_>) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (input.title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                (header(input))
                (timeline::section(input))
                (crash::section(input))
                (judge::section(input))
                (figures(input))
                (data(input))
            }
        }
    };
    page.into_string()
}

fn header(input: &Input<'_>) -> Markup {
    let class = if input.violation {
        "outcome bad"
    } else {
        "outcome good"
    };
    html! {
        header {
            h1 { (input.title) }
            p id="outcome" class=(class) { (input.outcome) }
            table class="kv" id="header" {
                @for (k, v) in &input.header {
                    tr { th { (k) } td { code { (v) } } }
                }
                tr { th { "repro" } td { code id="repro" { (input.repro) } } }
            }
            nav {
                a href="#timeline" { "timeline" } " · "
                @if input.failing_op.is_some() { a href="#failing" { "the failing step" } " · " }
                a href="#crashes" { "crashes" } " · "
                a href="#judgement" { "judgement" } " · "
                a href="#figures" { "counters and chart" }
            }
        }
    }
}

fn figures(input: &Input<'_>) -> Markup {
    let mut points = Vec::new();
    let mut cuts = Vec::new();
    for e in &input.log.events {
        let p = (e.sim_time_ns as f64 / 1e6, e.pending_sectors as f64);
        points.push(p);
        if let What::PowerCut(c) = &e.what {
            cuts.push((p.0, c.sectors.len() as f64));
        }
    }
    html! {
        section id="figures" {
            h2 { "Counters" }
            table class="kv" id="counters" {
                @for (k, v) in &input.counters {
                    tr { th { (k) } td { (v) } }
                }
                tr { th { "simulated time" } td { (format!("{:.3} ms", input.sim_time_ns as f64 / 1e6)) } }
            }
            @if input.sim_time_ns > 0 {
                h2 { "Pending sectors over simulated time" }
                p class="note" { "Unsynced sectors at each event; red: the sectors pending at each power cut." }
                div class="chart" { (PreEscaped(chart::pending_svg(&points, &cuts))) }
            }
        }
    }
}

/// A small machine-readable summary (for tools and tests); `<` is written as `\u003c`, so no
/// byte of it can close the block.
fn data(input: &Input<'_>) -> Markup {
    let cuts = input
        .log
        .events
        .iter()
        .filter(|e| matches!(e.what, What::PowerCut(_)))
        .count();
    let summary = serde_json::json!({
        "title": input.title,
        "outcome": input.outcome,
        "violation": input.violation,
        "ops": input.ops.len(),
        "failing_op": input.failing_op,
        "power_cuts": cuts,
        "events": input.log.events.len(),
        "sim_time_ns": input.sim_time_ns,
    });
    let text = summary.to_string().replace('<', "\\u003c");
    html! { script type="application/json" id="crashlab-data" { (PreEscaped(text)) } }
}
