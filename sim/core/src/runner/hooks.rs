//! What the seeded runner adds to the session loop.

use super::tasks::{reader_task, timer_task, Shared};
use crate::adapter::{Engine, EngineConfig as _};
use crate::config::RunConfig;
use crate::control::{Control, ControlStorage};
use crate::disk::{CrashOutcome, DirPin, PinnedCut, SimDisk};
use crate::driver::{Hooks, News};
use crate::fs::{SimDir, SimFs};
use crate::medium::Medium;
use crate::power::{PowerSwitch, Switched};
use crate::rng::SimRng;
use crate::thresholds::{bucket_count, MANY_BUCKETS};
use crashlab_engine::Storage;
use crashlab_models::KvModel;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What one power cut of a run kept and lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutRecord {
    /// The cut's number in the run and what it kept, as a case pins it.
    pub cut: PinnedCut,
    /// The pending sectors it lost, ascending (the one disk's).
    pub lost: Vec<u64>,
    /// A file system's cut: the pending sectors each file lost, and how many metadata
    /// operations were pending.
    pub dir_lost: BTreeMap<u64, Vec<u64>>,
    pub meta_pending: usize,
    /// Whether the case pinned this cut.
    pub pinned: bool,
}

impl CutRecord {
    /// What the cut kept and lost, in words.
    pub fn describe(&self) -> String {
        match &self.cut.dir {
            Some(dir) => dir.describe(self.meta_pending, &self.dir_lost),
            None => self.cut.pin.describe(&self.lost),
        }
    }
}

/// Simulated think time between two operations of the writer.
const THINK_NS: u64 = 5_000;

/// Faults through the profile's storage control, time, background readers, a timer power cut.
pub struct RunnerHooks<E> {
    control: Control,
    meta_len: u64,
    /// The control's storage, made at the first open (the disk is the driver's).
    storage: Option<ControlStorage>,
    /// Power cuts that tore the engine's meta region, over the run.
    torn_metas: u64,
    /// Power cuts so far.
    cuts: u64,
    pinned: Option<PinnedCut>,
    /// What the pinned cut did, or else the last cut (see [`RunnerHooks::cut_record`]).
    cut_record: Option<CutRecord>,
    timer_cuts: bool,
    /// What a session's background tasks share with the writer (one thread: madsim's scheduler).
    shared: Rc<RefCell<Shared>>,
    tasks_rng: SimRng,
    tasks: Vec<madsim::task::JoinHandle<()>>,
    /// Simulated disk time already slept off.
    slept_ns: u64,
    /// Acknowledged states holding [`MANY_BUCKETS`] buckets or more.
    many_bucket_states: u64,
    engine: std::marker::PhantomData<fn() -> E>,
}

impl<E: Engine> RunnerHooks<E> {
    pub fn new(cfg: &RunConfig<E::Config>) -> RunnerHooks<E> {
        let caps = cfg.engine.capabilities();
        RunnerHooks {
            control: cfg.profile.control(),
            meta_len: caps.meta_region_len,
            storage: None,
            torn_metas: 0,
            cuts: 0,
            pinned: cfg.pinned_cut.clone(),
            cut_record: None,
            timer_cuts: !caps.crash_is_process_crash,
            shared: Rc::new(RefCell::new(Shared::default())),
            tasks_rng: SimRng::derive(cfg.seed, "tasks"),
            tasks: Vec::new(),
            slept_ns: 0,
            many_bucket_states: 0,
            engine: std::marker::PhantomData,
        }
    }

    /// Power cuts that left the engine's meta region
    /// ([`Capabilities::meta_region_len`](crate::adapter::Capabilities): crashlab's two meta
    /// pages, redb's header) neither as it was durable nor as last written: torn metas, by a
    /// sub-sector tear or by keeping some of its sectors and not others.
    pub fn torn_metas(&self) -> u64 {
        self.torn_metas
    }

    /// What the run's pinned power cut kept, if it has one and reached it; otherwise what its
    /// last power cut kept: the cut a violation most likely follows, which `shrink` minimises.
    pub fn cut_record(&self) -> Option<CutRecord> {
        self.cut_record.clone()
    }

    /// Acknowledged states (after a commit or a recovery) that held [`MANY_BUCKETS`] buckets or
    /// more: the `buckets` threshold.
    pub fn many_bucket_states(&self) -> u64 {
        self.many_bucket_states
    }

    /// One disk's power cut, as drawn or as the case pins it.
    fn disk_cut(&mut self, disk: &SimDisk) -> CrashOutcome {
        let (old, new) = disk.peek(0, self.meta_len);
        self.cuts += 1;
        let pin = self.pinned.as_ref().filter(|p| p.cut == self.cuts);
        let (c, kept, lost) = disk.crash_pinned(pin.map(|p| &p.pin));
        let pinned = pin.is_some();
        self.record_cut(CutRecord {
            cut: PinnedCut {
                cut: self.cuts,
                pin: kept,
                dir: None,
            },
            lost,
            dir_lost: BTreeMap::new(),
            meta_pending: 0,
            pinned,
        });
        if old != new {
            let (after, _) = disk.peek(0, self.meta_len);
            self.torn_metas += u64::from(after != old && after != new);
        }
        c
    }

