//! Reading a case file's lines: `key = value` fields, then the listed operations, with every
//! count and length held to its limit (`crate::limits`) as it is read, before anything is
//! generated or allocated from it.

use crate::limits::{at_most, CHECK_OPS_MAX, OPS_MAX, PUT_BYTES_PER_CASE_MAX};
use crate::op::Op;

/// A case file split into its `key = value` fields and its listed operations, each with its
/// line number; counts and lengths already held to their limits.
pub(super) struct Lines {
    pub(super) fields: Vec<(usize, String, String)>,
    pub(super) ops: Option<Vec<Op>>,
    /// The line of each listed operation, for errors found once the engine is known.
    pub(super) op_lines: Vec<usize>,
    /// Most operations this case may run: [`CHECK_OPS_MAX`] when the checker replays it.
    pub(super) ops_max: usize,
}

impl Lines {
    pub(super) fn read(text: &str, for_check: bool) -> Result<Lines, (usize, String)> {
        let mut lines = Lines {
            fields: Vec::new(),
            ops: None,
            op_lines: Vec::new(),
            ops_max: OPS_MAX,
        };
        let mut put_bytes = 0u64;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if let Some(list) = lines.ops.as_mut() {
                let op = line.parse::<Op>().map_err(|m| (n, m))?;
                if list.len() == lines.ops_max {
                    let m = format!("operation {} {}", list.len() + 1, limit(lines.ops_max));
                    return Err((n, m));
                }
                if let Op::Put { len, .. } = op {
                    put_bytes += u64::from(len);
                    let what = "the puts listed up to here write";
                    at_most(
                        what,
                        put_bytes,
                        PUT_BYTES_PER_CASE_MAX,
                        "PUT_BYTES_PER_CASE_MAX",
                    )
                    .map_err(|m| (n, format!("{m}: each value is built in memory")))?;
                }
                list.push(op);
                lines.op_lines.push(n);
            } else if line == "[ops]" {
                lines.ops = Some(Vec::new());
            } else {
                let (k, v) = line.split_once('=').ok_or_else(|| {
                    let m = format!("expected `key = value` or `[ops]`, found `{line}`");
                    (n, m)
                })?;
                lines
                    .fields
                    .push((n, k.trim().to_string(), v.trim().to_string()));
                // Every field precedes `[ops]`, so the limit is known before the list starts.
                if for_check || k.trim() == "check" || k.trim() == "crash-state" {
                    lines.ops_max = CHECK_OPS_MAX;
                }
            }
        }
        Ok(lines)
    }
}

/// "is more than the limit of `max` (its name): why", for an operation count.
fn limit(max: usize) -> String {
    let (name, why) = if max == CHECK_OPS_MAX {
        ("CHECK_OPS_MAX", "the crash-state checker replays this case")
    } else {
        ("OPS_MAX", "a run holds every operation in memory")
    };
    format!("is more than the limit of {max} operations ({name}): {why}")
}

/// The `N` of `ops = N`: at least 1, at most `max`.
pub(super) fn op_count(v: &str, max: usize) -> Result<usize, String> {
    let count = v
        .parse::<u64>()
        .map_err(|_| format!("expected a number of ops (1 to {max}), found `{v}`"))?;
    if count == 0 {
        return Err("ops = 0: a case runs at least 1 operation".into());
    }
    match usize::try_from(count) {
        Ok(c) if c <= max => Ok(c),
        _ => Err(format!("ops = {count} {}", limit(max))),
    }
}
