//! Runs one case: the engine on a [`SimDisk`] through a list of operations, every answer
//! compared with [`KvModel`], every recovery compared with the [`DurabilityOracle`] and followed
//! by `check()`, every event hashed into the trace.
//!
//! Rules the runner applies (each is what an application would do):
//! - the database is created before faults are switched on (power loss during creation leaves
//!   an unopenable file in bbolt too; it is out of scope);
//! - after a failed commit the application restarts: the database is reopened;
//! - an open that fails with an I/O error is retried; if it keeps failing the disk has lost
//!   data it cannot give back and the run stops with a disk failure, which is not a violation;
//! - the harness's own verification reads run with faults suspended;
//! - with `no_sync` a crash is a process crash (the page cache survives), since a power cut
//!   without syncs may legitimately corrupt anything;
//! - a power cut ends the session before the database is closed: nothing the close would write
//!   reaches the disk; a close that fails (redb writes on close) lets acknowledged, non-durable
//!   commits be lost, as after a power cut.
//!
//! The engine is reached only through [`EngineDb`]; `RunConfig::engine` picks which.

use crate::apply::{apply_checked_with, owned, Applied, ApplyFailure};
use crate::disk::{DiskConfig, FaultConfig, FaultCounts, IoStats, SimDisk};
use crate::engines::crashlab::CrashlabDb;
use crate::engines::redb::RedbDb;
use crate::engines::{list_model, EngineDb, EngineError, EngineKind, ErrorKind};
use crate::negative::{NoBarrier, PowerSwitch, Switched};
use crate::op::{path_to_string, Name, Op, Path};
use crate::profile::{self, Profile};
use crate::rng::SimRng;
use crate::trace::Trace;
use crate::workload;
use crashlab_engine::{Counters, Options, Storage};
use crashlab_models::{CommitOutcome, DurabilityOracle, KvModel};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// Everything that determines a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The engine under test.
    pub engine: EngineKind,
    pub seed: u64,
    pub profile: Profile,
    pub options: Options,
    pub disk: DiskConfig,
    pub ops: Vec<Op>,
}

impl RunConfig {
    /// The run a seed describes for crashlab's engine: options, faults and `ops` operations
    /// all drawn from it.
    pub fn from_seed(seed: u64, ops: usize, profile: Profile) -> RunConfig {
        RunConfig::from_seed_for(EngineKind::Crashlab, seed, ops, profile)
    }

