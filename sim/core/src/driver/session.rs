//! One session: the workload's operations on an open database, every answer compared with the
//! model, every commit told to the oracle, every event hashed into the trace.

use super::group::GroupOp;
use super::{Driver, Hooks, SessionEnd, Step};
use crate::adapter::{list_model, Ack, Engine, EngineError, Listing};
use crate::apply::{apply_checked, model_apply, owned, Applied, ApplyFailure};
use crate::events::CommitEnd;
use crate::op::{path_to_string, KeyRange, Name, Op, Path};
use crate::verdict::{During, Verdict};
use crashlab_models::{CommitOutcome, KvModel, ModelError};
use std::rc::Rc;
use std::sync::Arc;

/// A commit's result: its summary, or the failure's message and the work that failed.
pub(super) type Committed = Result<String, (String, Vec<Op>)>;

/// Readers open at once, at most.
pub const READERS_MAX: usize = 4;

/// An open write transaction, the model of what it has done, and its data operations (what a
/// retry does again). The model is the oracle's state it began on, shared until the first write
/// copies it ([`Arc::make_mut`]): a transaction that only reads copies nothing.
pub(super) struct Open<'db, E: Engine> {
    tx: E::Writer<'db>,
    model: Arc<KvModel>,
    ops: Vec<Op>,
}

pub(super) type Writer<'db, E> = Option<Open<'db, E>>;
/// Open readers and the state each must keep seeing (the oracle's, shared).
type Readers<'db, E> = Vec<(<E as Engine>::Reader<'db>, Arc<KvModel>)>;

/// A batched transaction: the data operations the model accepted, and the model after them.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) ops: Vec<Op>,
    model: Option<KvModel>,
}

