//! The recorded run: the workload executed once on a fault-free [`SimDisk`] behind a
//! [`Recorder`], with the durability oracle told about every commit, so each crash point carries
//! the states a crash there may leave. Nothing is re-run per state.
//!
//! How operations map (the checker enumerates crash points itself, so the workload needs none):
//! data operations gather into the open transaction, applied at `commit` through `Db::update` (or,
//! batched, one `WriteBatch` through `Db::write` — a `Db::batch` call when the transaction also
//! creates or deletes buckets); operations the model refuses are left out of a batch. `get` and
//! `scan` are skipped (they write nothing), `power-cut-in` too. `reopen` restarts the process;
//! `crash` is the power cut that keeps no pending sector (its other outcomes are the states
//! enumerated at the crash point before it). Readers live until `end-reader` or the session's
//! end; `end-reader` compares what the reader sees with the state it began on.
//!
//! The database is created, and made durable, before recording starts: a power cut during
//! creation leaves an unopenable file in bbolt too, and it is out of scope.

use super::adapter;
use super::book::{Allowed, Book, ModelId};
use super::record::{lock, Context, Log, OpenReader, Recorder, SharedLog};
use super::recover::no_problems;
use super::CheckConfig;
use crate::apply::{apply_checked, engine_apply, model_apply, path_refs, ApplyFailure};
use crate::disk::{DiskConfig, SimDisk};
use crate::engines::redb::RedbDb;
use crate::engines::EngineKind;
use crate::op::{value_bytes, Name, Op};
use crate::runner::{read_model, read_snapshot};
use crashlab_engine::batch::{Record, WriteBatch};
use crashlab_engine::{Db, Options, ReadTx, Storage};
use crashlab_models::{CommitOutcome, DurabilityOracle, KvModel};
use std::sync::Arc;

/// Readers open at once, at most (as in the runner).
pub(crate) const READERS_MAX: usize = 4;

/// A failure of the recorded run itself.
#[derive(Clone, Debug)]
pub(crate) struct LiveFinding {
    pub op: usize,
    pub kind: &'static str,
    pub detail: String,
}

/// A finding of the operation before `next`, the index of the next operation.
pub(crate) fn finding_at(next: usize, kind: &'static str, detail: impl ToString) -> LiveFinding {
    LiveFinding {
        op: next.saturating_sub(1),
        kind,
        detail: detail.to_string(),
    }
}

pub(crate) struct Recording {
    pub log: Log,
    pub live: Option<LiveFinding>,
    pub commits: u64,
}

/// A fresh, fault-free disk with the checker's sector size.
pub(crate) fn new_disk(cfg: &CheckConfig) -> SimDisk {
    SimDisk::new(
        cfg.seed,
        DiskConfig {
            sector_size: cfg.params.sector_size,
            ..DiskConfig::default()
        },
    )
}

/// Record the workload of `cfg`.
pub(crate) fn record(cfg: &CheckConfig, book: &mut Book) -> Recording {
    if cfg.engine == EngineKind::Redb {
        return adapter::record::<RedbDb>(cfg, book);
    }
    let disk = new_disk(cfg);
    let options = cfg.engine_options();
    let log = Log::shared(cfg.params.sector_size, Context::default());
    let mut d = Driver {
        cfg,
        options,
        disk,
        log,
        oracle: DurabilityOracle::new(KvModel::new()),
        book,
        next: 0,
        commits: 0,
    };
    let live = d.run().err();
    let log = Log::take(&d.log);
    Recording {
        log,
        live,
        commits: d.commits,
    }
}

/// The name of the bucket a recovery probe writes to; no workload uses it.
pub(crate) const PROBE_BUCKET: &[u8] = b"crashlab-probe";

/// The key the recovery probe puts; its value is the workload's value for that key, one byte
/// long (so an engine reached through the adapter, which writes workload values, writes it too).
pub(crate) const PROBE_KEY: &[u8] = b"k";

pub(crate) fn probe_put() -> Op {
    Op::Put {
        path: vec![Name::new(PROBE_BUCKET)],
        key: Name::new(PROBE_KEY),
        len: 1,
        version: 0,
    }
}

fn probe_value() -> Vec<u8> {
    value_bytes(&Name::new(PROBE_KEY), 1, 0)
}

/// `state` after the recovery probe's commit (which, like the engine's, changes nothing when a
/// workload already made the probe's key a bucket).
pub(crate) fn probed(state: &KvModel) -> KvModel {
    let mut m = state.clone();
    let path = [PROBE_BUCKET.to_vec()];
    let _ = m.create_bucket(&path);
    let _ = m.put(&path, PROBE_KEY, &probe_value());
    m
}

