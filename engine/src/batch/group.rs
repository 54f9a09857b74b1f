//! The threaded front end of batched commits: callers block in [`GroupCommit::submit`] while one
//! of them — the leader — runs batches for everyone.
//!
//! The first caller to find no leader becomes it. It waits up to the batch delay for more
//! callers (unless the batch is already full), then runs batches until its own call has an
//! answer, and steps down; a waiting caller with a queued call takes over. All shared state
//! lives under one mutex and every change is followed by `notify_all`, so no wake-up is lost.
//! A call told to run alone gets its call object back and runs it on its own thread.

use super::core::{BatchOutcome, CallId, Coalescer, CoalescerStats, Delivery};
use super::sync::{Condvar, Mutex, MutexGuard};
use std::collections::BTreeMap;
use std::time::Duration;

/// Runs one batch: the calls in order, in one transaction; reports how it ended, with a
/// message when the commit failed.
pub type RunBatch<'a, C> = dyn Fn(&[C]) -> (BatchOutcome, Option<String>) + 'a;

/// How a submitted call ended.
#[derive(Debug)]
pub enum CallResult<C> {
    Committed,
    /// The shared commit failed; the message says why.
    CommitFailed(String),
    /// Run the call alone: only this caller gets its error.
    RunSolo(C),
}

struct State<C> {
    core: Coalescer,
    /// Calls not yet delivered, by id (absent while their batch runs).
    calls: BTreeMap<CallId, C>,
    delivered: BTreeMap<CallId, (Delivery, Option<String>)>,
    leader: bool,
}

pub struct GroupCommit<C> {
    state: Mutex<State<C>>,
    wake: Condvar,
    max_delay: Duration,
}

impl<C> GroupCommit<C> {
    pub fn new(max_batch_size: usize, max_delay: Duration) -> GroupCommit<C> {
        GroupCommit::with_core(Coalescer::new(max_batch_size), max_delay)
    }

    /// A front end over `core` (a database's, from [`Coalescer::for_options`]).
    pub fn with_core(core: Coalescer, max_delay: Duration) -> GroupCommit<C> {
        GroupCommit {
            state: Mutex::new(State {
                core,
                calls: BTreeMap::new(),
                delivered: BTreeMap::new(),
                leader: false,
            }),
            wake: Condvar::new(),
            max_delay,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<C>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn stats(&self) -> CoalescerStats {
        self.lock().core.stats()
    }

    /// Submit `call` and block until it has an answer; `run` runs each batch.
    pub fn submit(&self, call: C, run: &RunBatch<'_, C>) -> CallResult<C> {
        let mut st = self.lock();
        let id = st.core.submit();
        st.calls.insert(id, call);
        if st.core.full() {
            // A leader waiting for callers can start now.
            self.wake.notify_all();
        }
        loop {
            if let Some((delivery, message)) = st.delivered.remove(&id) {
                let call = st.calls.remove(&id);
                return match (delivery, call) {
                    (Delivery::Committed, _) => CallResult::Committed,
                    (Delivery::CommitFailed, _) => {
                        CallResult::CommitFailed(message.unwrap_or_default())
                    }
                    (Delivery::RunSolo, Some(call)) => CallResult::RunSolo(call),
                    (Delivery::RunSolo, None) => unreachable!("a solo call keeps its call object"),
                };
            }
            if !st.leader {
                st.leader = true;
                st = self.lead(st, id, run);
                st.leader = false;
                self.wake.notify_all();
                continue;
            }
            st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Run batches until `own` has an answer or nothing is queued.
    fn lead<'g>(
        &'g self,
        mut st: MutexGuard<'g, State<C>>,
        own: CallId,
        run: &RunBatch<'_, C>,
    ) -> MutexGuard<'g, State<C>> {
        st = self.gather(st);
        while !st.delivered.contains_key(&own) {
            let Some(ids) = st.core.start_batch() else {
                break;
            };
            let calls: Vec<C> = ids
                .iter()
                .map(|id| st.calls.remove(id).expect("queued calls are held"))
                .collect();
            drop(st);
            let (outcome, message) = run(&calls);
            st = self.lock();
            for (id, call) in ids.into_iter().zip(calls) {
                st.calls.insert(id, call);
            }
            for (id, delivery) in st.core.finish_batch(outcome) {
                st.delivered.insert(id, (delivery, message.clone()));
            }
            self.wake.notify_all();
        }
        st
    }

    /// Give other callers up to the batch delay to join, unless the batch is full.
    #[cfg(not(kv_loom))]
    fn gather<'g>(&'g self, st: MutexGuard<'g, State<C>>) -> MutexGuard<'g, State<C>> {
        if self.max_delay.is_zero() || st.core.full() {
            return st;
        }
        // One bounded wait: an early wake-up only makes the batch smaller, never wrong.
        match self.wake.wait_timeout(st, self.max_delay) {
            Ok((st, _)) => st,
            Err(e) => e.into_inner().0,
        }
    }

    /// Under loom there is no time: batches form from whoever arrived while one ran.
    #[cfg(kv_loom)]
    fn gather<'g>(&'g self, st: MutexGuard<'g, State<C>>) -> MutexGuard<'g, State<C>> {
        let _ = self.max_delay;
        st
    }
}

#[cfg(all(test, not(kv_loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Calls are numbers; odd numbers fail; a batch "commits" by appending to a log.
    #[test]
    fn threads_share_batches_and_only_the_failing_call_runs_solo() {
        let g = Arc::new(GroupCommit::<u64>::new(100, Duration::from_millis(20)));
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let batches = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..8u64)
            .map(|n| {
                let (g, log, batches) = (g.clone(), log.clone(), batches.clone());
                std::thread::spawn(move || {
                    let run = |calls: &[u64]| {
                        batches.fetch_add(1, Ordering::Relaxed);
                        if let Some(i) = calls.iter().position(|c| c % 2 == 1) {
                            return (BatchOutcome::CallFailed(i), None);
                        }
                        log.lock().unwrap().extend_from_slice(calls);
                        (BatchOutcome::Committed, None)
                    };
                    match g.submit(n, &run) {
                        CallResult::Committed => Ok(n),
                        CallResult::RunSolo(c) => Err(c),
                        CallResult::CommitFailed(m) => panic!("{m}"),
                    }
                })
            })
            .collect();
        let results: Vec<Result<u64, u64>> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (n, r) in results.iter().enumerate() {
            assert_eq!(r.is_ok(), n % 2 == 0, "call {n}: {r:?}");
        }
        let mut log = log.lock().unwrap().clone();
        log.sort();
        assert_eq!(
            log,
            vec![0, 2, 4, 6],
            "each successful call committed exactly once"
        );
        assert_eq!(g.stats().solo_retries, 4);
    }
}