    /// The run a seed describes for `engine`. The crashlab options are drawn for every engine
    /// (case files carry them); engines other than crashlab ignore them.
    pub fn from_seed_for(engine: EngineKind, seed: u64, ops: usize, profile: Profile) -> RunConfig {
        let options = profile::engine_options(seed);
        RunConfig {
            engine,
            seed,
            profile,
            disk: profile::disk_config(seed, profile),
            ops: workload::generate_for(engine, seed, ops, true),
            options,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Violation(Violation),
    /// The disk lost data the engine cannot get back (e.g. a latent sector error under the
    /// meta page); reported, not a violation.
    DiskFailure(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the operation during or after which it was found.
    pub op_index: usize,
    pub kind: &'static str,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at op {}: {}", self.kind, self.op_index, self.detail)
    }
}

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
}

#[derive(Clone, Debug)]
pub struct Report {
    pub outcome: Outcome,
    pub stats: RunStats,
    pub trace_hash: u64,
    pub trace_events: u64,
    pub trace_tail: Vec<String>,
    pub counters: Counters,
    pub faults: FaultCounts,
    pub io: IoStats,
    pub image_hash: u64,
}

/// Like [`run`], but an engine panic becomes a `panic` violation instead of ending the process,
/// so a sweep goes on and the seed is reported.
pub fn run_guarded(cfg: &RunConfig) -> Report {
    match crate::guard::catch(|| run(cfg)) {
        Ok(report) => report,
        Err(detail) => Report {
            outcome: Outcome::Violation(Violation {
                op_index: 0,
                kind: "panic",
                detail,
            }),
            stats: RunStats::default(),
            trace_hash: 0,
            trace_events: 0,
            trace_tail: Vec::new(),
            counters: Counters::default(),
            faults: FaultCounts::default(),
            io: IoStats::default(),
            image_hash: 0,
        },
    }
}

/// Run a case to its end or its first violation, inside a madsim runtime seeded with the run's
/// seed: the writer, the background readers and the power-cut timer are tasks on its
/// deterministic scheduler, and time is simulated.
pub fn run(cfg: &RunConfig) -> Report {
    let rt = madsim::runtime::Runtime::with_seed_and_config(cfg.seed, madsim::Config::default());
    match cfg.engine {
        EngineKind::Crashlab => rt.block_on(run_async::<CrashlabDb>(cfg)),
        EngineKind::Redb => rt.block_on(run_async::<RedbDb>(cfg)),
    }
}

async fn run_async<D: EngineDb>(cfg: &RunConfig) -> Report {
    let mut sim = Sim::<D>::new(cfg);
    let outcome = match crate::guard::catch_future(sim.drive()).await {
        // An engine panic: always a violation, reported with the run's trace so far.
        Err(panic) => match sim.violation("panic", panic) {
            Stop::Violation(v) => Outcome::Violation(v),
            Stop::DiskFailure(_) => unreachable!("violation() makes a violation"),
        },
        Ok(Ok(())) => Outcome::Ok,
        // The engine keeps no checksums on data pages (bbolt's format): under the corruption
        // profile a wrong answer is undetected corruption the disk caused, not a broken promise.
        Ok(Err(Stop::Violation(v))) if cfg.profile == Profile::Corruption => {
            Outcome::DiskFailure(format!("undetected corruption: {v}"))
        }
        Ok(Err(Stop::Violation(v))) => Outcome::Violation(v),
        Ok(Err(Stop::DiskFailure(s))) => Outcome::DiskFailure(s),
    };
    sim.trace.record(format!("outcome {outcome:?}"));
    Report {
        outcome,
        stats: sim.stats.clone(),
        trace_hash: sim.trace.hash(),
        trace_events: sim.trace.events(),
        trace_tail: sim.trace.tail(),
        counters: sim.counters,
        faults: sim.disk.fault_counts(),
        io: sim.disk.io_stats(),
        image_hash: sim.disk.image_hash(),
    }
}

enum Stop {
    Violation(Violation),
    DiskFailure(String),
}

enum SessionEnd {
    Done,
    Reopen,
    Crash,
}

type Step<T> = Result<T, Stop>;

struct Sim<'c, D> {
    cfg: &'c RunConfig,
    /// Opens so far (the engine may derive per-open choices from it).
    opens: u64,
    disk: SimDisk,
    oracle: DurabilityOracle,
    trace: Trace,
    counters: Counters,
    stats: RunStats,
    /// Index of the next operation.
    next: usize,
    power: PowerSwitch,
    /// A power cut happened since the last verified recovery.
    pending_power_cut: bool,
    /// What the background tasks of a session share with the writer.
    shared: Rc<RefCell<Shared>>,
    tasks_rng: SimRng,
    /// Simulated disk time already slept off.
    slept_ns: u64,
    /// An I/O error was seen and the engine requires a reopen before further use.
    restart_after_io_error: bool,
    engine: std::marker::PhantomData<D>,
}

/// An open write transaction and the model of what it has done.
type Writer<'db, D> = Option<(<D as EngineDb>::Writer<'db>, KvModel)>;
/// Open readers and the state each must keep seeing.
type Readers<'db, D> = Vec<(<D as EngineDb>::Reader<'db>, KvModel)>;

