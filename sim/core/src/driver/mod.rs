//! The one session driver: every run — a seeded sweep, the crash-state checker's recorded run, a
//! replayed case — is this loop over the [`Engine`] adapter:
//!
//! create → { open (retrying transient I/O errors) → judge the recovery → a session of
//! operations → close → power cut or reopen } → a last reopen, judged.
//!
//! Rules the driver applies (each is what an application would do):
//! - the database is created before faults are switched on (power loss during creation leaves
//!   an unopenable file in bbolt too; it is out of scope);
//! - after a commit that fails with an I/O error the application does what the seed chose
//!   ([`AfterFailure`](crate::config::AfterFailure)): it restarts, retries the work on the same
//!   handle, or carries on; an engine that latches must then refuse every write and write
//!   nothing until reopened, and one whose contract says reopen is always reopened. A commit that
//!   fails with anything but an I/O error is a violation (no fault makes a valid database refuse
//!   a commit — this hid regression 004);
//! - an open that fails with an I/O error is retried; if it keeps failing the disk has lost data
//!   it cannot give back and the run stops with a disk failure, which is not a violation;
//! - the harness's own verification reads run with faults suspended;
//! - an engine whose crashes are process crashes (crashlab with `no_sync`) keeps its page cache
//!   across a `crash`, since a power cut without syncs may legitimately corrupt anything;
//! - a power cut ends the session before the database is closed: nothing the close would write
//!   reaches the disk; a close that fails lets acknowledged, non-durable commits be lost.
//!
//! What a mode adds — faults, time and background tasks for the runner, recording for the
//! checker — comes through [`Hooks`]. Verdicts are typed ([`Verdict`]).

mod after_failure;
mod checksum_probe;
mod group;
mod hooks;
mod live;
mod log;
mod patched;
mod recovery;
mod session;

pub use group::GroupFigures;
pub use hooks::{Hooks, News};
pub use recovery::{read_as_an_application, recover_image, Recovered};

use crate::adapter::{Capabilities, Engine, EngineConfig, EngineError, ErrorKind};
use crate::config::RunConfig;
use crate::disk::{FaultConfig, IoStats};
use crate::medium::Medium;
use crate::power::PowerSwitch;
use crate::profile::Profile;
use crate::rng::SimRng;
use crate::trace::Trace;
use crate::verdict::{During, Stop, Verdict, Violation};
use crashlab_engine::Counters;
use crashlab_models::{DurabilityOracle, KvModel};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Counts of what a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    pub ops_run: u64,
    pub commits: u64,
    pub failed_commits: u64,
    pub crashes: u64,
    pub reopens: u64,
    pub io_errors: u64,
    /// Snapshot checks made by background reader tasks while the writer committed.
    pub background_snapshot_checks: u64,
    /// Power cuts fired by the timer task at a simulated instant.
    pub timer_power_cuts: u64,
    /// Groups of concurrent callers.
    pub groups: GroupFigures,
    /// Failed commits the application retried on the same handle.
    pub retries: u64,
    /// Writes a latched engine refused, as it documents, after a failed commit.
    pub latched_refusals: u64,
    /// Integrity checks and whole-state comparisons run on the live database.
    pub live_checks: u64,
    /// Bits the checksum probe flipped, each in a copy of the file opened in memory.
    pub checksum_probes: u64,
    /// The operations and engine calls the run made, by name (`seek absent`, `prev`, ...): what
    /// of the engine's public surface the workload reached.
    pub api_calls: BTreeMap<&'static str, u64>,
    /// How often the run crossed each of the format's scale thresholds (filled in by the
    /// runner from the engine's counters).
    pub thresholds: crate::thresholds::Thresholds,
}

impl RunStats {
    /// Add `other`'s counts to these.
    pub fn add(&mut self, other: &RunStats) {
        self.ops_run += other.ops_run;
        self.commits += other.commits;
        self.failed_commits += other.failed_commits;
        self.crashes += other.crashes;
        self.reopens += other.reopens;
        self.io_errors += other.io_errors;
        self.background_snapshot_checks += other.background_snapshot_checks;
        self.timer_power_cuts += other.timer_power_cuts;
        self.groups.add(&other.groups);
        self.retries += other.retries;
        self.latched_refusals += other.latched_refusals;
        self.live_checks += other.live_checks;
        self.checksum_probes += other.checksum_probes;
        self.thresholds.add(&other.thresholds);
        for (name, n) in &other.api_calls {
            *self.api_calls.entry(name).or_default() += n;
        }
    }

