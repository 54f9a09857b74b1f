//! Batched commits (docs/DESIGN.md, "The three findings", item 2: BlueStore over RocksDB): many
//! writers each committing small transactions, unbatched or merged into group commits.
//!
//! The writers are simulated, not assumed: `writers` madsim callers each commit `txns / writers`
//! transactions (a put of a fresh 16-byte key and a 100-byte value, as a one-record
//! `WriteBatch`) one after another through crashlab's own coalescer — the same group machinery
//! the simulator's concurrent callers use — thinking 0–4 ms (seeded; a madsim sleep lasts at
//! least 1 ms, as does a batch's I/O here) before each. Writers whose turn comes while a batch
//! commits queue for the next one, so the batch sizes are what the timing makes them, and the
//! `commit-batch-sizes` table shows their distribution. Unbatched is the same writers with a
//! batch size of one. Only device time is simulated, so merging's CPU work shows in the merge
//! counters, not in the time.

use super::{quiet_disk, Scale, Table};
use crate::redb::REDB_VARIANT;
use crashlab_engine::batch::{MergeStrategy, MergeWork};
use crashlab_engine::{Counters, Options};
use crashlab_sim::adapter::{Ack, Engine, EngineError};
use crashlab_sim::calls::{CallSpec, GroupObserver};
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::disk::SimDisk;
use crashlab_sim::driver::GroupFigures;
use crashlab_sim::op::{Name, Op};
use crashlab_sim::rng::SimRng;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

const BUCKET: &[u8] = b"c";
/// A writer thinks up to this long before each transaction (uniform, seeded), in µs.
const THINK_MAX_US: u64 = 4000;
const VALUE_LEN: u32 = 100;
/// The application's bytes in one transaction: a 16-byte key and its value (write amplification
/// is bytes written over these).
const USER_BYTES: usize = 16 + VALUE_LEN as usize;
/// Writer counts measured.
pub const WRITERS: [usize; 4] = [1, 4, 16, 64];

/// The variants: name and merge strategy (`None`: unbatched).
pub const VARIANTS: [(&str, Option<MergeStrategy>); 3] = [
    ("unbatched", None),
    ("append", Some(MergeStrategy::Append)),
    ("rebuild", Some(MergeStrategy::Rebuild)),
];

fn transactions(scale: Scale) -> u64 {
    match scale {
        Scale::Small => 64,
        Scale::Seed => 1_024,
    }
}

/// What `transactions` cost under one variant with `writers` writers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measured {
    pub transactions: u64,
    pub counters: Counters,
    pub merge: MergeWork,
    pub io: crashlab_sim::disk::IoStats,
    /// Commits by the transactions they held (the buckets of `GroupFigures::batch_sizes`).
    pub batch_sizes: [u64; 8],
}

impl Measured {
    /// Transactions per simulated second.
    pub fn throughput(&self) -> f64 {
        self.transactions as f64 * 1e9 / self.io.sim_time_ns.max(1) as f64
    }

    /// Transactions per commit, on average.
    pub fn mean_batch(&self) -> f64 {
        let commits: u64 = self.batch_sizes.iter().sum();
        self.transactions as f64 / commits.max(1) as f64
    }
}

/// The table, with redb's rows when `with_redb` and SQLite's when `with_sqlite`.
pub fn table(scale: Scale, with_redb: bool, with_sqlite: bool) -> Table {
    let txns = transactions(scale);
    // redb commits one transaction at a time whatever the writers: measured once.
    let redb = with_redb.then(|| super::redb::commits(txns));
    // SQLite likewise, in each of its modes with a row.
    let sqlite: Vec<(&str, crashlab_sim::disk::IoStats)> = if with_sqlite {
        super::sqlite::MODES
            .iter()
            .map(|(name, cfg)| (*name, super::sqlite::commits(cfg, txns)))
            .collect()
    } else {
        Vec::new()
    };
    let mut rows = Vec::new();
    for writers in WRITERS {
        for (name, strategy) in VARIANTS {
            let m = measure(writers, strategy, txns);
            let per = |v: u64| v as f64 / txns as f64;
            let values = vec![
                per(m.counters.commits),
                per(m.io.syncs),
                per(m.io.writes),
                per(m.io.bytes_written) / 1024.0,
                per(m.io.bytes_written) / USER_BYTES as f64,
                per(m.merge.bytes_copied),
                per(m.merge.records_decoded),
                per(m.merge.records_encoded),
                per(m.io.sim_time_ns) / 1000.0,
                m.throughput().round(),
                (m.mean_batch() * 100.0).round() / 100.0,
            ];
            rows.push((writer_group(writers), name.to_string(), values));
        }
        if let Some(redb) = &redb {
            rows.push((
                writer_group(writers),
                REDB_VARIANT.to_string(),
                redb_row(redb, txns),
            ));
        }
        for (name, io) in &sqlite {
            rows.push((writer_group(writers), name.to_string(), redb_row(io, txns)));
        }
    }
    let description = format!(
        "per transaction of one put (16 B key, 100 B value), {txns} durable transactions from \
         simulated writers thinking 0-4 ms between theirs"
    );
    Table::new(
        "commits",
        scale,
        &description,
        &[
            "commits",
            "syncs",
            "writes",
            "KiB_written",
            "write_amp",
            "merge_B_copied",
            "decoded",
            "encoded",
            "sim_us",
            "txn_per_sim_s",
            "txn_per_commit",
        ],
        ("unbatched", "txn_per_sim_s"),
        rows,
    )
}

