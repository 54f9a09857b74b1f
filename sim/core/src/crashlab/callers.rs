//! Concurrent callers through crashlab's own coalescer, in simulated time: each caller is a
//! madsim task that submits its call at its delay and waits for its answer; the group's leader —
//! the driver's own future, so every commit it makes reaches the driver's oracle before any
//! byte is written — runs the engine's sans-IO coalescer (`batch::core`) and its batch runner
//! (`batch::apply`), exactly what `Db::batch` and `Db::write` run on threads.
//!
//! Leading follows bbolt: a batch waits `max_batch_delay` for more callers unless it is full; a
//! call whose function fails is rolled back and run again alone (here by the leader, right after
//! its batch, as its caller would on taking the writer lock next), so only it gets its error.

use super::batch::{apply_creating, write_batch};
use super::CrashlabDb;
use crate::adapter::EngineError;
use crate::calls::{CallSpec, GroupObserver};
use crashlab_engine::batch::apply::{run_batch_observed, BatchFn, Call};
use crashlab_engine::batch::core::{BatchOutcome, CallId, Coalescer, Delivery};
use crashlab_engine::batch::MergeWork;
use crashlab_engine::Error;
use crashlab_models::Answer;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting caller or an idle leader looks again (simulated time).
const POLL: Duration = Duration::from_micros(10);

/// What the callers and the leader share.
struct Front {
    core: Coalescer,
    /// The group index of each submitted call.
    index: BTreeMap<CallId, usize>,
    submitted: usize,
    answers: Vec<(usize, Answer)>,
}

/// Run one group on `db`; every call's answer, by group index.
pub(super) async fn run_group(
    db: &Rc<CrashlabDb>,
    calls: &[CallSpec],
    observer: &mut dyn GroupObserver,
) -> Vec<(usize, Answer)> {
    let opts = db.db.options().clone();
    let front = Rc::new(RefCell::new(Front {
        core: Coalescer::new(opts.max_batch_size),
        index: BTreeMap::new(),
        submitted: 0,
        answers: Vec::new(),
    }));
    let callers: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| madsim::task::spawn_local(submit_at(front.clone(), i, c.delay)))
        .collect();
    let mut leader = Leader {
        db,
        calls,
        observer,
        work: MergeWork::default(),
    };
    while front.borrow().answers.len() < calls.len() {
        let (queued, full, all_in) = {
            let f = front.borrow();
            (f.core.queued(), f.core.full(), f.submitted == calls.len())
        };
        if queued == 0 {
            madsim::time::sleep(POLL).await;
            continue;
        }
        if !full && !all_in {
            // Give others the batch delay to join.
            madsim::time::sleep(opts.max_batch_delay.max(POLL)).await;
        }
        leader.run_one_batch(&front);
    }
    for c in callers {
        let _ = c.await;
    }
    let mut answers = std::mem::take(&mut front.borrow_mut().answers);
    answers.sort_by_key(|(i, _)| *i);
    answers
}

/// A caller: wait for its instant, then join the queue.
async fn submit_at(front: Rc<RefCell<Front>>, index: usize, delay: Duration) {
    madsim::time::sleep(delay).await;
    let mut f = front.borrow_mut();
    let id = f.core.submit();
    f.index.insert(id, index);
    f.submitted += 1;
}

struct Leader<'a> {
    db: &'a CrashlabDb,
    calls: &'a [CallSpec],
    observer: &'a mut dyn GroupObserver,
    work: MergeWork,
}

impl Leader<'_> {
    /// Start the next batch and run it (and the solo retry it asks for); record the answers.
    fn run_one_batch(&mut self, front: &Rc<RefCell<Front>>) {
        let indexes: Vec<usize> = {
            let mut f = front.borrow_mut();
            let Some(ids) = f.core.start_batch() else {
                return;
            };
            ids.iter().map(|id| f.index[id]).collect()
        };
        let (outcome, _) = self.run(&indexes);
        let deliveries = front.borrow_mut().core.finish_batch(outcome);
        for (id, d) in deliveries {
            let index = front.borrow().index[&id];
            let answer = match d {
                Delivery::Committed => Answer::Committed,
                Delivery::CommitFailed => Answer::CommitFailed,
                Delivery::RunSolo => self.solo(index),
            };
            front.borrow_mut().answers.push((index, answer));
        }
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
        let (ops, fails) = (Arc::new(spec.ops.clone()), spec.fails);
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