/// What an operation's handler decided about the session.
pub(super) enum Next {
    /// Record this result and go on.
    Go(String),
    /// The session ends here.
    End(SessionEnd),
}

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    pub(super) async fn session(&mut self, shared: &Rc<E>) -> Step<SessionEnd> {
        let mut readers: Readers<'_, E> = Vec::new();
        let end = self.run_ops(shared, &mut readers).await?;
        if self.settings.readers_checked_at_end {
            self.readers_at_end(readers)?;
        }
        Ok(end)
    }

    /// Every reader still open when the session ends reads its snapshot once more, with the
    /// disk's faults suspended (it is the harness's check). With the power already off its reads
    /// fail, which is no finding.
    fn readers_at_end(&mut self, readers: Readers<'_, E>) -> Step<()> {
        let (mut intact, open) = (0, readers.len());
        for (r, want) in readers {
            // The harness's own check: the disk's faults are suspended while it reads.
            let faults = self.suspend_faults();
            let read = E::snapshot_equals(&r, &want);
            self.medium.set_faults(faults);
            match read {
                Ok(true) => intact += 1,
                Ok(false) => {
                    return Err(self.violation(
                        Verdict::SnapshotMoved,
                        "a reader still open at the session's end reads a changed snapshot",
                    ))
                }
                Err(e) if e.is_io() => {}
                Err(e) => {
                    let detail = format!("a reader still open at the session's end: {e}");
                    return Err(self.failure(
                        Verdict::Failed(During::Reader),
                        &EngineError {
                            message: detail,
                            ..e
                        },
                    ));
                }
            }
        }
        if open > 0 {
            self.trace
                .record(format!("session end: {intact} of {open} readers intact"));
        }
        Ok(())
    }

    async fn run_ops<'db>(
        &mut self,
        shared: &'db Rc<E>,
        readers: &mut Readers<'db, E>,
    ) -> Step<SessionEnd> {
        let db: &E = shared;
        self.latched = None;
        let mut writer: Writer<'_, E> = None;
        let mut batch = Batch::default();
        while self.next < self.cfg.ops.len() {
            let index = self.next;
            let op = &self.cfg.ops[index];
            self.hooks.op_started(index);
            self.next += 1;
            self.stats.ops_run += 1;
            self.stats.called(op.kind());
            let next = match op {
                Op::Group { .. } if self.latched.is_some() => {
                    Next::Go(self.write_while_latched(db.begin_write().map(drop))?)
                }
                Op::Group {
                    callers,
                    calls,
                    seed,
                    schedule,
                } if writer.is_none() && batch.model.is_none() => {
                    let group = GroupOp {
                        callers: *callers,
                        calls: *calls,
                        seed: *seed,
                        schedule: schedule.as_ref(),
                    };
                    self.run_group(shared, group).await?
                }
                Op::Group { .. } => Next::Go("skipped (a transaction is open)".into()),
                _ => self.op(db, op, &mut writer, &mut batch, readers)?,
            };
            let result = match next {
                Next::Go(result) => result,
                Next::End(end) => return Ok(end),
            };
            self.log_op(index, op, &result);
            self.trace
                .record_args(format_args!("{index} {op} -> {result}"));
            self.disk_untouched_while_latched()?;
            if std::mem::take(&mut self.restart_after_io_error) {
                // The open transaction is abandoned (rolled back) with the session.
                self.trace.record("restarting after an I/O error".into());
                return Ok(SessionEnd::Reopen);
            }
            let news = self.hooks.between_ops(&self.medium).await;
            self.take_news(news)?;
            if self.power.is_off() {
                self.trace.record("power cut".into());
                return Ok(SessionEnd::Crash);
            }
        }
        Ok(SessionEnd::Done)
    }

    fn op<'db>(
        &mut self,
        db: &'db E,
        op: &Op,
        writer: &mut Writer<'db, E>,
        batch: &mut Batch,
        readers: &mut Readers<'db, E>,
    ) -> Step<Next> {
        let index = self.next - 1;
        let result = match op {
            Op::Reopen => return Ok(Next::End(SessionEnd::Reopen)),
            Op::Crash if self.caps.crash_is_process_crash => {
                self.trace
                    .record(format!("{index} crash (no_sync: process crash)"));
                return Ok(Next::End(SessionEnd::Reopen));
            }
            Op::Crash => return Ok(Next::End(SessionEnd::Crash)),
            Op::PowerCutIn(n) => {
                self.power.arm(*n);
                format!("armed: power cut after {n} storage calls")
            }
            Op::Commit if self.latched.is_some() && self.settings.batched => {
                let work = std::mem::take(batch);
                self.write_while_latched(db.commit_batch(&work.ops).map(drop))?
            }
            Op::Commit => {
                let committed = if self.settings.batched {
                    self.commit_batch(db, std::mem::take(batch))?
                } else {
                    self.commit(db, writer)?
                };
                match committed {
                    Ok(r) => r,
                    Err((msg, _)) if self.power.is_off() => {
                        self.trace
                            .record(format!("{index} {op} -> {msg}; power cut"));
                        return Ok(Next::End(SessionEnd::Crash));
                    }
                    Err((msg, work)) => return self.after_failed_commit(db, writer, msg, work),
                }
            }
            Op::Rollback => {
                *writer = None;
                *batch = Batch::default();
                "ok".to_string()
            }
            Op::BeginReader => self.begin_reader(db, readers)?,
            Op::EndReader(n) => self.end_reader(readers, *n as usize)?,
            Op::Group { .. } => unreachable!("the session runs groups itself"),
            Op::Get { path, key } => self.get(db, writer, path, key)?,
            Op::Scan { path } => self.scan(db, writer, path)?,
            Op::Range { path, range } => self.range(db, writer, path, range)?,
            Op::Check => self.live_check(db, writer.is_some())?,
            Op::NextSequence { path } if !self.settings.batched => {
                self.next_sequence(db, writer, op, path)?
            }
            data if self.settings.batched => self.gather(batch, data),
            data => self.apply(db, writer, data)?,
        };
        Ok(Next::Go(result))
    }

    /// A group of concurrent callers; a commit of the group that failed ends the session as a
    /// failed commit does.
    async fn run_group(&mut self, db: &Rc<E>, group: GroupOp<'_>) -> Step<Next> {
        let index = self.next - 1;
        match self.group(db, group).await? {
            Ok(summary) => Ok(Next::Go(summary)),
            Err(msg) if self.power.is_off() => {
                self.trace
                    .record(format!("{index} group -> {msg}; power cut"));
                Ok(Next::End(SessionEnd::Crash))
            }
            Err(msg) => self.after_failed_group(db, msg),
        }
    }

    /// The start of a commit: its state joins the oracle's chain.
    fn begin_commit(&mut self, model: KvModel) -> usize {
        self.begin_commit_shared(Arc::new(model))
    }

    /// [`Driver::begin_commit`] of a shared state (a transaction's, which may still be the one
    /// it began on).
    fn begin_commit_shared(&mut self, model: Arc<KvModel>) -> usize {
        let index = self.oracle.begin_commit_shared(model);
        self.promise_changed();
        index
    }

    /// The end of a commit: `Err` is a failed commit (what follows is the application's choice);
    /// a commit that fails with anything but an I/O error ends the run instead
    /// ([`Driver::refused_commit`]).
    fn end_commit(
        &mut self,
        db: &E,
        index: usize,
        done: Result<Ack, EngineError>,
    ) -> Step<Result<String, String>> {
        match done {
            Ok(ack) => {
                self.stats.commits += 1;
                let outcome = match ack {
                    Ack::Durable => CommitOutcome::Durable,
                    Ack::Acknowledged => CommitOutcome::Acknowledged,
                };
                self.oracle.end_commit(index, outcome);
                self.promise_changed();
                self.log_commit(index, outcome.into());
                Ok(Ok(format!("ok S[{index}]")))
            }
            Err(e) => {
                self.stats.failed_commits += 1;
                self.oracle.end_commit(index, CommitOutcome::Failed);
                self.promise_changed();
                self.log_commit(index, CommitEnd::Failed);
                if !e.is_io() {
                    return Err(self.refused_commit(db, &e));
                }
                Ok(Err(format!("failed S[{index}]: {e}")))
            }
        }
    }

    /// Commit the open transaction. A failed commit gives back the message and the
    /// transaction's data operations (what a retry does again).
    pub(super) fn commit(&mut self, db: &E, writer: &mut Writer<'_, E>) -> Step<Committed> {
        let Some(Open { tx, model, ops }) = writer.take() else {
            return Ok(Ok("nothing to commit".into()));
        };
        let index = self.begin_commit_shared(model);
        let done = db.commit(tx);
        Ok(self.end_commit(db, index, done)?.map_err(|msg| (msg, ops)))
    }

    /// A batched transaction's operations as one write batch.
    pub(super) fn commit_batch(&mut self, db: &E, batch: Batch) -> Step<Committed> {
        let Some(model) = batch.model else {
            return Ok(Ok("nothing to commit".into()));
        };
        let index = self.begin_commit(model);
        let done = db.commit_batch(&batch.ops);
        Ok(self
            .end_commit(db, index, done)?
            .map_err(|msg| (msg, batch.ops)))
    }

    /// A data operation joins the batched transaction if the model accepts it (a write batch
    /// has no refusals to compare: a put creates missing buckets on its path).
    pub(super) fn gather(&mut self, batch: &mut Batch, op: &Op) -> String {
        let mut next = batch
            .model
            .clone()
            .unwrap_or_else(|| self.oracle.current().clone());
        match model_apply(&mut next, op) {
            Ok(()) => {
                batch.model = Some(next);
                batch.ops.push(op.clone());
                "batched".into()
            }
            Err(me) => format!("left out {me:?}"),
        }
    }

    fn begin_reader<'db>(&mut self, db: &'db E, readers: &mut Readers<'db, E>) -> Step<String> {
        if readers.len() >= READERS_MAX {
            return Ok(format!("skipped ({READERS_MAX} readers open)"));
        }
        match db.begin_read() {
            Ok(r) => {
                let state = Arc::clone(self.oracle.current_shared());
                let token = self.caps.reader_views.then(|| E::reader_token(&r));
                self.hooks.reader_opened(token, &state);
                readers.push((r, state));
                Ok(format!("reader {}", readers.len() - 1))
            }
            Err(e) => self.engine_error(During::BeginReader, e),
        }
    }

    fn end_reader(&mut self, readers: &mut Readers<'_, E>, n: usize) -> Step<String> {
        if n >= readers.len() {
            return Ok("no such reader".into());
        }
        let (r, want) = readers.remove(n);
        self.hooks.reader_closed(n);
        match E::snapshot_equals(&r, &want) {
            Ok(true) => Ok("snapshot intact".into()),
            Ok(false) => Err(self.violation(
                Verdict::SnapshotMoved,
                "a reader's snapshot changed while it was open",
            )),
            Err(e) => self.engine_error(During::Reader, e),
        }
    }

    /// An engine error from an operation: I/O errors are allowed, anything else is not.
    fn engine_error<T: From<String>>(&mut self, during: During, e: EngineError) -> Step<T> {
        if e.is_io() {
            self.stats.io_errors += 1;
            self.restart_after_io_error = self.caps.io_error_ends_session;
            return Ok(T::from(format!("io error: {e}")));
        }
        Err(self.failure(Verdict::Failed(during), &e))
    }

    fn get(&mut self, db: &E, writer: &mut Writer<'_, E>, path: &Path, key: &Name) -> Step<String> {
        let (got, want) = match writer {
            Some(Open { tx, model, .. }) => (
                E::get_in(tx, path, key),
                model.get(&owned(path), &key.0).map(<[u8]>::to_vec),
            ),
            None => (
                db.get(path, key),
                self.oracle
                    .current()
                    .get(&owned(path), &key.0)
                    .map(<[u8]>::to_vec),
            ),
        };
        match got {
            Ok(got) if got == want => Ok(format!("{} bytes", want.map_or(0, |v| v.len()))),
            Ok(got) => Err(self.violation(
                Verdict::ModelMismatch,
                format!(
                    "get {} returned {:?} bytes, model {:?}",
                    path_to_string(path),
                    got.map(|v| v.len()),
                    want.map(|v| v.len())
                ),
            )),
            Err(e) => self.engine_error(During::Get, e),
        }
    }

    fn scan(&mut self, db: &E, writer: &mut Writer<'_, E>, path: &Path) -> Step<String> {
        let (got, want) = match writer {
            Some(Open { tx, model, .. }) => (
                E::scan_in(tx, path),
                model.bucket(&owned(path)).map(list_model),
            ),
            None => (
                db.scan(path),
                self.oracle.current().bucket(&owned(path)).map(list_model),
            ),
        };
        match got {
            Ok(got) if got == want => Ok(format!("{} items", want.map_or(0, |w| w.len()))),
            Ok(_) => Err(self.violation(
                Verdict::ModelMismatch,
                format!("scan {} differs from the model", path_to_string(path)),
            )),
            Err(e) => self.engine_error(During::Scan, e),
        }
    }

    /// Begin the write transaction if none is open. `Err` is the operation's result when it
    /// could not begin (an I/O error, or a latched engine's refusal).
    fn begin_on_demand<'db>(
        &mut self,
        db: &'db E,
        writer: &mut Writer<'db, E>,
    ) -> Step<Result<(), String>> {
        if writer.is_some() {
            return Ok(Ok(()));
        }
        if self.latched.is_some() {
            return self
                .write_while_latched(db.begin_write().map(drop))
                .map(Err);
        }
        match db.begin_write() {
            Ok(tx) => {
                *writer = Some(Open {
                    tx,
                    model: Arc::clone(self.oracle.current_shared()),
                    ops: Vec::new(),
                });
                Ok(Ok(()))
            }
            Err(e) => self.engine_error(During::Begin, e).map(Err),
        }
    }

    /// A data operation in the write transaction (begun on demand).
    pub(super) fn apply<'db>(
        &mut self,
        db: &'db E,
        writer: &mut Writer<'db, E>,
        op: &Op,
    ) -> Step<String> {
        if let Err(result) = self.begin_on_demand(db, writer)? {
            return Ok(result);
        }
        let Some(Open { tx, model, ops }) = writer.as_mut() else {
            unreachable!("the writer was just begun")
        };
        ops.push(op.clone());
        let model = Arc::make_mut(model);
        // A delete goes through `delete_in`, so an engine that says whether the key was there
        // has its answer compared with the model's.
        let engine = |op: &Op| match op {
            Op::Delete { path, key } => E::delete_in(tx, path, key),
            _ => E::apply(tx, op).map(|()| None),
        };
        match apply_checked(model, op, engine, EngineError::refusal) {
            Ok(Applied::Done(existed)) => {
                if existed == Some(false) {
                    self.stats.called("delete absent");
                }
                Ok("ok".into())
            }
            Ok(Applied::Refused(me)) => {
                match me {
                    ModelError::TooDeep => self.stats.called("create past the nesting limit"),
                    ModelError::KeyTooLarge => self.stats.called("name past the key limit"),
                    // A value's operation on a sub-bucket's key, or the other way round (the
                    // collision fragments): refused alike by the model and the engine.
                    ModelError::Incompatible => self.stats.called("incompatible value"),
                    _ => {}
                }
                Ok(format!("refused {me:?}"))
            }
            Err(ApplyFailure::Mismatch(detail)) => {
                Err(self.violation(Verdict::ModelMismatch, detail))
            }
            Err(ApplyFailure::Engine(e)) => self.engine_error(During::Write, e),
        }
    }

    /// Part of a bucket through the engine's cursor, in the write transaction if one is open.
    fn range(
        &mut self,
        db: &E,
        writer: &mut Writer<'_, E>,
        path: &Path,
        range: &KeyRange,
    ) -> Step<String> {
        let (got, bucket) = match writer {
            Some(Open { tx, model, .. }) => (
                E::range_in(tx, path, range),
                model.bucket(&owned(path)).map(list_model),
            ),
            None => (
                db.range(path, range),
                self.oracle.current().bucket(&owned(path)).map(list_model),
            ),
        };
        self.count_cursor_calls(range, bucket.as_ref());
        let want = bucket.map(|l| range.select(&l));
        match got {
            Ok(got) if got == want => Ok(format!("{} items", want.map_or(0, |w| w.len()))),
            Ok(got) => Err(self.violation(
                Verdict::ModelMismatch,
                format!(
                    "range {}{range} read {:?} keys, the model {:?}",
                    path_to_string(path),
                    got.map(|g| g.len()),
                    want.map(|w| w.len())
                ),
            )),
            Err(e) => self.engine_error(During::Scan, e),
        }
    }

    /// Which cursor calls a range makes, for the run's API coverage.
    fn count_cursor_calls(&mut self, range: &KeyRange, bucket: Option<&Listing>) {
        let start = if range.reverse {
            &range.to
        } else {
            &range.from
        };
        let present = |k: &Name| bucket.is_some_and(|b| b.iter().any(|(key, _)| *key == k.0));
        let call = match (start, range.reverse) {
            (Some(k), _) if present(k) => "seek present",
            (Some(_), _) => "seek absent",
            (None, false) => "first",
            (None, true) => "last",
        };
        self.stats.called(call);
        self.stats
            .called(if range.reverse { "prev" } else { "next" });
    }

    /// Increment a bucket's sequence: the value the engine returns is the model's.
    fn next_sequence<'db>(
        &mut self,
        db: &'db E,
        writer: &mut Writer<'db, E>,
        op: &Op,
        path: &Path,
    ) -> Step<String> {
        if let Err(result) = self.begin_on_demand(db, writer)? {
            return Ok(result);
        }
        let Some(Open { tx, model, ops }) = writer.as_mut() else {
            unreachable!("the writer was just begun")
        };
        ops.push(op.clone());
        // What the model's `next_sequence` would give, without taking it yet: the model follows
        // only an engine that agrees.
        let path_owned = owned(path);
        let want = model
            .bucket(&path_owned)
            .map(|b| b.sequence.wrapping_add(1))
            .ok_or(ModelError::BucketNotFound);
        match (E::next_sequence(tx, path), want) {
            (Ok(got), Ok(want)) if got == want => {
                let taken = Arc::make_mut(model).next_sequence(&path_owned);
                debug_assert_eq!(taken, Ok(want));
                Ok(format!("{got}"))
            }
            (Err(e), Err(want)) if e.refusal() == Some(want) => Ok(format!("refused {want:?}")),
            (Ok(got), want) => Err(self.violation(
                Verdict::ModelMismatch,
                format!(
                    "next-seq {} returned {got}, model {want:?}",
                    path_to_string(path)
                ),
            )),
            (Err(e), want) if e.refusal().is_some() => Err(self.violation(
                Verdict::ModelMismatch,
                format!(
                    "next-seq {} refused: {e}; model {want:?}",
                    path_to_string(path)
                ),
            )),
            (Err(e), _) => self.engine_error(During::Write, e),
        }
    }
}
