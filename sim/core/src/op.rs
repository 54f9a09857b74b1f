//! The operations a simulated workload performs, and their one-line text form used by case
//! files and traces.
//!
//! ```text
//! create a/b            delete-bucket a/b        put a k7 len=300 v=12
//! delete a k7           get a k7                 scan a
//! commit   rollback   begin-reader   end-reader 2   reopen   crash   power-cut-in 4
//! group callers=5 seed=812    group callers=16 calls=8 seed=3
//! range a from=k3 to=k9       range a/b to=k5 rev limit=2      range a from=k7 limit=1
//! next-seq a    set-seq a 17    check
//! ```
//! Names (bucket path components and keys) print as themselves when they are plain
//! `[A-Za-z0-9_.-]` text, otherwise as `0x` + hex. A put's value is derived from the key, the
//! length and the version `v`, so the text names it exactly.

use crate::limits::{
    at_most, CALLERS_MAX, CALLS_PER_CALLER_MAX, NAME_LEN_MAX, PATH_DEPTH_MAX,
    POWER_CUT_IN_CALLS_MAX, PUT_LEN_MAX, READER_INDEX_MAX,
};
use crate::schedule::Schedule;
use std::fmt;

/// One name: a bucket path component or a key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(pub Vec<u8>);

/// Bucket path, top level first.
pub type Path = Vec<Name>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    CreateBucket(Path),
    DeleteBucket(Path),
    Put {
        path: Path,
        key: Name,
        len: u32,
        version: u32,
    },
    Delete {
        path: Path,
        key: Name,
    },
    Get {
        path: Path,
        key: Name,
    },
    Scan {
        path: Path,
    },
    /// Part of a bucket through a cursor: seek, first, last, next and prev.
    Range {
        path: Path,
        range: KeyRange,
    },
    /// Increment a bucket's sequence; the value returned is compared with the model's.
    NextSequence {
        path: Path,
    },
    SetSequence {
        path: Path,
        value: u64,
    },
    /// The engine's integrity check and a whole-state comparison with the model, on the live
    /// database: what a leak or a double allocation that the next open would heal looks like
    /// while the process lives.
    Check,
    Commit,
    Rollback,
    BeginReader,
    EndReader(u32),
    /// Close and open the database; the process restarted, the page cache survived.
    Reopen,
    /// Power cut: unsynced sectors are lost, torn or kept; then reopen.
    Crash,
    /// Arm a power cut after this many more storage calls: it lands inside whatever is running
    /// then (typically a commit), between two writes or between a write and its sync.
    PowerCutIn(u32),
    /// Concurrent callers, each submitting `calls` calls one after another (a write batch or a
    /// batch function of a few puts and deletes, some failing by design) through the engine's
    /// coalescer, thinking a seeded simulated time before each; what each call holds is drawn
    /// from `seed` (see `calls.rs`).
    Group {
        callers: u32,
        calls: u32,
        seed: u32,
        /// The batches the calls commit in, pinned (the checker visits each schedule); `None`:
        /// timing decides.
        schedule: Option<Schedule>,
    },
}

/// Keys `from ≤ k < to` of a bucket (an absent end is open), ascending or, with `reverse`,
/// descending, at most `limit` of them. A cursor reads it: a seek to `from` (a present or absent
/// key) or `first`, then `next`; reversed, a seek to `to` then `prev`, or `last`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyRange {
    pub from: Option<Name>,
    pub to: Option<Name>,
    pub reverse: bool,
    pub limit: Option<u32>,
}

impl KeyRange {
    pub fn contains(&self, key: &[u8]) -> bool {
        self.from.as_ref().is_none_or(|f| key >= f.0.as_slice())
            && self.to.as_ref().is_none_or(|t| key < t.0.as_slice())
    }

    /// The items of a bucket's listing (in key order) this range reads, in its order.
    pub fn select<T: Clone>(&self, listing: &[(Vec<u8>, T)]) -> Vec<(Vec<u8>, T)> {
        let inside = listing.iter().filter(|(k, _)| self.contains(k)).cloned();
        let limit = self.limit.map_or(usize::MAX, |l| l as usize);
        if self.reverse {
            let mut all: Vec<_> = inside.collect();
            all.reverse();
            all.truncate(limit);
            all
        } else {
            inside.take(limit).collect()
        }
    }
}

impl fmt::Display for KeyRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(k) = &self.from {
            write!(f, " from={k}")?;
        }
        if let Some(k) = &self.to {
            write!(f, " to={k}")?;
        }
        if self.reverse {
            f.write_str(" rev")?;
        }
        if let Some(l) = self.limit {
            write!(f, " limit={l}")?;
        }
        Ok(())
    }
}

