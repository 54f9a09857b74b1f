//! What a mode of running adds to the one session loop. The seeded runner adds faults, madsim
//! time, background readers and timer power cuts; the crash-state checker adds a recording
//! storage wrapper and the context of every storage call. Both observe the same loop through
//! this trait, as TigerBeetle's checkers observe its simulator: the loop never asks which mode
//! it runs in.

use crate::adapter::{Engine, EngineError};
use crate::disk::{CrashOutcome, SimDisk};
use crate::fs::{SimDir, SimFs};
use crate::medium::Medium;
use crate::power::PowerSwitch;
use crashlab_engine::Storage;
use crashlab_models::{DurabilityOracle, KvModel};
use std::rc::Rc;
use std::sync::Arc;

/// What the background of a session saw since the last look: events for the trace and, if one
/// of them broke a promise, the violation's detail, or the engine error (not an I/O error) one
/// met, which the driver judges as it judges the writer's ([`Driver::failure`]).
///
/// [`Driver::failure`]: crate::driver::Driver
#[derive(Debug, Default)]
pub struct News {
    pub events: Vec<String>,
    pub violation: Option<String>,
    pub error: Option<EngineError>,
}

/// The observers of one run of the session loop. Every method has a default that does nothing,
/// except the two that decide what the disk is: the storage an open gets and what a power cut
/// keeps.
#[allow(
    async_fn_in_trait,
    reason = "the driver is generic, never a trait object; madsim runs it on one thread"
)]
pub trait Hooks<E: Engine> {
    /// The storage one open of the engine gets: `disk` behind the driver's power switch, and
    /// whatever this mode puts between them.
    fn storage(&mut self, disk: &SimDisk, power: &PowerSwitch) -> Box<dyn Storage>;

    /// The storage the database is created on (before faults and recording start): by default
    /// the same as every open's.
    fn creation_storage(&mut self, disk: &SimDisk, power: &PowerSwitch) -> Box<dyn Storage> {
        self.storage(disk, power)
    }

    /// The directory one open of an engine of several files gets (capability `directory`):
    /// by default `fs` behind the driver's power switch.
    fn directory(&mut self, fs: &SimFs, power: &PowerSwitch) -> SimDir {
        SimDir::new(fs.clone(), power.clone())
    }

    /// The power is cut: decide what the disk (or the file system: its metadata, then every
    /// file's data) keeps of what is pending.
    fn power_cut(&mut self, medium: &Medium) -> CrashOutcome;

    /// The database was created on the bare medium (before faults and recording start).
    fn created(&mut self, medium: &Medium) {
        let _ = medium;
    }

    /// Operation `index` of the workload starts.
    fn op_started(&mut self, index: usize) {
        let _ = index;
    }

    /// What the oracle allows after a crash changed (a commit began or ended, a recovery was
    /// judged). `promised`: whether the engine promises anything across a power cut.
    fn promise_changed(&mut self, oracle: &DurabilityOracle, promised: bool) {
        let _ = (oracle, promised);
    }

    /// A reader opened on `state`; `token` identifies its snapshot when the engine has reader
    /// views.
    fn reader_opened(&mut self, token: Option<Vec<u8>>, state: &KvModel) {
        let _ = (token, state);
    }

    /// The reader at `position` among the open ones closed.
    fn reader_closed(&mut self, position: usize) {
        let _ = position;
    }

    /// Every reader of the session is gone (the session ended).
    fn readers_cleared(&mut self) {}

    /// A session starts on `db`, whose last acknowledged state is `current` (shared with the
    /// oracle: keep the `Arc`, not a copy).
    fn session_started(&mut self, db: &Rc<E>, power: &PowerSwitch, current: &Arc<KvModel>) {
        let _ = (db, power, current);
    }

    /// The last acknowledged state changed (background readers compare with it). Called after
    /// every commit's start and end: keep the `Arc`, not a copy.
    fn acknowledged(&mut self, current: &Arc<KvModel>) {
        let _ = current;
    }

    /// Between two operations of the writer: let the background run (simulated time passes for
    /// the I/O the last operation did) and report what it saw.
    async fn between_ops(&mut self, medium: &Medium) -> News {
        let _ = medium;
        News::default()
    }

    /// The session ends: stop the background (it drops every handle on the database) and report
    /// what it saw last.
    async fn session_ended(&mut self) -> News {
        News::default()
    }
}
