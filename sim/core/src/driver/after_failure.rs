//! What the application does after a commit fails with an I/O error — the seed's
//! [`AfterFailure`] — and the latch an engine may document for it.
//!
//! An engine that latches (crashlab's) refuses every later write on the same handle with
//! [`ErrorKind::Latched`] and writes nothing to the disk until it is reopened; readers keep
//! working on the last acknowledged state, which the session goes on checking against the model.
//! An engine whose contract says reopen (redb's) is always reopened, whatever the seed chose. An
//! engine that declares neither must take the retried work or the next commit as if nothing had
//! failed; the failed commit's state stays possible in the oracle until a later commit replaces
//! it.

use super::session::{Batch, Next, Writer};
use super::{Driver, Hooks, SessionEnd, Step, Stop};
use crate::adapter::{Engine, EngineError, ErrorKind};
use crate::config::AfterFailure;
use crate::op::Op;
use crate::verdict::Verdict;

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    /// The policy in force: an engine whose I/O errors end the session is always reopened.
    fn policy(&self) -> AfterFailure {
        if self.caps.io_error_ends_session {
            AfterFailure::Restart
        } else {
            self.cfg.after_failure
        }
    }

    /// A commit failed with an I/O error and the power is on: do what the seed chose.
    pub(super) fn after_failed_commit<'db>(
        &mut self,
        db: &'db E,
        writer: &mut Writer<'db, E>,
        msg: String,
        work: Vec<Op>,
    ) -> Step<Next> {
        let index = self.next - 1;
        let latches = self.caps.latches_after_failed_commit;
        match self.policy() {
            AfterFailure::Restart => {
                self.trace
                    .record(format!("{index} commit -> {msg}; restarting"));
                Ok(Next::End(SessionEnd::Reopen))
            }
            AfterFailure::Retry if latches => {
                self.stats.retries += 1;
                let batched = self.settings.batched;
                let refused = self.latch_holds(|| match batched {
                    true => db.commit_batch(&work).map(drop),
                    false => db.begin_write().map(drop),
                })?;
                self.trace.record(format!(
                    "{index} commit -> {msg}; retried: {refused}; restarting"
                ));
                Ok(Next::End(SessionEnd::Reopen))
            }
            AfterFailure::Retry => {
                self.stats.retries += 1;
                self.retry(db, writer, msg, &work)
            }
            AfterFailure::CarryOn => {
                if latches {
                    self.latched = Some(self.medium.io_stats());
                }
                Ok(Next::Go(format!("{msg}; carrying on")))
            }
        }
    }

    /// A commit of a group failed with an I/O error and the power is on. The callers do not
    /// retry their calls themselves: on an engine that does not latch, a retry is a restart.
    pub(super) fn after_failed_group(&mut self, db: &E, msg: String) -> Step<Next> {
        let index = self.next - 1;
        let latches = self.caps.latches_after_failed_commit;
        match self.policy() {
            AfterFailure::Retry if latches => {
                self.stats.retries += 1;
                let refused = self.latch_holds(|| db.begin_write().map(drop))?;
                self.trace.record(format!(
                    "{index} group -> {msg}; retried: {refused}; restarting"
                ));
                Ok(Next::End(SessionEnd::Reopen))
            }
            AfterFailure::Restart | AfterFailure::Retry => {
                self.trace
                    .record(format!("{index} group -> {msg}; restarting"));
                Ok(Next::End(SessionEnd::Reopen))
            }
            AfterFailure::CarryOn => {
                if latches {
                    self.latched = Some(self.medium.io_stats());
                }
                Ok(Next::Go(format!("{msg}; carrying on")))
            }
        }
    }

    /// A commit refused with anything but an I/O error: a violation, or the end of the run when
    /// damage the disk made may explain it. A latch covers every failed commit, a refusal as
    /// much as an I/O failure, and a run never goes on past a refusal to find out: so before
    /// the run ends, a write on the handle must be refused with the latch's error, without
    /// touching the disk.
    pub(super) fn refused_commit(&mut self, db: &E, e: &EngineError) -> Stop {
        let stop = self.failure(Verdict::CommitRefused, e);
        if !matches!(stop, Stop::DiskFailure(_)) || !self.caps.latches_after_failed_commit {
            return stop;
        }
        match self.latch_holds(|| db.begin_write().map(drop)) {
            Ok(refused) => {
                let index = self.next - 1;
                self.trace
                    .record(format!("{index} commit refused; {refused}"));
                stop
            }
            Err(violation) => violation,
        }
    }

    /// The handle is latched from here: `write` (a write on it) must be refused with the
    /// latch's error, and the disk must see nothing.
    fn latch_holds(&mut self, write: impl FnOnce() -> Result<(), EngineError>) -> Step<String> {
        self.latched = Some(self.medium.io_stats());
        let refused = self.write_while_latched(write())?;
        self.disk_untouched_while_latched()?;
        Ok(refused)
    }

    /// Do the failed transaction's work again on the same handle (an engine that does not
    /// latch), once: a second failure restarts.
    fn retry<'db>(
        &mut self,
        db: &'db E,
        writer: &mut Writer<'db, E>,
        msg: String,
        work: &[Op],
    ) -> Step<Next> {
        let committed = if self.settings.batched {
            let mut batch = Batch::default();
            for op in work {
                self.gather(&mut batch, op);
            }
            self.commit_batch(db, batch)?
        } else {
            for op in work {
                self.apply(db, writer, op)?;
            }
            self.commit(db, writer)?
        };
        let index = self.next - 1;
        match committed {
            Ok(done) => Ok(Next::Go(format!("{msg}; retried: {done}"))),
            Err((again, _)) => {
                let (then, end) = if self.power.is_off() {
                    ("power cut", SessionEnd::Crash)
                } else {
                    ("restarting", SessionEnd::Reopen)
                };
                self.trace
                    .record(format!("{index} commit -> {msg}; retry {again}; {then}"));
                Ok(Next::End(end))
            }
        }
    }

    /// A write the application tried on a latched handle: the engine must refuse it with its
    /// latch, neither taking it nor trying the disk.
    pub(super) fn write_while_latched(&mut self, tried: Result<(), EngineError>) -> Step<String> {
        match tried {
            Ok(()) => Err(self.violation(
                Verdict::Latch,
                "a write succeeded on the handle whose commit failed; the engine documents a \
                 latch until it is reopened",
            )),
            Err(e) if e.kind == ErrorKind::Latched => {
                self.stats.latched_refusals += 1;
                Ok("refused: latched".into())
            }
            Err(e) => Err(self.violation(
                Verdict::Latch,
                format!("a write on the latched handle failed with `{e}`, not the latch's refusal"),
            )),
        }
    }

    /// While latched, nothing may reach the disk: no write, no sync, no change of length.
    pub(super) fn disk_untouched_while_latched(&self) -> Step<()> {
        let Some(then) = &self.latched else {
            return Ok(());
        };
        let d = self.medium.io_stats().since(then);
        if d.writes + d.syncs + d.set_lens == 0 {
            return Ok(());
        }
        Err(self.violation(
            Verdict::Latch,
            format!(
                "the latched engine touched the disk: {} writes, {} syncs, {} length changes \
                 since its commit failed",
                d.writes, d.syncs, d.set_lens
            ),
        ))
    }
}