impl KeyRange {
    /// The words after a range's path, each optional but in this order: `from=K to=K rev
    /// limit=N`.
    fn parse(words: &[&str]) -> Result<KeyRange, String> {
        let mut r = KeyRange::default();
        let mut rest = words;
        if let Some(k) = rest.first().and_then(|w| w.strip_prefix("from=")) {
            r.from = Some(Name::parse(k)?);
            rest = &rest[1..];
        }
        if let Some(k) = rest.first().and_then(|w| w.strip_prefix("to=")) {
            r.to = Some(Name::parse(k)?);
            rest = &rest[1..];
        }
        if rest.first() == Some(&"rev") {
            r.reverse = true;
            rest = &rest[1..];
        }
        if let Some(w) = rest.first().filter(|w| w.starts_with("limit=")) {
            r.limit = Some(field(w, "limit")?);
            rest = &rest[1..];
        }
        match rest.first() {
            None => Ok(r),
            Some(w) => Err(format!(
                "unexpected `{w}` in a range (expected, in order: from=KEY to=KEY rev limit=N)"
            )),
        }
    }
}

/// The bytes a put writes: byte `i` is bits 3 to 10 of `seed + 31 i` (wrapping `u32`s), `seed`
/// a hash of the key and version.
pub fn value_bytes(key: &Name, len: u32, version: u32) -> Vec<u8> {
    let seed = key
        .0
        .iter()
        .fold(version.wrapping_mul(2_654_435_761), |h, &b| {
            h.rotate_left(5) ^ u32::from(b)
        });
    // Those bits of a sum depend on the low 16 bits of its terms alone, so the sum is taken in
    // `u16`s, which the compiler does eight or sixteen at a time: every put builds its value
    // twice (for the model and for the engine), a few hundred bytes on average.
    // Collected from a range rather than written over a zeroed vector: the allocator's zeroing
    // was a second pass over every value.
    let seed = seed as u16;
    (0..len as usize)
        .map(|i| (seed.wrapping_add((i as u16).wrapping_mul(31)) >> 3) as u8)
        .collect()
}

impl Name {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Name {
        Name(bytes.into())
    }

    fn plain(&self) -> bool {
        !self.0.is_empty()
            && !self.0.starts_with(b"0x")
            && self
                .0
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b))
    }

    /// A name from its text form; at most [`NAME_LEN_MAX`] bytes, as the engine allows.
    pub fn parse(s: &str) -> Result<Name, String> {
        let name = if let Some(hex) = s.strip_prefix("0x") {
            if hex.is_empty() || hex.len() % 2 != 0 {
                return Err(format!(
                    "hex name `{s}` needs an even, non-zero number of digits"
                ));
            }
            let bytes = crashlab_format::inspect::unhex(hex)
                .ok_or_else(|| format!("`{s}` is not valid hex"))?;
            Name(bytes)
        } else {
            let n = Name(s.as_bytes().to_vec());
            if !n.plain() {
                return Err(format!("name `{s}` must be [A-Za-z0-9_.-]+ or 0x<hex>"));
            }
            n
        };
        at_most("name length", name.0.len(), NAME_LEN_MAX, "NAME_LEN_MAX")?;
        Ok(name)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.plain() {
            f.write_str(&String::from_utf8_lossy(&self.0))
        } else {
            // Two lowercase hex digits per byte, as `{b:02x}` writes them, without the
            // formatting machinery per byte (every operation's trace line names its key).
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            f.write_str("0x")?;
            for chunk in self.0.chunks(32) {
                let mut text = [0u8; 64];
                for (out, &b) in text.chunks_mut(2).zip(chunk) {
                    out[0] = DIGITS[usize::from(b >> 4)];
                    out[1] = DIGITS[usize::from(b & 0xf)];
                }
                let text =
                    std::str::from_utf8(&text[..2 * chunk.len()]).expect("hex digits are ASCII");
                f.write_str(text)?;
            }
            Ok(())
        }
    }
}

impl Op {
    /// The operation's name: its first word in text form.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::CreateBucket(_) => "create",
            Op::DeleteBucket(_) => "delete-bucket",
            Op::Put { .. } => "put",
            Op::Delete { .. } => "delete",
            Op::Get { .. } => "get",
            Op::Scan { .. } => "scan",
            Op::Range { .. } => "range",
            Op::NextSequence { .. } => "next-seq",
            Op::SetSequence { .. } => "set-seq",
            Op::Check => "check",
            Op::Commit => "commit",
            Op::Rollback => "rollback",
            Op::BeginReader => "begin-reader",
            Op::EndReader(_) => "end-reader",
            Op::Reopen => "reopen",
            Op::Crash => "crash",
            Op::PowerCutIn(_) => "power-cut-in",
            Op::Group { .. } => "group",
        }
    }

    /// The bucket path the operation names, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Op::CreateBucket(p)
            | Op::DeleteBucket(p)
            | Op::Scan { path: p }
            | Op::Range { path: p, .. }
            | Op::NextSequence { path: p }
            | Op::SetSequence { path: p, .. } => Some(p),
            Op::Put { path, .. } | Op::Delete { path, .. } | Op::Get { path, .. } => Some(path),
            _ => None,
        }
    }
}

