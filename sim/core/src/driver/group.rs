//! A group of concurrent callers in a session: the engine runs them through its coalescer and
//! reports every commit; each commit joins the durability oracle's chain as it starts, and each
//! caller's answer is judged by the call oracle against the commits that happened.

use super::{Driver, Hooks, Step};
use crate::adapter::{Ack, Engine, EngineError};
use crate::calls::{apply_call, group_calls, CallSpec, GroupObserver};
use crate::events::CommitEnd;
use crate::medium::Medium;
use crate::schedule::Schedule;
use crate::verdict::Verdict;
use crashlab_models::{CallOracle, CommitOutcome, DurabilityOracle};
use std::rc::Rc;
use std::time::Duration;

/// A `group` operation as the session runs it.
#[derive(Clone, Copy, Debug)]
pub(super) struct GroupOp<'a> {
    pub callers: u32,
    pub calls: u32,
    pub seed: u32,
    /// The batches, pinned; `None`: timing decides.
    pub schedule: Option<&'a Schedule>,
}

/// What one group did, for the run's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupFigures {
    pub groups: u64,
    pub calls: u64,
    /// Successful commits that held more than one call.
    pub merged_commits: u64,
    pub commits: u64,
    pub answered_committed: u64,
    pub answered_own_error: u64,
    pub answered_commit_failed: u64,
    /// Successful commits by the calls they held: 1, 2, 3–4, 5–8, 9–16, 17–32, 33–64, more.
    pub batch_sizes: [u64; 8],
}

impl GroupFigures {
    /// The bucket of [`GroupFigures::batch_sizes`] a commit of `calls` calls counts in.
    pub fn size_bucket(calls: usize) -> usize {
        (calls.max(1).next_power_of_two().trailing_zeros() as usize).min(7)
    }

    /// Add `other`'s figures to these.
    pub fn add(&mut self, other: &GroupFigures) {
        self.groups += other.groups;
        self.calls += other.calls;
        self.merged_commits += other.merged_commits;
        self.commits += other.commits;
        self.answered_committed += other.answered_committed;
        self.answered_own_error += other.answered_own_error;
        self.answered_commit_failed += other.answered_commit_failed;
        for (a, b) in self.batch_sizes.iter_mut().zip(other.batch_sizes) {
            *a += b;
        }
    }
}

/// The driver's side of a running group: the oracle follows every commit the engine reports.
struct Observer<'a, H> {
    oracle: &'a mut DurabilityOracle,
    hooks: &'a mut H,
    disk: &'a Medium,
    /// The disk's simulated I/O time already handed to the engine as batch time.
    io_seen: u64,
    /// Calls held by each successful commit: the batch sizes the timing made.
    sizes: Vec<usize>,
    promised: bool,
    calls: &'a [CallSpec],
    call_oracle: CallOracle,
    /// The commit running: its chain index and its calls.
    running: Option<(usize, Vec<usize>)>,
    commits: u64,
    /// The first commit that failed: an I/O error (the application restarts), or a violation.
    failed: Option<EngineError>,
    /// A commit began after one of the group failed, on an engine that latches: the oracle's
    /// chain stops there.
    after_failure: bool,
    /// The engine documents a latch after a failed commit.
    latches: bool,
    /// Each commit's calls and end, kept only for a report's event log.
    lanes: Option<Vec<(Vec<usize>, Option<CommitEnd>)>>,
}

impl<H> Observer<'_, H> {
    fn told<E: Engine>(&mut self)
    where
        H: Hooks<E>,
    {
        self.hooks.promise_changed(self.oracle, self.promised);
        self.hooks.acknowledged(self.oracle.current_shared());
    }
}

/// The observer for engine `E` (the hooks are `Hooks<E>`).
struct Typed<'o, 'a, E, H>(&'o mut Observer<'a, H>, std::marker::PhantomData<fn() -> E>);

impl<E: Engine, H: Hooks<E>> GroupObserver for Typed<'_, '_, E, H> {
    fn before_commit(&mut self, calls: &[usize]) {
        let o = &mut *self.0;
        if o.latches && (o.failed.is_some() || o.after_failure) {
            // A failed commit latches the database: no commit may follow in this session.
            o.after_failure = true;
            return;
        }
        let mut model = o.oracle.current().clone();
        for &i in calls {
            apply_call(&mut model, &o.calls[i]);
        }
        let index = o.oracle.begin_commit(model);
        o.running = Some((index, calls.to_vec()));
        o.told::<E>();
    }

