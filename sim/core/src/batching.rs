//! Batched commits under the simulator: madsim client tasks call `batch`-style functions and
//! `write` batches concurrently, through an async front end over the engine's own coalescing
//! core (`crashlab_engine::batch::core`) and its batch runner, while the disk faults and a timer
//! may cut the power.
//!
//! The oracle, checked after the final power cut and recovery:
//! - a call acknowledged `Ok` is durable: all its keys, with their values;
//! - a call that failed with its own error left nothing;
//! - a call whose outcome is unknown (its commit failed) is all or nothing;
//! - the calls of one batch whose commit failed are all present or all absent together;
//! - nothing else exists, and `check()` passes.

use crate::disk::{FaultConfig, SimDisk};
use crate::power::{PowerSwitch, Switched};
use crate::profile::{self, Profile};
use crate::rng::SimRng;
use crate::trace::Trace;
use crashlab_engine::batch::apply::{self, BatchFn, Call};
use crashlab_engine::batch::core::{CallId, Coalescer, Delivery};
use crashlab_engine::batch::group::CallResult;
use crashlab_engine::batch::{MergeStrategy, MergeWork, WriteBatch};
use crashlab_engine::{Counters, Db, Error, Options, Storage};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct BatchRunConfig {
    pub seed: u64,
    pub profile: Profile,
    pub options: Options,
    pub clients: usize,
    pub calls_per_client: usize,
    /// Cut the power at this simulated instant (else at the end).
    pub power_cut_at: Option<Duration>,
}

impl BatchRunConfig {
    pub fn from_seed(seed: u64, profile: Profile, strategy: MergeStrategy) -> BatchRunConfig {
        let mut r = SimRng::derive(seed, "batching");
        let options = Options {
            no_sync: false,
            merge_strategy: strategy,
            max_batch_size: *r.pick(&[4usize, 16, 1000]),
            max_batch_delay: Duration::from_micros(r.range(0, 2000)),
            ..<Options as crate::adapter::EngineConfig>::from_seed(seed, profile)
        };
        BatchRunConfig {
            seed,
            profile,
            options,
            clients: r.range(2, 8) as usize,
            calls_per_client: r.range(3, 12) as usize,
            power_cut_at: r
                .chance(0.6)
                .then(|| Duration::from_micros(r.range(100, 20_000))),
        }
    }
}

#[derive(Clone, Debug)]
pub struct BatchReport {
    pub violation: Option<String>,
    /// The disk lost data the engine cannot get back (a latent sector error read during
    /// recovery); reported, not a violation (as `runner::Outcome::DiskFailure`).
    pub disk_failure: Option<String>,
    pub trace_hash: u64,
    pub acked: u64,
    pub failed_own: u64,
    pub unknown: u64,
    pub power_cut_fired: bool,
    pub counters: Counters,
    /// Every key present after recovery, with its value.
    pub recovered: BTreeMap<Vec<u8>, Vec<u8>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Acked,
    FailedOwn,
    Unknown,
}

/// One call a client made: the keys it writes and how it ended.
struct CallLog {
    keys: Writes,
    fate: Fate,
}

/// The async front end: the engine's coalescer, shared by the client tasks.
#[derive(Default)]
struct Front {
    core: Option<Coalescer>,
    calls: BTreeMap<CallId, Call>,
    delivered: BTreeMap<CallId, (Delivery, Option<String>)>,
    leader: bool,
    /// Batches whose commit failed, as lists of call ids.
    failed_batches: Vec<Vec<CallId>>,
    work: MergeWork,
}

const BUCKET: &[u8] = b"batch";

/// What a waiting caller does next.
enum Next {
    Answer(((Delivery, Option<String>), Option<Call>)),
    Lead,
    Wait,
}

/// A call's keys and values.
type Writes = Vec<(Vec<u8>, Vec<u8>)>;