pub fn path_to_string(p: &Path) -> String {
    PathText(p).to_string()
}

/// A bucket path as text, names joined by `/` ([`path_to_string`]'s text), written straight
/// into a formatter: the trace line of every operation names a path.
pub struct PathText<'a>(pub &'a [Name]);

impl fmt::Display for PathText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            // Straight to the name's own `fmt`: `write!` would run the formatting machinery
            // once more per name of every operation's trace line.
            fmt::Display::fmt(name, f)?;
        }
        Ok(())
    }
}

/// A bucket path, top level first: at most [`PATH_DEPTH_MAX`] names.
pub fn parse_path(s: &str) -> Result<Path, String> {
    let depth = s.split('/').count();
    at_most("bucket path depth", depth, PATH_DEPTH_MAX, "PATH_DEPTH_MAX")?;
    s.split('/').map(Name::parse).collect()
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::CreateBucket(p) => write!(f, "create {}", PathText(p)),
            Op::DeleteBucket(p) => write!(f, "delete-bucket {}", PathText(p)),
            Op::Put {
                path,
                key,
                len,
                version,
            } => {
                write!(f, "put {} {key} len={len} v={version}", PathText(path))
            }
            Op::Delete { path, key } => write!(f, "delete {} {key}", PathText(path)),
            Op::Get { path, key } => write!(f, "get {} {key}", PathText(path)),
            Op::Scan { path } => write!(f, "scan {}", PathText(path)),
            Op::Range { path, range } => write!(f, "range {}{range}", PathText(path)),
            Op::NextSequence { path } => write!(f, "next-seq {}", PathText(path)),
            Op::SetSequence { path, value } => {
                write!(f, "set-seq {} {value}", PathText(path))
            }
            Op::Check => f.write_str("check"),
            Op::Commit => f.write_str("commit"),
            Op::Rollback => f.write_str("rollback"),
            Op::BeginReader => f.write_str("begin-reader"),
            Op::EndReader(i) => write!(f, "end-reader {i}"),
            Op::Reopen => f.write_str("reopen"),
            Op::Crash => f.write_str("crash"),
            Op::PowerCutIn(n) => write!(f, "power-cut-in {n}"),
            Op::Group {
                callers,
                calls,
                seed,
                schedule,
            } => {
                write!(f, "group callers={callers}")?;
                if *calls != 1 {
                    write!(f, " calls={calls}")?;
                }
                write!(f, " seed={seed}")?;
                match schedule {
                    Some(s) => write!(f, " batches={s}"),
                    None => Ok(()),
                }
            }
        }
    }
}

fn field(s: &str, name: &str) -> Result<u32, String> {
    let v = s
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix('='))
        .ok_or_else(|| format!("expected `{name}=<number>`, found `{s}`"))?;
    number(v, name)
}

/// A decimal `u32`; a number too large for one is named as such, not as "not a number".
fn number(v: &str, name: &str) -> Result<u32, String> {
    v.parse().map_err(|_| {
        if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            format!("`{v}` is too large for `{name}` (at most {})", u32::MAX)
        } else {
            format!("`{v}` is not a number for `{name}`")
        }
    })
}

/// Every operation's name, as a case file spells it (the first word of its line).
pub const OP_NAMES: [&str; 18] = [
    "create",
    "delete-bucket",
    "put",
    "delete",
    "get",
    "scan",
    "range",
    "next-seq",
    "set-seq",
    "check",
    "commit",
    "rollback",
    "begin-reader",
    "end-reader",
    "reopen",
    "crash",
    "power-cut-in",
    "group",
];

impl std::str::FromStr for Op {
    type Err = String;

