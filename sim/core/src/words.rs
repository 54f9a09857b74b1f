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
    // A set, not a scan of the words before: a malformed line may hold millions of words.
    let mut seen = std::collections::BTreeSet::new();
    for (k, v) in &all {
        if !seen.insert(*k) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_refuse_a_repeated_name_where_pairs_keep_it() {
        let line = "file=0 keep=1 file=2 keep=3";
        assert_eq!(pairs(line).map(|p| p.len()), Ok(4));
        assert_eq!(
            settings(line),
            Err("`file` is given twice, in `file=2`".to_string())
        );
        assert_eq!(settings("a=1 b=2"), Ok(vec![("a", "1"), ("b", "2")]));
        assert!(settings("a=1 b")
            .unwrap_err()
            .contains("expected `name=value`"));
    }
}
