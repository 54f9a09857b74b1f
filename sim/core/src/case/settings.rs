//! The `faults = ...` and `disk = ...` lines of a case file.

use crate::disk::{DiskConfig, FaultConfig, LengthModel, SECTOR_SIZE_DEFAULT};
use crate::fs::FsConfig;
use crate::limits::{at_most, ENOSPC_CAPACITY_MAX};
use crate::spec::sector_size_valid;
use crate::words::{flag, num, settings};

/// The `disk = ...` line: what shapes the disk apart from its faults.
pub fn format_disk(d: &DiskConfig) -> String {
    format!("sector_size={} length={}", d.sector_size, d.length)
}

/// Parse a `disk = ...` line: the sector size and the length model, each optional (a missing
/// one is today's: 512 bytes, `with-data`).
pub(super) fn parse_disk(s: &str) -> Result<(u32, LengthModel), String> {
    let (mut sector_size, mut length) = (SECTOR_SIZE_DEFAULT, LengthModel::WithData);
    for (k, v) in settings(s)? {
        match k {
            "sector_size" => sector_size = sector_size_valid(num(k, v)?)?,
            "length" => length = v.parse()?,
            _ => {
                return Err(format!(
                    "unknown disk setting `{k}` (expected sector_size or length)"
                ))
            }
        }
    }
    Ok((sector_size, length))
}

/// The `fs = ...` line of an engine of several files: the metadata model, and the negative
/// control's switch when it is on.
pub fn format_fs(f: &FsConfig) -> String {
    let mut s = format!("model={}", f.model);
    if f.renames_durable_at_once {
        s.push_str(" renames_durable_at_once=true");
    }
    s
}

/// Parse an `fs = ...` line: `model` (required) and `renames_durable_at_once` (absent: false).
pub(super) fn parse_fs(s: &str) -> Result<FsConfig, String> {
    let (mut model, mut at_once) = (None, false);
    for (k, v) in settings(s)? {
        match k {
            "model" => model = Some(v.parse()?),
            "renames_durable_at_once" => at_once = flag(k, v)?,
            _ => {
                return Err(format!(
                    "unknown fs setting `{k}` (expected model or renames_durable_at_once)"
                ))
            }
        }
    }
    let model = model.ok_or_else(|| {
        format!("expected `model=ordered|strict [renames_durable_at_once=BOOL]`, found `{s}`")
    })?;
    Ok(FsConfig {
        model,
        renames_durable_at_once: at_once,
    })
}

pub fn format_faults(f: &FaultConfig) -> String {
    let enospc = f
        .enospc_capacity
        .map_or("none".to_string(), |c| c.to_string());
    format!(
        "read_eio={} write_eio={} sync_eio={} latent={} bit_flip={} misdirect={} enospc={enospc} lying_sync={} garbage_unwritten={} sub_sector_tear={}",
        f.read_eio, f.write_eio, f.sync_eio, f.latent, f.bit_flip, f.misdirect, f.lying_sync, f.garbage_unwritten, f.sub_sector_tear
    )
}

pub(super) fn parse_faults(s: &str) -> Result<FaultConfig, String> {
    let mut f = FaultConfig::none();
    for (k, v) in settings(s)? {
        match k {
            "read_eio" => f.read_eio = num(k, v)?,
            "write_eio" => f.write_eio = num(k, v)?,
            "sync_eio" => f.sync_eio = num(k, v)?,
            "latent" => f.latent = num(k, v)?,
            "bit_flip" => f.bit_flip = num(k, v)?,
            "misdirect" => f.misdirect = num(k, v)?,
            "enospc" if v == "none" => f.enospc_capacity = None,
            "enospc" => {
                let bytes = num(k, v)?;
                f.enospc_capacity = Some(at_most(
                    k,
                    bytes,
                    ENOSPC_CAPACITY_MAX,
                    "ENOSPC_CAPACITY_MAX",
                )?);
            }
            "lying_sync" => f.lying_sync = flag(k, v)?,
            "garbage_unwritten" => f.garbage_unwritten = flag(k, v)?,
            "sub_sector_tear" => f.sub_sector_tear = num(k, v)?,
            _ => return Err(format!("unknown fault `{k}`")),
        }
    }
    f.validate()?;
    Ok(f)
}
