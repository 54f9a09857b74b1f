//! Running batched calls against a database: `Db::batch` functions and `Db::write` batches share
//! one coalescer, one write transaction per batch and one commit.
//!
//! Consecutive `WriteBatch` calls in a batch are merged by the configured [`MergeStrategy`] and
//! applied as one; a record that fails is traced back to the call it came from, so only that
//! call runs alone. A put creates missing buckets along its path; a delete in a missing bucket
//! does nothing.

pub use super::call::{BatchFn, Call};
use super::core::BatchOutcome;
use super::group::CallResult;
use super::{MergeStrategy, MergeWork, Record, WriteBatch};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::presize::PresizePolicy;
use crate::shared::lock;
use crate::tx::WriteTx;

impl Db {
    /// Run `f` in a write transaction shared with concurrent callers: one transaction and one
    /// sync for all of them (bbolt's `Batch`). If `f` fails, the shared transaction is rolled
    /// back, `f` runs again alone and only its caller gets its error; the other functions run
    /// again together. **`f` may therefore run more than once**: keep its effects inside the
    /// transaction. `Ok` means the last run of `f` was committed.
    pub fn batch<F>(&self, f: F) -> Result<()>
    where
        F: Fn(&mut WriteTx<'_>) -> Result<()> + Send + Sync + 'static,
    {
        let f: BatchFn = std::sync::Arc::new(f);
        self.submit(Call::Fn(f))
    }

    /// Apply `batch` atomically. Concurrent `write` (and `batch`) calls share one transaction and
    /// one sync; their batches are merged by `Options::merge_strategy`. A put creates missing
    /// buckets along its path; a delete in a missing bucket does nothing. If a record fails, only
    /// its caller gets the error and the others are retried together.
    ///
    /// What `batch`'s buffer cost to build is added to the buffer counters.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        lock(&self.merge_work).buffer.add(&batch.buffer_work());
        self.submit(Call::Write(batch))
    }

    fn submit(&self, call: Call) -> Result<()> {
        let run = |calls: &[Call]| {
            let mut work = MergeWork::default();
            let outcome = run_batch(self, calls, &mut work);
            self.add_merge_work(&work);
            outcome
        };
        let result = self.group.submit(call, &run);
        finish_call(self, result)
    }

    /// Count merge work done by a batch front end of the caller's own (one that drives the
    /// sans-IO coalescer in `batch::core` and runs batches with `batch::apply`, as crashlab's
    /// simulator does), so [`Db::counters`] shows it as it shows `Db::write`'s.
    pub fn add_merge_work(&self, work: &MergeWork) {
        let mut total = lock(&self.merge_work);
        total.bytes_copied += work.bytes_copied;
        total.records_decoded += work.records_decoded;
        total.records_encoded += work.records_encoded;
        total.buffer.add(&work.buffer);
    }
}

/// Apply every record of `batch` in `tx`; on failure, the index of the failing record.
pub fn apply_records(tx: &mut WriteTx<'_>, batch: &WriteBatch) -> Result<(), (usize, Error)> {
    let records = batch
        .records()
        .map_err(|e| (0, Error::MalformedBatch(e.to_string())))?;
    for (i, r) in records.iter().enumerate() {
        apply_record(tx, r).map_err(|e| (i, e))?;
    }
    Ok(())
}

fn apply_record(tx: &mut WriteTx<'_>, r: &Record<'_>) -> Result<()> {
    match r {
        Record::Put { path, key, value } => {
            let (first, rest) = path.split_first().ok_or(Error::BucketNameRequired)?;
            let mut b = tx.create_bucket_if_missing(first)?;
            for name in rest {
                b = b.create_bucket_if_missing_owned(name)?;
            }
            b.put(key, value)
        }
        Record::Delete { path, key } => match tx.bucket_path_mut(path)? {
            Some(mut b) => b.delete(key).map(|_| ()),
            None => Ok(()),
        },
    }
}

/// Run one batch of calls in one write transaction.
pub fn run_batch(db: &Db, calls: &[Call], work: &mut MergeWork) -> (BatchOutcome, Option<String>) {
    match run_batch_observed(db, calls, work, &mut || {}) {
        (BatchOutcome::CallFailed(i), _) => (BatchOutcome::CallFailed(i), None),
        (outcome, error) => (outcome, error.map(|e| e.to_string())),
    }
}

