//! `crashlab db stats`: pages and bytes by use, fill of branch and leaf pages, the free set, and
//! one line per bucket with its tree depth.

use super::{report_damage, show, Outcome};
use crashlab_format::inspect::{self, Image, NodeUsage, Stats};
use std::io::{self, Write};

pub(super) fn print(image: &Image, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
    let s = inspect::stats(image)?;
    let ps = u64::from(s.page_size);
    writeln!(out, "page size      {}", s.page_size)?;
    writeln!(
        out,
        "file           {} bytes; high-water mark {} pages ({} bytes)",
        s.file_len,
        s.high_water,
        s.high_water.0 * ps
    )?;
    writeln!(out)?;
    print_types(&s, out)?;
    writeln!(out)?;
    print_free(&s, image, out)?;
    print_buckets(&s, out)?;
    report_damage(&s.problems, err)
}

fn print_types(s: &Stats, out: &mut dyn Write) -> io::Result<()> {
    let ps = u64::from(s.page_size);
    writeln!(
        out,
        "{:<12} {:>9} {:>12} {:>8} {:>9} {:>9} {:>6}",
        "TYPE", "PAGES", "BYTES", "NODES", "ELEMENTS", "OVERFLOW", "FILL"
    )?;
    for (name, u) in [("branch", &s.branch), ("leaf", &s.leaf)] {
        writeln!(out, "{}", node_row(name, u, s.page_size))?;
    }
    let others = [
        ("meta", s.meta_pages),
        ("freelist", s.freelist_pages),
        ("free", s.free_pages),
        ("pending", s.pending_pages),
        ("unreachable", s.unreachable_pages),
        ("damaged", s.damaged_pages),
    ];
    for (name, pages) in others {
        writeln!(out, "{name:<12} {pages:>9} {:>12}", pages * ps)?;
    }
    let total = s.branch.pages + s.leaf.pages + others.iter().map(|o| o.1).sum::<u64>();
    writeln!(out, "{:<12} {total:>9} {:>12}", "total", total * ps)
}

fn node_row(name: &str, u: &NodeUsage, page_size: u32) -> String {
    format!(
        "{name:<12} {:>9} {:>12} {:>8} {:>9} {:>9} {:>5.1}%",
        u.pages,
        u.pages * u64::from(page_size),
        u.nodes,
        u.elements,
        u.overflow_pages(),
        u.fill_percent(page_size)
    )
}

fn print_free(s: &Stats, image: &Image, out: &mut dyn Write) -> io::Result<()> {
    let meta = image.meta();
    let source = if s.freelist_persisted {
        format!(
            "freelist page {} ({} page(s))",
            meta.freelist, s.freelist_pages
        )
    } else {
        "not persisted: open rebuilds it from the pages no bucket reaches".into()
    };
    writeln!(out, "freelist       {source}")?;
    writeln!(
        out,
        "free set       {} pages: {} free, {} pending (freed by the last commit: the previous \
         meta still uses them)",
        s.free_pages + s.pending_pages,
        s.free_pages,
        s.pending_pages
    )?;
    let nesting = s.buckets.iter().map(|b| b.nesting).max().unwrap_or(0);
    writeln!(
        out,
        "buckets        {} ({} inline), nested up to {nesting} deep",
        s.buckets.len() - 1,
        s.inline_buckets()
    )
}

fn print_buckets(s: &Stats, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{:<40} {:>5} {:>7} {:>9} {:>7} {:>6} {:>20}",
        "BUCKET", "DEPTH", "PAGES", "KEYS", "BUCKETS", "INLINE", "SEQUENCE"
    )?;
    // In path order, whatever order the walk met them in.
    let mut rows: Vec<(Vec<&[u8]>, usize)> = (0..s.buckets.len())
        .map(|i| (s.buckets.path(i), i))
        .collect();
    rows.sort();
    for (path, i) in rows {
        let b = s.buckets.get(i);
        let inline = if b.root.is_none() { "yes" } else { "no" };
        writeln!(
            out,
            "{:<40} {:>5} {:>7} {:>9} {:>7} {inline:>6} {:>20}",
            show::path(&path),
            b.depth,
            b.pages,
            b.keys,
            b.sub_buckets,
            b.sequence
        )?;
    }
    Ok(())
}
