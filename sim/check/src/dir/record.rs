//! Recording a directory engine's run: the workload once, with the session driver, on a
//! fault-free SimFs, with a [`CallObserver`] on the engine's directory that copies the file
//! system ([`SimFs::clone_state`]) before every call that changes it — a crash point — beside
//! the states the durability oracle allows at that instant.

use crate::CheckConfig;
use crashlab_models::{DurabilityOracle, KvModel};
use crashlab_sim::adapter::{Engine, Storage};
use crashlab_sim::disk::{CrashOutcome, SimDisk};
use crashlab_sim::driver::{Driver, Hooks, Settings};
use crashlab_sim::fs::{CallObserver, FsConfig, MetaSubset, SimDir, SimFs};
use crashlab_sim::medium::Medium;
use crashlab_sim::power::PowerSwitch;
use crashlab_sim::verdict::Stop;
use std::sync::{Arc, Mutex};

/// One crash point: the file system just before a call that changes it, and what a power cut
/// there may leave of the database's state.
pub(crate) struct Point {
    pub fs: SimFs,
    /// The operation running (or the last that ran).
    pub op: usize,
    /// The states a power cut here may recover to; `promised` false: the engine promises
    /// nothing across a power cut.
    pub allowed: Arc<Vec<KvModel>>,
    pub promised: bool,
}

/// What the observer and the hooks share (the observer is `Send + Sync`, as storage is).
#[derive(Default)]
struct Shared {
    /// Off until the database is created: creation is out of scope.
    recording: bool,
    op: usize,
    allowed: Arc<Vec<KvModel>>,
    promised: bool,
    points: Vec<Point>,
}

fn lock(s: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

struct DirRecordHooks {
    shared: Arc<Mutex<Shared>>,
}

impl<E: Engine> Hooks<E> for DirRecordHooks {
    fn storage(&mut self, _disk: &SimDisk, _power: &PowerSwitch) -> Box<dyn Storage> {
        unreachable!("a directory engine is opened on a directory")
    }

    fn directory(&mut self, fs: &SimFs, power: &PowerSwitch) -> SimDir {
        let shared = self.shared.clone();
        let observer: CallObserver = Arc::new(move |fs: &SimFs| {
            let mut sh = lock(&shared);
            if sh.recording {
                let point = Point {
                    fs: fs.clone_state(),
                    op: sh.op,
                    allowed: sh.allowed.clone(),
                    promised: sh.promised,
                };
                sh.points.push(point);
            }
        });
        SimDir::observed(fs.clone(), power.clone(), observer)
    }

    /// The workload's own power cuts keep nothing pending: the crash points before them are
    /// where the checker visits what a cut could keep.
    fn power_cut(&mut self, medium: &Medium) -> CrashOutcome {
        let fs = medium
            .fs()
            .expect("a directory engine runs on a file system");
        let cut = fs
            .crash_with(&MetaSubset::default(), &mut |_, _| false)
            .expect("keeping nothing is a crash state of every model");
        cut.data
    }

    fn created(&mut self, medium: &Medium) {
        medium.make_all_durable();
        lock(&self.shared).recording = true;
    }

    fn op_started(&mut self, index: usize) {
        lock(&self.shared).op = index;
    }

    fn promise_changed(&mut self, oracle: &DurabilityOracle, promised: bool) {
        let (lo, hi) = oracle.allowed_after_power_cut();
        let allowed = (lo..=hi).map(|i| oracle.state(i).clone()).collect();
        let mut sh = lock(&self.shared);
        sh.allowed = Arc::new(allowed);
        sh.promised = promised;
    }
}

/// The recorded run: its crash points, its commits, and a violation of the run itself.
pub(crate) struct Recording {
    pub points: Vec<Point>,
    pub commits: u64,
    pub live: Option<String>,
}

/// Record `cfg`'s workload on engine `E` over a file system configured as `fs`.
pub(crate) fn record<E: Engine>(cfg: &CheckConfig<E::Config>, fs: FsConfig) -> Recording {
    let mut run = cfg.run_config();
    run.fs = fs;
    let medium = Medium::Fs(SimFs::new(cfg.seed, run.disk.clone(), fs));
    let shared = Arc::new(Mutex::new(Shared::default()));
    let hooks = DirRecordHooks {
        shared: shared.clone(),
    };
    let mut d = Driver::<E, _>::new(&run, medium, Settings::default(), hooks);
    let rt = madsim::runtime::Runtime::with_seed_and_config(cfg.seed, madsim::Config::default());
    let ended =
        crashlab_sim::guard::catch(|| rt.block_on(crashlab_sim::guard::catch_future(d.drive())))
            .and_then(|ended| ended);
    let live = match ended {
        Ok(Ok(())) => None,
        Ok(Err(Stop::Violation(v))) => Some(v.to_string()),
        Ok(Err(Stop::DiskFailure(why))) => Some(format!("disk failure without faults: {why}")),
        Err(panic) => Some(format!("the engine panicked: {panic}")),
    };
    let commits = d.stats.commits;
    drop(d);
    let points = std::mem::take(&mut lock(&shared).points);
    Recording {
        points,
        commits,
        live,
    }
}