    fn from_str(line: &str) -> Result<Op, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let want = |n: usize, usage: &str| {
            if words.len() == n {
                Ok(())
            } else {
                Err(format!("expected `{usage}`, found `{line}`"))
            }
        };
        match words.first().copied() {
            Some("create") => {
                want(2, "create PATH")?;
                Ok(Op::CreateBucket(parse_path(words[1])?))
            }
            Some("delete-bucket") => {
                want(2, "delete-bucket PATH")?;
                Ok(Op::DeleteBucket(parse_path(words[1])?))
            }
            Some("put") => {
                want(5, "put PATH KEY len=N v=N")?;
                let len = field(words[3], "len")?;
                Ok(Op::Put {
                    path: parse_path(words[1])?,
                    key: Name::parse(words[2])?,
                    len: at_most("len", len, PUT_LEN_MAX, "PUT_LEN_MAX")
                        .map_err(|m| format!("{m}: a put's value is built in memory"))?,
                    version: field(words[4], "v")?,
                })
            }
            Some("delete") => {
                want(3, "delete PATH KEY")?;
                Ok(Op::Delete {
                    path: parse_path(words[1])?,
                    key: Name::parse(words[2])?,
                })
            }
            Some("get") => {
                want(3, "get PATH KEY")?;
                Ok(Op::Get {
                    path: parse_path(words[1])?,
                    key: Name::parse(words[2])?,
                })
            }
            Some("scan") => {
                want(2, "scan PATH")?;
                Ok(Op::Scan {
                    path: parse_path(words[1])?,
                })
            }
            Some("range") if words.len() >= 2 => Ok(Op::Range {
                path: parse_path(words[1])?,
                range: KeyRange::parse(&words[2..])?,
            }),
            Some("range") => Err(format!(
                "expected `range PATH [from=KEY] [to=KEY] [rev] [limit=N]`, found `{line}`"
            )),
            Some("next-seq") => {
                want(2, "next-seq PATH")?;
                Ok(Op::NextSequence {
                    path: parse_path(words[1])?,
                })
            }
            Some("set-seq") => {
                want(3, "set-seq PATH N")?;
                let value = words[2]
                    .parse()
                    .map_err(|_| format!("`{}` is not a u64 for `set-seq`", words[2]))?;
                Ok(Op::SetSequence {
                    path: parse_path(words[1])?,
                    value,
                })
            }
            Some("check") => want(1, "check").map(|()| Op::Check),
            Some("commit") => want(1, "commit").map(|()| Op::Commit),
            Some("rollback") => want(1, "rollback").map(|()| Op::Rollback),
            Some("begin-reader") => want(1, "begin-reader").map(|()| Op::BeginReader),
            Some("end-reader") => {
                want(2, "end-reader N")?;
                let n = number(words[1], "end-reader")?;
                at_most("end-reader", n, READER_INDEX_MAX, "READER_INDEX_MAX").map(Op::EndReader)
            }
            Some("reopen") => want(1, "reopen").map(|()| Op::Reopen),
            Some("crash") => want(1, "crash").map(|()| Op::Crash),
            Some("power-cut-in") => {
                want(2, "power-cut-in N")?;
                let n = number(words[1], "power-cut-in")?;
                at_most(
                    "power-cut-in",
                    n,
                    POWER_CUT_IN_CALLS_MAX,
                    "POWER_CUT_IN_CALLS_MAX",
                )
                .map(Op::PowerCutIn)
            }
            Some("group") => {
                // An optional `batches=S` comes last.
                let (words, schedule) = match words.split_last() {
                    Some((w, rest)) if rest.len() >= 3 && w.starts_with("batches=") => {
                        (rest, Some(w["batches=".len()..].parse::<Schedule>()?))
                    }
                    _ => (&words[..], None),
                };
                let (callers, calls, seed) = match words.len() {
                    3 => (words[1], None, words[2]),
                    4 => (words[1], Some(words[2]), words[3]),
                    _ => {
                        return Err(format!(
                            "expected `group callers=N [calls=N] seed=N [batches=S]`, found \
                             `{line}`"
                        ))
                    }
                };
                let callers = at_most(
                    "callers",
                    field(callers, "callers")?,
                    CALLERS_MAX,
                    "CALLERS_MAX",
                )?;
                let calls = match calls {
                    Some(c) => at_most(
                        "calls",
                        field(c, "calls")?,
                        CALLS_PER_CALLER_MAX,
                        "CALLS_PER_CALLER_MAX",
                    )?,
                    None => 1,
                };
                if callers == 0 || calls == 0 {
                    return Err(format!(
                        "a group needs at least one caller and one call: `{line}`"
                    ));
                }
                if let Some(s) = &schedule {
                    s.fits(callers, calls, 0)
                        .map_err(|why| format!("`{line}`: the schedule does not fit: {why}"))?;
                }
                Ok(Op::Group {
                    callers,
                    calls,
                    seed: field(seed, "seed")?,
                    schedule,
                })
            }
            _ => {
                let (last, rest) = OP_NAMES.split_last().expect("operations have names");
                let rest = rest.join(", ");
                Err(format!(
                    "unknown operation `{line}` (expected {rest} or {last})"
                ))
            }
        }
    }
}

#[cfg(test)]
#[path = "op_tests.rs"]
mod tests;
