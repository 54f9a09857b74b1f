//! Crashes: at each power cut, the pending sectors as a page map — each sector with its page id
//! and type, and whether it survived, was lost or was torn — and, when the case pins a crash
//! state, its surviving sectors (the minimal set the checker found) highlighted.

use super::pages::PageTypes;
use super::Input;
use crashlab_sim::events::{Fate, PowerCut, What};
use maud::{html, Markup};

/// Sectors drawn per crash before the map is cut (a run's pending set is bounded by its page
/// cache; this bounds the page whatever the run).
const SECTORS_SHOWN_MAX: usize = 512;

pub fn section(input: &Input<'_>) -> Markup {
    let cuts: Vec<(usize, &PowerCut)> = input
        .log
        .events
        .iter()
        .filter_map(|e| match &e.what {
            What::PowerCut(c) => Some((e.op, c)),
            _ => None,
        })
        .collect();
    html! {
        section id="crashes" {
            h2 { "Crashes" }
            @if cuts.is_empty() { p class="dim" { "No power cut in this run." } }
            p class="note" {
                "Each pending (unsynced) sector at the cut: "
                span class="sec survived" { "survived" } " "
                span class="sec lost" { "lost" } " "
                span class="sec torn" { "torn" }
                @if let Some(p) = &input.pinned {
                    " — outlined at power cut " (p.cut + 1) ": the minimal surviving set of the crash state"
                }
            }
            @for (n, (op, cut)) in cuts.iter().enumerate() {
                (one(input, n, *op, cut))
            }
        }
    }
}

fn one(input: &Input<'_>, n: usize, op: usize, cut: &PowerCut) -> Markup {
    let ss = cut.sector_size;
    let indexes: Vec<u64> = cut.sectors.iter().map(|s| s.0).collect();
    let types = if input.decode_pages {
        PageTypes::decode(&cut.image_before, &indexes, ss)
            .or_else(|| PageTypes::decode(&cut.image_after, &indexes, ss))
    } else {
        None
    };
    let count = |f: Fate| cut.sectors.iter().filter(|s| s.1 == f).count();
    if cut.sectors.is_empty() {
        return html! {
            div class="crash" id=(format!("crash-{n}")) {
                h3 { "Power cut " (n + 1) " during or after op " (op) ": nothing was pending (every write synced)" }
            }
        };
    }
    html! {
        div class="crash" id=(format!("crash-{n}")) {
            h3 {
                "Power cut " (n + 1) " during or after op " (op) ": "
                (cut.sectors.len()) " pending sectors of " (ss) " B — "
                (count(Fate::Survived)) " survived, " (count(Fate::Lost)) " lost, "
                (count(Fate::Torn)) " torn"
            }
            @if types.is_none() && input.decode_pages {
                p class="dim" { "The image does not decode as crashlab's format here: pages are named by id only." }
            }
            div class="pagemap" {
                @for (s, fate) in cut.sectors.iter().take(SECTORS_SHOWN_MAX) {
                    (sector(input, n, types.as_ref(), *s, *fate, ss))
                }
            }
            @if cut.sectors.len() > SECTORS_SHOWN_MAX {
                p class="dim" { (cut.sectors.len() - SECTORS_SHOWN_MAX) " more sectors not drawn." }
            }
        }
    }
}

/// Sector `s` of power cut `n`'s map.
fn sector(
    input: &Input<'_>,
    n: usize,
    types: Option<&PageTypes>,
    s: u64,
    fate: Fate,
    ss: u64,
) -> Markup {
    let pinned = input
        .pinned
        .as_ref()
        .is_some_and(|p| p.cut == n && p.survivors.contains(&s));
    let class = format!("sec {}{}", fate.name(), if pinned { " pinned" } else { "" });
    let (page, kind) = match (types, input.page_size) {
        (Some(t), _) => {
            let (p, k) = t.page_of(s, ss);
            (Some(p), k)
        }
        (None, Some(ps)) => (Some(s * ss / ps), ""),
        (None, None) => (None, ""),
    };
    let title = format!(
        "sector {s} (bytes {}..{}): {}{}",
        s * ss,
        (s + 1) * ss,
        fate.name(),
        page.map(|p| format!(", page {p} {kind}"))
            .unwrap_or_default()
    );
    html! {
        div class=(class) title=(title) data-sector=(s) data-kind=(kind) {
            span class="sid" { "s" (s) }
            @if let Some(p) = page { span class="pid" { "p" (p) } }
            @if !kind.is_empty() { span class="kind" { (kind) } }
        }
    }
}
