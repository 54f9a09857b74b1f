//! The recorded run: the workload executed once by the simulator's session driver on a
//! fault-free [`SimDisk`], with [`RecordHooks`] putting a [`Recorder`] between the engine and the
//! disk and keeping the context of every storage call — the operation running, what the oracle
//! allows at that instant, the readers open. Nothing is re-run per state.
//!
//! What the hooks decide for the checker: the database is created and made durable (whatever
//! `no_sync` says) before recording starts; a power cut in the workload (`crash`) keeps no
//! pending sector (its other outcomes are the states enumerated at the crash point before it);
//! `power-cut-in` arms nothing the checker's storage obeys, since every crash point is visited
//! anyway. A process crash keeps every acknowledged commit only where the engine declares it
//! (redb keeps a non-durable commit's header in memory, so a crash may lose it).

use crate::book::{Allowed, Book, ModelId};
use crate::prebuilt::Prebuilt;
use crate::record::{lock, Context, Log, OpenReader, Recorder, SharedLog};
use crate::CheckConfig;
use crashlab_engine::Storage;
use crashlab_models::{DurabilityOracle, KvModel};
use crashlab_sim::adapter::{Capabilities, Engine, EngineConfig, EngineError};
use crashlab_sim::control::ControlStorage;
use crashlab_sim::disk::{CrashOutcome, SimDisk};
use crashlab_sim::driver::{Driver, Hooks, Settings};
use crashlab_sim::medium::Medium;
use crashlab_sim::op::{value_bytes, Name, Op};
use crashlab_sim::power::PowerSwitch;
use crashlab_sim::thresholds::{bucket_count, Thresholds, MANY_BUCKETS};
use crashlab_sim::verdict::{During, Stop, Verdict};
use std::rc::Rc;
use std::sync::Arc;

/// A failure of the recorded run itself.
#[derive(Clone, Debug)]
pub(crate) struct LiveFinding {
    pub op: usize,
    pub verdict: Verdict,
    pub detail: String,
}

pub(crate) struct Recording {
    pub log: Log,
    pub live: Option<LiveFinding>,
    pub commits: u64,
    /// The scale thresholds the recorded run crossed (a pre-built image's own are not in it).
    pub thresholds: Thresholds,
}

/// The recording mode of the session loop.
struct RecordHooks<'b> {
    log: SharedLog,
    book: &'b mut Book,
    caps: Capabilities,
    /// The control's storage over the run's disk, shared by every open.
    control: ControlStorage,
    /// Acknowledged states holding `MANY_BUCKETS` buckets or more.
    many_bucket_states: u64,
}

impl<E: Engine> Hooks<E> for RecordHooks<'_> {
    fn storage(&mut self, disk: &SimDisk, _power: &PowerSwitch) -> Box<dyn Storage> {
        Box::new(Recorder::new(
            self.control.open(),
            disk.clone(),
            self.log.clone(),
        ))
    }

    fn power_cut(&mut self, medium: &Medium) -> CrashOutcome {
        let disk = medium
            .disk()
            .expect("the checker records a single-file engine on one disk");
        let c = disk.crash_with(&mut |_| false);
        lock(&self.log).forget_images();
        c
    }

    fn creation_storage(&mut self, disk: &SimDisk, _power: &PowerSwitch) -> Box<dyn Storage> {
        Box::new(disk.clone())
    }

    /// The created file is made durable, its length too, whatever the disk's length model.
    fn created(&mut self, medium: &Medium) {
        medium.make_all_durable();
    }

    fn op_started(&mut self, index: usize) {
        lock(&self.log).context.op = index;
    }

    fn promise_changed(&mut self, oracle: &DurabilityOracle, promised: bool) {
        let id = self.book.allow_oracle(oracle, promised);
        let id = if self.caps.acknowledged_survive_process_crash {
            id
        } else {
            let power = self.book.allowed(id).power.clone();
            self.book.allow(Allowed {
                process: power.clone(),
                power,
                promised,
            })
        };
        lock(&self.log).context.allowed = id;
    }

    fn reader_opened(&mut self, token: Option<Vec<u8>>, state: &KvModel) {
        let model = self.book.intern(state);
        lock(&self.log)
            .context
            .readers
            .push(OpenReader { token, model });
    }

    fn reader_closed(&mut self, position: usize) {
        lock(&self.log).context.readers.remove(position);
    }

    fn readers_cleared(&mut self) {
        lock(&self.log).context.readers.clear();
    }

    fn session_started(&mut self, _db: &Rc<E>, _power: &PowerSwitch, _current: &Arc<KvModel>) {}

    fn acknowledged(&mut self, current: &Arc<KvModel>) {
        self.many_bucket_states += u64::from(bucket_count(current) >= MANY_BUCKETS);
    }
}

