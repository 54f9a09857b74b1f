//! The `name=value` words the settings lines of a case file are made of (`faults = ...`,
//! `check = ...`, an engine's `options = ...`), and how one word's value is read.

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
