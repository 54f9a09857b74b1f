//! The oracle of concurrent batched calls: what each caller was told must be true of the
//! commits the engine made.
//!
//! A group of callers submits calls to an engine's coalescer (bbolt's `DB.Batch` semantics: one
//! write transaction and one commit per batch; a call whose own function fails is rolled back
//! and retried alone, so only it gets its error; the rest retry together). The driver reports
//! each commit with the calls it holds, and each caller's answer. Then:
//!
//! - a call is in at most one commit that succeeded: no call is applied twice;
//! - a call answered `Committed` is in exactly one successful commit (the durability oracle's
//!   chain then holds its writes, and they must survive as that commit's acknowledgement says);
//! - a call answered with its own error is in no successful commit: its writes are absent;
//! - a call answered `CommitFailed` is in no successful commit (its batch's commit failed: all of
//!   the batch's calls are present or absent together, which the durability oracle's failed
//!   commit already allows);
//! - every call is answered exactly once, and a call that fails by design is never answered
//!   `Committed`, one that cannot fail never its own error;
//! - no commit holds more calls than the engine's batch limit, when it has one.

use std::collections::BTreeMap;

/// A call's index in its group.
pub type CallIndex = usize;

/// What a caller was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Committed,
    /// The call's own function (or record) failed; only it got the error.
    OwnError,
    /// The commit of the call's batch failed (an I/O error, or the database was latched).
    CommitFailed,
    /// The call's own function met an I/O error (a read failed, the power went off): only it
    /// got the error, as with `OwnError`, but any call may meet one.
    IoError,
}

#[derive(Clone, Debug, Default)]
struct CallLog {
    fails_by_design: bool,
    /// Commits that held this call and succeeded.
    committed_in: Vec<usize>,
    answers: Vec<Answer>,
}

/// The calls of one group and what happened to them.
#[derive(Clone, Debug, Default)]
pub struct CallOracle {
    calls: BTreeMap<CallIndex, CallLog>,
    commits: usize,
    /// Commits that held more than one call (batches that really merged calls).
    pub merged_commits: u64,
    /// Calls held by each successful commit, summed.
    pub calls_committed: u64,
    /// The engine's batch limit (0: none).
    limit: usize,
    /// The first commit that held more calls than `limit`: its number and its size.
    over_limit: Option<(usize, usize)>,
}

