//! Judging a recovery: read the whole database, run the engine's own integrity check, and ask
//! the oracle whether the state is one it allows. The seeded runner judges the database it just
//! reopened; the crash-state checker judges a crash image opened in memory ([`recover_image`]).

use super::{Driver, Hooks, Step};
use crate::adapter::error::DAMAGE_ON_DISK;
use crate::adapter::{list_model, Engine, EngineError};
use crate::guard;
use crate::op::{path_to_string, Name, Path};
use crate::verdict::{During, Stop, Verdict};
use crashlab_engine::{MemStorage, Storage};
use crashlab_models::KvModel;

impl<E: Engine, H: Hooks<E>> Driver<'_, E, H> {
    /// After a reopen or a power cut: the recovered state is one the oracle allows, and the
    /// engine's own check finds nothing. Faults are suspended while the harness reads.
    pub(super) fn verify_recovery(&mut self, db: &mut E, power_cut: bool) -> Step<()> {
        self.power.reset();
        let faults = self.suspend_faults();
        let observed = db.begin_read().and_then(|r| E::read_snapshot(&r));
        let problems = db.check();
        self.medium.set_faults(faults);
        let observed = match observed {
            Ok(m) => m,
            Err(e) if e.is_io() => {
                return Err(Stop::DiskFailure(format!("unreadable after recovery: {e}")))
            }
            Err(e) => return Err(self.failure(Verdict::Failed(During::RecoveryRead), &e)),
        };
        let allowed = self.allowed_now(power_cut);
        let found = if power_cut {
            self.oracle.recover_after_power_cut(&observed)
        } else {
            self.oracle.recover_after_reopen(&observed)
        };
        self.promise_changed();
        self.log_recovery(
            allowed,
            &observed,
            found.as_ref().ok().copied(),
            &problems,
            power_cut,
        );
        match found {
            Ok(i) => self.trace.record(format!(
                "recovered S[{i}] after {}",
                if power_cut { "power cut" } else { "reopen" }
            )),
            Err(v) => return Err(self.violation(Verdict::Durability, v.to_string())),
        }
        match problems {
            Ok(p) if p.is_empty() => Ok(()),
            Ok(p) => {
                let first: Vec<String> = p.iter().take(5).cloned().collect();
                let detail = format!("{} problems: {}", p.len(), first.join("; "));
                if self.disk_may_explain() {
                    return Err(Stop::DiskFailure(format!(
                        "corruption detected during check: {detail}"
                    )));
                }
                Err(self.violation(Verdict::IntegrityCheck, detail))
            }
            Err(e) => Err(Stop::DiskFailure(format!("check could not read: {e}"))),
        }
    }
}

/// Read `model` (what a whole-snapshot read of `db` gave) back as an application would: every
/// bucket by a scan and every key by a point lookup, each through a fresh snapshot. Lookup
/// routing and scans must agree with the ordered read; the first disagreement, if any.
pub fn read_as_an_application<E: Engine>(db: &E, model: &KvModel) -> Result<(), String> {
    let mut buckets = vec![(Vec::new(), &model.root)];
    while let Some((path, bucket)) = buckets.pop() {
        let names: Path = path
            .iter()
            .map(|n: &Vec<u8>| Name::new(n.clone()))
            .collect();
        if !names.is_empty() {
            let listed = db.scan(&names).map_err(|e| format!("scan failed: {e}"))?;
            if listed.as_ref() != Some(&list_model(bucket)) {
                return Err(format!(
                    "a scan of {} differs from the whole read",
                    path_to_string(&names)
                ));
            }
            for (key, value) in &bucket.values {
                let got = db
                    .get(&names, &Name::new(key.clone()))
                    .map_err(|e| format!("lookup failed: {e}"))?;
                if got.as_ref() != Some(value) {
                    return Err(format!(
                        "a lookup of {} in {} differs from the whole read ({} bytes against {:?})",
                        Name::new(key.clone()),
                        path_to_string(&names),
                        value.len(),
                        got.map(|v| v.len())
                    ));
                }
            }
        }
        for (name, child) in &bucket.buckets {
            let mut p = path.clone();
            p.push(name.clone());
            buckets.push((p, child));
        }
    }
    Ok(())
}

/// What opening a crash image gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Recovered {
    /// It opened, read whole and checked clean: this state.
    State(KvModel),
    /// A typed error, or the engine's check found problems.
    Corrupt(String),
    /// The engine panicked.
    Panic(String),
}

/// Open `image` in memory as the application would after the reboot (writable, the run's
/// options), read it whole, read every bucket and key back as an application would, and run the
/// engine's integrity check. A panic is caught and kept.
pub fn recover_image<E: Engine>(image: Vec<u8>, cfg: &E::Config) -> Recovered {
    open_image::<E>(Box::new(MemStorage::from_bytes(image)), cfg, true)
}

/// [`recover_image`] of the file `storage` holds, the application's read-back and the integrity
/// check only when `judged`: without them, what the file opens to and nothing more (the
/// checksum probe's question).
pub(crate) fn open_image<E: Engine>(
    storage: Box<dyn Storage>,
    cfg: &E::Config,
    judged: bool,
) -> Recovered {
    let opened = guard::catch(|| {
        let mut db =
            E::open(storage, cfg, 0).map_err(|e| format!("open failed: {}", e.classified()))?;
        let model = db
            .begin_read()
            .and_then(|r| E::read_snapshot(&r))
            .map_err(|e: EngineError| format!("read failed: {}", e.classified()))?;
        if !judged {
            return Ok(model);
        }
        read_as_an_application::<E>(&db, &model)?;
        let problems = db
            .check()
            .map_err(|e| format!("check failed: {}", e.classified()))?;
        match problems.first() {
            Some(p) => Err(format!(
                "{DAMAGE_ON_DISK}: check: {} problems, first: {p}",
                problems.len()
            )),
            None => Ok(model),
        }
    });
    match opened {
        Ok(Ok(model)) => Recovered::State(model),
        Ok(Err(e)) => Recovered::Corrupt(e),
        Err(panic) => Recovered::Panic(panic),
    }
}
