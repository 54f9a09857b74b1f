//! A small seeded harness over the adapter, for the known-truth tests while crashlab's runner
//! does not yet drive directory engines: per seed, random transactions on three buckets,
//! power cuts at a seeded storage call (data and metadata lost as the file system's model
//! says), a reopen, SQLite's recovery, `PRAGMA integrity_check` and a judgement of the
//! recovered state against every state the acknowledgements allow.
//!
//! The judgement is the oracle's: the recovered state must be one of the committed states from
//! the last durable one on (an acknowledged-only commit may be lost, and every later one with
//! it), or the state of the commit in flight at the cut. A state before the last durable commit
//! is a lost durable commit; any other state is a partial transaction.

#![allow(dead_code, reason = "each test file uses part of the harness")]

use crashlab_models::KvModel;
use crashlab_sim::adapter::{Ack, Engine, SimDir};
use crashlab_sim::disk::DiskConfig;
use crashlab_sim::fs::{FsConfig, MetaModel, SimFs};
use crashlab_sim::op::{Name, Op};
use crashlab_sim::power::PowerSwitch;
use crashlab_sim::rng::SimRng;
use crashlab_sqlite::{image_hash, Journal, SqliteChoices, SqliteDb, Synchronous};

/// What one seed did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// FNV-1a of every trace line (no file contents in them).
    pub trace_hash: u64,
    /// `crashlab_sqlite::image_hash` of the final directory.
    pub image_hash: u64,
    /// Every file's bytes, journal and WAL included: not a function of the seed (SQLite's PRNG).
    pub raw_hash: u64,
    pub commits: u64,
    pub power_cuts: u64,
    /// Recovered states checked against the allowed ones.
    pub states_checked: u64,
    /// Acknowledged-only commits lost at cuts (allowed).
    pub lost_acknowledged: u64,
    /// Violations: a lost durable commit, a partial transaction, integrity_check problems, or
    /// an error that is not an I/O error.
    pub violations: Vec<String>,
    pub trace: Vec<String>,
}

fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

fn raw_hash(fs: &SimFs) -> u64 {
    fs.images()
        .iter()
        .fold(FNV0, |h, (n, b)| fnv(fnv(h, n.as_bytes()), b))
}

fn bucket(i: u64) -> Vec<Name> {
    vec![Name::new(format!("b{i}"))]
}

/// One random data operation the model accepts (buckets are created up front).
fn random_op(r: &mut SimRng, version: u32) -> Op {
    let path = bucket(r.below(3));
    let key = Name::new(format!("k{}", r.below(40)));
    if r.chance(0.2) {
        Op::Delete { path, key }
    } else {
        Op::Put {
            path,
            key,
            len: r.range(1, 3000) as u32,
            version,
        }
    }
}

fn model_apply(m: &mut KvModel, op: &Op) {
    crashlab_sim::apply::model_apply(m, op).expect("the harness makes valid operations");
}

/// A fresh directory for `seed`: a sector size and a metadata model drawn from it.
pub fn directory(seed: u64) -> (SimFs, PowerSwitch, SimDir) {
    let mut r = SimRng::derive(seed, "sqlite harness disk");
    let disk = DiskConfig {
        sector_size: *r.pick(&[512u32, 1024, 4096]),
        ..DiskConfig::default()
    };
    let model = *r.pick(&[MetaModel::Ordered, MetaModel::Strict]);
    let fs = SimFs::new(
        seed,
        disk,
        FsConfig {
            model,
            ..FsConfig::default()
        },
    );
    let power = PowerSwitch::new();
    let dir = SimDir::new(fs.clone(), power.clone());
    (fs, power, dir)
}

struct Run {
    out: Outcome,
    /// Every committed state, oldest first; `history[0]` is the state after setup.
    history: Vec<KvModel>,
    /// Index in `history` of the last state that may not be lost.
    floor: usize,
}

impl Run {
    fn log(&mut self, line: String) {
        self.out.trace_hash = fnv(self.out.trace_hash, line.as_bytes());
        self.out.trace.push(line);
    }

