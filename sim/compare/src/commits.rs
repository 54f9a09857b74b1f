//! Batched commits (docs/DESIGN.md, "The three findings", item 2: BlueStore over RocksDB): many
//! writers each committing small transactions, unbatched or merged into group commits.
//!
//! The model is the closed-loop steady state of a group commit with zero think time: each of
//! `writers` writers has one transaction (a put of a fresh 16-byte key and a 100-byte value)
//! waiting at a time; unbatched, every transaction is its own durable commit; batched, every
//! waiting transaction joins the next batch (up to the engine's `max_batch_size`), its one-put
//! `WriteBatch` merged by the variant's `MergeStrategy` (the engine's own merge code) and
//! committed with one `Db::write`. Only device time is simulated (the cost model), so merging's
//! CPU work shows in the merge counters, not in the time.

use super::{quiet_disk, Scale, Table};
use crate::redb::REDB_VARIANT;
use crashlab_engine::batch::{MergeStrategy, MergeWork, WriteBatch};
use crashlab_engine::{Counters, Db, Options};
use std::time::Duration;

const BUCKET: &[u8] = b"c";
const VALUE: [u8; 100] = [0x5a; 100];
/// The application's bytes in one transaction: a 16-byte key and its value (write amplification
/// is bytes written over these).
const USER_BYTES: usize = 16 + VALUE.len();
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
}

impl Measured {
    /// Transactions per simulated second.
    pub fn throughput(&self) -> f64 {
        self.transactions as f64 * 1e9 / self.io.sim_time_ns.max(1) as f64
    }
}

/// The table, with redb's rows when `with_redb`.
pub fn table(scale: Scale, with_redb: bool) -> Table {
    let txns = transactions(scale);
    // redb commits one transaction at a time whatever the writers: measured once.
    let redb = with_redb.then(|| super::redb::commits(txns));
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
    }
    let description = format!(
        "per transaction of one put (16 B key, 100 B value), {txns} durable transactions, \
         every waiting writer joining the next batch"
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
        ],
        ("unbatched", "txn_per_sim_s"),
        rows,
    )
}

/// Commit `txns` transactions from `writers` writers under `strategy` (None: unbatched).
pub fn measure(writers: usize, strategy: Option<MergeStrategy>, txns: u64) -> Measured {
    let disk = quiet_disk();
    let options = Options {
        // A lone caller of `Db::write` commits at once; batches are formed here.
        max_batch_delay: Duration::ZERO,
        ..Options::default()
    };
    let db = Db::open(disk.clone(), options.clone()).expect("open");
    db.update(|tx| tx.create_bucket(BUCKET).map(drop))
        .expect("bucket");
    let (c0, io0) = (db.counters(), disk.io_stats());
    let mut merge = MergeWork::default();
    let mut next = 0u64;
    while next < txns {
        let Some(strategy) = strategy else {
            db.update(|tx| {
                let mut b = tx.bucket_mut(BUCKET)?.expect("bucket");
                b.put(&key(next), &VALUE)
            })
            .expect("commit");
            next += 1;
            continue;
        };
        let take = (writers.min(options.max_batch_size) as u64).min(txns - next);
        let batches: Vec<WriteBatch> = (next..next + take).map(one_put).collect();
        let refs: Vec<&WriteBatch> = batches.iter().collect();
        let (merged, work) = WriteBatch::merge(&refs, strategy).expect("merge");
        add_merge(&mut merge, &work);
        db.write(merged).expect("write");
        next += take;
    }
    Measured {
        transactions: txns,
        counters: db.counters().since(&c0),
        merge,
        io: disk.io_stats().since(&io0),
    }
}

/// redb's row: one durable commit per transaction; no merging ("-").
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

fn one_put(i: u64) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(&[BUCKET], &key(i), &VALUE);
    batch
}

fn add_merge(total: &mut MergeWork, work: &MergeWork) {
    total.bytes_copied += work.bytes_copied;
    total.records_decoded += work.records_decoded;
    total.records_encoded += work.records_encoded;
    total.buffer.add(&work.buffer);
}