impl CallOracle {
    /// A group whose call `i` fails by design when `fails[i]`.
    pub fn new(fails: &[bool]) -> CallOracle {
        let calls = fails
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let log = CallLog {
                    fails_by_design: f,
                    ..CallLog::default()
                };
                (i, log)
            })
            .collect();
        CallOracle {
            calls,
            ..CallOracle::default()
        }
    }

    /// This group's engine promises at most `limit` calls per commit (0: no limit).
    pub fn with_batch_limit(self, limit: usize) -> CallOracle {
        CallOracle { limit, ..self }
    }

    /// A commit holding `calls` (in the order they were applied) ended; `ok` when it succeeded.
    pub fn commit(&mut self, calls: &[CallIndex], ok: bool) {
        let id = self.commits;
        self.commits += 1;
        if self.limit > 0 && calls.len() > self.limit && self.over_limit.is_none() {
            self.over_limit = Some((id, calls.len()));
        }
        if !ok {
            return;
        }
        self.calls_committed += calls.len() as u64;
        self.merged_commits += u64::from(calls.len() > 1);
        for &c in calls {
            if let Some(log) = self.calls.get_mut(&c) {
                log.committed_in.push(id);
            }
        }
    }

    /// Caller `call` was told `answer`.
    pub fn answered(&mut self, call: CallIndex, answer: Answer) {
        if let Some(log) = self.calls.get_mut(&call) {
            log.answers.push(answer);
        }
    }

    /// The first broken rule, if any.
    pub fn check(&self) -> Result<(), String> {
        if let Some((commit, n)) = self.over_limit {
            return Err(format!(
                "commit {commit} of the group held {n} calls, more than the engine's batch \
                 limit of {}",
                self.limit
            ));
        }
        for (i, log) in &self.calls {
            let committed = log.committed_in.len();
            if committed > 1 {
                return Err(format!("call {i} was applied by {committed} commits"));
            }
            let answer = match log.answers.as_slice() {
                [a] => *a,
                other => return Err(format!("call {i} was answered {} times", other.len())),
            };
            match (answer, committed, log.fails_by_design) {
                (Answer::Committed, 1, false) => {}
                (Answer::Committed, _, true) => {
                    return Err(format!("call {i} fails by design but was told Committed"))
                }
                (Answer::Committed, _, _) => {
                    return Err(format!("call {i} was told Committed but no commit held it"))
                }
                (Answer::OwnError, 0, true)
                | (Answer::CommitFailed, 0, _)
                | (Answer::IoError, 0, _) => {}
                (Answer::OwnError, 0, false) => {
                    return Err(format!("call {i} cannot fail but got its own error"))
                }
                (a, _, _) => {
                    return Err(format!("call {i} was told {a:?} but a commit applied it"))
                }
            }
        }
        Ok(())
    }

    /// How many calls got each answer: (committed, own error, commit failed or I/O error).
    pub fn answer_counts(&self) -> (u64, u64, u64) {
        let mut n = (0, 0, 0);
        for a in self.calls.values().flat_map(|l| l.answers.first()) {
            match a {
                Answer::Committed => n.0 += 1,
                Answer::OwnError => n.1 += 1,
                Answer::CommitFailed | Answer::IoError => n.2 += 1,
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_past_the_batch_limit_is_refused_whatever_its_answers() {
        let run = |limit: usize| {
            let mut o = CallOracle::new(&[false, false, false]).with_batch_limit(limit);
            o.commit(&[0, 1], true);
            o.commit(&[2], false);
            o.commit(&[2], true);
            for i in 0..3 {
                o.answered(i, Answer::Committed);
            }
            o.check()
        };
        assert_eq!(run(0), Ok(()), "no limit");
        assert_eq!(run(2), Ok(()), "at the limit");
        let e = run(1).unwrap_err();
        assert!(e.contains("commit 0 of the group held 2 calls"), "{e}");
        assert!(e.contains("batch limit of 1"), "{e}");
    }

    #[test]
    fn answers_must_match_the_commits() {
        let mut o = CallOracle::new(&[false, true, false]);
        o.commit(&[0, 1, 2], false);
        o.commit(&[0, 2], true);
        o.answered(0, Answer::Committed);
        o.answered(1, Answer::OwnError);
        o.answered(2, Answer::Committed);
        assert_eq!(o.check(), Ok(()));
        assert_eq!(o.answer_counts(), (2, 1, 0));
        assert_eq!(o.merged_commits, 1);

        let mut twice = o.clone();
        twice.commit(&[2], true);
        assert!(twice.check().unwrap_err().contains("applied by 2 commits"));

        let mut lied = CallOracle::new(&[false]);
        lied.commit(&[0], false);
        lied.answered(0, Answer::Committed);
        assert!(lied.check().unwrap_err().contains("no commit held it"));

        let mut leaked = CallOracle::new(&[true]);
        leaked.commit(&[0], true);
        leaked.answered(0, Answer::OwnError);
        assert!(leaked
            .check()
            .unwrap_err()
            .contains("but a commit applied it"));

        let mut silent = CallOracle::new(&[false]);
        assert!(silent.check().unwrap_err().contains("answered 0 times"));
        silent.answered(0, Answer::CommitFailed);
        assert_eq!(silent.check(), Ok(()));

        let mut io = CallOracle::new(&[false]);
        io.answered(0, Answer::IoError);
        assert_eq!(io.check(), Ok(()));
    }
}
