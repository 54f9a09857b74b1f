//! The structured event log of one run, for reports a person reads (`crashlab repro --html`):
//! every operation with its result, every commit and how it ended, every fault the disk
//! injected and where, every power cut with the fate of each pending sector, every judged
//! recovery with the states the oracle allowed, and each group of concurrent callers call by
//! call.
//!
//! The log is off by default: the driver keeps one only when asked ([`crate::runner::run_logged`]),
//! so a sweep pays one branch per event and no allocation. It never feeds the trace hash: a
//! logged run is the same run, event for event.

use crate::disk::FaultEvent;
use crashlab_models::KvModel;
use std::sync::Arc;

/// Everything the log recorded, in order.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub events: Vec<Event>,
    /// Every trace line of the run (the text trace, whole): a line at position `seq` came
    /// right after the events whose `seq` it is.
    pub lines: Vec<String>,
}

/// One event, stamped with where the run was.
#[derive(Clone, Debug)]
pub struct Event {
    /// Trace lines recorded before this event: its place among [`EventLog::lines`].
    pub seq: u64,
    /// The operation running (or last run), by index.
    pub op: usize,
    /// The disk's simulated time.
    pub sim_time_ns: u64,
    /// Sectors written and not yet synced.
    pub pending_sectors: u64,
    pub what: What,
}

#[derive(Clone, Debug)]
pub enum What {
    /// Operation `index` of the workload ran; `failed`: its result is an error.
    Op {
        index: usize,
        op: String,
        result: String,
        failed: bool,
    },
    /// A commit producing state `S[state]` ended.
    Commit {
        state: usize,
        outcome: CommitEnd,
    },
    /// The disk injected a fault.
    Fault(FaultEvent),
    PowerCut(PowerCut),
    Recovery(Box<Recovery>),
    Group(GroupLanes),
}

/// How a commit ended, as the durability oracle records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitEnd {
    Durable,
    Acknowledged,
    Failed,
}

impl From<crashlab_models::CommitOutcome> for CommitEnd {
    fn from(o: crashlab_models::CommitOutcome) -> CommitEnd {
        match o {
            crashlab_models::CommitOutcome::Durable => CommitEnd::Durable,
            crashlab_models::CommitOutcome::Acknowledged => CommitEnd::Acknowledged,
            crashlab_models::CommitOutcome::Failed => CommitEnd::Failed,
        }
    }
}

impl CommitEnd {
    pub fn name(self) -> &'static str {
        match self {
            CommitEnd::Durable => "durable",
            CommitEnd::Acknowledged => "acknowledged",
            CommitEnd::Failed => "failed",
        }
    }
}

/// What a pending sector became at a power cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// The durable image now holds the sector's new bytes.
    Survived,
    /// The durable image still holds its old bytes (or it fell past the durable length).
    Lost,
    /// Part new, part old: a sub-sector tear.
    Torn,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Survived => "survived",
            Fate::Lost => "lost",
            Fate::Torn => "torn",
        }
    }
}

/// A power cut: each pending sector and its fate, and the image the engine saw just before
/// (pending over durable), for decoding which page each sector belongs to.
#[derive(Clone, Debug)]
pub struct PowerCut {
    pub sector_size: u64,
    /// Pending sectors, ascending by index.
    pub sectors: Vec<(u64, Fate)>,
    /// What reads saw just before the cut.
    pub image_before: Arc<Vec<u8>>,
    /// The durable image the cut left.
    pub image_after: Arc<Vec<u8>>,
}

/// A judged recovery: what was read back and what the oracle allowed.
#[derive(Clone, Debug)]
pub struct Recovery {
    pub after_power_cut: bool,
    /// Lowest and highest chain index allowed, with each allowed state.
    pub allowed: (usize, usize),
    pub allowed_states: Vec<KvModel>,
    pub observed: KvModel,
    /// The allowed state found, if any.
    pub found: Option<usize>,
    /// The engine's integrity check: its problems, or why it could not run.
    pub problems: Result<Vec<String>, String>,
}

/// One group of concurrent callers: each call with its caller, and each commit with its calls.
#[derive(Clone, Debug)]
pub struct GroupLanes {
    pub callers: u32,
    pub calls: Vec<CallRow>,
    /// The calls each commit held, in commit order, and how it ended; no end when the lanes
    /// show a pinned schedule's batches rather than a run's commits (a checker's page).
    pub commits: Vec<(Vec<usize>, Option<CommitEnd>)>,
}

#[derive(Clone, Debug)]
pub struct CallRow {
    pub caller: u32,
    pub ops: Vec<String>,
    pub fails: bool,
    /// What the caller was told (`Committed`, `OwnError`, ...); empty if unanswered.
    pub answer: String,
}

/// Whether an operation's result (as the trace shows it) is a failure: a failed commit, a
/// group whose commit failed, an I/O error.
pub fn result_failed(result: &str) -> bool {
    result.starts_with("failed")
        || result.starts_with("io error")
        || result.contains("a commit failed:")
}

/// The fate of each sector of `pending` (ascending indexes of `sector_size` bytes), from the
/// image before a cut (`before`: pending over durable), the durable image before it and the
/// durable image after it.
pub fn sector_fates(
    pending: &[u64],
    sector_size: u64,
    before: &[u8],
    durable_before: &[u8],
    after: &[u8],
) -> Vec<(u64, Fate)> {
    let slice = |img: &'_ [u8], s: u64| -> Vec<u8> {
        let start = usize::try_from(s * sector_size).unwrap_or(usize::MAX);
        let end = usize::try_from((s + 1) * sector_size).unwrap_or(usize::MAX);
        img.get(start.min(img.len())..end.min(img.len()))
            .unwrap_or_default()
            .to_vec()
    };
    pending
        .iter()
        .map(|&s| {
            let (new, old, now) = (slice(before, s), slice(durable_before, s), slice(after, s));
            let fate = if now == new {
                Fate::Survived
            } else if now == old || now.is_empty() {
                Fate::Lost
            } else {
                Fate::Torn
            };
            (s, fate)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fates_tell_new_old_and_mixed_bytes_apart() {
        let before = [1u8, 1, 2, 2, 3, 3];
        let durable = [0u8, 0, 0, 0, 0, 0];
        let after = [1u8, 1, 0, 0, 3, 0];
        let f = sector_fates(&[0, 1, 2], 2, &before, &durable, &after);
        assert_eq!(
            f,
            vec![(0, Fate::Survived), (1, Fate::Lost), (2, Fate::Torn)]
        );
        // A sector past the durable length after the cut is lost with the length.
        let f = sector_fates(&[2], 2, &before, &durable, &after[..4]);
        assert_eq!(f, vec![(2, Fate::Lost)]);
    }
}
