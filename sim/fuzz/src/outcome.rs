//! What one input did: counters of the paths it reached and the errors it met, and the first
//! oracle it broke, if any. A campaign's [`Summary`] adds outcomes up.

use crashlab_engine::Error;
use crashlab_engine::FormatError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which oracle an input broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The engine panicked (caught by `catch_unwind`).
    Panic,
    /// An error that a damaged file cannot cause (a misuse error such as `InvalidOptions`).
    UnexpectedError,
    /// A `Corrupted` error that names a page the file cannot have.
    ErrorNamesNoPage,
    /// A cursor returned more items than the file can hold: it is going round in circles.
    CursorRunaway,
    /// `check()` found nothing wrong, yet reading the file failed or disagreed with itself.
    CleanReadFailed,
    /// A commit returned Ok on a clean file and left a file that `check()` finds damaged, or
    /// that no longer opens.
    CommitCorrupted,
    /// A commit returned Ok on a clean file, and the file does not hold exactly the committed
    /// data.
    CommitLostData,
    /// A commit returned Ok on a damaged file and left it worse: more problems, or unopenable.
    CommitMadeWorse,
    /// A commit returned Ok on a damaged file, and its put cannot be read back.
    CommitLostPut,
    /// The worker's live heap passed the input's cap (the allocator refused and it aborted).
    MemoryCap,
    /// The input ran past its deadline; the watchdog killed the worker.
    Timeout,
    /// The worker died another way (a stack overflow, a signal, an abort).
    Crash,
}

impl FailureKind {
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .expect("a unit variant serialises as its name")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    /// The pipeline stage it happened in.
    pub stage: String,
    pub detail: String,
}

impl Failure {
    pub fn new(kind: FailureKind, stage: &str, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            stage: stage.to_owned(),
            detail: detail.into(),
        }
    }

    /// The failure with numbers blanked: failures of one class share it, so a campaign saves a
    /// few inputs per class instead of thousands of one.
    pub fn signature(&self) -> String {
        let detail: String = self.detail.chars().take(160).collect();
        let mut s = format!("{} in {}: ", self.kind.name(), self.stage);
        let mut token = String::new();
        for c in detail.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() {
                token.push(c);
                continue;
            }
            s.push_str(blank_number(&token));
            token.clear();
            s.push(c);
        }
        s.pop();
        s
    }
}

/// `N` for a number (decimal, or hex with at least one digit: `0x1f`, `6b6579`), else the
/// token itself.
fn blank_number(token: &str) -> &str {
    let body = token.strip_prefix("0x").unwrap_or(token);
    let hex = !body.is_empty() && body.chars().all(|c| c.is_ascii_hexdigit());
    if hex && body.chars().any(|c| c.is_ascii_digit()) {
        "N"
    } else {
        token
    }
}

/// Named counters: paths reached ("commit-ok-damaged"), errors met ("error:Corrupted"),
/// mutations applied ("mutation:meta-field").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts(pub BTreeMap<String, u64>);

impl Counts {
    pub fn bump(&mut self, name: &str) {
        self.add(name, 1);
    }

    pub fn add(&mut self, name: &str, n: u64) {
        *self.0.entry(name.to_owned()).or_insert(0) += n;
    }

    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn merge(&mut self, other: &Counts) {
        for (k, v) in &other.0 {
            self.add(k, *v);
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub counts: Counts,
    pub failure: Option<Failure>,
    /// The writes the input made, when it failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<crate::plan::PlanText>,
}

/// The variant name of an engine error (`Corrupted`, `NoValidMeta`, `Latched`, ...: a format
/// error is named by its own variant), read from its `Debug` form so a variant added to the
/// engine or the format is named without a change here.
pub fn error_kind(e: &Error) -> String {
    match e {
        Error::Format(f) => variant_name(f),
        e => variant_name(e),
    }
}

fn variant_name(e: &dyn std::fmt::Debug) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or("")
        .to_owned()
}

/// Errors that say the caller misused the API: a damaged file cannot cause them, so meeting one
/// means the engine (or this harness) took a wrong turn.
const MISUSE: [&str; 8] = [
    "InvalidOptions",
    "TxNotWritable",
    "KeyRequired",
    "KeyTooLarge",
    "ValueTooLarge",
    "BucketNameRequired",
    "MalformedBatch",
    "BatchCommitFailed",
];

/// Count `e` (and a `NoValidMeta`'s two reasons) and judge it: `Some` when it breaks an oracle.
/// `pages` is the most pages the file can have (its length over the smallest page size).
pub fn judge_error(e: &Error, stage: &str, pages: u64, counts: &mut Counts) -> Option<Failure> {
    let kind = error_kind(e);
    counts.bump(&format!("error:{kind}"));
    if let Error::Format(FormatError::NoValidMeta { meta0, meta1 }) = e {
        for m in [meta0, meta1] {
            counts.bump(&format!("meta-slot:{}", variant_name(m)));
        }
    }
    if MISUSE.contains(&kind.as_str()) {
        let detail = format!("{kind}: {e}");
        return Some(Failure::new(FailureKind::UnexpectedError, stage, detail));
    }
    if let Error::Format(FormatError::Corrupted { page, .. }) = e {
        if page.0 >= pages.max(2) {
            let detail = format!("names page {page} of a file of at most {pages} pages: {e}");
            return Some(Failure::new(FailureKind::ErrorNamesNoPage, stage, detail));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crashlab_engine::PageId;

    #[test]
    fn error_kinds_come_from_the_variant() {
        assert_eq!(error_kind(&Error::BucketNotFound), "BucketNotFound");
        assert_eq!(error_kind(&Error::Latched("x".into())), "Latched");
        let t = Error::Format(FormatError::Truncated { len: 1, needed: 2 });
        assert_eq!(error_kind(&t), "Truncated");
    }

    #[test]
    fn judging() {
        let mut c = Counts::default();
        assert!(judge_error(
            &Error::Format(FormatError::Truncated { len: 1, needed: 2 }),
            "open",
            8,
            &mut c
        )
        .is_none());
        let misuse = Error::InvalidOptions("x".into());
        let f = judge_error(&misuse, "open", 8, &mut c).unwrap();
        assert_eq!(f.kind, FailureKind::UnexpectedError);
        let meta = FormatError::ChecksumMismatch {
            page: PageId(0),
            stored: 0,
            computed: 1,
        };
        let nvm = Error::Format(FormatError::NoValidMeta {
            meta0: Box::new(meta),
            meta1: Box::new(FormatError::Truncated { len: 1, needed: 2 }),
        });
        assert!(judge_error(&nvm, "open", 8, &mut c).is_none());
        assert_eq!(c.get("error:Truncated"), 1);
        assert_eq!(c.get("meta-slot:ChecksumMismatch"), 1);
        assert_eq!(c.get("error:NoValidMeta"), 1);
    }

    #[test]
    fn signatures_blank_numbers() {
        let a = Failure::new(FailureKind::Panic, "commit", "node.rs:199: at element 10");
        let b = Failure::new(FailureKind::Panic, "commit", "node.rs:199: at element 7");
        assert_eq!(a.signature(), b.signature());
        assert_eq!(a.signature(), "panic in commit: node.rs:N: at element N");
        let c = Failure::new(
            FailureKind::Panic,
            "x",
            "flags 0xed12, key 6b65 and dead beef",
        );
        assert_eq!(c.signature(), "panic in x: flags N, key N and dead beef");
    }
}