    fn after_commit(&mut self, result: &Result<Ack, EngineError>) {
        let o = &mut *self.0;
        if o.after_failure {
            return;
        }
        let Some((index, calls)) = o.running.take() else {
            unreachable!("a commit ends after it began")
        };
        let outcome = match result {
            Ok(Ack::Durable) => CommitOutcome::Durable,
            Ok(Ack::Acknowledged) => CommitOutcome::Acknowledged,
            Err(e) => {
                o.failed.get_or_insert_with(|| e.clone());
                CommitOutcome::Failed
            }
        };
        o.oracle.end_commit(index, outcome);
        if let Some(lanes) = &mut o.lanes {
            lanes.push((calls.clone(), Some(outcome.into())));
        }
        if result.is_ok() {
            o.sizes.push(calls.len());
        }
        o.call_oracle.commit(&calls, result.is_ok());
        o.commits += 1;
        o.told::<E>();
    }

    fn io_time(&mut self) -> Duration {
        let o = &mut *self.0;
        let now = o.disk.io_stats().sim_time_ns;
        let dt = now.saturating_sub(o.io_seen);
        o.io_seen = now;
        Duration::from_nanos(dt)
    }
}

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    /// Run `group callers=N seed=S`. `Err(message)` when a commit of the group failed with an
    /// I/O error: the application restarts, as after any failed commit.
    pub(super) async fn group(
        &mut self,
        db: &Rc<E>,
        group: GroupOp<'_>,
    ) -> Step<Result<String, String>> {
        let calls = group_calls(group.callers, group.calls, group.seed, &self.caps);
        let fails: Vec<bool> = calls.iter().map(|c| c.fails).collect();
        let promised = self.promised();
        let logging = self.logging();
        let mut obs = Observer {
            io_seen: self.medium.io_stats().sim_time_ns,
            disk: &self.medium,
            sizes: Vec::new(),
            oracle: &mut self.oracle,
            hooks: &mut self.hooks,
            promised,
            calls: &calls,
            call_oracle: CallOracle::new(&fails)
                .with_batch_limit(self.caps.max_batch_calls as usize),
            running: None,
            commits: 0,
            failed: None,
            after_failure: false,
            latches: self.caps.latches_after_failed_commit,
            lanes: logging.then(Vec::new),
        };
        let answers = {
            let mut typed = Typed::<E, H>(&mut obs, std::marker::PhantomData);
            E::run_group(db, &calls, group.schedule, &mut typed).await
        };
        for &(i, a) in &answers {
            obs.call_oracle.answered(i, a);
        }
        let lanes = obs.lanes.take();
        let checked = obs.call_oracle.check();
        let (ok, own, failed) = obs.call_oracle.answer_counts();
        let g = &mut self.stats.groups;
        g.groups += 1;
        g.calls += calls.len() as u64;
        g.merged_commits += obs.call_oracle.merged_commits;
        g.commits += obs.commits;
        g.answered_committed += ok;
        g.answered_own_error += own;
        g.answered_commit_failed += failed;
        for &n in &obs.sizes {
            g.batch_sizes[GroupFigures::size_bucket(n)] += 1;
        }
        self.stats.commits += obs.commits;
        // Each call's operations are operations the run did (the group itself is counted once
        // by the session loop).
        self.stats.ops_run += calls.iter().map(|c| c.ops.len() as u64).sum::<u64>();
        let summary = format!(
            "{} calls in {} commits ({} merged): {ok} committed, {own} own error, {failed} commit failed",
            calls.len(),
            obs.commits,
            obs.call_oracle.merged_commits
        );
        let failure = obs.failed.take();
        let after_failure = obs.after_failure;
        self.promise_changed();
        if let Some(commits) = lanes {
            self.log_group(group.callers, &calls, &answers, commits);
        }
        if after_failure {
            return Err(self.violation(
                Verdict::Latch,
                "group: a commit began after a failed commit of the same session, although \
                 the engine latches",
            ));
        }
        if let Err(why) = checked {
            return Err(self.violation(Verdict::ModelMismatch, format!("group: {why}")));
        }
        match failure {
            Some(e) if !e.is_io() => Err(self.refused_commit(db, &e)),
            Some(e) => {
                self.stats.failed_commits += 1;
                Ok(Err(format!("{summary}; a commit failed: {e}")))
            }
            None => Ok(Ok(summary)),
        }
    }
}
