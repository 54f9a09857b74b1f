//! The recorded run, the recovery of an image and the recorded recovery for an engine reached
//! through the runner's adapter trait ([`EngineDb`]) — redb. Crash points, enumeration, the
//! oracle and minimisation are the same as for crashlab's engine ([`super::drive`]); what
//! differs is how the workload reaches the engine:
//!
//! - every transaction is one adapter write transaction; the engine says per commit whether it
//!   promised durability (redb: `Durability::Immediate`) or only acknowledged it (`None`);
//! - a process crash is judged like a power cut: redb keeps a non-durable commit's header in
//!   memory, so a crash of the process may lose it, as redb documents;
//! - a clean close may write (redb makes pending non-durable commits durable there): it is
//!   recorded like a commit, and a crash inside it is a crash point like any other;
//! - readers are checked live (the snapshot must not change while held) but give no reader
//!   states: those rebuild crashlab's snapshot meta in the page cache, which redb has no
//!   counterpart of.

use super::book::{Allowed, Book};
use super::drive::{
    finding_at, new_disk, probe_put, recovered, End, LiveFinding, Recording, Step, PROBE_BUCKET,
    READERS_MAX,
};
use super::record::{lock, Context, Log, Recorder, SharedLog};
use super::recover::{guarded, no_problems, Recovery};
use super::CheckConfig;
use crate::apply::{apply_checked_with, ApplyFailure};
use crate::engines::{EngineDb, EngineError, ErrorKind};
use crate::op::{Name, Op};
use crate::runner::RunConfig;
use crashlab_engine::{MemStorage, Storage};
use crashlab_models::{CommitOutcome, DurabilityOracle, KvModel};

/// Record the workload of `cfg` on engine `E`.
pub(crate) fn record<E: EngineDb>(cfg: &CheckConfig, book: &mut Book) -> Recording {
    let mut d = Driver::<E> {
        cfg,
        run: cfg.run_config(),
        disk: new_disk(cfg),
        log: Log::shared(cfg.params.sector_size, Context::default()),
        oracle: DurabilityOracle::new(KvModel::new()),
        book,
        next: 0,
        commits: 0,
        opens: 0,
        _engine: std::marker::PhantomData,
    };
    let live = d.run().err();
    Recording {
        log: Log::take(&d.log),
        live,
        commits: d.commits,
    }
}

/// Open `image` as the application would after the reboot, read it whole, run the engine's
/// integrity check.
pub(crate) fn recover<E: EngineDb>(cfg: &CheckConfig, image: Vec<u8>, book: &Book) -> Recovery {
    let run = cfg.run_config();
    guarded(book, || {
        let storage: Box<dyn Storage> = Box::new(MemStorage::from_bytes(image));
        let mut db = E::open(storage, &run, 0).map_err(|e| format!("open failed: {e}"))?;
        let model = read_all(&db).map_err(|e| format!("read failed: {e}"))?;
        let problems = db.check().map_err(|e| format!("check failed: {e}"))?;
        no_problems(&problems).map(|()| model)
    })
}

/// Record a recovery of `image` on engine `E`: open it and commit the probe, `allowed` in force.
pub(crate) fn record_recovery<E: EngineDb>(cfg: &CheckConfig, image: &[u8], allowed: usize) -> Log {
    let disk = new_disk(cfg);
    disk.write_at(0, image).expect("a fault-free disk");
    disk.sync().expect("a fault-free disk");
    let context = Context {
        allowed,
        ..Context::default()
    };
    let log = Log::shared(cfg.params.sector_size, context);
    let storage = Recorder::new(cfg.storage(disk.clone()), disk, log.clone());
    if let Ok(db) = E::open(Box::new(storage), &cfg.run_config(), 1) {
        let _ = probe(&db);
    }
    Log::take(&log)
}

/// The recovery probe: create the probe bucket if missing, put one key, commit.
fn probe<E: EngineDb>(db: &E) -> Result<bool, EngineError> {
    let mut tx = db.begin_write()?;
    let create = Op::CreateBucket(vec![Name::new(PROBE_BUCKET)]);
    match E::apply(&mut tx, &create) {
        Err(e) if !matches!(e.kind, ErrorKind::Refused(_)) => return Err(e),
        _ => {}
    }
    E::apply(&mut tx, &probe_put())?;
    db.commit(tx)
}

fn read_all<E: EngineDb>(db: &E) -> Result<KvModel, EngineError> {
    E::read_snapshot(&db.begin_read()?)
}

struct Driver<'a, E> {
    cfg: &'a CheckConfig,
    run: RunConfig,
    disk: crate::disk::SimDisk,
    log: SharedLog,
    oracle: DurabilityOracle,
    book: &'a mut Book,
    /// Index of the next operation.
    next: usize,
    commits: u64,
    opens: u64,
    _engine: std::marker::PhantomData<fn() -> E>,
}