    /// Count one call of `name`.
    pub(crate) fn called(&mut self, name: &'static str) {
        *self.api_calls.entry(name).or_default() += 1;
    }
}

/// How the driver commits, and which of its checks run (every check is on by default; a test
/// turns one off to show that a negative control is caught by that check and no other).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Gather each transaction's data operations and commit them as one write batch
    /// ([`Engine::commit_batch`]; the engine must declare `write_batches`).
    pub batched: bool,
    /// Readers still open when a session ends (a reopen, a power cut, the end of the run) read
    /// their snapshot once more and must find what they began on.
    pub readers_checked_at_end: bool,
    /// `check` operations run the engine's integrity check and a whole-state comparison on the
    /// live database.
    pub live_checks: bool,
    /// After each judged recovery, the checksum probe flips a bit in each range the engine
    /// declares checksummed ([`Capabilities::checksummed`]) and opens the copy in memory.
    pub checksum_probes: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            batched: false,
            readers_checked_at_end: true,
            live_checks: true,
            checksum_probes: true,
        }
    }
}

pub(crate) type Step<T> = Result<T, Stop>;

/// How a session ended.
pub(crate) enum SessionEnd {
    Done,
    Reopen,
    Crash,
}

/// One run of the session loop for engine `E`, observed by `H`.
pub struct Driver<'c, E: Engine, H> {
    pub(crate) cfg: &'c RunConfig<E::Config>,
    pub(crate) caps: Capabilities,
    pub(crate) settings: Settings,
    pub hooks: H,
    /// What the engine runs on: one disk, or a file system (capability `directory`).
    pub medium: Medium,
    pub(crate) power: PowerSwitch,
    pub(crate) oracle: DurabilityOracle,
    pub trace: Trace,
    pub counters: Counters,
    pub stats: RunStats,
    /// Opens so far (the engine may derive per-open choices from it).
    opens: u64,
    /// Sessions opened so far: the configuration may change between them
    /// ([`EngineConfig::at_open`]), never between the attempts of one open.
    sessions: u64,
    /// Index of the next operation.
    pub(crate) next: usize,
    /// A power cut happened since the last judged recovery.
    pending_power_cut: bool,
    /// An I/O error was seen and the engine requires a reopen before further use.
    pub(crate) restart_after_io_error: bool,
    /// A commit failed, the engine latched and the application carries on: the disk's figures
    /// then, which must not grow until the session ends.
    pub(crate) latched: Option<IoStats>,
    /// Where the file the engine has open came from, for messages: `as created`, `as
    /// recovered after power cut 2 (op 17)`, `as reopened after op 40`.
    pub(crate) file_from: String,
    /// The structured event log, when a report asked for one ([`Driver::keep_event_log`]).
    pub(crate) log: Option<Box<crate::events::EventLog>>,
    /// Where the checksum probe flips its bits: a stream of its own, so probing changes no
    /// other choice of the run.
    probe_rng: SimRng,
}

impl<'c, E: Engine, H: Hooks<E>> Driver<'c, E, H> {
    pub fn new(
        cfg: &'c RunConfig<E::Config>,
        medium: Medium,
        settings: Settings,
        hooks: H,
    ) -> Self {
        let caps = cfg.engine.capabilities();
        assert!(
            !settings.batched || caps.write_batches,
            "{} declares no write batches",
            E::Config::ENGINE
        );
        assert_eq!(
            caps.directory,
            medium.fs().is_some(),
            "{} runs on {}",
            E::Config::ENGINE,
            if caps.directory {
                "a file system (it declares a directory)"
            } else {
                "one disk (it declares no directory)"
            }
        );
        Driver {
            cfg,
            caps,
            settings,
            hooks,
            medium,
            power: PowerSwitch::new(),
            oracle: DurabilityOracle::new(KvModel::new()),
            trace: Trace::default(),
            counters: Counters::default(),
            stats: RunStats::default(),
            opens: 0,
            sessions: 0,
            next: 0,
            pending_power_cut: false,
            restart_after_io_error: false,
            latched: None,
            file_from: "as created".into(),
            log: None,
            probe_rng: SimRng::derive(cfg.seed, "checksum probe"),
        }
    }

