//! `crashlab db dump`: every bucket and key/value, as text or (`--json`) in the fixture shape.

use super::{report_damage, show, Outcome};
use crashlab_format::inspect::{self, Dump, Image};
use std::io::{self, Write};

pub(super) fn print(
    image: &Image,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    let (dump, problems) = inspect::dump(image)?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &dump).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        print_text(&dump, out)?;
    }
    report_damage(&problems, err)
}

fn print_text(dump: &Dump, out: &mut dyn Write) -> io::Result<()> {
    for (path, keys) in &dump.buckets {
        let names: Vec<Vec<u8>> = path
            .split('/')
            .filter(|p| !p.is_empty())
            .map(unhex)
            .collect();
        let names: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        let sequence = dump.sequences.get(path).copied().unwrap_or(0);
        let keys_word = if keys.len() == 1 { "key" } else { "keys" };
        write!(
            out,
            "bucket {} ({} {keys_word}",
            show::path(&names),
            keys.len()
        )?;
        if sequence != 0 {
            write!(out, ", sequence {sequence}")?;
        }
        writeln!(out, ")")?;
        for (k, v) in keys {
            let (k, v) = (unhex(k), unhex(v));
            writeln!(
                out,
                "  {} = {}",
                show::bytes(&k, usize::MAX),
                show::bytes(&v, usize::MAX)
            )?;
        }
    }
    Ok(())
}

/// The bytes of a hex string `inspect::hex` wrote.
fn unhex(s: &str) -> Vec<u8> {
    inspect::unhex(s).expect("inspect::hex writes hex digits")
}
