//! Feeding the structured [`EventLog`] (kept only when a report asked for it): each method is
//! one branch and nothing more when the log is off.

use super::{Driver, Hooks};
use crate::adapter::Engine;
use crate::events::{
    sector_fates, CallRow, CommitEnd, Event, EventLog, Fate, GroupLanes, PowerCut, Recovery, What,
};
use crashlab_models::KvModel;
use std::sync::Arc;

/// What the disk looked like just before a power cut, when the log is on.
pub(super) struct BeforeCut {
    pending: Vec<u64>,
    visible: Vec<u8>,
    durable: Vec<u8>,
}

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    /// Keep a structured event log of this run (and every fault the disk injects).
    pub fn keep_event_log(&mut self) {
        self.log = Some(Box::default());
        self.trace.keep_all();
        self.medium.log_faults();
    }

    /// The log, with every trace line, if one was kept.
    pub fn take_event_log(&mut self) -> Option<EventLog> {
        let mut log = *self.log.take()?;
        self.flush_faults(&mut log);
        log.lines = self.trace.take_all();
        Some(log)
    }

    fn flush_faults(&self, log: &mut EventLog) {
        let (op, pending) = (self.next.saturating_sub(1), self.pending_count());
        for f in self.medium.take_faults() {
            log.events.push(Event {
                seq: self.trace.events(),
                op,
                sim_time_ns: f.sim_time_ns,
                pending_sectors: pending,
                what: What::Fault(f),
            });
        }
    }

    fn pending_count(&self) -> u64 {
        self.medium.pending_sector_count()
    }

    /// Record `what` now (the faults injected since the last event go first).
    pub(super) fn log_event(&mut self, what: impl FnOnce() -> What) {
        let Some(mut log) = self.log.take() else {
            return;
        };
        self.flush_faults(&mut log);
        log.events.push(Event {
            seq: self.trace.events(),
            op: self.next.saturating_sub(1),
            sim_time_ns: self.medium.io_stats().sim_time_ns,
            pending_sectors: self.pending_count(),
            what: what(),
        });
        self.log = Some(log);
    }

    pub(super) fn log_op(&mut self, index: usize, op: &crate::op::Op, result: &str) {
        self.log_event(|| What::Op {
            index,
            op: op.to_string(),
            result: result.to_string(),
            failed: crate::events::result_failed(result),
        });
    }

    pub(super) fn log_commit(&mut self, state: usize, outcome: CommitEnd) {
        self.log_event(|| What::Commit { state, outcome });
    }

    /// The disk before a cut, when the log is on. A file system's cuts are not logged as
    /// page maps (the log's power cut is one disk's): its trace lines say what they kept.
    pub(super) fn before_cut(&self) -> Option<BeforeCut> {
        self.log.as_ref()?;
        let disk = self.medium.disk()?;
        Some(BeforeCut {
            pending: disk.pending_sectors(),
            visible: disk.image(),
            durable: disk.durable_image(),
        })
    }

    pub(super) fn log_power_cut(&mut self, before: Option<BeforeCut>) {
        let Some(b) = before else { return };
        let Some(disk) = self.medium.disk() else {
            return;
        };
        let ss = u64::from(disk.config().sector_size);
        let after = disk.durable_image();
        // The disk's own decisions; bytes compared only if it kept none (a sector rewritten
        // with the bytes it held reads the same either way, so bytes alone cannot tell).
        let sectors = match disk.take_last_cut() {
            Some((whole, torn, lost)) => {
                let mut all: Vec<(u64, Fate)> =
                    whole.into_iter().map(|s| (s, Fate::Survived)).collect();
                all.extend(torn.into_iter().map(|s| (s, Fate::Torn)));
                all.extend(lost.into_iter().map(|s| (s, Fate::Lost)));
                all.sort_unstable_by_key(|f| f.0);
                all
            }
            None => sector_fates(&b.pending, ss, &b.visible, &b.durable, &after),
        };
        self.log_event(|| {
            What::PowerCut(PowerCut {
                sector_size: ss,
                sectors,
                image_before: Arc::new(b.visible),
                image_after: Arc::new(after),
            })
        });
    }

    /// What the oracle allows before it judges a recovery, when the log is on.
    pub(super) fn allowed_now(&self, power_cut: bool) -> Option<((usize, usize), Vec<KvModel>)> {
        self.log.as_ref()?;
        let range = if power_cut {
            self.oracle.allowed_after_power_cut()
        } else {
            self.oracle.allowed_after_reopen()
        };
        let states = (range.0..=range.1)
            .map(|i| self.oracle.state(i).clone())
            .collect();
        Some((range, states))
    }

    pub(super) fn log_recovery(
        &mut self,
        allowed: Option<((usize, usize), Vec<KvModel>)>,
        observed: &KvModel,
        found: Option<usize>,
        problems: &Result<Vec<String>, impl std::fmt::Display>,
        after_power_cut: bool,
    ) {
        let Some((range, states)) = allowed else {
            return;
        };
        let problems = match problems {
            Ok(p) => Ok(p.clone()),
            Err(e) => Err(e.to_string()),
        };
        let observed = observed.clone();
        self.log_event(|| {
            What::Recovery(Box::new(Recovery {
                after_power_cut,
                allowed: range,
                allowed_states: states,
                observed,
                found,
                problems,
            }))
        });
    }

    /// A group's lanes: each call with its caller and answer, each commit with its calls.
    pub(super) fn log_group(
        &mut self,
        callers: u32,
        calls: &[crate::calls::CallSpec],
        answers: &[(usize, crashlab_models::Answer)],
        commits: Vec<(Vec<usize>, Option<CommitEnd>)>,
    ) {
        let mut rows: Vec<CallRow> = calls
            .iter()
            .map(|c| CallRow {
                caller: c.caller,
                ops: c.ops.iter().map(ToString::to_string).collect(),
                fails: c.fails,
                answer: String::new(),
            })
            .collect();
        for &(i, a) in answers {
            if let Some(r) = rows.get_mut(i) {
                r.answer = format!("{a:?}");
            }
        }
        self.log_event(|| {
            What::Group(GroupLanes {
                callers,
                calls: rows,
                commits,
            })
        });
    }

    /// Whether the log is on (a group keeps its lanes only then).
    pub(super) fn logging(&self) -> bool {
        self.log.is_some()
    }
}