    /// A run on a disk that already holds a database whose contents are `state` (durable, as
    /// the crash-state checker's pre-built images are): the oracle starts from it, not from
    /// the empty database.
    pub fn starting_from(mut self, state: KvModel) -> Self {
        assert_eq!(
            self.next, 0,
            "a run starts from its image before its first operation"
        );
        self.oracle = DurabilityOracle::new(state);
        self
    }

    /// The index of the next operation (the one running, while one runs, plus one).
    pub fn next_op(&self) -> usize {
        self.next
    }

    /// Whether the engine promises anything across a power cut.
    pub(crate) fn promised(&self) -> bool {
        !self.caps.crash_is_process_crash
    }

    pub(crate) fn violation(&self, verdict: Verdict, detail: impl Into<String>) -> Stop {
        Stop::Violation(Violation {
            op_index: self.next.saturating_sub(1),
            verdict,
            detail: detail.into(),
        })
    }

    /// Whether the disk may be to blame for a wrong answer or for damage the engine reports:
    /// under the corruption profile, once it has flipped a bit or misdirected a write. Before
    /// that the disk has done nothing `default` does not, so the run is judged as under
    /// `default`: the profile's excuse must not hide the engine's own bugs.
    pub(crate) fn disk_may_explain(&self) -> bool {
        self.cfg.profile == Profile::Corruption && self.medium.fault_counts().corrupting() > 0
    }

    /// An engine failure that is not an I/O error: a violation, except where the disk has
    /// corrupted bytes on purpose and the engine reports damage it read
    /// ([`Driver::disk_may_explain`]). An engine that broke its own in-memory invariant is a
    /// violation whatever the disk did.
    pub(crate) fn failure(&self, verdict: Verdict, e: &EngineError) -> Stop {
        let detail = self.explained(e);
        if self.disk_may_explain() && e.kind != ErrorKind::Invariant {
            return Stop::DiskFailure(format!("corruption detected during {verdict}: {detail}"));
        }
        self.violation(verdict, detail)
    }

    /// An engine error as a report gives it: its class first (damage found on disk, or the
    /// engine's own invariant broken in memory), then which operation met it and which file:
    /// the recovery it came from.
    pub(crate) fn explained(&self, e: &EngineError) -> String {
        format!("{} ({})", e.classified(), self.during())
    }

    /// Which operation runs and which file it runs on: `during op 6 `commit`, on the file as
    /// recovered after power cut 2 (at op 4)` — for a message about what went wrong now.
    pub fn during(&self) -> String {
        let at = match self.next.checked_sub(1).and_then(|i| self.cfg.ops.get(i)) {
            Some(op) => format!("op {} `{op}`", self.next - 1),
            None => "opening the database".into(),
        };
        format!("during {at}, on the file {}", self.file_from)
    }

    /// Run the loop to its end or its first violation.
    pub async fn drive(&mut self) -> Step<()> {
        self.create()?;
        self.promise_changed();
        let mut recovering = false;
        loop {
            let Some(mut db) = self.open()? else {
                return Ok(());
            };
            if recovering {
                let power_cut = std::mem::take(&mut self.pending_power_cut);
                self.verify_recovery(&mut db, power_cut)?;
                self.probe_checksums(false)?;
            }
            let end = self.run_session(db).await?;
            match end {
                SessionEnd::Done => return self.final_check(),
                SessionEnd::Reopen => {
                    self.stats.reopens += 1;
                    self.file_from =
                        format!("as reopened after op {}", self.next.saturating_sub(1));
                }
                SessionEnd::Crash => self.power_cut(),
            }
            recovering = true;
        }
    }