/// Submit one call and wait (in simulated time) for its answer, leading batches if no one is.
async fn submit(
    front: &Rc<RefCell<Front>>,
    db: &Db,
    call: Call,
    opts: &Options,
) -> (CallId, CallResult<Call>) {
    let id = {
        let mut f = front.borrow_mut();
        let id = f.core.as_mut().expect("core").submit();
        f.calls.insert(id, call);
        id
    };
    loop {
        let taken = {
            let mut f = front.borrow_mut();
            let got = f.delivered.remove(&id).map(|d| (d, f.calls.remove(&id)));
            match got {
                Some(got) => Next::Answer(got),
                None if !f.leader => {
                    f.leader = true;
                    Next::Lead
                }
                None => Next::Wait,
            }
        };
        let taken = match taken {
            Next::Answer(got) => Some(got),
            Next::Lead => None,
            Next::Wait => {
                madsim::time::sleep(Duration::from_micros(10)).await;
                continue;
            }
        };
        if let Some(((delivery, message), call)) = taken {
            let r = match (delivery, call) {
                (Delivery::Committed, _) => CallResult::Committed,
                (Delivery::CommitFailed, _) => {
                    CallResult::CommitFailed(message.unwrap_or_default())
                }
                (Delivery::RunSolo, Some(c)) => CallResult::RunSolo(c),
                (Delivery::RunSolo, None) => unreachable!("a solo call keeps its call object"),
            };
            return (id, r);
        }
        lead(front, db, opts).await;
        front.borrow_mut().leader = false;
    }
}

/// As leader: give others the batch delay to join, then run every queued batch.
async fn lead(front: &Rc<RefCell<Front>>, db: &Db, opts: &Options) {
    if !front.borrow().core.as_ref().expect("core").full() {
        madsim::time::sleep(opts.max_batch_delay).await;
    }
    loop {
        let (ids, calls) = {
            let mut f = front.borrow_mut();
            let Some(ids) = f.core.as_mut().expect("core").start_batch() else {
                return;
            };
            let calls: Vec<Call> = ids
                .iter()
                .map(|id| f.calls.remove(id).expect("queued"))
                .collect();
            (ids, calls)
        };
        let mut work = MergeWork::default();
        let (outcome, message) = apply::run_batch(db, &calls, &mut work);
        madsim::time::sleep(Duration::from_micros(200)).await; // the batch's I/O takes time
        let mut f = front.borrow_mut();
        f.work.bytes_copied += work.bytes_copied;
        f.work.records_decoded += work.records_decoded;
        f.work.records_encoded += work.records_encoded;
        f.work.buffer.add(&work.buffer);
        for (id, call) in ids.iter().copied().zip(calls) {
            f.calls.insert(id, call);
        }
        if outcome == crashlab_engine::batch::core::BatchOutcome::CommitFailed {
            f.failed_batches.push(ids.clone());
        }
        for (id, d) in f.core.as_mut().expect("core").finish_batch(outcome) {
            f.delivered.insert(id, (d, message.clone()));
        }
    }
}

fn key(client: usize, seq: usize, j: usize) -> Vec<u8> {
    format!("c{client}-{seq}-{j}").into_bytes()
}

/// What a client asks for: a few keys, sometimes a deliberate failure, as a function or a batch.
fn make_call(rng: &mut SimRng, client: usize, seq: usize) -> (Call, Writes, bool) {
    let keys: Writes = (0..rng.range(1, 3) as usize)
        .map(|j| {
            (
                key(client, seq, j),
                vec![(client * 31 + seq + j) as u8; rng.range(1, 700) as usize],
            )
        })
        .collect();
    let fails = rng.chance(0.1);
    let call = if rng.chance(0.5) {
        let mut b = WriteBatch::new();
        for (k, v) in &keys {
            b.put(&[BUCKET], k, v);
        }
        if fails {
            b.put(&[BUCKET], b"", b"an empty key is refused");
        }
        Call::Write(b)
    } else {
        let ks = keys.clone();
        let f: BatchFn = Arc::new(move |tx| {
            let mut b = tx.create_bucket_if_missing(BUCKET)?;
            for (k, v) in &ks {
                b.put(k, v)?;
            }
            if fails {
                return Err(Error::KeyRequired);
            }
            Ok(())
        });
        Call::Fn(f)
    };
    (call, keys, fails)
}

type Logs = Rc<RefCell<BTreeMap<(usize, usize), (CallId, CallLog)>>>;

