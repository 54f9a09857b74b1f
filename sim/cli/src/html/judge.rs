//! The judgement: the violation, and for each recovery the oracle refused (or whose integrity
//! check found problems) the recovered state against every allowed state S[a..=b], as a diff
//! by bucket and key, with the closest allowed state first.

use super::bytes::{path, show};
use super::diff::{diff, Entry, Item};
use super::Input;
use crashlab_sim::events::{Recovery, What};
use maud::{html, Markup};

/// Allowed states compared per recovery (the closest are kept).
const STATES_SHOWN_MAX: usize = 4;
/// Differences listed per allowed state.
const ENTRIES_SHOWN_MAX: usize = 200;

pub fn section(input: &Input<'_>) -> Markup {
    let recoveries: Vec<(usize, &Recovery)> = input
        .log
        .events
        .iter()
        .filter_map(|e| match &e.what {
            What::Recovery(r) => Some((e.op, &**r)),
            _ => None,
        })
        .collect();
    let bad: Vec<&(usize, &Recovery)> = recoveries.iter().filter(|(_, r)| is_bad(r)).collect();
    html! {
        section id="judgement" {
            h2 { "Judgement" }
            p class=(if input.violation { "verdict bad" } else { "verdict good" }) { (input.outcome) }
            p class="note" {
                (recoveries.len()) " recoveries judged, "
                (bad.len()) " refused or with integrity problems."
            }
            @for (op, r) in bad { (one(*op, r)) }
        }
    }
}

fn is_bad(r: &Recovery) -> bool {
    r.found.is_none() || !matches!(&r.problems, Ok(p) if p.is_empty())
}

fn one(op: usize, r: &Recovery) -> Markup {
    let how = if r.after_power_cut {
        "power cut"
    } else {
        "reopen"
    };
    let mut diffs: Vec<(usize, Vec<Entry>)> = r
        .allowed_states
        .iter()
        .enumerate()
        .map(|(i, s)| (r.allowed.0 + i, diff(s, &r.observed, ENTRIES_SHOWN_MAX)))
        .collect();
    // The closest allowed state first; ties by index, so the order is fixed.
    diffs.sort_by_key(|(i, d)| (d.len(), *i));
    html! {
        div class="recovery" {
            h3 {
                "Recovery after the " (how) " following op " (op) ": allowed S["
                (r.allowed.0) "..=" (r.allowed.1) "], "
                @match r.found { Some(i) => { "found S[" (i) "]" }, None => { "none matches" } }
            }
            (problems(r))
            @if r.found.is_none() {
                @for (i, d) in diffs.iter().take(STATES_SHOWN_MAX) {
                    h4 { "Recovered state against S[" (i) "]: " (d.len()) " differences"
                        @if d.len() == ENTRIES_SHOWN_MAX { " (first " (ENTRIES_SHOWN_MAX) ")" } }
                    (table(d))
                }
            }
        }
    }
}

fn problems(r: &Recovery) -> Markup {
    html! {
        @match &r.problems {
            Ok(p) if p.is_empty() => { p class="dim" { "check(): no problems." } },
            Ok(p) => {
                p { "check() reported " (p.len()) " problems:" }
                ul class="problems" { @for x in p.iter().take(50) { li { code { (x) } } } }
            },
            Err(e) => { p { "check() could not run: " code { (e) } } },
        }
    }
}

fn table(d: &[Entry]) -> Markup {
    html! {
        table class="diff" {
            thead { tr { th { "change" } th { "bucket" } th { "key" } th { "allowed state" } th { "recovered" } } }
            tbody {
                @for e in d {
                    tr class=(format!("d-{}", e.change.name().replace(' ', "-"))) {
                        td { (e.change.name()) }
                        td { code { (path(&e.bucket)) } }
                        (item(&e.what))
                    }
                }
            }
        }
    }
}

fn item(what: &Item) -> Markup {
    let opt = |v: &Option<Vec<u8>>| v.as_deref().map_or_else(|| "—".to_string(), show);
    html! {
        @match what {
            Item::Key { key, expected, recovered } => {
                td class="key" { code { (show(key)) } }
                td { code { (opt(expected)) } }
                td { code { (opt(recovered)) } }
            },
            Item::Bucket(name) => {
                td class="key" { "bucket " code { (show(name)) } }
                td {} td {}
            },
            Item::Sequence { expected, recovered } => {
                td class="key" { "sequence" }
                td { (expected) } td { (recovered) }
            },
        }
    }
}