    /// A file system's power cut: its metadata and every file's data, as drawn or as the
    /// case pins them (see [`SimFs::crash_pinned`]). Torn metas are one disk's figure: a
    /// directory engine's cuts count none.
    fn fs_cut(&mut self, fs: &SimFs) -> CrashOutcome {
        self.cuts += 1;
        let pin = self.pinned.as_ref().filter(|p| p.cut == self.cuts);
        let empty = DirPin::default();
        // A disk's pin on a directory engine's cut (a hand-written case): it keeps nothing.
        let dir_pin = pin.map(|p| p.dir.as_ref().unwrap_or(&empty));
        let (c, kept, lost) = fs.crash_pinned(dir_pin);
        let pinned = pin.is_some();
        self.record_cut(CutRecord {
            cut: PinnedCut {
                cut: self.cuts,
                pin: Default::default(),
                dir: Some(kept),
            },
            lost: Vec::new(),
            dir_lost: lost,
            meta_pending: c.pending.len(),
            pinned,
        });
        c.data
    }

    /// Keep `record` as the run's cut unless the pinned cut was recorded already.
    fn record_cut(&mut self, record: CutRecord) {
        let pinned_seen = self.cut_record.as_ref().is_some_and(|r| r.pinned);
        if !pinned_seen {
            self.cut_record = Some(record);
        }
    }

    fn take_news(&self) -> News {
        let mut sh = self.shared.borrow_mut();
        News {
            events: std::mem::take(&mut sh.events),
            violation: sh.violation.take(),
            error: sh.error.take(),
        }
    }
}

impl<E: Engine> Hooks<E> for RunnerHooks<E> {
    fn storage(&mut self, disk: &SimDisk, power: &PowerSwitch) -> Box<dyn Storage> {
        let (control, meta_len) = (self.control, self.meta_len);
        let storage = self
            .storage
            .get_or_insert_with(|| control.for_run(disk, meta_len));
        Box::new(Switched {
            inner: storage.open(),
            switch: power.clone(),
        })
    }

    /// Storage-wrapper controls wrap one file's storage: an engine of several files has none
    /// to wrap, and is refused them rather than run without.
    fn directory(&mut self, fs: &SimFs, power: &PowerSwitch) -> SimDir {
        assert!(
            !self.control.is_storage_wrapper(),
            "control {} wraps one file's storage; an engine of several files runs the disk's \
             controls only (lying-sync)",
            self.control
        );
        SimDir::new(fs.clone(), power.clone())
    }

    fn power_cut(&mut self, medium: &Medium) -> CrashOutcome {
        match medium {
            Medium::Disk(disk) => self.disk_cut(disk),
            Medium::Fs(fs) => self.fs_cut(fs),
        }
    }

    /// Creation is out of the run's scope (the driver creates before faults start): the file an
    /// engine that syncs created is made durable, its length included, whatever the disk's
    /// length model (and a file system's directory with it). crashlab's engine, like bbolt, creates its file by writing its first pages
    /// and a data sync, which an `own-barrier` disk never makes reachable (its later growth goes
    /// through `set_len` + sync). An engine whose crashes are process crashes (`no_sync`) synced
    /// nothing, and its file stays as it left it.
    fn created(&mut self, medium: &Medium) {
        if self.timer_cuts {
            medium.make_all_durable();
        }
    }

    fn acknowledged(&mut self, current: &Arc<KvModel>) {
        self.many_bucket_states += u64::from(bucket_count(current) >= MANY_BUCKETS);
        self.shared.borrow_mut().current = Arc::clone(current);
    }

    /// Long-lived readers and, sometimes, a power cut at a seeded simulated instant.
    fn session_started(&mut self, db: &Rc<E>, power: &PowerSwitch, current: &Arc<KvModel>) {
        {
            let mut sh = self.shared.borrow_mut();
            sh.stop = false;
            sh.current = Arc::clone(current);
        }
        for id in 0..self.tasks_rng.below(3) {
            let rng = SimRng::new(self.tasks_rng.next_u64());
            let task = reader_task(id, db.clone(), self.shared.clone(), rng);
            self.tasks.push(madsim::task::spawn_local(task));
        }
        if self.timer_cuts && self.tasks_rng.chance(0.3) {
            let delay = Duration::from_nanos(self.tasks_rng.range(50_000, 20_000_000));
            let task = timer_task(delay, power.clone(), self.shared.clone());
            self.tasks.push(madsim::task::spawn_local(task));
        }
    }

    /// Sleep off the simulated time of the last operation's I/O (plus a little think time), so
    /// background tasks run in between; then report what they saw.
    async fn between_ops(&mut self, medium: &Medium) -> News {
        let now = medium.io_stats().sim_time_ns;
        let dt = now.saturating_sub(self.slept_ns) + THINK_NS;
        self.slept_ns = now;
        madsim::time::sleep(Duration::from_nanos(dt)).await;
        self.take_news()
    }

    /// Stop the background tasks (they drop their snapshots) before the database closes.
    async fn session_ended(&mut self) -> News {
        self.shared.borrow_mut().stop = true;
        for t in self.tasks.drain(..) {
            t.abort();
            let _ = t.await;
        }
        self.take_news()
    }
}