impl<E: EngineDb> Driver<'_, E> {
    fn finding(&self, kind: &'static str, detail: impl ToString) -> LiveFinding {
        finding_at(self.next, kind, detail)
    }

    fn run(&mut self) -> Step<()> {
        self.create()?;
        self.set_allowed();
        let mut db = self.open()?;
        loop {
            let end = self.session(&db)?;
            match end {
                End::Done => return self.close(db),
                End::Reopen => {
                    self.close(db)?;
                    db = self.open()?;
                    self.verify(&mut db, false)?;
                }
                End::Crash => {
                    drop(db);
                    self.disk.crash_with(&mut |_| false);
                    lock(&self.log).forget_images();
                    db = self.open()?;
                    self.verify(&mut db, true)?;
                }
            }
        }
    }

    /// Create the database on the bare disk, unrecorded, and make it durable.
    fn create(&mut self) -> Step<()> {
        let db = E::open(Box::new(self.disk.clone()), &self.run, self.opens);
        self.opens += 1;
        let db = db.map_err(|e| self.finding("create", e))?;
        db.close().map_err(|e| self.finding("create", e))?;
        self.disk.sync().map_err(|e| self.finding("create", e))
    }

    fn open(&mut self) -> Step<E> {
        let storage = Recorder::new(
            self.cfg.storage(self.disk.clone()),
            self.disk.clone(),
            self.log.clone(),
        );
        let db = E::open(Box::new(storage), &self.run, self.opens);
        self.opens += 1;
        db.map_err(|e| self.finding("open", e))
    }

    /// A clean close, recorded as a durable commit that changes nothing: whatever it writes
    /// makes the acknowledged commits durable.
    fn close(&mut self, db: E) -> Step<()> {
        let index = self.begin_commit(self.oracle.current().clone());
        db.close().map_err(|e| self.finding("close", e))?;
        self.oracle.end_commit(index, CommitOutcome::Durable);
        self.set_allowed();
        Ok(())
    }

    /// After a reopen or a power cut: the recovered state is one the oracle allows, and the
    /// engine's own check finds nothing.
    fn verify(&mut self, db: &mut E, power_cut: bool) -> Step<()> {
        let observed = read_all(db).map_err(|e| self.finding("recovery read", e))?;
        let problems = db.check().map_err(|e| self.finding("check", e))?;
        recovered(&mut self.oracle, &observed, &problems, power_cut)
            .map_err(|(kind, detail)| self.finding(kind, detail))?;
        self.set_allowed();
        Ok(())
    }

    /// Tell the recorder what the oracle allows from now on: a process crash promises no more
    /// than a power cut (see the module docs).
    fn set_allowed(&mut self) {
        let id = self.book.allow_oracle(&self.oracle, true);
        let power = self.book.allowed(id).power.clone();
        let id = self.book.allow(Allowed {
            process: power.clone(),
            power,
            promised: true,
        });
        lock(&self.log).context.allowed = id;
    }

    fn session(&mut self, db: &E) -> Step<End> {
        let mut readers: Vec<(E::Reader<'_>, KvModel)> = Vec::new();
        let mut tx_ops: Vec<Op> = Vec::new();
        while self.next < self.cfg.ops.len() {
            let op = self.cfg.ops[self.next].clone();
            lock(&self.log).context.op = self.next;
            self.next += 1;
            match op {
                Op::Commit => self.commit(db, std::mem::take(&mut tx_ops))?,
                Op::Rollback => tx_ops.clear(),
                Op::BeginReader if readers.len() < READERS_MAX => {
                    let r = db
                        .begin_read()
                        .map_err(|e| self.finding("begin reader", e))?;
                    readers.push((r, self.oracle.current().clone()));
                }
                Op::EndReader(n) if (n as usize) < readers.len() => {
                    let (r, want) = readers.remove(n as usize);
                    self.end_reader(&r, &want)?;
                }
                Op::Reopen => return Ok(End::Reopen),
                Op::Crash => return Ok(End::Crash),
                Op::BeginReader
                | Op::EndReader(_)
                | Op::Get { .. }
                | Op::Scan { .. }
                | Op::PowerCutIn(_) => {}
                data => tx_ops.push(data),
            }
        }
        Ok(End::Done)
    }

    fn end_reader(&self, r: &E::Reader<'_>, want: &KvModel) -> Step<()> {
        match E::read_snapshot(r) {
            Ok(got) if got == *want => Ok(()),
            Ok(_) => Err(self.finding("reader snapshot", "a reader's snapshot changed")),
            Err(e) => Err(self.finding("reader snapshot", e)),
        }
    }

    /// One write transaction: every operation applied to engine and model, then committed.
    fn commit(&mut self, db: &E, ops: Vec<Op>) -> Step<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut tx = db.begin_write().map_err(|e| self.finding("begin", e))?;
        let mut model = self.oracle.current().clone();
        let refusal = |e: &EngineError| match e.kind {
            ErrorKind::Refused(m) => Some(m),
            _ => None,
        };
        for op in &ops {
            match apply_checked_with(&mut model, op, |op| E::apply(&mut tx, op), refusal) {
                Ok(_) => {}
                Err(ApplyFailure::Mismatch(d)) => return Err(self.finding("model mismatch", d)),
                Err(ApplyFailure::Engine(e)) => return Err(self.finding("write", e)),
            }
        }
        let index = self.begin_commit(model);
        let durable = db.commit(tx).map_err(|e| self.finding("commit", e))?;
        let outcome = if durable {
            CommitOutcome::Durable
        } else {
            CommitOutcome::Acknowledged
        };
        self.oracle.end_commit(index, outcome);
        self.set_allowed();
        self.commits += 1;
        Ok(())
    }

    fn begin_commit(&mut self, model: KvModel) -> usize {
        let index = self.oracle.begin_commit(model);
        self.set_allowed();
        index
    }
}