impl<'c, D: EngineDb> Sim<'c, D> {
    fn new(cfg: &'c RunConfig) -> Sim<'c, D> {
        Sim {
            cfg,
            opens: 0,
            disk: SimDisk::new(cfg.seed, cfg.disk.clone()),
            oracle: DurabilityOracle::new(KvModel::new()),
            trace: Trace::default(),
            counters: Counters::default(),
            stats: RunStats::default(),
            next: 0,
            power: PowerSwitch::new(),
            pending_power_cut: false,
            shared: Rc::new(RefCell::new(Shared::default())),
            tasks_rng: SimRng::derive(cfg.seed, "tasks"),
            slept_ns: 0,
            restart_after_io_error: false,
            engine: std::marker::PhantomData,
        }
    }

    fn violation(&self, kind: &'static str, detail: impl Into<String>) -> Stop {
        Stop::Violation(Violation {
            op_index: self.next.saturating_sub(1),
            kind,
            detail: detail.into(),
        })
    }

    fn storage(&self) -> Box<dyn Storage> {
        let switch = self.power.clone();
        match self.cfg.profile {
            Profile::NoBarrier => Box::new(Switched {
                inner: NoBarrier::with_meta_len(self.disk.clone(), D::meta_region_len(self.cfg)),
                switch,
            }),
            _ => Box::new(Switched {
                inner: self.disk.clone(),
                switch,
            }),
        }
    }

    async fn drive(&mut self) -> Step<()> {
        self.create()?;
        let mut recovery: Option<bool> = None; // Some(_) once a session ended
        loop {
            let Some(mut db) = self.open()? else {
                return Ok(());
            };
            if recovery.is_some() {
                let power_cut = std::mem::take(&mut self.pending_power_cut);
                self.verify_recovery(&mut db, power_cut)?;
            }
            let db = Rc::new(db);
            let tasks = self.start_tasks(&db);
            let end = self.session(&db).await;
            let end = self.stop_tasks(tasks, end).await?;
            self.counters.accumulate(&db.counters());
            let Ok(db) = Rc::try_unwrap(db) else {
                unreachable!("the background tasks ended and dropped their handles")
            };
            let end = self.close(db, end);
            match end {
                SessionEnd::Done => return self.final_check(),
                SessionEnd::Reopen => {
                    self.stats.reopens += 1;
                    recovery = Some(true);
                }
                SessionEnd::Crash => {
                    self.power_cut();
                    recovery = Some(true);
                }
            }
        }
    }

    /// Close the session's database. Before a power cut the power goes off first, so nothing
    /// the close writes reaches the disk; a close the power cuts becomes a power cut.
    fn close(&mut self, db: D, end: SessionEnd) -> SessionEnd {
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
        self.power.reset();
        let c = self.disk.crash();
        self.trace.record(format!(
            "power cut: {} pending sectors, {} kept, {} lost",
            c.pending_sectors, c.kept, c.lost
        ));
        self.pending_power_cut = true;
    }

    /// Create the database with faults suspended.
    fn create(&mut self) -> Step<()> {
        let faults = self.suspend_faults();
        let created = self.open_once();
        let closed = created.map(|db| {
            self.counters.accumulate(&db.counters());
            db.close()
        });
        self.disk.set_faults(faults);
        match closed.and_then(|c| c) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.violation("create", e.to_string())),
        }
    }

    fn suspend_faults(&self) -> FaultConfig {
        let faults = self.disk.config().faults;
        // Keep the negative control on: it is the point of the run, not a disk fault.
        let harness = FaultConfig {
            lying_sync: faults.lying_sync,
            ..FaultConfig::none()
        };
        self.disk.set_faults(harness);
        faults
    }

    fn open_once(&mut self) -> Result<D, EngineError> {
        self.opens += 1;
        D::open(self.storage(), self.cfg, self.opens - 1)
    }

    /// Open, retrying transient I/O errors. `None` when the run is over.
    fn open(&mut self) -> Step<Option<D>> {
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
                Ok(db) => return Ok(Some(db)),
                Err(e) if e.is_io() => {
                    self.stats.io_errors += 1;
                    last = e.to_string();
                    self.trace.record(format!("open failed: {e}"));
                }
                Err(e) => return Err(self.corruption_found("open", e)),
            }
        }
        // The transient condition clears (latent sectors stay bad): one last try.
        let faults = self.disk.config().faults;
        self.disk.set_faults(FaultConfig {
            read_eio: 0.0,
            write_eio: 0.0,
            sync_eio: 0.0,
            ..faults.clone()
        });
        let last_try = self.open_once();
        self.disk.set_faults(faults);
        match last_try {
            Ok(db) => Ok(Some(db)),
            Err(e) if e.is_io() => Err(Stop::DiskFailure(format!(
                "open keeps failing: {last}; then {e}"
            ))),
            Err(e) => Err(self.corruption_found("open", e)),
        }
    }

    /// A corrupt file: a violation, except where the profile corrupts the disk on purpose.
    fn corruption_found(&self, during: &'static str, e: EngineError) -> Stop {
        if self.cfg.profile == Profile::Corruption {
            Stop::DiskFailure(format!("corruption detected during {during}: {e}"))
        } else {
            self.violation(during, e.to_string())
        }
    }

    fn verify_recovery(&mut self, db: &mut D, power_cut: bool) -> Step<()> {
        self.power.reset();
        let faults = self.suspend_faults();
        let observed = db.begin_read().and_then(|r| D::read_snapshot(&r));
        let problems = db.check();
        self.disk.set_faults(faults);
        let observed = match observed {
            Ok(m) => m,
            Err(e) if e.is_io() => {
                return Err(Stop::DiskFailure(format!("unreadable after recovery: {e}")))
            }
            Err(e) => return Err(self.corruption_found("recovery read", e)),
        };
        let found = if power_cut {
            self.oracle.recover_after_power_cut(&observed)
        } else {
            self.oracle.recover_after_reopen(&observed)
        };
        self.shared.borrow_mut().current = self.oracle.current().clone();
        match found {
            Ok(i) => self.trace.record(format!(
                "recovered S[{i}] after {}",
                if power_cut { "power cut" } else { "reopen" }
            )),
            Err(v) => return Err(self.violation("durability", v.to_string())),
        }
        match problems {
            Ok(p) if p.is_empty() => Ok(()),
            Ok(p) => {
                let first: Vec<String> = p.iter().take(5).map(|p| p.to_string()).collect();
                Err(self.corruption_found_msg(
                    "check",
                    format!("{} problems: {}", p.len(), first.join("; ")),
                ))
            }
            Err(e) => Err(Stop::DiskFailure(format!("check could not read: {e}"))),
        }
    }

    fn corruption_found_msg(&self, during: &'static str, msg: String) -> Stop {
        if self.cfg.profile == Profile::Corruption {
            Stop::DiskFailure(format!("corruption detected during {during}: {msg}"))
        } else {
            self.violation(during, msg)
        }
    }

    /// After the last operation: reopen once more and verify.
    fn final_check(&mut self) -> Step<()> {
        let Some(mut db) = self.open()? else {
            return Ok(());
        };
        let power_cut = std::mem::take(&mut self.pending_power_cut);
        self.verify_recovery(&mut db, power_cut)?;
        self.counters.accumulate(&db.counters());
        // The run is over: a failed close here changes nothing that is checked.
        let _ = db.close();
        Ok(())
    }

    async fn session(&mut self, db: &D) -> Step<SessionEnd> {
        let mut writer: Writer<'_, D> = None;
        let mut readers: Readers<'_, D> = Vec::new();
        while self.next < self.cfg.ops.len() {
            let op = &self.cfg.ops[self.next];
            self.next += 1;
            self.stats.ops_run += 1;
            let result = match op {
                Op::Reopen => return Ok(SessionEnd::Reopen),
                Op::Crash if D::crash_is_process_crash(self.cfg) => {
                    self.trace
                        .record(format!("{} crash (no_sync: process crash)", self.next - 1));
                    return Ok(SessionEnd::Reopen);
                }
                Op::Crash => return Ok(SessionEnd::Crash),
                Op::PowerCutIn(n) => {
                    self.power.arm(*n);
                    format!("armed: power cut after {n} storage calls")
                }
                Op::Commit => match self.commit(db, &mut writer)? {
                    Ok(r) => r,
                    Err(msg) if self.power.is_off() => {
                        self.trace
                            .record(format!("{} {op} -> {msg}; power cut", self.next - 1));
                        return Ok(SessionEnd::Crash);
                    }
                    Err(msg) => {
                        self.trace
                            .record(format!("{} {op} -> {msg}; restarting", self.next - 1));
                        return Ok(SessionEnd::Reopen);
                    }
                },
                Op::Rollback => {
                    writer = None;
                    "ok".to_string()
                }
                Op::BeginReader => self.begin_reader(db, &mut readers),
                Op::EndReader(n) => self.end_reader(&mut readers, *n as usize)?,
                Op::Get { path, key } => self.get(db, &mut writer, path, key)?,
                Op::Scan { path } => self.scan(db, &mut writer, path)?,
                data => self.apply(db, &mut writer, data)?,
            };
            self.trace
                .record(format!("{} {op} -> {result}", self.next - 1));
            if std::mem::take(&mut self.restart_after_io_error) {
                // The open transaction is abandoned (rolled back) with the session.
                self.trace.record("restarting after an I/O error".into());
                return Ok(SessionEnd::Reopen);
            }
            self.pass_time().await?;
            if self.power.is_off() {
                self.trace.record("power cut".into());
                return Ok(SessionEnd::Crash);
            }
        }
        Ok(SessionEnd::Done)
    }

    /// Let simulated time pass for the I/O the last operation did (plus a little think time),
    /// so background tasks run in between; then take in what they saw.
    async fn pass_time(&mut self) -> Step<()> {
        let now = self.disk.io_stats().sim_time_ns;
        let dt = now.saturating_sub(self.slept_ns) + THINK_NS;
        self.slept_ns = now;
        madsim::time::sleep(Duration::from_nanos(dt)).await;
        self.take_task_news()
    }

    /// Record what the background tasks saw; a violation they found ends the run.
    fn take_task_news(&mut self) -> Step<()> {
        let (events, violation) = {
            let mut sh = self.shared.borrow_mut();
            (std::mem::take(&mut sh.events), sh.violation.take())
        };
        for e in events {
            if e.starts_with("reader task") {
                self.stats.background_snapshot_checks += 1;
            } else if e.starts_with("timer: power cut") {
                self.stats.timer_power_cuts += 1;
            }
            self.trace.record(e);
        }
        match violation {
            Some(v) => Err(self.corruption_found_msg("background reader", v)),
            None => Ok(()),
        }
    }

    /// Start a session's background tasks: long-lived readers and, sometimes, a power cut at a
    /// seeded simulated instant.
    fn start_tasks(&mut self, db: &Rc<D>) -> Vec<madsim::task::JoinHandle<()>> {
        let mut handles = Vec::new();
        {
            let mut sh = self.shared.borrow_mut();
            sh.stop = false;
            sh.current = self.oracle.current().clone();
        }
        let corruption = self.cfg.profile == Profile::Corruption;
        for id in 0..self.tasks_rng.below(3) {
            let rng = SimRng::new(self.tasks_rng.next_u64());
            let task = reader_task(id, db.clone(), self.shared.clone(), rng, corruption);
            handles.push(madsim::task::spawn_local(task));
        }
        if !D::crash_is_process_crash(self.cfg) && self.tasks_rng.chance(0.3) {
            let delay = Duration::from_nanos(self.tasks_rng.range(50_000, 20_000_000));
            let (power, shared) = (self.power.clone(), self.shared.clone());
            handles.push(madsim::task::spawn_local(async move {
                madsim::time::sleep(delay).await;
                if !shared.borrow().stop {
                    power.arm(1);
                    shared
                        .borrow_mut()
                        .events
                        .push(format!("timer: power cut at +{delay:?}"));
                }
            }));
        }
        handles
    }

    /// Stop the background tasks (they drop their snapshots) before the database closes.
    async fn stop_tasks(
        &mut self,
        tasks: Vec<madsim::task::JoinHandle<()>>,
        end: Step<SessionEnd>,
    ) -> Step<SessionEnd> {
        self.shared.borrow_mut().stop = true;
        for t in tasks {
            t.abort();
            let _ = t.await;
        }
        let news = self.take_task_news();
        let end = end?;
        news.map(|()| end)
    }

    /// `Err` is a failed commit the application restarts from; a commit that fails with
    /// anything but an I/O error is a violation (`Stop`) instead — no fault makes a valid
    /// database refuse a commit (this hid regression 004).
    fn commit(&mut self, db: &D, writer: &mut Writer<'_, D>) -> Step<Result<String, String>> {
        let Some((tx, pending)) = writer.take() else {
            return Ok(Ok("nothing to commit".into()));
        };
        let index = self.oracle.begin_commit(pending);
        match db.commit(tx) {
            Ok(durable) => {
                self.stats.commits += 1;
                let outcome = if durable {
                    CommitOutcome::Durable
                } else {
                    CommitOutcome::Acknowledged
                };
                self.oracle.end_commit(index, outcome);
                self.shared.borrow_mut().current = self.oracle.current().clone();
                Ok(Ok(format!("ok S[{index}]")))
            }
            Err(e) => {
                self.stats.failed_commits += 1;
                self.oracle.end_commit(index, CommitOutcome::Failed);
                if !e.is_io() {
                    return Err(self.corruption_found("commit", e));
                }
                Ok(Err(format!("failed S[{index}]: {e}")))
            }
        }
    }

    fn begin_reader<'db>(&mut self, db: &'db D, readers: &mut Readers<'db, D>) -> String {
        if readers.len() >= 4 {
            return "skipped (4 readers open)".into();
        }
        match db.begin_read() {
            Ok(r) => {
                readers.push((r, self.oracle.current().clone()));
                format!("reader {}", readers.len() - 1)
            }
            Err(e) => format!("error {e}"),
        }
    }

    fn end_reader(&mut self, readers: &mut Readers<'_, D>, n: usize) -> Step<String> {
        if n >= readers.len() {
            return Ok("no such reader".into());
        }
        let (r, want) = readers.remove(n);
        match D::read_snapshot(&r) {
            Ok(got) if got == want => Ok("snapshot intact".into()),
            Ok(_) => Err(self.violation(
                "reader snapshot",
                "a reader's snapshot changed while it was open",
            )),
            Err(e) => self.engine_error("reader", e),
        }
    }

    /// An engine error from an operation: I/O errors are allowed, corruption is not.
    fn engine_error<T: From<String>>(&mut self, during: &'static str, e: EngineError) -> Step<T> {
        if e.is_io() {
            self.stats.io_errors += 1;
            self.restart_after_io_error = D::io_error_ends_session();
            return Ok(T::from(format!("io error: {e}")));
        }
        Err(self.corruption_found(during, e))
    }

    fn get(&mut self, db: &D, writer: &mut Writer<'_, D>, path: &Path, key: &Name) -> Step<String> {
        let (got, want) = match writer {
            Some((tx, model)) => (
                D::get_in(tx, path, key),
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
                "model mismatch",
                format!(
                    "get {} returned {:?} bytes, model {:?}",
                    path_to_string(path),
                    got.map(|v| v.len()),
                    want.map(|v| v.len())
                ),
            )),
            Err(e) => self.engine_error("get", e),
        }
    }

    fn scan(&mut self, db: &D, writer: &mut Writer<'_, D>, path: &Path) -> Step<String> {
        let (got, want) = match writer {
            Some((tx, model)) => (
                D::scan_in(tx, path),
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
                "model mismatch",
                format!("scan {} differs from the model", path_to_string(path)),
            )),
            Err(e) => self.engine_error("scan", e),
        }
    }

    /// A data operation in the write transaction (begun on demand).
    fn apply<'db>(&mut self, db: &'db D, writer: &mut Writer<'db, D>, op: &Op) -> Step<String> {
        if writer.is_none() {
            match db.begin_write() {
                Ok(tx) => *writer = Some((tx, self.oracle.current().clone())),
                Err(e) => return self.engine_error("begin", e),
            }
        }
        let (tx, model) = writer.as_mut().expect("just ensured");
        let refusal = |e: &EngineError| match e.kind {
            ErrorKind::Refused(m) => Some(m),
            _ => None,
        };
        match apply_checked_with(model, op, |op| D::apply(tx, op), refusal) {
            Ok(Applied::Done) => Ok("ok".into()),
            Ok(Applied::Refused(me)) => Ok(format!("refused {me:?}")),
            Err(ApplyFailure::Mismatch(detail)) => Err(self.violation("model mismatch", detail)),
            Err(ApplyFailure::Engine(e)) => self.engine_error("write", e),
        }
    }
}

