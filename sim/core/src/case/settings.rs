//! The `faults = ...` line of a case file, and the `name=value` words it (and `check = ...`, and
//! the engines' own `options = ...`) are made of.

use crate::disk::FaultConfig;
use crate::limits::{at_most, ENOSPC_CAPACITY_MAX};

pub fn pairs(s: &str) -> Result<Vec<(&str, &str)>, String> {
    s.split_whitespace()
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{w}`"))
        })
        .collect()
}

pub fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("`{v}` is not a valid value for `{k}`"))
}

pub fn flag(k: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("expected true or false for `{k}`, found `{v}`")),
    }
}

pub fn format_faults(f: &FaultConfig) -> String {
    let enospc = f
        .enospc_capacity
        .map_or("none".to_string(), |c| c.to_string());
    format!(
        "read_eio={} write_eio={} sync_eio={} latent={} bit_flip={} misdirect={} enospc={enospc} lying_sync={} garbage_unwritten={}",
        f.read_eio, f.write_eio, f.sync_eio, f.latent, f.bit_flip, f.misdirect, f.lying_sync, f.garbage_unwritten
    )
}

pub(super) fn parse_faults(s: &str) -> Result<FaultConfig, String> {
    let mut f = FaultConfig::none();
    for (k, v) in pairs(s)? {
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
            _ => return Err(format!("unknown fault `{k}`")),
        }
    }
    f.validate()?;
    Ok(f)
}