    /// One session on `db`, its background started and stopped around it, then the close.
    async fn run_session(&mut self, db: E) -> Step<SessionEnd> {
        let db = Rc::new(db);
        self.hooks
            .session_started(&db, &self.power, self.oracle.current_shared());
        let end = self.session(&db).await;
        let news = self.hooks.session_ended().await;
        self.hooks.readers_cleared();
        let news = self.take_news(news);
        let end = end?;
        news?;
        self.counters.accumulate(&db.counters());
        let Ok(db) = Rc::try_unwrap(db) else {
            unreachable!("the session's background ended and dropped its handles")
        };
        Ok(self.close(db, end))
    }

    /// Record what the background saw; a violation it found, or an engine error it met, ends
    /// the run, judged as the writer's are.
    pub(crate) fn take_news(&mut self, news: News) -> Step<()> {
        for e in news.events {
            if e.starts_with("reader task") {
                self.stats.background_snapshot_checks += 1;
            } else if e.starts_with("timer: power cut") {
                self.stats.timer_power_cuts += 1;
            }
            self.trace.record(e);
        }
        if let Some(e) = news.error {
            return Err(self.failure(Verdict::Failed(During::BackgroundReader), &e));
        }
        match news.violation {
            Some(v) if self.disk_may_explain() => Err(Stop::DiskFailure(format!(
                "corruption detected during background reader: {v}"
            ))),
            Some(v) => Err(self.violation(Verdict::Failed(During::BackgroundReader), v)),
            None => Ok(()),
        }
    }

    /// Close the session's database. Before a power cut the power goes off first, so nothing
    /// the close writes reaches the disk; a close the power cuts becomes a power cut.
    fn close(&mut self, db: E, end: SessionEnd) -> SessionEnd {
        if matches!(end, SessionEnd::Crash) {
            self.power.cut();
        }
        let closed = db.close();
        if matches!(end, SessionEnd::Crash) {
            return end;
        }
        if self.power.is_off() {
            self.trace.record("power cut during close".into());
            return SessionEnd::Crash;
        }
        if closed.is_ok() && self.caps.close_writes {
            // A close that writes makes what it writes durable (redb: the non-durable commits).
            self.oracle.acknowledged_made_durable();
            self.promise_changed();
        }
        if let Err(e) = closed {
            // Commits acknowledged without durability may be gone: recover as after a cut.
            self.trace.record(format!(
                "close failed: {e}; non-durable commits may be lost"
            ));
            self.pending_power_cut = true;
        }
        end
    }

    /// The machine loses power: unsynced sectors are kept or lost, then it reboots.
    fn power_cut(&mut self) {
        self.stats.crashes += 1;
        self.file_from = format!(
            "as recovered after power cut {} (at op {})",
            self.stats.crashes,
            self.next.saturating_sub(1)
        );
        self.power.reset();
        let before = self.before_cut();
        let meta_before = self
            .medium
            .fs()
            .map(|fs| (fs.pending_meta().len(), fs.counts()));
        let c = self.hooks.power_cut(&self.medium);
        self.log_power_cut(before);
        if let (Some((pending, was)), Some(fs)) = (meta_before, self.medium.fs()) {
            let now = fs.counts();
            self.trace.record(format!(
                "power cut: {} of {pending} pending metadata operations kept, {} files gone",
                now.meta_ops_kept_in_crash - was.meta_ops_kept_in_crash,
                now.files_gone_in_crash - was.files_gone_in_crash
            ));
        }
        self.trace.record(format!(
            "power cut: {} pending sectors, {} kept, {} lost",
            c.pending_sectors, c.kept, c.lost
        ));
        self.pending_power_cut = true;
    }

    /// Create the database with faults suspended.
    fn create(&mut self) -> Step<()> {
        let faults = self.suspend_faults();
        let created = self.open_engine(true);
        let closed = created.map(|db| {
            self.counters.accumulate(&db.counters());
            db.close()
        });
        self.medium.set_faults(faults);
        match closed.and_then(|c| c) {
            Ok(()) => {
                self.hooks.created(&self.medium);
                Ok(())
            }
            Err(e) => Err(self.violation(Verdict::Failed(During::Create), e.to_string())),
        }
    }