pub use crate::engines::crashlab::{read_model, read_snapshot};

/// Simulated think time between two operations of the writer.
const THINK_NS: u64 = 5_000;

/// What a session's background tasks share with the writer (one thread: madsim's scheduler).
#[derive(Default)]
struct Shared {
    /// The last acknowledged state: what a reader starting now must see.
    current: KvModel,
    stop: bool,
    events: Vec<String>,
    violation: Option<String>,
}

/// A long-lived reader: takes a snapshot, holds it while the writer commits (simulated time
/// passes), then checks that it still reads exactly the state it started on.
async fn reader_task<D: EngineDb>(
    id: u64,
    db: Rc<D>,
    shared: Rc<RefCell<Shared>>,
    mut rng: SimRng,
    corruption: bool,
) {
    loop {
        madsim::time::sleep(Duration::from_nanos(rng.range(1_000_000, 10_000_000))).await;
        if shared.borrow().stop {
            return;
        }
        // No await between these two: the snapshot and the model match.
        let want = shared.borrow().current.clone();
        let Ok(tx) = db.begin_read() else { continue };
        madsim::time::sleep(Duration::from_nanos(rng.range(50_000, 3_000_000))).await;
        if shared.borrow().stop {
            return;
        }
        let txid = D::snapshot_id(&tx);
        let line = match D::read_snapshot(&tx) {
            Ok(got) if got == want => format!("reader task {id}: snapshot of txid {txid} intact"),
            Ok(_) => {
                let v = format!("reader task {id}: snapshot of txid {txid} changed while held");
                shared.borrow_mut().violation = Some(v);
                return;
            }
            Err(e) if e.is_io() => format!("reader task {id}: io error {e}"),
            Err(e) if corruption => format!("reader task {id}: corruption detected: {e}"),
            Err(e) => {
                shared.borrow_mut().violation = Some(format!("reader task {id}: {e}"));
                return;
            }
        };
        shared.borrow_mut().events.push(line);
    }
}