/// Record a recovery of `image`: open it and commit the probe, with `allowed` in force.
pub(crate) fn record_recovery(cfg: &CheckConfig, image: &[u8], allowed: usize) -> Log {
    if cfg.engine == EngineKind::Redb {
        return adapter::record_recovery::<RedbDb>(cfg, image, allowed);
    }
    let disk = new_disk(cfg);
    disk.write_at(0, image).expect("a fault-free disk");
    disk.sync().expect("a fault-free disk");
    let context = Context {
        allowed,
        ..Context::default()
    };
    let log = Log::shared(cfg.params.sector_size, context);
    let storage = recorder(cfg, &disk, &log);
    if let Ok(db) = Db::open(storage, cfg.engine_options()) {
        let value = probe_value();
        let _ = db.update(|tx| {
            tx.create_bucket_if_missing(PROBE_BUCKET)?
                .put(PROBE_KEY, &value)
        });
    }
    Log::take(&log)
}

fn recorder(cfg: &CheckConfig, disk: &SimDisk, log: &SharedLog) -> Recorder {
    Recorder::new(cfg.storage(disk.clone()), disk.clone(), log.clone())
}

/// How a session of the recorded run ended.
pub(crate) enum End {
    Done,
    Reopen,
    Crash,
}

struct Driver<'a> {
    cfg: &'a CheckConfig,
    options: Options,
    disk: SimDisk,
    log: SharedLog,
    oracle: DurabilityOracle,
    book: &'a mut Book,
    /// Index of the next operation.
    next: usize,
    commits: u64,
}

pub(crate) type Step<T> = Result<T, LiveFinding>;

