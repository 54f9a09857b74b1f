//! `crashlab db check`: the engine's `check()` on the file, every problem it finds, or OK.
//!
//! An invalid meta slot is a note, not a problem: a power cut during a meta write leaves one by
//! design, and open then uses the other slot, which is the one checked.

use super::{describe, Outcome, CLEAN, DAMAGED};
use crashlab_engine::Db;
use crashlab_format::inspect::Image;
use std::io::Write;
use std::path::Path;

pub(super) fn print(image: &Image, file: &Path, out: &mut dyn Write) -> Outcome {
    let meta = image.meta();
    writeln!(
        out,
        "checking {}: meta {} (txid {}), {} pages below the high-water mark",
        file.display(),
        image.in_use(),
        meta.txid,
        meta.high_water
    )?;
    for slot in image.slots().iter().filter(|s| !s.is_valid()) {
        let why = slot.problem.as_ref().map(describe).unwrap_or_default();
        writeln!(
            out,
            "note: meta {} is not valid ({why}); the database opens from meta {}",
            slot.page,
            image.in_use()
        )?;
    }
    let problems = Db::check_image(image)?;
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    if problems.is_empty() {
        writeln!(out, "OK")?;
        return Ok(CLEAN);
    }
    writeln!(out, "{} problem(s)", problems.len())?;
    Ok(DAMAGED)
}
