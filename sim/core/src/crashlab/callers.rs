//! Concurrent callers through crashlab's own coalescer, in simulated time: each caller is a
//! madsim task that submits its calls one after another — thinking between them, waiting for
//! each answer — while the group's leader, the driver's own future (so every commit it makes
//! reaches the driver's oracle before any byte is written), runs the engine's sans-IO coalescer
//! (`batch::core`) and its batch runner (`batch::apply`), exactly what `Db::batch` and
//! `Db::write` run on threads.
//!
//! Leading follows bbolt: a batch waits `max_batch_delay` for more callers unless it is full; a
//! call whose function fails is rolled back and run again alone (here by the leader, right after
//! its batch, as its caller would on taking the writer lock next), so only it gets its error.
//! A batch's I/O takes the simulated time the disk's cost model gives it, and callers whose turn
//! comes meanwhile queue for the next batch: batch sizes are what the timing makes them.
//!
//! Timing is madsim's: a madsim sleep lasts at least 1 ms (as tokio's does), so a batch's I/O,
//! the batch delay and a caller's thinking each take a millisecond or more of simulated time.
//! What matters for batching is their ratio, which the think times are drawn to make
//! interesting (see `calls::group_calls`).

use super::batch::{apply_creating, write_batch};
use super::CrashlabDb;
use crate::adapter::EngineError;
use crate::calls::{CallSpec, GroupObserver};
use crate::schedule::Schedule;
use crashlab_engine::batch::apply::{run_batch_observed, BatchFn, Call};
use crashlab_engine::batch::core::{BatchOutcome, CallId, Coalescer, Delivery};
use crashlab_engine::batch::MergeWork;
use crashlab_engine::Error;
use crashlab_models::Answer;
use futures_channel::{mpsc, oneshot};
use futures_core::Stream;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// The shortest wait the leader makes for others to join a batch (simulated time).
const JOIN_MIN: Duration = Duration::from_micros(10);

/// A call joining the queue, and where its answer goes.
type Submission = (usize, oneshot::Sender<Answer>);

/// Run one group on `db`; every call's answer, by group index.
pub(super) async fn run_group(
    db: &Rc<CrashlabDb>,
    calls: &[CallSpec],
    observer: &mut dyn GroupObserver,
) -> Vec<(usize, Answer)> {
    let opts = db.db.options().clone();
    let (tx, mut rx) = mpsc::unbounded::<Submission>();
    let mut by_caller: BTreeMap<u32, Vec<(usize, Duration)>> = BTreeMap::new();
    for (i, c) in calls.iter().enumerate() {
        by_caller.entry(c.caller).or_default().push((i, c.think));
    }
    let callers: Vec<_> = by_caller
        .into_values()
        .map(|own| madsim::task::spawn_local(caller(own, tx.clone())))
        .collect();
    drop(tx);
    let mut leader = Leader {
        db,
        calls,
        observer,
        work: MergeWork::default(),
        core: Coalescer::for_options(&opts),
        waiting: BTreeMap::new(),
    };
    // The queue is empty between batches: wait for the next call, give others the batch delay
    // to join (unless the batch is full already), take everyone who came, run the batch.
    while let Some(first) = next(&mut rx).await {
        leader.enqueue(first);
        if !leader.core.full() {
            madsim::time::sleep(opts.max_batch_delay.max(JOIN_MIN)).await;
        }
        while let Ok(s) = rx.try_recv() {
            leader.enqueue(s);
        }
        while leader.core.queued() > 0 {
            let answers = leader.run_one_batch();
            // The batch's I/O takes time: its callers hear back when it is done, and callers
            // whose turn comes meanwhile queue for the next batch.
            let io = leader.observer.io_time();
            madsim::time::sleep(io).await;
            for (reply, answer) in answers {
                // A caller that is gone (its task ended with the group) needs no answer.
                let _ = reply.send(answer);
            }
            while let Ok(s) = rx.try_recv() {
                leader.enqueue(s);
            }
        }
    }
    db.db.add_merge_work(&leader.work);
    let mut answers = Vec::with_capacity(calls.len());
    for c in callers {
        if let Ok(mut own) = c.await {
            answers.append(&mut own);
        }
    }
    answers.sort_by_key(|(i, _)| *i);
    answers
}

/// Run one group on `db` in the batches `schedule` pins, with no time passing between them: each
/// batch takes the next call of each of its callers (a batch larger than the coalescer's limit
/// is split by the coalescer, as it would be). Every call's answer, by group index.
pub(super) fn run_scheduled(
    db: &CrashlabDb,
    calls: &[CallSpec],
    schedule: &Schedule,
    observer: &mut dyn GroupObserver,
) -> Vec<(usize, Answer)> {
    let per_caller = calls.iter().filter(|c| c.caller == 0).count() as u32;
    let mut leader = Leader {
        db,
        calls,
        observer,
        work: MergeWork::default(),
        core: Coalescer::for_options(db.db.options()),
        waiting: BTreeMap::new(),
    };
    let mut answers = Vec::with_capacity(calls.len());
    for batch in schedule.call_indexes(per_caller.max(1)) {
        let mut replies = Vec::new();
        for index in batch {
            let (tx, rx) = oneshot::channel();
            leader.enqueue((index, tx));
            replies.push((index, rx));
        }
        while leader.core.queued() > 0 {
            for (reply, answer) in leader.run_one_batch() {
                let _ = reply.send(answer);
            }
        }
        for (index, mut rx) in replies {
            if let Ok(Some(answer)) = rx.try_recv() {
                answers.push((index, answer));
            }
        }
    }
    db.db.add_merge_work(&leader.work);
    answers.sort_by_key(|(i, _)| *i);
    answers
}

