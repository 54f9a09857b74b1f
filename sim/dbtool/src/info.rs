//! `crashlab db info`: the page size and both meta pages, and which one is in use.

use super::{describe, show, Outcome, CLEAN};
use crashlab_format::inspect::{Image, MetaSlot};
use crashlab_format::meta::Meta;
use std::io::Write;
use std::path::Path;

pub(super) fn print(image: &Image, file: &Path, out: &mut dyn Write) -> Outcome {
    let meta = image.meta();
    writeln!(out, "file        {}", file.display())?;
    writeln!(
        out,
        "size        {} bytes ({} pages)",
        image.file_len(),
        image.file_pages()
    )?;
    writeln!(out, "page size   {}", image.page_size())?;
    writeln!(
        out,
        "in use      meta {} (txid {})",
        image.in_use(),
        meta.txid
    )?;
    for slot in image.slots() {
        writeln!(out, "meta {}      {}", slot.page, slot_line(image, slot))?;
    }
    Ok(CLEAN)
}

/// `in use` / `valid` / `INVALID (why)`, then the fields as stored.
fn slot_line(image: &Image, slot: &MetaSlot) -> String {
    let state = match &slot.problem {
        None if slot.page == image.in_use() => "in use".to_string(),
        None => "valid, not in use (older)".to_string(),
        Some(e) => format!("INVALID: {}", describe(e)),
    };
    match &slot.stored {
        Some(m) => format!("{state}; {}", fields(m, slot.checksum_ok)),
        None => state,
    }
}

fn fields(m: &Meta, checksum_ok: bool) -> String {
    format!(
        "txid {}, root {}, freelist {}, high-water mark {}, page size {}, checksum {}",
        m.txid,
        m.root,
        show::freelist(m.freelist),
        m.high_water,
        m.page_size,
        if checksum_ok { "ok" } else { "MISMATCH" }
    )
}