    fn violation(&mut self, v: String) {
        self.log(format!("VIOLATION {v}"));
        self.out.violations.push(v);
    }

    /// Judge the state recovered after a cut; `in_flight` is the commit the cut interrupted.
    fn judge(&mut self, got: &KvModel, in_flight: Option<&KvModel>) {
        self.out.states_checked += 1;
        let last = self.history.len() - 1;
        if in_flight == Some(got) {
            self.log("recovered: the commit in flight".into());
            self.history.push(got.clone());
        } else if let Some(i) = (self.floor..=last).rev().find(|&i| &self.history[i] == got) {
            self.out.lost_acknowledged += (last - i) as u64;
            self.log(format!("recovered: {} acknowledged commits lost", last - i));
            self.history.truncate(i + 1);
        } else if let Some(i) = (0..self.floor).rev().find(|&i| &self.history[i] == got) {
            self.violation(format!(
                "durability: recovered the state of {} commits ago, before the last durable one",
                last - i
            ));
            self.history.truncate(i + 1);
        } else {
            self.violation(
                "durability: recovered a state no commit left (partial transaction)".into(),
            );
            self.history.push(got.clone());
        }
        // Whatever survived a cut is on the durable image now.
        self.floor = self.history.len() - 1;
    }
}

/// Open, retrying across cuts that land in the open itself; `None` if SQLite refuses with
/// anything but an I/O error (recorded as a violation).
fn open(
    run: &mut Run,
    fs: &SimFs,
    power: &PowerSwitch,
    dir: &SimDir,
    cfg: &SqliteChoices,
    opens: &mut u64,
) -> Option<SqliteDb> {
    loop {
        *opens += 1;
        match SqliteDb::open_dir(dir.clone(), cfg, *opens) {
            Ok(db) => return Some(db),
            Err(e) if e.is_io() && power.is_off() => {
                run.log(format!("open: {e}; power cut"));
                fs.crash();
                power.reset();
            }
            Err(e) => {
                run.violation(format!("open failed: {}", e.classified()));
                return None;
            }
        }
    }
}

/// One transaction of 1 to 5 operations; `Err(in_flight)` when the power went off.
fn transaction(
    run: &mut Run,
    r: &mut SimRng,
    db: &SqliteDb,
    version: &mut u32,
) -> Result<(), Option<KvModel>> {
    let mut next = run.history.last().expect("a state").clone();
    let mut w = match db.begin_write() {
        Ok(w) => w,
        Err(e) if e.is_io() => {
            run.log(format!("begin: {e}"));
            return Err(None);
        }
        Err(e) => {
            run.violation(format!("begin failed: {}", e.classified()));
            return Err(None);
        }
    };
    for _ in 0..r.range(1, 6) {
        *version += 1;
        let op = random_op(r, *version);
        if let Err(e) = SqliteDb::apply(&mut w, &op) {
            if !e.is_io() {
                run.violation(format!("{op} failed: {}", e.classified()));
            }
            run.log(format!("{op}: {e}"));
            return Err(None);
        }
        model_apply(&mut next, &op);
    }
    match db.commit(w) {
        Ok(ack) => {
            run.out.commits += 1;
            run.history.push(next);
            if ack == Ack::Durable {
                run.floor = run.history.len() - 1;
            }
            run.log(format!("commit {} {ack:?}", run.out.commits));
            Ok(())
        }
        Err(e) => {
            if !e.is_io() {
                run.violation(format!("commit failed: {}", e.classified()));
            }
            run.log(format!("commit: {e}"));
            Err(Some(next))
        }
    }
}

