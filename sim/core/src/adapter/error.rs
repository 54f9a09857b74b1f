//! How an engine answers: a commit's acknowledgement, and its errors by kind.

use crashlab_models::ModelError;
use std::fmt;

/// How a commit was acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ack {
    /// Promised durable: the oracle's `Durable`.
    Durable,
    /// Acknowledged without a durability promise (no sync, redb's `Durability::None`).
    Acknowledged,
}

/// What kind of failure an engine reported: the driver treats each differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An I/O error (a disk fault or the power going off): allowed, the application restarts.
    Io,
    /// A refusal the model also makes (missing bucket, existing bucket, ...).
    Refused(ModelError),
    /// Damage the engine found in what it read: on a valid database under non-corrupting faults,
    /// a violation.
    Corrupt,
    /// The engine refuses writes after an earlier failure until it is reopened (crashlab's
    /// latch): what it documents for a handle whose commit failed.
    Latched,
    /// The engine broke one of its own invariants in memory (a double free in its own merge code,
    /// say): always a bug, whatever the disk did.
    Invariant,
    /// Anything else.
    Other,
}

/// The words that open the message of damage an engine found in what it read.
pub const DAMAGE_ON_DISK: &str = "damage found on disk";

/// The words that open the message of an engine's broken in-memory invariant (crashlab's
/// engine writes them itself; an adapter of another engine writes them for its own).
pub const INVARIANT_IN_MEMORY: &str = "engine invariant broken in memory";

/// An engine's error, with the engine's own message kept verbatim (it goes into the trace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub message: String,
}

impl EngineError {
    pub fn is_io(&self) -> bool {
        self.kind == ErrorKind::Io
    }

    pub fn other(message: impl Into<String>) -> EngineError {
        EngineError {
            kind: ErrorKind::Other,
            message: message.into(),
        }
    }

    /// The message with its class first, so that a report never confuses a bug in the engine's
    /// memory with a damaged file: `damage found on disk: corrupted page 15: ...` for damage
    /// the engine read, the engine's own `engine invariant broken in memory: ...` for a broken
    /// invariant (a batch's shared commit carries the invariant's words in its message), the
    /// message as it is otherwise.
    pub fn classified(&self) -> String {
        match self.kind {
            ErrorKind::Corrupt => format!("{DAMAGE_ON_DISK}: {}", self.message),
            _ => self.message.clone(),
        }
    }

    /// A refusal the model also makes, if this is one.
    pub fn refusal(&self) -> Option<ModelError> {
        match self.kind {
            ErrorKind::Refused(m) => Some(m),
            _ => None,
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
