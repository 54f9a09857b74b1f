//! A single-file engine run on one SimFs file: the seeded runner's loop, with the engine's
//! storage a [`FsFile`](super::FsFile) and every power cut a SimFs power cut. The file is
//! created and its name made durable before the run (creation is out of a run's scope, as on
//! the bare disk), so the metadata has nothing pending and the run is the one the seed runs on
//! a [`SimDisk`]: same outcome, same trace, same figures. [`run_on_one_file`] is what shows it.

use super::{FsConfig, SimFs};
use crate::adapter::{Engine, EngineConfig as _};
use crate::config::RunConfig;
use crate::control::Control;
use crate::disk::{CrashOutcome, SimDisk};
use crate::driver::{Hooks, News, Settings};
use crate::medium::Medium;
use crate::power::{PowerSwitch, Switched};
use crate::runner::{drive_to_report, in_runtime, Report, RunnerHooks};
use crashlab_engine::Storage;
use crashlab_models::{DurabilityOracle, KvModel};
use std::rc::Rc;
use std::sync::Arc;

/// The name of the engine's file.
pub const DB_FILE: &str = "db";

/// Run `cfg` as [`crate::runner::run`] does, on file [`DB_FILE`] of a SimFs seeded with the
/// run's seed.
pub fn run_on_one_file<E: Engine>(cfg: &RunConfig<E::Config>, fs: FsConfig) -> Report {
    let (report, _) = in_runtime(cfg.seed, async move {
        let simfs = SimFs::new(cfg.seed, cfg.disk.clone(), fs);
        let disk = simfs
            .create(DB_FILE)
            .expect("an empty file system creates a file")
            .disk()
            .clone();
        simfs.make_meta_durable();
        let hooks = FsHooks::<E>::new(cfg, simfs);
        let medium = Medium::Disk(disk);
        drive_to_report(
            cfg,
            medium,
            Settings::default(),
            hooks,
            |h| &h.runner,
            false,
        )
        .await
    });
    report
}

/// The runner's hooks, with the engine's storage a SimFs file and power cuts the file
/// system's. Every other method of [`Hooks`] is the runner's: a method added to the trait must
/// be delegated here too, or a default that does nothing would silently replace the runner's
/// (the equivalence test in `fs/tests/run.rs` is what would notice).
pub struct FsHooks<E> {
    runner: RunnerHooks<E>,
    fs: SimFs,
    control: Control,
    meta_len: u64,
}

impl<E: Engine> FsHooks<E> {
    pub fn new(cfg: &RunConfig<E::Config>, fs: SimFs) -> FsHooks<E> {
        let control = cfg.profile.control();
        if let Some(needed) = control.length_model() {
            let has = cfg.disk.length;
            assert_eq!(
                has, needed,
                "control {control} runs on an {needed} disk, not {has}"
            );
        }
        FsHooks {
            runner: RunnerHooks::new(cfg),
            fs,
            control,
            meta_len: cfg.engine.capabilities().meta_region_len,
        }
    }
}

impl<E: Engine> Hooks<E> for FsHooks<E> {
    fn storage(&mut self, _disk: &SimDisk, power: &PowerSwitch) -> Box<dyn Storage> {
        let file = self
            .fs
            .open(DB_FILE)
            .expect("the database's name was durable before the run and nothing renames it");
        Box::new(Switched {
            inner: self.control.wrap(file, self.meta_len),
            switch: power.clone(),
        })
    }

    /// The file system's power cut, the database file's data cut as the runner cuts a disk
    /// (pinned cuts, torn-meta figures).
    fn power_cut(&mut self, _medium: &Medium) -> CrashOutcome {
        let runner = &mut self.runner;
        let db = self.fs.directory().get(DB_FILE).copied();
        let cut = self.fs.crash_each(&mut |file, disk| {
            if Some(file) == db {
                Hooks::<E>::power_cut(runner, &Medium::Disk(disk.clone()))
            } else {
                disk.crash()
            }
        });
        cut.data
    }

    fn created(&mut self, medium: &Medium) {
        Hooks::<E>::created(&mut self.runner, medium)
    }

    fn op_started(&mut self, index: usize) {
        Hooks::<E>::op_started(&mut self.runner, index)
    }

    fn promise_changed(&mut self, oracle: &DurabilityOracle, promised: bool) {
        Hooks::<E>::promise_changed(&mut self.runner, oracle, promised)
    }

    fn reader_opened(&mut self, token: Option<Vec<u8>>, state: &KvModel) {
        Hooks::<E>::reader_opened(&mut self.runner, token, state)
    }

    fn reader_closed(&mut self, position: usize) {
        Hooks::<E>::reader_closed(&mut self.runner, position)
    }

    fn readers_cleared(&mut self) {
        Hooks::<E>::readers_cleared(&mut self.runner)
    }

    fn session_started(&mut self, db: &Rc<E>, power: &PowerSwitch, current: &Arc<KvModel>) {
        self.runner.session_started(db, power, current)
    }

    fn acknowledged(&mut self, current: &Arc<KvModel>) {
        Hooks::<E>::acknowledged(&mut self.runner, current)
    }

    async fn between_ops(&mut self, medium: &Medium) -> News {
        Hooks::<E>::between_ops(&mut self.runner, medium).await
    }

    async fn session_ended(&mut self) -> News {
        Hooks::<E>::session_ended(&mut self.runner).await
    }
}