/// [`run_batch`], calling `before_commit` once every call has applied and just before the commit
/// writes anything — a driver that records what may be on disk at each instant (crashlab's
/// simulator) learns there that this batch's calls are about to become one commit — and
/// returning the error itself: the commit's, or the failed call's own.
pub fn run_batch_observed(
    db: &Db,
    calls: &[Call],
    work: &mut MergeWork,
    before_commit: &mut dyn FnMut(),
) -> (BatchOutcome, Option<Error>) {
    let opts = db.options();
    // A negative control (see `DebugHooks::full_batch_drops_last_call`). A batch is full at the
    // coalescer's limit, which is at least 1 (`Coalescer::new`).
    let full = calls.len() == opts.max_batch_size.max(1);
    let calls = match calls.split_last() {
        Some((_, rest)) if full && opts.hooks().full_batch_drops_last_call => rest,
        _ => calls,
    };
    let mut tx = match db.begin_write() {
        Ok(tx) => tx,
        Err(e) => return (BatchOutcome::CommitFailed, Some(e)),
    };
    let mut i = 0;
    while i < calls.len() {
        let failed = match &calls[i] {
            Call::Fn(f) => {
                let r = f(&mut tx).err().map(|e| (i, e));
                i += 1;
                r
            }
            Call::Write(_) => {
                let end = i + calls[i..]
                    .iter()
                    .take_while(|c| matches!(c, Call::Write(_)))
                    .count();
                let how = MergeHow {
                    strategy: opts.merge_strategy,
                    policy: opts.presize,
                    drop_last: opts.hooks().rebuild_drops_last_call,
                };
                let r = apply_merged(&mut tx, &calls[i..end], how, work)
                    .err()
                    .map(|(k, e)| (i + k, e));
                i = end;
                r
            }
        };
        if let Some((index, e)) = failed {
            if opts.hooks().batch_keeps_failed_call {
                // A negative control: the rollback is forgotten (see `DebugHooks`).
                before_commit();
                let _ = tx.commit();
                return (BatchOutcome::CallFailed(index), Some(e));
            }
            tx.rollback();
            return (BatchOutcome::CallFailed(index), Some(e));
        }
    }
    // A negative control (see `DebugHooks::lone_call_skips_data_sync`).
    tx.skip_data_sync = opts.hooks().lone_call_skips_data_sync && calls.len() == 1;
    before_commit();
    match tx.commit() {
        Ok(()) => (BatchOutcome::Committed, None),
        Err(e) => (BatchOutcome::CommitFailed, Some(e)),
    }
}

/// How a run of write calls is merged: the database's options, read once per run.
struct MergeHow {
    strategy: MergeStrategy,
    policy: PresizePolicy,
    /// `DebugHooks::rebuild_drops_last_call`.
    drop_last: bool,
}

/// Merge a run of write calls and apply the result; on failure, the offset of the failing call
/// and its error.
fn apply_merged(
    tx: &mut WriteTx<'_>,
    calls: &[Call],
    MergeHow {
        strategy,
        policy,
        drop_last,
    }: MergeHow,
    work: &mut MergeWork,
) -> Result<(), (usize, Error)> {
    let batches: Vec<&WriteBatch> = calls
        .iter()
        .map(|c| match c {
            Call::Write(b) => b,
            Call::Fn(_) => unreachable!("only write calls are merged"),
        })
        .collect();
    if let [only] = batches[..] {
        // Nothing to merge: apply the caller's batch as it is, with no copy.
        return apply_records(tx, only).map_err(|(_, e)| (0, e));
    }
    let merged_calls = if strategy == MergeStrategy::Rebuild && drop_last {
        // A negative control (see `DebugHooks::rebuild_drops_last_call`); `batches` holds two
        // or more here.
        &batches[..batches.len() - 1]
    } else {
        &batches[..]
    };
    let (merged, w) = WriteBatch::merge_with_policy(merged_calls, strategy, policy)
        .map_err(|e| (0, Error::MalformedBatch(e.to_string())))?;
    work.bytes_copied += w.bytes_copied;
    work.records_decoded += w.records_decoded;
    work.records_encoded += w.records_encoded;
    work.buffer.add(&w.buffer);
    apply_records(tx, &merged).map_err(|(record, e)| (call_of_record(&batches, record), e))
}

/// Which of `batches` the merged record at `index` came from.
fn call_of_record(batches: &[&WriteBatch], index: usize) -> usize {
    let mut start = 0;
    for (k, b) in batches.iter().enumerate() {
        if index < start + b.len() {
            return k;
        }
        start += b.len();
    }
    batches.len().saturating_sub(1)
}

/// Turn what the coalescer said into the caller's result, running the call alone if asked.
pub fn finish_call(db: &Db, result: CallResult<Call>) -> Result<()> {
    match result {
        CallResult::Committed => Ok(()),
        CallResult::CommitFailed(m) => Err(Error::BatchCommitFailed(m)),
        CallResult::RunSolo(Call::Fn(f)) => db.update(|tx| f(tx)),
        CallResult::RunSolo(Call::Write(b)) => {
            db.update(|tx| apply_records(tx, &b).map_err(|(_, e)| e))
        }
    }
}
