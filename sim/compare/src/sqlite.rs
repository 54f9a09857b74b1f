//! SQLite's rows in `commits`, the scenario it shares: one-put durable transactions, one at a
//! time (SQLite has no group commit), in two of its power-safe modes — a rollback journal
//! (`journal_mode=truncate`, `synchronous=full`) and the WAL (`wal`, `full`). SQLite runs on a
//! fault-free SimFs whose files have the quiet disk's configuration; its figures are every
//! file's (database, journal or WAL) summed. Counters only crashlab's engine keeps are "-".

use crate::quiet_config;
use crashlab_sim::adapter::{Engine, SimDir};
use crashlab_sim::disk::IoStats;
use crashlab_sim::fs::{FsConfig, SimFs};
use crashlab_sim::op::{Name, Op};
use crashlab_sim::power::PowerSwitch;
use crashlab_sqlite::{Journal, SqliteChoices, SqliteDb, Synchronous};

/// The prefix of SQLite's variant names (`sqlite wal/full`): the table tells engines apart by it.
pub const SQLITE_VARIANT_PREFIX: &str = "sqlite ";

/// The modes with rows, and their variant names.
pub const MODES: [(&str, SqliteChoices); 2] = [
    (
        "sqlite truncate/full",
        SqliteChoices {
            journal: Journal::Truncate,
            synchronous: Synchronous::Full,
        },
    ),
    (
        "sqlite wal/full",
        SqliteChoices {
            journal: Journal::Wal,
            synchronous: Synchronous::Full,
        },
    ),
];

fn commit(db: &SqliteDb, ops: &[Op]) {
    let mut w = db.begin_write().expect("begin");
    for op in ops {
        SqliteDb::apply(&mut w, op).expect("apply");
    }
    db.commit(w).expect("commit");
}

/// `txns` durable one-put transactions (16 B key, 100 B value) after the table's creation.
pub fn commits(cfg: &SqliteChoices, txns: u64) -> IoStats {
    let fs = SimFs::new(0, quiet_config(), FsConfig::default());
    let dir = SimDir::new(fs.clone(), PowerSwitch::new());
    let db = SqliteDb::open_dir(dir, cfg, 0).expect("open sqlite");
    let bucket = vec![Name::new("b")];
    commit(&db, &[Op::CreateBucket(bucket.clone())]);
    let before = fs.io_stats();
    for i in 0..txns {
        let put = Op::Put {
            path: bucket.clone(),
            key: Name::new(u128::from(i).to_be_bytes().to_vec()),
            len: 100,
            version: 1,
        };
        commit(&db, &[put]);
    }
    fs.io_stats().since(&before)
}
