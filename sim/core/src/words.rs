//! The `name=value` words the settings lines of a case file are made of (`faults = ...`,
//! `check = ...`, an engine's `options = ...`), and how one word's value is read.

/// The `name=value` words of `s`, in order; a name may repeat (a directory's pinned cut gives
/// `keep` once per `file`).
pub fn pairs(s: &str) -> Result<Vec<(&str, &str)>, String> {
    s.split_whitespace()
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| format!("expected `name=value`, found `{w}`"))
        })
        .collect()
}

/// The `name=value` words of a line of settings, each name at most once: with a name given
/// twice, which value counts would be left to the reader's order, and a pinned setting must be
/// unambiguous.
pub fn settings(s: &str) -> Result<Vec<(&str, &str)>, String> {
    let all = pairs(s)?;
    for (i, (k, v)) in all.iter().enumerate() {
        if all[..i].iter().any(|(seen, _)| seen == k) {
            return Err(format!("`{k}` is given twice, in `{k}={v}`"));
        }
    }
    Ok(all)
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