/// Record the workload of `cfg` on engine `E`, from an empty file or from `image` (made
/// durable, its state the oracle's first).
pub(crate) fn record<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    image: Option<&Prebuilt>,
    book: &mut Book,
) -> Recording {
    let run = cfg.run_config();
    let log = Log::shared(cfg.params.sector_size, Context::default());
    let caps = run.engine.capabilities();
    let disk = cfg.fresh_disk();
    if let Some(image) = image {
        disk.write_at(0, &image.bytes).expect("a fault-free disk");
        disk.make_all_durable();
    }
    let hooks = RecordHooks {
        log: log.clone(),
        book,
        caps,
        control: cfg.params.control.for_run(&disk, caps.meta_region_len),
        many_bucket_states: 0,
    };
    let settings = Settings {
        batched: cfg.params.batched,
        ..Settings::default()
    };
    let mut d = Driver::<E, _>::new(&run, Medium::Disk(disk), settings, hooks);
    if let Some(image) = image {
        d = d.starting_from((*image.state).clone());
    }
    let rt = madsim::runtime::Runtime::with_seed_and_config(cfg.seed, madsim::Config::default());
    // A panic the drive future does not see (one in a task the engine's callers run on) leaves
    // `block_on` itself: caught there too, so the checker reports it instead of dying.
    let ended =
        crashlab_sim::guard::catch(|| rt.block_on(crashlab_sim::guard::catch_future(d.drive())))
            .and_then(|ended| ended);
    let live = match ended {
        Ok(Ok(())) => None,
        Ok(Err(Stop::Violation(v))) => Some(LiveFinding {
            op: v.op_index,
            verdict: v.verdict,
            detail: v.detail,
        }),
        // The disk has no faults: an engine that cannot read it back is broken.
        Ok(Err(Stop::DiskFailure(detail))) => Some(LiveFinding {
            op: d.next_op().saturating_sub(1),
            verdict: Verdict::Failed(During::Recovery),
            detail,
        }),
        Err(panic) => Some(LiveFinding {
            op: d.next_op().saturating_sub(1),
            verdict: Verdict::Panic,
            detail: format!("the engine panicked: {panic} ({})", d.during()),
        }),
    };
    let commits = d.stats.commits;
    let thresholds = Thresholds::of_run(&d.counters, d.hooks.many_bucket_states);
    drop(d);
    Recording {
        log: Log::take(&log),
        live,
        commits,
        thresholds,
    }
}

/// The name of the bucket a recovery probe writes to; no workload uses it.
pub(crate) const PROBE_BUCKET: &[u8] = b"crashlab-probe";

/// The key the recovery probe puts; its value is the workload's value for that key, one byte
/// long.
const PROBE_KEY: &[u8] = b"k";

fn probe_put() -> Op {
    Op::Put {
        path: vec![Name::new(PROBE_BUCKET)],
        key: Name::new(PROBE_KEY),
        len: 1,
        version: 0,
    }
}

/// `state` after the recovery probe's commit (which, like the engine's, changes nothing when a
/// workload already made the probe's key a bucket).
pub(crate) fn probed(state: &KvModel) -> KvModel {
    let mut m = state.clone();
    let path = [PROBE_BUCKET.to_vec()];
    let _ = m.create_bucket(&path);
    let _ = m.put(&path, PROBE_KEY, &value_bytes(&Name::new(PROBE_KEY), 1, 0));
    m
}

/// Record a recovery of `image`: open it and commit the probe, with `allowed` in force.
pub(crate) fn record_recovery<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    image: &[u8],
    allowed: usize,
) -> Log {
    let disk = cfg.fresh_disk();
    disk.write_at(0, image).expect("a fault-free disk");
    disk.make_all_durable();
    let context = Context {
        allowed,
        ..Context::default()
    };
    let log = Log::shared(cfg.params.sector_size, context);
    let engine = cfg.engine_config();
    let inner = cfg
        .params
        .control
        .for_run(&disk, engine.capabilities().meta_region_len)
        .open();
    let storage = Recorder::new(inner, disk, log.clone());
    // A panic here is one the judged recovery of the same image already reported; the crash
    // points recorded up to it are still states to visit.
    let _ = crashlab_sim::guard::catch(|| {
        if let Ok(db) = E::open(Box::new(storage), &engine, 1) {
            let _ = probe(&db);
        }
    });
    Log::take(&log)
}

/// The recovery probe: create the probe bucket if missing, put one key, commit.
fn probe<E: Engine>(db: &E) -> Result<(), EngineError> {
    let mut tx = db.begin_write()?;
    let create = Op::CreateBucket(vec![Name::new(PROBE_BUCKET)]);
    match E::apply(&mut tx, &create) {
        Err(e) if e.refusal().is_none() => return Err(e),
        _ => {}
    }
    E::apply(&mut tx, &probe_put())?;
    db.commit(tx).map(drop)
}

/// The allowed set of a recovery probe: the recovered state, or it with the probe committed.
pub(crate) fn probe_allowed(book: &mut Book, recovered: ModelId, promised: bool) -> usize {
    let after = probed(book.model(recovered));
    let both = vec![recovered, book.intern(&after)];
    book.allow(Allowed {
        power: both.clone(),
        process: both,
        promised,
    })
}