    /// Switch the disk's faults off for the harness's own work; returns them to restore.
    pub(crate) fn suspend_faults(&self) -> FaultConfig {
        let faults = self.medium.faults();
        // Keep the negative control on: it is the point of the run, not a disk fault.
        let harness = FaultConfig {
            lying_sync: faults.lying_sync,
            ..FaultConfig::none()
        };
        self.medium.set_faults(harness);
        faults
    }

    /// One open of the engine: on the storage the hooks give for the disk, or on the
    /// directory they give for the file system (`creating`: the creation's open).
    fn open_engine(&mut self, creating: bool) -> Result<E, EngineError> {
        self.opens += 1;
        let opens = self.opens - 1;
        let other = match self.cfg.switch_settings {
            true => self.cfg.engine.at_open(self.cfg.seed, self.sessions),
            false => None,
        };
        if let Some(cfg) = &other {
            self.stats.called("open with other options");
            let session = self.sessions;
            let changed = changed_words(&self.cfg.engine.describe(), &cfg.describe());
            self.trace
                .record(format!("session {session} opens with {changed}"));
        }
        let cfg = other.as_ref().unwrap_or(&self.cfg.engine);
        match &self.medium {
            Medium::Disk(disk) => {
                let storage = if creating {
                    self.hooks.creation_storage(disk, &self.power)
                } else {
                    self.hooks.storage(disk, &self.power)
                };
                E::open(storage, cfg, opens)
            }
            Medium::Fs(fs) => {
                let dir = self.hooks.directory(fs, &self.power);
                E::open_dir(dir, cfg, opens)
            }
        }
    }

    fn open_once(&mut self) -> Result<E, EngineError> {
        self.open_engine(false)
    }

    /// Open, retrying transient I/O errors. `None` when the run is over.
    fn open(&mut self) -> Step<Option<E>> {
        const ATTEMPTS: usize = 8;
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let opened = self.open_once();
            if self.power.is_off() {
                // The cut landed inside the open (a crash during recovery): reboot and retry.
                drop(opened);
                self.power_cut();
                continue;
            }
            match opened {
                Ok(db) => {
                    self.sessions += 1;
                    return Ok(Some(db));
                }
                Err(e) if e.is_io() => {
                    self.stats.io_errors += 1;
                    last = e.to_string();
                    self.trace.record(format!("open failed: {e}"));
                }
                Err(e) => return Err(self.failure(Verdict::Failed(During::Open), &e)),
            }
        }
        // The transient condition clears (latent sectors stay bad): one last try.
        let faults = self.medium.faults();
        self.medium.set_faults(FaultConfig {
            read_eio: 0.0,
            write_eio: 0.0,
            sync_eio: 0.0,
            ..faults.clone()
        });
        let last_try = self.open_once();
        self.medium.set_faults(faults);
        match last_try {
            Ok(db) => Ok(Some(db)),
            Err(e) if e.is_io() => Err(Stop::DiskFailure(format!(
                "open keeps failing: {last}; then {e}"
            ))),
            Err(e) => Err(self.failure(Verdict::Failed(During::Open), &e)),
        }
    }

    /// After the last operation: reopen once more and verify.
    fn final_check(&mut self) -> Step<()> {
        let Some(mut db) = self.open()? else {
            return Ok(());
        };
        let power_cut = std::mem::take(&mut self.pending_power_cut);
        self.verify_recovery(&mut db, power_cut)?;
        self.probe_checksums(true)?;
        self.counters.accumulate(&db.counters());
        // The run is over: a failed close here changes nothing that is checked.
        let _ = db.close();
        Ok(())
    }

    /// Tell the hooks what the oracle allows from now on.
    pub(crate) fn promise_changed(&mut self) {
        let promised = self.promised();
        self.hooks.promise_changed(&self.oracle, promised);
        self.hooks.acknowledged(self.oracle.current_shared());
    }
}

/// The words of `other` (`key=value` settings) that `base` does not have: what a session's
/// settings change, named alike in a run with a debug hook on and in its clean twin.
fn changed_words(base: &str, other: &str) -> String {
    let base: Vec<&str> = base.split_whitespace().collect();
    let changed: Vec<&str> = other
        .split_whitespace()
        .filter(|w| !base.contains(w))
        .collect();
    changed.join(" ")
}
