//! The `options = ...` and `faults = ...` lines of a case file, and the `name=value` words they
//! (and `check = ...`) are made of.

use crate::disk::FaultConfig;
use crate::limits::{at_most, ENOSPC_CAPACITY_MAX, PAGE_CACHE_PAGES_MAX};
use crashlab_engine::{FreelistKind, Options, PresizePolicy};

pub(crate) fn pairs(s: &str) -> Result<Vec<(&str, &str)>, String> {
    s.split_whitespace()
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{w}`"))
        })
        .collect()
}

pub(crate) fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("`{v}` is not a valid value for `{k}`"))
}

pub(crate) fn flag(k: &str, v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("expected true or false for `{k}`, found `{v}`")),
    }
}

pub fn format_options(o: &Options) -> String {
    let freelist = match o.freelist {
        FreelistKind::Array => "array",
        FreelistKind::Hashmap => "hashmap",
    };
    format!(
        "page_size={} fill_percent={} no_sync={} no_freelist_sync={} freelist={freelist} page_cache_pages={} presize={}",
        o.page_size, o.fill_percent, o.no_sync, o.no_freelist_sync, o.page_cache_pages,
        presize_name(o.presize)
    )
}

pub fn presize_name(p: PresizePolicy) -> &'static str {
    match p {
        PresizePolicy::Grow => "grow",
        PresizePolicy::Exact => "exact",
        PresizePolicy::Estimate => "estimate",
    }
}

fn parse_presize(v: &str) -> Result<PresizePolicy, String> {
    [
        PresizePolicy::Grow,
        PresizePolicy::Exact,
        PresizePolicy::Estimate,
    ]
    .into_iter()
    .find(|p| presize_name(*p) == v)
    .ok_or_else(|| format!("expected grow, exact or estimate for `presize`, found `{v}`"))
}

pub(super) fn parse_options(s: &str) -> Result<Options, String> {
    let mut o = Options::default();
    for (k, v) in pairs(s)? {
        match k {
            "page_size" => o.page_size = num(k, v)?,
            "fill_percent" => o.fill_percent = num(k, v)?,
            "no_sync" => o.no_sync = flag(k, v)?,
            "no_freelist_sync" => o.no_freelist_sync = flag(k, v)?,
            "page_cache_pages" => {
                let pages = num(k, v)?;
                o.page_cache_pages =
                    at_most(k, pages, PAGE_CACHE_PAGES_MAX, "PAGE_CACHE_PAGES_MAX")?;
            }
            "presize" => o.presize = parse_presize(v)?,
            "freelist" => {
                o.freelist = match v {
                    "array" => FreelistKind::Array,
                    "hashmap" => FreelistKind::Hashmap,
                    _ => {
                        return Err(format!(
                            "expected array or hashmap for `freelist`, found `{v}`"
                        ))
                    }
                }
            }
            _ => return Err(format!("unknown option `{k}`")),
        }
    }
    if !crashlab_engine::page::page_size_valid(o.page_size) {
        return Err(format!(
            "page_size {} is not a power of two in [512, 65536]",
            o.page_size
        ));
    }
    if !(0.1..=1.0).contains(&o.fill_percent) {
        return Err(format!(
            "fill_percent {} is outside [0.1, 1]",
            o.fill_percent
        ));
    }
    Ok(o)
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