/// Run `seed` with `cfg`: `txs` transactions, a power cut armed after a seeded number of
/// storage calls in each session.
pub fn run_seed(seed: u64, cfg: SqliteChoices, txs: u32) -> Outcome {
    let (fs, power, dir) = directory(seed);
    let mut r = SimRng::derive(seed, "sqlite harness ops");
    let mut run = Run {
        out: Outcome {
            trace_hash: FNV0,
            ..Outcome::default()
        },
        history: Vec::new(),
        floor: 0,
    };
    run.log(format!("seed {seed} {cfg}"));
    let mut opens = 0;
    let Some(mut db) = open(&mut run, &fs, &power, &dir, &cfg, &mut opens) else {
        return run.out;
    };
    // Setup: three buckets, made durable by the harness (out of the run's scope).
    let mut setup = KvModel::new();
    let mut w = db.begin_write().expect("setup");
    for i in 0..3 {
        let op = Op::CreateBucket(bucket(i));
        SqliteDb::apply(&mut w, &op).expect("setup");
        model_apply(&mut setup, &op);
    }
    db.commit(w).expect("setup");
    fs.make_all_durable();
    run.history.push(setup);
    let mut version = 0;
    let mut done = 0;
    while done < txs {
        power.arm(r.range(1, 120) as u32);
        let mut cut = None;
        while done < txs {
            done += 1;
            if let Err(in_flight) = transaction(&mut run, &mut r, &db, &mut version) {
                cut = Some(in_flight);
                break;
            }
        }
        let Some(in_flight) = cut else { break };
        if !run.out.violations.is_empty() {
            break;
        }
        // The power is off (an I/O error is the only error here) or the last call hit zero.
        power.cut();
        drop(db);
        let crash = fs.crash();
        power.reset();
        run.out.power_cuts += 1;
        run.log(format!(
            "power cut: metadata kept {}/{}",
            crash.kept.kept().len(),
            crash.pending.len()
        ));
        db = match open(&mut run, &fs, &power, &dir, &cfg, &mut opens) {
            Some(db) => db,
            None => return run.out,
        };
        if !recover(&mut run, &mut db, in_flight.as_ref()) {
            break;
        }
    }
    power.reset();
    match db.close() {
        Ok(()) => run.log("closed".into()),
        Err(e) => run.log(format!("close: {e}")),
    }
    run.out.image_hash = image_hash(&fs);
    run.out.raw_hash = raw_hash(&fs);
    run.out
}

/// After a reopen: read everything in a fresh read transaction, integrity_check, judge.
fn recover(run: &mut Run, db: &mut SqliteDb, in_flight: Option<&KvModel>) -> bool {
    let got = match db.begin_read() {
        Ok(m) => m,
        Err(e) => {
            run.violation(format!("read after recovery failed: {}", e.classified()));
            return false;
        }
    };
    match db.check() {
        Ok(problems) if problems.is_empty() => {}
        Ok(problems) => {
            run.violation(format!("check: {}", problems.join("; ")));
            return false;
        }
        Err(e) => {
            run.violation(format!("check failed: {}", e.classified()));
            return false;
        }
    }
    run.judge(&got, in_flight);
    run.out.violations.is_empty()
}

/// Every mode with a journal and syncs on (the nine drawn and rollback journals with NORMAL).
pub fn modes_on() -> Vec<SqliteChoices> {
    let mut out = Vec::new();
    for journal in Journal::ON {
        for synchronous in Synchronous::ON {
            out.push(SqliteChoices {
                journal,
                synchronous,
            });
        }
    }
    out
}

/// Totals over seeds.
#[derive(Debug, Default)]
pub struct Totals {
    pub seeds: u64,
    pub commits: u64,
    pub power_cuts: u64,
    pub states_checked: u64,
    pub lost_acknowledged: u64,
    /// (seed, first violation).
    pub violations: Vec<(u64, String)>,
}

pub fn sweep(seeds: std::ops::Range<u64>, cfg: SqliteChoices, txs: u32) -> Totals {
    let mut t = Totals::default();
    for seed in seeds {
        let o = run_seed(seed, cfg, txs);
        t.seeds += 1;
        t.commits += o.commits;
        t.power_cuts += o.power_cuts;
        t.states_checked += o.states_checked;
        t.lost_acknowledged += o.lost_acknowledged;
        if let Some(v) = o.violations.first() {
            t.violations.push((seed, v.clone()));
        }
    }
    t
}
