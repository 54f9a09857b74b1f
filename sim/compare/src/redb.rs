//! redb's rows in the scenarios it shares with crashlab's engine: the durable Set and the reopen
//! on a database that once held large values, and one-put durable transactions. redb has no
//! freelist variants and no group commit, so it is one row per group; counters only crashlab's
//! engine keeps (freelist work, rebuild pages, merging) are shown as "-".
//!
//! redb runs on the same fault-free simulated disk and cost model, every commit with
//! `Durability::Immediate`, one table standing in for the bucket.

/// The variant name of redb's row in every table it appears in.
pub const REDB_VARIANT: &str = "redb";

use super::quiet_disk;
use crate::scale::Size;
use crashlab_redb::open_database;
use crashlab_sim::disk::{IoStats, SimDisk};
use redb::{Database, Durability, ReadableDatabase, TableDefinition};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("b");
const FILL_BATCH: u64 = 20;
const DELETE_BATCH: u64 = 500;
const SET_BASE: u64 = 1 << 40;

/// redb's costs in the large-DB scenario: per Set on the large and on a fresh database, and
/// per reopen of the large one.
pub struct LargeDb {
    pub large_set: IoStats,
    pub fresh_set: IoStats,
    pub reopen: IoStats,
}

fn open(disk: &SimDisk) -> Database {
    open_database(Box::new(disk.clone())).expect("open redb")
}

/// Commit `f`'s writes to the table durably.
fn durable(db: &Database, f: impl FnOnce(&mut redb::Table<&[u8], &[u8]>)) {
    let mut tx = db.begin_write().expect("begin");
    tx.set_durability(Durability::Immediate)
        .expect("durability");
    {
        let mut table = tx.open_table(TABLE).expect("table");
        f(&mut table);
    }
    tx.commit().expect("commit");
}

fn sets(db: &Database, disk: &SimDisk, n: u64) -> IoStats {
    let before = disk.io_stats();
    for i in 0..n {
        durable(db, |t| {
            t.insert(
                &u128::from(SET_BASE + i).to_be_bytes()[..],
                &[0x5a; 100][..],
            )
            .expect("set");
        });
    }
    disk.io_stats().since(&before)
}

pub fn large_db(size: Size) -> LargeDb {
    let disk = quiet_disk();
    let db = open(&disk);
    let value = vec![0x5a; size.value_size];
    for start in (0..size.values).step_by(FILL_BATCH as usize) {
        let end = (start + FILL_BATCH).min(size.values);
        durable(&db, |t| {
            for i in start..end {
                t.insert(&i.to_be_bytes()[..], &value[..]).expect("fill");
            }
        });
    }
    for start in (0..size.values).step_by(DELETE_BATCH as usize) {
        let end = (start + DELETE_BATCH).min(size.values);
        durable(&db, |t| {
            for i in start..end {
                t.remove(&i.to_be_bytes()[..]).expect("empty");
            }
        });
    }
    let large_set = sets(&db, &disk, size.sets);
    drop(db);
    let before = disk.io_stats();
    let db = open(&disk);
    // A read transaction, so the reopen has done what a first read needs.
    drop(db.begin_read().expect("read"));
    let reopen = disk.io_stats().since(&before);
    drop(db);

    let fresh = quiet_disk();
    let db = open(&fresh);
    durable(&db, |_| {});
    let fresh_set = sets(&db, &fresh, size.sets);
    LargeDb {
        large_set,
        fresh_set,
        reopen,
    }
}

/// `txns` durable one-put transactions, one at a time (redb has no group commit).
pub fn commits(txns: u64) -> IoStats {
    let disk = quiet_disk();
    let db = open(&disk);
    durable(&db, |_| {});
    sets(&db, &disk, txns)
}
