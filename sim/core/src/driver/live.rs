//! Integrity while the process lives: a `check` operation runs the engine's own integrity check
//! on the open database and compares everything a fresh snapshot holds with the model.
//!
//! Checks after a recovery see only what survives a reopen; a page leaked or allocated twice by
//! a commit, which the next open's freelist rebuild heals, is visible only here. The check is the
//! harness's own work, so the disk's faults are suspended while it reads. It runs between
//! transactions (readers may be open): with a write transaction open it is skipped, since an
//! engine's check may need the writer's lock, and on a handle latched after a failed commit,
//! whose memory the engine no longer vouches for.

use super::{Driver, Hooks, Step};
use crate::adapter::{Engine, EngineError};
use crate::verdict::{During, Verdict};

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    pub(super) fn live_check(&mut self, db: &E, writing: bool) -> Step<String> {
        if !self.settings.live_checks {
            return Ok("skipped (live checks off)".into());
        }
        if writing {
            return Ok("skipped (a write transaction is open)".into());
        }
        if self.latched.is_some() {
            // A latched engine's memory is what its failed commit left (crashlab's freelist may
            // hold that commit's allocations): it promises only to refuse writes until reopened.
            return Ok("skipped (latched after a failed commit)".into());
        }
        let faults = self.suspend_faults();
        let problems = self.caps.live_check.then(|| db.check_live());
        let state = db
            .begin_read()
            .and_then(|r| E::snapshot_equals(&r, self.oracle.current()));
        self.medium.set_faults(faults);
        if self.power.is_off() {
            // An armed power cut landed in the check's reads: the session ends with it.
            return Ok("power cut during the check".into());
        }
        self.stats.live_checks += 1;
        let problems = match problems.transpose() {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => return self.check_failed(e),
        };
        if !problems.is_empty() {
            return Err(self.violation(
                Verdict::IntegrityCheck,
                format!(
                    "live check found {} problems: {}",
                    problems.len(),
                    problems.join("; ")
                ),
            ));
        }
        match state {
            Ok(true) => Ok(if self.caps.live_check {
                "clean; state is the model's".into()
            } else {
                "state is the model's".into()
            }),
            Ok(false) => Err(self.violation(
                Verdict::ModelMismatch,
                "live check: the committed state differs from the model",
            )),
            Err(e) => self.check_failed(e),
        }
    }

    /// The check itself failed. Faults are suspended, but a sector that went bad earlier stays
    /// bad: an I/O error is the disk's; anything else is the engine's.
    fn check_failed(&mut self, e: EngineError) -> Step<String> {
        if e.is_io() {
            self.stats.io_errors += 1;
            return Ok(format!("io error: {e}"));
        }
        let detail = format!("live check: {e}");
        Err(self.failure(
            Verdict::Failed(During::Check),
            &EngineError {
                message: detail,
                ..e
            },
        ))
    }
}
