//! The durability oracle: which states may a database hold after a crash or a reopen?
//!
//! Commits form a chain of states `S[0..=n]`; `S[0]` is the state the chain started from (the
//! database as last recovered, which is durable). Each commit appends a state when its writes
//! start. Then:
//!
//! - after a **power cut**, the recovered state must be one of `S[a..=b]`, where `a` is the last
//!   commit acknowledged as durable and `b` the last commit whose writes started. A commit that
//!   returned an error may or may not be visible, never partially. Nothing never attempted is
//!   visible.
//! - after a **reopen** (process restart; the page cache survives), the state must be one of
//!   `S[c..=b]`, where `c` is the last acknowledged commit, durable or not.
//!
//! A failed commit's state stays in the chain when the application carries on without reopening:
//! until a later commit is durable (after a power cut) or acknowledged (after a reopen) it may
//! still be what the disk holds.
//!
//! Whatever state is observed becomes the chain's new end: later states are gone. After a power
//! cut it is also the new durable floor; after a reopen the floor stays where it was.
//! A reader sees one snapshot for its whole life (the runner checks that with the model it
//! captured when the reader began).

use crate::kv::KvModel;
use std::sync::Arc;

/// How a commit ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitOutcome {
    /// Acknowledged and synced: must survive a power cut.
    Durable,
    /// Acknowledged without a sync (`no_sync`): survives a process restart only.
    Acknowledged,
    /// Returned an error: may or may not be visible.
    Failed,
}

/// Why a recovered state was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Lowest and highest chain index allowed.
    pub allowed: (usize, usize),
    /// The chain length (states known), for the message.
    pub chain: usize,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "recovered state is none of the allowed commit states S[{}..={}] (chain of {})",
            self.allowed.0, self.allowed.1, self.chain
        )
    }
}

/// The chain's states are shared (`Arc`), not copied: the driver hands the last acknowledged
/// state to a new transaction, to every reader that begins and to the background tasks after
/// every commit, and a copy of the whole model for each of those was most of a run's time.
#[derive(Clone, Debug)]
pub struct DurabilityOracle {
    states: Vec<Arc<KvModel>>,
    /// Index of the last state that must survive a power cut.
    durable: usize,
    /// Index of the last acknowledged state (durable or not).
    acknowledged: usize,
    /// A commit began and has not ended.
    running: bool,
}

impl DurabilityOracle {
    pub fn new(initial: KvModel) -> DurabilityOracle {
        DurabilityOracle {
            states: vec![Arc::new(initial)],
            durable: 0,
            acknowledged: 0,
            running: false,
        }
    }

    /// The last acknowledged state: what a new transaction starts from.
    pub fn current(&self) -> &KvModel {
        &self.states[self.acknowledged]
    }

    /// [`DurabilityOracle::current`], shared: a holder that must keep seeing it (a reader, a
    /// transaction that has not written yet) clones the `Arc`, not the state.
    pub fn current_shared(&self) -> &Arc<KvModel> {
        &self.states[self.acknowledged]
    }

    /// A commit's writes are starting; it will produce `state`. Returns its index.
    pub fn begin_commit(&mut self, state: KvModel) -> usize {
        self.begin_commit_shared(Arc::new(state))
    }

    /// [`DurabilityOracle::begin_commit`] of a shared state (a transaction that wrote nothing
    /// commits the state it began on, still shared with the chain).
    pub fn begin_commit_shared(&mut self, state: Arc<KvModel>) -> usize {
        assert!(
            !self.running,
            "a commit starts only after the previous one ended"
        );
        self.running = true;
        self.states.push(state);
        self.states.len() - 1
    }

    pub fn end_commit(&mut self, index: usize, outcome: CommitOutcome) {
        assert_eq!(index + 1, self.states.len(), "only the newest commit ends");
        assert!(self.running, "a commit ends after it began");
        self.running = false;
        match outcome {
            CommitOutcome::Durable => {
                self.durable = index;
                self.acknowledged = index;
            }
            CommitOutcome::Acknowledged => self.acknowledged = index,
            CommitOutcome::Failed => {}
        }
    }

    /// A sync made every acknowledged commit durable without a new commit (redb's clean close
    /// does this for its non-durable commits): the durable floor rises to the last acknowledged
    /// state.
    pub fn acknowledged_made_durable(&mut self) {
        self.durable = self.acknowledged;
    }

    /// Indexes a power cut may leave.
    pub fn allowed_after_power_cut(&self) -> (usize, usize) {
        (self.durable, self.states.len() - 1)
    }

    /// Indexes a reopen without power loss may leave.
    pub fn allowed_after_reopen(&self) -> (usize, usize) {
        (self.acknowledged, self.states.len() - 1)
    }

    /// Check a state recovered after a power cut and make it the new durable base.
    pub fn recover_after_power_cut(&mut self, observed: &KvModel) -> Result<usize, Violation> {
        let range = self.allowed_after_power_cut();
        let i = self.find(observed, range)?;
        self.states.truncate(i + 1);
        self.running = false;
        self.durable = i;
        self.acknowledged = i;
        Ok(i)
    }

