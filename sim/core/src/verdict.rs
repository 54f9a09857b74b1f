//! What a run or a crash state is judged to be: typed verdicts, shared by the seeded runner and
//! the crash-state checker.

use std::fmt;

/// What the engine was doing when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum During {
    Create,
    Open,
    /// Reading the whole database after a recovery.
    RecoveryRead,
    /// Opening a crash image in the checker (open, read whole, check).
    Recovery,
    Begin,
    BeginReader,
    Write,
    Get,
    Scan,
    Reader,
    BackgroundReader,
    Close,
    Check,
}

impl During {
    pub fn name(self) -> &'static str {
        match self {
            During::Create => "create",
            During::Open => "open",
            During::RecoveryRead => "recovery read",
            During::Recovery => "corrupt",
            During::Begin => "begin",
            During::BeginReader => "begin reader",
            During::Write => "write",
            During::Get => "get",
            During::Scan => "scan",
            During::Reader => "reader",
            During::BackgroundReader => "background reader",
            During::Close => "close",
            During::Check => "check",
        }
    }
}

/// The kind of a violation: a broken promise of the engine under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The recovered state is none the durability oracle allows.
    Durability,
    /// An answer differs from the model's.
    ModelMismatch,
    /// The engine's own integrity check found problems in the file.
    IntegrityCheck,
    /// A reader's snapshot changed while it was open.
    SnapshotMoved,
    /// A commit failed with an error other than an I/O error on a valid database (no fault
    /// makes a valid database refuse a commit).
    CommitRefused,
    /// After a failed commit the engine accepted a write on the same handle, or wrote to the
    /// disk, although it documents that it latches until reopened.
    Latch,
    /// The engine panicked.
    Panic,
    /// A bit flipped inside a range the engine covers by a checksum changed what opening the
    /// file gives, where the range lost (zeroed) gives something else: the checksum missed it.
    ChecksumProbe,
    /// The engine failed with an error that is neither an I/O error nor a refusal the model also
    /// makes, while doing this.
    Failed(During),
}

impl Verdict {
    /// The verdict's name in reports and traces.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Durability => "durability",
            Verdict::ModelMismatch => "model mismatch",
            Verdict::IntegrityCheck => "check",
            Verdict::SnapshotMoved => "reader snapshot",
            Verdict::CommitRefused => "commit",
            Verdict::Latch => "latch",
            Verdict::Panic => "panic",
            Verdict::ChecksumProbe => "checksum probe",
            Verdict::Failed(d) => d.name(),
        }
    }
}

impl Verdict {
    /// Whether a disk that corrupted bytes on purpose may explain this verdict. A panic never is,
    /// and neither is the checksum probe's: it compares two opens of the same file, so what
    /// the disk did to the rest of the file is in both. Nor is the latch's: it is the handle's
    /// state in memory, and a latched engine reads nothing from the disk to refuse a write.
    pub fn disk_may_explain(self) -> bool {
        !matches!(
            self,
            Verdict::Panic | Verdict::ChecksumProbe | Verdict::Latch
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A violation: what was found, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the operation during or after which it was found.
    pub op_index: usize,
    pub verdict: Verdict,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at op {}: {}",
            self.verdict, self.op_index, self.detail
        )
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Violation(Violation),
    /// The disk lost data the engine cannot get back (e.g. a latent sector error under the
    /// meta page) and the engine said so with an I/O error; reported, not a violation.
    DiskFailure(String),
}

impl Outcome {
    pub fn is_violation(&self) -> bool {
        matches!(self, Outcome::Violation(_))
    }
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Violation(Violation),
    DiskFailure(String),
}

impl Stop {
    pub fn into_outcome(self) -> Outcome {
        match self {
            Stop::Violation(v) => Outcome::Violation(v),
            Stop::DiskFailure(s) => Outcome::DiskFailure(s),
        }
    }
}