async fn client(
    id: usize,
    cfg: BatchRunConfig,
    db: Rc<Db>,
    front: Rc<RefCell<Front>>,
    power: PowerSwitch,
    logs: Logs,
    trace: Rc<RefCell<Trace>>,
) {
    let mut rng = SimRng::derive(cfg.seed, &format!("client{id}"));
    for seq in 0..cfg.calls_per_client {
        madsim::time::sleep(Duration::from_micros(rng.range(10, 1500))).await;
        if power.is_off() {
            return;
        }
        let (call, keys, fails) = make_call(&mut rng, id, seq);
        let (call_id, result) = submit(&front, &db, call, &cfg.options).await;
        let outcome = apply::finish_call(&db, result);
        let fate = match (&outcome, fails) {
            (Ok(()), _) => Fate::Acked,
            (Err(Error::KeyRequired), true) => Fate::FailedOwn,
            _ => Fate::Unknown,
        };
        trace
            .borrow_mut()
            .record(format!("client {id} call {seq} (#{call_id}): {outcome:?}"));
        logs.borrow_mut()
            .insert((id, seq), (call_id, CallLog { keys, fate }));
    }
}

/// Run one batched scenario.
pub fn run_batched(cfg: &BatchRunConfig) -> BatchReport {
    let rt = madsim::runtime::Runtime::with_seed_and_config(cfg.seed, madsim::Config::default());
    rt.block_on(run_async(cfg.clone()))
}

async fn run_async(cfg: BatchRunConfig) -> BatchReport {
    let disk_cfg = profile::disk_config(cfg.seed, cfg.profile);
    let disk = SimDisk::new(cfg.seed, disk_cfg.clone());
    let power = PowerSwitch::new();
    let storage = || -> Box<dyn Storage> {
        Box::new(Switched {
            inner: disk.clone(),
            switch: power.clone(),
        })
    };
    let trace = Rc::new(RefCell::new(Trace::default()));
    // Create the database (and its bucket) before faults start.
    disk.set_faults(FaultConfig {
        lying_sync: disk_cfg.faults.lying_sync,
        ..FaultConfig::none()
    });
    let setup = Db::open(storage(), cfg.options.clone()).and_then(|db| {
        db.update(|tx| tx.create_bucket(BUCKET).map(|_| ()))
            .map(|()| db)
    });
    disk.set_faults(disk_cfg.faults.clone());
    let db = match setup {
        Ok(db) => Rc::new(db),
        Err(e) => return report_error(format!("setup failed: {e}")),
    };
    let front = Rc::new(RefCell::new(Front {
        core: Some(Coalescer::new(cfg.options.max_batch_size)),
        ..Front::default()
    }));
    let logs: Logs = Rc::new(RefCell::new(BTreeMap::new()));
    let timer = cfg.power_cut_at.map(|at| {
        let power = power.clone();
        madsim::task::spawn_local(async move {
            madsim::time::sleep(at).await;
            power.arm(1);
        })
    });
    let clients: Vec<_> = (0..cfg.clients)
        .map(|id| {
            madsim::task::spawn_local(client(
                id,
                cfg.clone(),
                db.clone(),
                front.clone(),
                power.clone(),
                logs.clone(),
                trace.clone(),
            ))
        })
        .collect();
    for c in clients {
        let _ = c.await;
    }
    let power_cut_fired = power.is_off();
    if let Some(t) = timer {
        t.abort();
    }
    let mut counters = db.counters();
    let (work, stats) = {
        let f = front.borrow();
        (f.work, f.core.as_ref().expect("core").stats())
    };
    counters.batches = stats.batches;
    counters.batched_calls = stats.batched_calls;
    counters.batch_solo_retries = stats.solo_retries;
    counters.merge_bytes_copied = work.bytes_copied;
    counters.merge_records_decoded = work.records_decoded;
    counters.merge_records_encoded = work.records_encoded;
    counters.add_buffer_work(&work.buffer);
    drop(db);
    // Power cut (now, if the timer did not fire), then recover with faults suspended.
    power.reset();
    disk.crash();
    disk.set_faults(FaultConfig {
        lying_sync: disk_cfg.faults.lying_sync,
        ..FaultConfig::none()
    });
    let recovered = match Db::open(storage(), cfg.options.clone())
        .and_then(|db| read_bucket(&db).map(|m| (m, db.check())))
    {
        Ok((m, Ok(problems))) if problems.is_empty() => m,
        Ok((_, Ok(problems))) => {
            return report_error(format!("check after recovery: {}", problems[0]))
        }
        Ok((_, Err(e @ Error::Io { .. }))) | Err(e @ Error::Io { .. }) => {
            return report_disk_failure(format!("unreadable after recovery: {e}"))
        }
        Ok((_, Err(e))) | Err(e) => return report_error(format!("recovery failed: {e}")),
    };
    let f = front.borrow();
    let logs = logs.borrow();
    let violation = verify(&logs, &f.failed_batches, &recovered);
    let count = |fate: Fate| logs.values().filter(|(_, l)| l.fate == fate).count() as u64;
    let mut t = trace.borrow_mut();
    t.record(format!(
        "recovered {} keys; violation {violation:?}",
        recovered.len()
    ));
    BatchReport {
        violation,
        disk_failure: None,
        trace_hash: t.hash(),
        acked: count(Fate::Acked),
        failed_own: count(Fate::FailedOwn),
        unknown: count(Fate::Unknown),
        power_cut_fired,
        counters,
        recovered,
    }
}