/// The next submission, or `None` when every caller is done.
async fn next(rx: &mut mpsc::UnboundedReceiver<Submission>) -> Option<Submission> {
    std::future::poll_fn(|cx| Pin::new(&mut *rx).poll_next(cx)).await
}

/// A caller: its calls in order, each after its think time, each waiting for its answer.
async fn caller(
    calls: Vec<(usize, Duration)>,
    queue: mpsc::UnboundedSender<Submission>,
) -> Vec<(usize, Answer)> {
    let mut answers = Vec::with_capacity(calls.len());
    for (index, think) in calls {
        madsim::time::sleep(think).await;
        let (tx, rx) = oneshot::channel();
        if queue.unbounded_send((index, tx)).is_err() {
            break;
        }
        match rx.await {
            Ok(answer) => answers.push((index, answer)),
            Err(_) => break,
        }
    }
    answers
}

struct Leader<'a> {
    db: &'a CrashlabDb,
    calls: &'a [CallSpec],
    observer: &'a mut dyn GroupObserver,
    work: MergeWork,
    core: Coalescer,
    /// Queued and running calls: their group index and where their answer goes.
    waiting: BTreeMap<CallId, Submission>,
}

impl Leader<'_> {
    fn enqueue(&mut self, s: Submission) {
        let id = self.core.submit();
        self.waiting.insert(id, s);
    }

    /// Start the next batch and run it (and the solo retry it asks for); the answers for its
    /// callers.
    fn run_one_batch(&mut self) -> Vec<(oneshot::Sender<Answer>, Answer)> {
        let mut out = Vec::new();
        let Some(ids) = self.core.start_batch() else {
            return out;
        };
        let indexes: Vec<usize> = ids.iter().map(|id| self.waiting[id].0).collect();
        let (outcome, _) = self.run(&indexes);
        for (id, d) in self.core.finish_batch(outcome) {
            let Some((index, reply)) = self.waiting.remove(&id) else {
                unreachable!("a delivered call was waiting")
            };
            let answer = match d {
                Delivery::Committed => Answer::Committed,
                Delivery::CommitFailed => Answer::CommitFailed,
                Delivery::RunSolo => self.solo(index),
            };
            out.push((reply, answer));
        }
        out
    }

    /// Run the calls `indexes` as one batch, telling the observer about its commit.
    fn run(&mut self, indexes: &[usize]) -> (BatchOutcome, Option<EngineError>) {
        let calls: Vec<Call> = indexes.iter().map(|&i| self.call(i)).collect();
        let observer = &mut *self.observer;
        let mut began = false;
        let (outcome, error) = run_batch_observed(&self.db.db, &calls, &mut self.work, &mut || {
            began = true;
            observer.before_commit(indexes);
        });
        let error = error.map(EngineError::from);
        if began {
            // A commit began: it failed only when the batch says so (a batch that reports a
            // failed call after its commit began committed anyway — an engine bug the call
            // oracle then sees).
            let result = match (&outcome, &error) {
                (BatchOutcome::CommitFailed, Some(e)) => Err(e.clone()),
                _ => Ok(self.db.ack()),
            };
            self.observer.after_commit(&result);
        }
        (outcome, error)
    }

    /// A call that failed in its batch, run again alone: its answer.
    fn solo(&mut self, index: usize) -> Answer {
        match self.run(&[index]) {
            (BatchOutcome::Committed, _) => Answer::Committed,
            (BatchOutcome::CallFailed(_), Some(e)) if e.is_io() => Answer::IoError,
            (BatchOutcome::CallFailed(_), _) => Answer::OwnError,
            (BatchOutcome::CommitFailed, _) => Answer::CommitFailed,
        }
    }

    /// Call `i` as the engine takes it.
    fn call(&self, i: usize) -> Call {
        let spec = &self.calls[i];
        if spec.as_write_batch {
            return Call::Write(write_batch(
                &spec.ops,
                self.db.db.options().presize,
                spec.fails,
            ));
        }
        let (ops, fails) = (Arc::clone(&spec.ops), spec.fails);
        let f: BatchFn = Arc::new(move |tx| {
            for op in ops.iter() {
                apply_creating(tx, op)?;
            }
            if fails {
                // The function's own error: the call's caller alone gets it.
                return Err(Error::KeyRequired);
            }
            Ok(())
        });
        Call::Fn(f)
    }
}
