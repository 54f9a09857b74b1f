//! `crashlab db pages`: one line per page or run of pages; `--page N`: one page in full.

use super::{describe, report_damage, show, Outcome, CLEAN, UNREADABLE};
use crashlab_format::inspect::{self, Image, PageBody, PageMap, PageRun, PageUse};
use crashlab_format::meta::Meta;
use crashlab_format::node::{BranchItem, Child, LeafItem, BUCKET_HEADER_SIZE};
use crashlab_format::page::{self, PAGE_HEADER_SIZE};
use crashlab_format::{Error, PageId};
use std::io::Write;

/// Key and value bytes shown per element of `--page`.
const BYTES_SHOWN: usize = 32;
/// Freelist ids per line of `--page`.
const IDS_PER_LINE: usize = 16;

pub(super) fn print_map(image: &Image, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
    let map = inspect::page_map(image)?;
    writeln!(
        out,
        "{:<13} {:<11} {:>6} {:>8}  BUCKET",
        "ID", "TYPE", "ITEMS", "OVERFLOW"
    )?;
    for run in &map.runs {
        writeln!(out, "{}", run_line(&map, run).trim_end())?;
    }
    if map.file_pages > map.high_water.0 {
        let unused = map.file_pages - map.high_water.0;
        let ids = show::run(map.high_water, unused);
        writeln!(out, "{ids:<13} past the high-water mark: unused file space")?;
    }
    report_damage(&map.problems, err)
}

fn run_line(map: &PageMap, run: &PageRun) -> String {
    let ids = show::run(run.start, run.pages);
    let kind = run.kind.name();
    match run.kind {
        PageUse::Branch | PageUse::Leaf => {
            let bucket = run.bucket.map(|b| show::path(&map.buckets.path(b)));
            let bucket = bucket.unwrap_or_default();
            format!(
                "{ids:<13} {kind:<11} {:>6} {:>8}  {bucket}",
                run.count, run.overflow
            )
        }
        PageUse::Freelist => format!("{ids:<13} {kind:<11} {:>6} {:>8}", run.count, run.overflow),
        PageUse::Damaged => {
            let bucket = run.bucket.map(|b| show::path(&map.buckets.path(b)));
            format!(
                "{ids:<13} {kind:<11} {:>6} {:>8}  {}",
                "-",
                "-",
                bucket.unwrap_or_default()
            )
        }
        _ => format!("{ids:<13} {kind}"),
    }
}

pub(super) fn print_page(
    image: &Image,
    id: u64,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    if id >= image.file_pages() {
        let pages = image.file_pages();
        writeln!(
            err,
            "crashlab db: page {id} lies past the end of the file ({pages} pages)"
        )?;
        return Ok(UNREADABLE);
    }
    let id = PageId(id);
    let d = inspect::page_detail(image, id)?;
    let h = d.header;
    writeln!(
        out,
        "page {id}: header id {}, flags {:#06x}, count {}, overflow {}",
        h.id, h.flags, h.count, h.overflow
    )?;
    writeln!(out, "used as: {}", used_as(image, id)?)?;
    match &d.body {
        PageBody::Meta { stored, problem } => print_meta(stored, problem.as_ref(), out)?,
        PageBody::Branch(items) => print_branch(items, out)?,
        PageBody::Leaf(items) => print_leaf(items, out)?,
        PageBody::Freelist(ids) => print_ids(ids, out)?,
        PageBody::Damaged(e) => writeln!(out, "does not decode: {}", describe(e))?,
        PageBody::NoType => writeln!(
            out,
            "the flags name no page type: an overflow page, a page never written, or damage"
        )?,
    }
    Ok(CLEAN)
}

/// What the page map says page `id` is part of.
fn used_as(image: &Image, id: PageId) -> Result<String, Error> {
    let map = inspect::page_map(image)?;
    let run = map
        .runs
        .iter()
        .find(|r| r.start <= id && id.0 < r.start.0 + r.pages);
    Ok(match run {
        None => "past the high-water mark: unused file space".into(),
        Some(r) => {
            let part = if r.pages > 1
                && matches!(r.kind, PageUse::Branch | PageUse::Leaf | PageUse::Freelist)
            {
                format!(
                    ", page {} of {} from page {}",
                    id.0 - r.start.0 + 1,
                    r.pages,
                    r.start
                )
            } else {
                String::new()
            };
            let bucket = r
                .bucket
                .map(|b| format!(" of bucket {}", show::path(&map.buckets.path(b))));
            format!("{}{}{part}", r.kind.name(), bucket.unwrap_or_default())
        }
    })
}

fn print_meta(m: &Meta, problem: Option<&Error>, out: &mut dyn Write) -> std::io::Result<()> {
    let verdict = problem.map_or("valid".into(), describe);
    writeln!(
        out,
        "meta ({verdict}): txid {}, root {}, freelist {}, high-water mark {}, page size {}, \
         sequence {}",
        m.txid,
        m.root,
        show::freelist(m.freelist),
        m.high_water,
        m.page_size,
        m.sequence
    )
}

fn print_branch(items: &[BranchItem], out: &mut dyn Write) -> std::io::Result<()> {
    for (i, it) in items.iter().enumerate() {
        let child = match it.child {
            Child::Page(p) => p.to_string(),
            Child::Node(_) => "(in memory)".into(),
        };
        let key = show::bytes(&it.key, BYTES_SHOWN);
        writeln!(
            out,
            "  {i:>5}  key {key} ({} bytes) → page {child}",
            it.key.len()
        )?;
    }
    Ok(())
}

fn print_leaf(items: &[LeafItem], out: &mut dyn Write) -> std::io::Result<()> {
    for (i, it) in items.iter().enumerate() {
        let key = show::bytes(it.key(), BYTES_SHOWN);
        let what = if it.is_bucket() {
            bucket_value(it.value())
        } else {
            format!(
                "value {} ({} bytes)",
                show::bytes(it.value(), BYTES_SHOWN),
                it.value().len()
            )
        };
        writeln!(
            out,
            "  {i:>5}  key {key} ({} bytes): {what}",
            it.key().len()
        )?;
    }
    Ok(())
}

/// A bucket header: its root page or, for an inline bucket, how many keys its image holds.
fn bucket_value(v: &[u8]) -> String {
    // The decoder guarantees a bucket value holds at least its header.
    let root = page::read_u64(v, 0);
    let sequence = page::read_u64(v, 8);
    if root != 0 {
        return format!("bucket, root page {root}, sequence {sequence}");
    }
    let count = v
        .get(BUCKET_HEADER_SIZE..BUCKET_HEADER_SIZE + PAGE_HEADER_SIZE)
        .map_or(0, |h| page::read_u16(h, 10));
    format!("inline bucket, {count} element(s), sequence {sequence}")
}

fn print_ids(ids: &[PageId], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{} ids (free and pending):", ids.len())?;
    for line in ids.chunks(IDS_PER_LINE) {
        let line: Vec<String> = line.iter().map(|p| p.to_string()).collect();
        writeln!(out, "  {}", line.join(" "))?;
    }
    Ok(())
}