    /// Check a state recovered by a reopen (no power loss) and make it the chain's end.
    pub fn recover_after_reopen(&mut self, observed: &KvModel) -> Result<usize, Violation> {
        let range = self.allowed_after_reopen();
        let i = self.find(observed, range)?;
        self.states.truncate(i + 1);
        self.running = false;
        self.acknowledged = i;
        debug_assert!(self.durable <= i);
        Ok(i)
    }

    /// Newest matching index first: after a failed commit both may match only if equal.
    fn find(&self, observed: &KvModel, (lo, hi): (usize, usize)) -> Result<usize, Violation> {
        (lo..=hi)
            .rev()
            .find(|&i| *self.states[i] == *observed)
            .ok_or(Violation {
                allowed: (lo, hi),
                chain: self.states.len(),
            })
    }

    pub fn state(&self, index: usize) -> &KvModel {
        &self.states[index]
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(keys: &[&str]) -> KvModel {
        let mut m = KvModel::new();
        let path = vec![b"b".to_vec()];
        m.create_bucket(&path).unwrap();
        for k in keys {
            m.put(&path, k.as_bytes(), b"v").unwrap();
        }
        m
    }

    #[test]
    fn power_cut_allows_from_last_durable_to_last_attempted() {
        let mut o = DurabilityOracle::new(state(&[]));
        let i1 = o.begin_commit(state(&["a"]));
        o.end_commit(i1, CommitOutcome::Durable);
        let i2 = o.begin_commit(state(&["a", "b"]));
        o.end_commit(i2, CommitOutcome::Failed);
        assert_eq!(o.allowed_after_power_cut(), (1, 2));
        // The initial state is older than the durable floor: a violation.
        let err = o.clone().recover_after_power_cut(&state(&[])).unwrap_err();
        assert_eq!(err.allowed, (1, 2));
        // The failed commit may be visible.
        assert_eq!(
            o.clone().recover_after_power_cut(&state(&["a", "b"])),
            Ok(2)
        );
        // A partial transaction never is.
        assert!(o.clone().recover_after_power_cut(&state(&["b"])).is_err());
        assert_eq!(o.recover_after_power_cut(&state(&["a"])), Ok(1));
        assert_eq!(o.len(), 2, "the failed commit's state is gone");
    }

    #[test]
    fn a_sync_after_acknowledged_commits_raises_the_durable_floor() {
        let mut o = DurabilityOracle::new(state(&[]));
        let i = o.begin_commit(state(&["a"]));
        o.end_commit(i, CommitOutcome::Acknowledged);
        assert_eq!(o.allowed_after_power_cut(), (0, 1));
        o.acknowledged_made_durable();
        assert_eq!(o.allowed_after_power_cut(), (1, 1));
        assert!(o.clone().recover_after_power_cut(&state(&[])).is_err());
    }

    #[test]
    fn acknowledged_but_unsynced_survives_reopen_not_power_cut() {
        let mut o = DurabilityOracle::new(state(&[]));
        let i = o.begin_commit(state(&["a"]));
        o.end_commit(i, CommitOutcome::Acknowledged);
        assert_eq!(o.allowed_after_reopen(), (1, 1));
        assert_eq!(o.allowed_after_power_cut(), (0, 1));
        assert!(o.clone().recover_after_reopen(&state(&[])).is_err());
        assert_eq!(o.recover_after_power_cut(&state(&[])), Ok(0));
        assert_eq!(o.current(), &state(&[]));
    }

    #[test]
    fn a_failed_commit_stays_possible_until_a_later_one_is_durable() {
        let mut o = DurabilityOracle::new(state(&[]));
        let failed = o.begin_commit(state(&["a"]));
        o.end_commit(failed, CommitOutcome::Failed);
        // The application carries on: the next commit starts from the last acknowledged state.
        assert_eq!(o.current(), &state(&[]));
        let next = o.begin_commit(state(&["b"]));
        assert_eq!(o.allowed_after_power_cut(), (0, 2));
        assert_eq!(
            o.clone().recover_after_power_cut(&state(&["a"])),
            Ok(failed)
        );
        o.end_commit(next, CommitOutcome::Acknowledged);
        // After a reopen only the acknowledged commit or later may be seen.
        assert_eq!(o.allowed_after_reopen(), (2, 2));
        assert!(o.clone().recover_after_reopen(&state(&["a"])).is_err());
        let last = o.begin_commit(state(&["b", "c"]));
        o.end_commit(last, CommitOutcome::Durable);
        assert_eq!(o.allowed_after_power_cut(), (3, 3));
    }

    #[test]
    #[should_panic(expected = "previous one ended")]
    fn commits_do_not_overlap() {
        let mut o = DurabilityOracle::new(state(&[]));
        o.begin_commit(state(&["a"]));
        o.begin_commit(state(&["b"]));
    }
}
