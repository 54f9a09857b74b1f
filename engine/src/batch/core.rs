//! The coalescing logic of batched commits, with no threads, clocks or I/O: a state machine the
//! threaded front end (`group.rs`) and the simulator drive alike.
//!
//! Semantics (bbolt's `DB.Batch`): calls queue in arrival order; a batch takes up to
//! `max_batch_size` of them and runs them in one write transaction with one commit.
//! - If every call's function succeeds and the commit succeeds, every call gets `Ok`.
//! - If call `i`'s function fails, the transaction is rolled back; call `i` is told to run alone
//!   (so only it gets its own error), and the other calls of the batch go back to the front of
//!   the queue to be retried together. Their functions therefore run more than once.
//! - If the commit itself fails, every call of the batch gets the failure.
//!
//! Invariants: a call id is in exactly one of queued, running, or delivered; a batch is never
//! empty; only one batch runs at a time.

use crate::options::Options;
use std::collections::VecDeque;

/// A call's identity.
pub type CallId = u64;

/// How a batch ended, reported by whoever ran it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchOutcome {
    Committed,
    /// The function of the call at this index (into the batch) failed; nothing was committed.
    CallFailed(usize),
    /// Beginning or committing the transaction failed; nothing is known to be committed.
    CommitFailed,
}

/// What a call is told when its batch ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    Committed,
    CommitFailed,
    /// Run your function alone, in a transaction of your own.
    RunSolo,
}

/// Deterministic counters of the coalescer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoalescerStats {
    pub batches: u64,
    /// Calls summed over batches run (a retried call counts again).
    pub batched_calls: u64,
    pub solo_retries: u64,
}

#[derive(Debug)]
pub struct Coalescer {
    queue: VecDeque<CallId>,
    running: Option<Vec<CallId>>,
    next_id: CallId,
    max_batch_size: usize,
    /// Calls a batch may take past `max_batch_size`: 0, or 1 under the negative control
    /// `DebugHooks::batch_exceeds_limit`.
    overfill: usize,
    stats: CoalescerStats,
}

impl Coalescer {
    pub fn new(max_batch_size: usize) -> Coalescer {
        Coalescer {
            queue: VecDeque::new(),
            running: None,
            next_id: 0,
            max_batch_size: max_batch_size.max(1),
            overfill: 0,
            stats: CoalescerStats::default(),
        }
    }

    /// The coalescer of a database opened with `opts`: its batch limit (and the negative
    /// control that exceeds it).
    pub fn for_options(opts: &Options) -> Coalescer {
        Coalescer {
            overfill: usize::from(opts.hooks().batch_exceeds_limit),
            ..Coalescer::new(opts.max_batch_size)
        }
    }

    /// A new call joins the queue.
    pub fn submit(&mut self) -> CallId {
        let id = self.next_id;
        self.next_id += 1;
        self.queue.push_back(id);
        id
    }

    /// Whether a full batch is waiting (no reason to wait for more callers).
    pub fn full(&self) -> bool {
        self.queue.len() >= self.max_batch_size
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Start the next batch, if none is running and calls are queued.
    pub fn start_batch(&mut self) -> Option<Vec<CallId>> {
        if self.running.is_some() || self.queue.is_empty() {
            return None;
        }
        let n = self.queue.len().min(self.max_batch_size + self.overfill);
        let batch: Vec<CallId> = self.queue.drain(..n).collect();
        debug_assert!(!batch.is_empty());
        self.stats.batches += 1;
        self.stats.batched_calls += batch.len() as u64;
        self.running = Some(batch.clone());
        Some(batch)
    }

    /// The running batch ended. Returns what to tell each call that is done with this round;
    /// calls to retry are back at the front of the queue.
    pub fn finish_batch(&mut self, outcome: BatchOutcome) -> Vec<(CallId, Delivery)> {
        let batch = self
            .running
            .take()
            .expect("finish_batch without a running batch");
        match outcome {
            BatchOutcome::Committed => batch
                .into_iter()
                .map(|id| (id, Delivery::Committed))
                .collect(),
            BatchOutcome::CommitFailed => batch
                .into_iter()
                .map(|id| (id, Delivery::CommitFailed))
                .collect(),
            BatchOutcome::CallFailed(i) => {
                assert!(
                    i < batch.len(),
                    "failed call index {i} outside a batch of {}",
                    batch.len()
                );
                self.stats.solo_retries += 1;
                for (j, &id) in batch.iter().enumerate().rev() {
                    if j != i {
                        self.queue.push_front(id);
                    }
                }
                vec![(batch[i], Delivery::RunSolo)]
            }
        }
    }

    pub fn stats(&self) -> CoalescerStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_takes_up_to_the_limit_in_arrival_order() {
        let mut c = Coalescer::new(2);
        let ids: Vec<CallId> = (0..3).map(|_| c.submit()).collect();
        assert!(c.full());
        assert_eq!(c.start_batch(), Some(vec![ids[0], ids[1]]));
        assert_eq!(c.start_batch(), None, "one batch at a time");
        assert_eq!(
            c.finish_batch(BatchOutcome::Committed),
            vec![(0, Delivery::Committed), (1, Delivery::Committed)]
        );
        assert_eq!(c.start_batch(), Some(vec![ids[2]]));
        assert_eq!(
            c.finish_batch(BatchOutcome::CommitFailed),
            vec![(2, Delivery::CommitFailed)]
        );
        assert_eq!(c.start_batch(), None);
        assert_eq!(
            c.stats(),
            CoalescerStats {
                batches: 2,
                batched_calls: 3,
                solo_retries: 0
            }
        );
    }

    #[test]
    fn a_failing_call_runs_solo_and_the_rest_retry_together_in_order() {
        let mut c = Coalescer::new(10);
        for _ in 0..4 {
            c.submit();
        }
        c.start_batch();
        assert_eq!(
            c.finish_batch(BatchOutcome::CallFailed(1)),
            vec![(1, Delivery::RunSolo)]
        );
        let late = c.submit();
        // The retried calls keep their order and go before the late arrival.
        assert_eq!(c.start_batch(), Some(vec![0, 2, 3, late]));
        assert_eq!(c.stats().solo_retries, 1);
        assert_eq!(c.stats().batched_calls, 8);
    }

    #[test]
    #[should_panic(expected = "without a running batch")]
    fn finishing_nothing_is_a_programmer_error() {
        Coalescer::new(1).finish_batch(BatchOutcome::Committed);
    }
}