/// The batch sizes the simulated writers made: per writer count and variant, the share of
/// commits holding 1, 2, 3-4, ... transactions.
pub fn batch_sizes_table(scale: Scale) -> Table {
    let txns = transactions(scale);
    let mut rows = Vec::new();
    for writers in WRITERS {
        for (name, strategy) in VARIANTS {
            let m = measure(writers, strategy, txns);
            let commits = m.batch_sizes.iter().sum::<u64>().max(1) as f64;
            let mut values: Vec<f64> = m
                .batch_sizes
                .iter()
                .map(|&n| (n as f64 / commits * 1000.0).round() / 1000.0)
                .collect();
            values.push((m.mean_batch() * 100.0).round() / 100.0);
            rows.push((writer_group(writers), name.to_string(), values));
        }
    }
    let description = format!(
        "share of commits by the transactions they held, {txns} durable transactions from \
         simulated writers (as in `commits`)"
    );
    Table::new(
        "commit-batch-sizes",
        scale,
        &description,
        &[
            "1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64", "mean",
        ],
        ("unbatched", "mean"),
        rows,
    )
}

/// Commit `txns` transactions from `writers` simulated writers under `strategy` (None:
/// unbatched).
pub fn measure(writers: usize, strategy: Option<MergeStrategy>, txns: u64) -> Measured {
    let disk = quiet_disk();
    let options = Options {
        merge_strategy: strategy.unwrap_or_default(),
        max_batch_size: if strategy.is_some() { 1000 } else { 1 },
        ..Options::default()
    };
    let rt = madsim::runtime::Runtime::with_seed_and_config(0, madsim::Config::default());
    rt.block_on(async {
        let db = Rc::new(CrashlabDb::open(Box::new(disk.clone()), &options, 0).expect("open"));
        db.db
            .update(|tx| tx.create_bucket(BUCKET).map(drop))
            .expect("bucket");
        let (c0, io0) = (db.counters(), disk.io_stats());
        let calls = transactions_of(writers, txns);
        let mut observer = Observer {
            disk: &disk,
            io_seen: io0.sim_time_ns,
            held: 0,
            sizes: [0; 8],
        };
        let answers = CrashlabDb::run_group(&db, &calls, None, &mut observer).await;
        assert!(
            answers
                .iter()
                .all(|(_, a)| *a == crashlab_models::Answer::Committed),
            "every transaction commits on a fault-free disk"
        );
        let counters = db.counters().since(&c0);
        Measured {
            transactions: txns,
            merge: MergeWork {
                bytes_copied: counters.merge_bytes_copied,
                records_decoded: counters.merge_records_decoded,
                records_encoded: counters.merge_records_encoded,
                ..MergeWork::default()
            },
            counters,
            io: disk.io_stats().since(&io0),
            batch_sizes: observer.sizes,
        }
    })
}

/// The writers' transactions: writer `w` makes every `writers`-th one, each a fresh key.
fn transactions_of(writers: usize, txns: u64) -> Vec<CallSpec> {
    let mut think = SimRng::derive(writers as u64, "compare writers");
    (0..txns)
        .map(|i| CallSpec {
            caller: (i % writers as u64) as u32,
            think: Duration::from_micros(think.range(0, THINK_MAX_US)),
            as_write_batch: true,
            ops: Arc::from([Op::Put {
                path: vec![Name::new(BUCKET)],
                key: Name::new(key(i).to_vec()),
                len: VALUE_LEN,
                version: i as u32,
            }]),
            fails: false,
        })
        .collect()
}

/// What the coalescer did: the size of each commit and the device time each batch took.
struct Observer<'d> {
    disk: &'d SimDisk,
    io_seen: u64,
    held: usize,
    sizes: [u64; 8],
}

impl GroupObserver for Observer<'_> {
    fn before_commit(&mut self, calls: &[usize]) {
        self.held = calls.len();
    }

    fn after_commit(&mut self, result: &Result<Ack, EngineError>) {
        assert!(result.is_ok(), "a fault-free commit succeeds: {result:?}");
        self.sizes[GroupFigures::size_bucket(self.held)] += 1;
    }

    fn io_time(&mut self) -> Duration {
        let now = self.disk.io_stats().sim_time_ns;
        let dt = now.saturating_sub(self.io_seen);
        self.io_seen = now;
        Duration::from_nanos(dt)
    }
}

/// redb's (and SQLite's) row: one durable commit per transaction; no merging ("-").
fn redb_row(io: &crashlab_sim::disk::IoStats, txns: u64) -> Vec<f64> {
    let per = |v: u64| v as f64 / txns as f64;
    vec![
        1.0,
        per(io.syncs),
        per(io.writes),
        per(io.bytes_written) / 1024.0,
        per(io.bytes_written) / USER_BYTES as f64,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        per(io.sim_time_ns) / 1000.0,
        (txns as f64 * 1e9 / io.sim_time_ns.max(1) as f64).round(),
        1.0,
    ]
}

/// The group label of a writer count: "1 writer", "4 writers".
pub fn writer_group(writers: usize) -> String {
    let plural = if writers == 1 { "" } else { "s" };
    format!("{writers} writer{plural}")
}

fn key(i: u64) -> [u8; 16] {
    u128::from(i).to_be_bytes()
}