fn report_disk_failure(message: String) -> BatchReport {
    BatchReport {
        violation: None,
        disk_failure: Some(message),
        ..report_error(String::new())
    }
}

fn report_error(message: String) -> BatchReport {
    BatchReport {
        violation: Some(message),
        disk_failure: None,
        trace_hash: 0,
        acked: 0,
        failed_own: 0,
        unknown: 0,
        power_cut_fired: false,
        counters: Counters::default(),
        recovered: BTreeMap::new(),
    }
}

fn read_bucket(db: &Db) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, Error> {
    db.view(|tx| {
        let mut out = BTreeMap::new();
        if let Some(b) = tx.bucket(BUCKET)? {
            let mut c = b.cursor();
            let mut it = c.first()?;
            while let Some((k, v)) = it {
                out.insert(k, v.unwrap_or_default());
                it = c.next()?;
            }
        }
        Ok(out)
    })
}

/// Whether a call's keys are all present (`Some(true)`), all absent (`Some(false)`), or mixed.
fn presence(log: &CallLog, state: &BTreeMap<Vec<u8>, Vec<u8>>) -> Option<bool> {
    let present: Vec<bool> = log
        .keys
        .iter()
        .map(|(k, v)| state.get(k) == Some(v))
        .collect();
    let any_key = log.keys.iter().any(|(k, _)| state.contains_key(k));
    match (present.iter().all(|&p| p), any_key) {
        (true, _) => Some(true),
        (false, false) => Some(false),
        (false, true) => None,
    }
}

fn verify(
    logs: &BTreeMap<(usize, usize), (CallId, CallLog)>,
    failed_batches: &[Vec<CallId>],
    state: &BTreeMap<Vec<u8>, Vec<u8>>,
) -> Option<String> {
    let mut expected_keys = BTreeSet::new();
    let mut present_by_call = BTreeMap::new();
    for (&(c, s), (call_id, log)) in logs {
        let p = presence(log, state);
        match (log.fate, p) {
            (_, None) => return Some(format!("client {c} call {s}: partially applied")),
            (Fate::Acked, Some(false)) => {
                return Some(format!("client {c} call {s}: acknowledged but lost"))
            }
            (Fate::FailedOwn, Some(true)) => {
                return Some(format!("client {c} call {s}: failed but visible"))
            }
            _ => {}
        }
        present_by_call.insert(*call_id, p == Some(true));
        expected_keys.extend(log.keys.iter().map(|(k, _)| k.clone()));
    }
    for batch in failed_batches {
        // Every call of a batch whose commit failed was told so and ended there.
        let fates: BTreeSet<bool> = batch
            .iter()
            .filter_map(|id| present_by_call.get(id))
            .copied()
            .collect();
        if fates.len() > 1 {
            return Some(format!(
                "a failed batch was applied partially: calls {batch:?}"
            ));
        }
    }
    state
        .keys()
        .find(|k| !expected_keys.contains(*k))
        .map(|k| format!("unexpected key {}", String::from_utf8_lossy(k)))
}
