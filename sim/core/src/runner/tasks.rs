//! The runner's background tasks: long-lived readers that hold a snapshot while the writer
//! commits, and a timer that cuts the power at a seeded simulated instant.

use crate::adapter::{Engine, EngineError};
use crate::power::PowerSwitch;
use crate::rng::SimRng;
use crashlab_models::KvModel;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What a session's background tasks share with the writer.
#[derive(Default)]
pub(super) struct Shared {
    /// The last acknowledged state: what a reader starting now must see (the oracle's, shared).
    pub current: Arc<KvModel>,
    pub stop: bool,
    pub events: Vec<String>,
    pub violation: Option<String>,
    /// An error a reader met, not an I/O error: the driver judges it as it judges the
    /// writer's (damage the disk may explain, or the engine's failure).
    pub error: Option<EngineError>,
}

/// A long-lived reader: takes a snapshot, holds it while the writer commits (simulated time
/// passes), then checks that it still reads exactly the state it started on. It ends at the
/// first error that is not an I/O error and hands it over: whether the disk may explain it
/// depends on what the disk has done by then, which the driver knows.
pub(super) async fn reader_task<E: Engine>(
    id: u64,
    db: Rc<E>,
    shared: Rc<RefCell<Shared>>,
    mut rng: SimRng,
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
        let txid = E::snapshot_id(&tx);
        let line = match E::snapshot_equals(&tx, &want) {
            Ok(true) => format!("reader task {id}: snapshot of txid {txid} intact"),
            Ok(false) => {
                let v = format!("reader task {id}: snapshot of txid {txid} changed while held");
                shared.borrow_mut().violation = Some(v);
                return;
            }
            Err(e) if e.is_io() => format!("reader task {id}: io error {e}"),
            Err(e) => {
                let message = format!("reader task {id}: {}", e.message);
                shared.borrow_mut().error = Some(EngineError { message, ..e });
                return;
            }
        };
        shared.borrow_mut().events.push(line);
    }
}

/// Cut the power after `delay` of simulated time, unless the session ended first.
pub(super) async fn timer_task(delay: Duration, power: PowerSwitch, shared: Rc<RefCell<Shared>>) {
    madsim::time::sleep(delay).await;
    if !shared.borrow().stop {
        power.arm(1);
        shared
            .borrow_mut()
            .events
            .push(format!("timer: power cut at +{delay:?}"));
    }
}