impl Driver<'_> {
    fn finding(&self, kind: &'static str, detail: impl ToString) -> LiveFinding {
        finding_at(self.next, kind, detail)
    }

    fn run(&mut self) -> Step<()> {
        self.create()?;
        self.set_allowed();
        let mut db = self.open()?;
        loop {
            let end = self.session(&db);
            drop(db);
            match end? {
                End::Done => return Ok(()),
                End::Reopen => {
                    db = self.open()?;
                    self.verify(&db, false)?;
                }
                End::Crash => {
                    self.disk.crash_with(&mut |_| false);
                    lock(&self.log).forget_images();
                    db = self.open()?;
                    self.verify(&db, true)?;
                }
            }
        }
    }

    /// Create the database on the bare disk and make it durable whatever `no_sync` says.
    fn create(&mut self) -> Step<()> {
        let created = Db::open(self.disk.clone(), self.options.clone());
        drop(created.map_err(|e| self.finding("create", e))?);
        self.disk.sync().map_err(|e| self.finding("create", e))
    }

    fn open(&mut self) -> Step<Db> {
        let storage = recorder(self.cfg, &self.disk, &self.log);
        Db::open(storage, self.options.clone()).map_err(|e| self.finding("open", e))
    }

    /// After a reopen or a power cut: the recovered state is one the oracle allows.
    fn verify(&mut self, db: &Db, power_cut: bool) -> Step<()> {
        let observed = read_model(db).map_err(|e| self.finding("recovery read", e))?;
        let problems = db.check().map_err(|e| self.finding("check", e))?;
        recovered(&mut self.oracle, &observed, &problems, power_cut)
            .map_err(|(kind, detail)| self.finding(kind, detail))?;
        self.set_allowed();
        Ok(())
    }

    /// Tell the recorder what the oracle allows from now on.
    fn set_allowed(&mut self) {
        let id = self.book.allow_oracle(&self.oracle, !self.options.no_sync);
        lock(&self.log).context.allowed = id;
    }

    fn session(&mut self, db: &Db) -> Step<End> {
        let mut readers: Vec<(ReadTx<'_>, ModelId)> = Vec::new();
        let end = self.ops(db, &mut readers);
        lock(&self.log).context.readers.clear();
        end
    }

    fn ops<'db>(&mut self, db: &'db Db, readers: &mut Vec<(ReadTx<'db>, ModelId)>) -> Step<End> {
        let mut tx_ops: Vec<Op> = Vec::new();
        while self.next < self.cfg.ops.len() {
            let op = self.cfg.ops[self.next].clone();
            lock(&self.log).context.op = self.next;
            self.next += 1;
            match op {
                Op::Commit => self.commit(db, std::mem::take(&mut tx_ops))?,
                Op::Rollback => tx_ops.clear(),
                Op::BeginReader => self.begin_reader(db, readers)?,
                Op::EndReader(n) => self.end_reader(readers, n as usize)?,
                Op::Reopen => return Ok(End::Reopen),
                Op::Crash => return Ok(End::Crash),
                Op::Get { .. } | Op::Scan { .. } | Op::PowerCutIn(_) => {}
                data => tx_ops.push(data),
            }
        }
        Ok(End::Done)
    }

    fn begin_reader<'db>(
        &mut self,
        db: &'db Db,
        readers: &mut Vec<(ReadTx<'db>, ModelId)>,
    ) -> Step<()> {
        if readers.len() >= READERS_MAX {
            return Ok(());
        }
        let tx = db
            .begin_read()
            .map_err(|e| self.finding("begin reader", e))?;
        let model = self.book.intern(self.oracle.current());
        lock(&self.log).context.readers.push(OpenReader {
            meta: *tx.meta(),
            model,
        });
        readers.push((tx, model));
        Ok(())
    }

    fn end_reader(&mut self, readers: &mut Vec<(ReadTx<'_>, ModelId)>, n: usize) -> Step<()> {
        if n >= readers.len() {
            return Ok(());
        }
        let (tx, model) = readers.remove(n);
        lock(&self.log).context.readers.remove(n);
        match read_snapshot(&tx) {
            Ok(got) if got == *self.book.model(model) => Ok(()),
            Ok(_) => Err(self.finding("reader snapshot", "a reader's snapshot changed")),
            Err(e) => Err(self.finding("reader snapshot", e)),
        }
    }

    fn commit(&mut self, db: &Db, ops: Vec<Op>) -> Step<()> {
        if ops.is_empty() {
            return Ok(());
        }
        if self.cfg.params.batched {
            self.commit_batched(db, &ops)
        } else {
            self.commit_update(db, &ops)
        }
    }

    /// One write transaction: every operation applied to engine and model, then committed.
    fn commit_update(&mut self, db: &Db, ops: &[Op]) -> Step<()> {
        let mut tx = db.begin_write().map_err(|e| self.finding("begin", e))?;
        let mut model = self.oracle.current().clone();
        for op in ops {
            match apply_checked(&mut tx, &mut model, op) {
                Ok(_) => {}
                Err(ApplyFailure::Mismatch(d)) => return Err(self.finding("model mismatch", d)),
                Err(ApplyFailure::Engine(e)) => return Err(self.finding("write", e)),
            }
        }
        let index = self.begin_commit(model);
        let done = tx.commit();
        self.end_commit(index, done)
    }

    /// One batched call: the operations the model accepts, as a `WriteBatch` when they are all
    /// puts and deletes, else as a `Db::batch` function.
    fn commit_batched(&mut self, db: &Db, ops: &[Op]) -> Step<()> {
        let mut model = self.oracle.current().clone();
        let mut kept = Vec::new();
        for op in ops {
            let mut next = model.clone();
            if model_apply(&mut next, op).is_ok() {
                model = next;
                kept.push(op.clone());
            }
        }
        if kept.is_empty() {
            return Ok(());
        }
        let index = self.begin_commit(model);
        let records_only = kept
            .iter()
            .all(|op| matches!(op, Op::Put { .. } | Op::Delete { .. }));
        let done = if records_only {
            db.write(write_batch(&kept, &self.options))
        } else {
            let kept = Arc::new(kept);
            db.batch(move |tx| kept.iter().try_for_each(|op| engine_apply(tx, op)))
        };
        self.end_commit(index, done)
    }

    fn begin_commit(&mut self, model: KvModel) -> usize {
        let index = self.oracle.begin_commit(model);
        self.set_allowed();
        index
    }

    fn end_commit(&mut self, index: usize, done: crashlab_engine::Result<()>) -> Step<()> {
        done.map_err(|e| self.finding("commit", e))?;
        let outcome = if self.options.no_sync {
            CommitOutcome::Acknowledged
        } else {
            CommitOutcome::Durable
        };
        self.oracle.end_commit(index, outcome);
        self.set_allowed();
        self.commits += 1;
        Ok(())
    }
}

/// Judge a recovery of the recorded run: the engine's check found nothing and the oracle allows
/// `observed` (which becomes the chain's end). The violation's kind and detail otherwise.
pub(crate) fn recovered(
    oracle: &mut DurabilityOracle,
    observed: &KvModel,
    problems: &[impl std::fmt::Display],
    power_cut: bool,
) -> Result<(), (&'static str, String)> {
    no_problems(problems).map_err(|m| ("check", m))?;
    let found = if power_cut {
        oracle.recover_after_power_cut(observed)
    } else {
        oracle.recover_after_reopen(observed)
    };
    found.map(drop).map_err(|v| ("durability", v.to_string()))
}

/// The puts and deletes of `ops` as one batch, its buffer sized by the options' policy.
fn write_batch(ops: &[Op], options: &Options) -> WriteBatch {
    let values: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match op {
            Op::Put {
                key, len, version, ..
            } => value_bytes(key, *len, *version),
            _ => Vec::new(),
        })
        .collect();
    let records: Vec<Record<'_>> = ops
        .iter()
        .zip(&values)
        .map(|(op, value)| match op {
            Op::Put { path, key, .. } => Record::Put {
                path: path_refs(path),
                key: &key.0,
                value,
            },
            Op::Delete { path, key } => Record::Delete {
                path: path_refs(path),
                key: &key.0,
            },
            other => unreachable!("{other} is not a record"),
        })
        .collect();
    // A size known for free: the values' bytes plus a guess per record for the rest.
    let estimate = values.iter().map(Vec::len).sum::<usize>() + 32 * records.len();
    WriteBatch::with_policy(options.presize, &records, estimate)
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
