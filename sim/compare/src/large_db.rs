//! bbolt's "large DB once" finding (docs/DESIGN.md, "The three findings", item 1) on the simulated
//! disk: a database that once held many large values keeps a huge free set after they are
//! deleted, and what a small durable Set and a reopen then cost depends on the freelist kind and
//! on whether the freelist is synced.
//!
//! The template — `values` values of `value_size` bytes, 20 per transaction, then all deleted,
//! 500 keys per transaction — is built once and copied onto a fresh disk per variant. Each
//! variant opens the copy with its options and commits once (so a not-synced freelist has
//! replaced the stored one), then runs `sets` durable Sets (a 16-byte key and a 100-byte value,
//! one per transaction) and one reopen. The same Sets on an empty database form the `fresh`
//! group.

use super::{quiet_disk, Scale, Table};
use crate::redb::REDB_VARIANT;
pub use crate::scale::Size;
use crashlab_engine::{Counters, Db, FreelistKind, Options};
use crashlab_sim::disk::{IoStats, SimDisk};

const BUCKET: &[u8] = b"b";
const FILL_BATCH: u64 = 20;
const DELETE_BATCH: u64 = 500;
/// Set keys start here, above every template key.
const SET_BASE: u64 = 1 << 40;

/// The four freelist variants: name and options.
pub fn variants() -> [(&'static str, Options); 4] {
    let v = |freelist, no_freelist_sync| Options {
        freelist,
        no_freelist_sync,
        ..Options::default()
    };
    [
        ("array/synced", v(FreelistKind::Array, false)),
        ("array/not-synced", v(FreelistKind::Array, true)),
        ("hashmap/synced", v(FreelistKind::Hashmap, false)),
        ("hashmap/not-synced", v(FreelistKind::Hashmap, true)),
    ]
}

/// What one variant cost: per Set on the large and the fresh database, and per reopen.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub large_set: (Counters, IoStats),
    pub fresh_set: (Counters, IoStats),
    pub reopen: (Counters, IoStats),
}

/// The Set table and the reopen table, with redb's rows when `with_redb`.
pub fn tables(scale: Scale, with_redb: bool) -> (Table, Table) {
    let size = Size::of(scale);
    let template = template(size);
    let measured: Vec<_> = variants()
        .into_iter()
        .map(|(name, options)| (name, measure(&template, &options, size)))
        .collect();
    let redb = with_redb.then(|| super::redb::large_db(size));
    (
        set_table(scale, size, &measured, redb.as_ref()),
        reopen_table(scale, size, &measured, redb.as_ref()),
    )
}

const SET_COLUMNS: [&str; 8] = [
    "syncs",
    "writes",
    "KiB_written",
    "freelist_KiB",
    "ids_moved",
    "scan_steps",
    "pages_read",
    "sim_us",
];

/// A redb Set's row: the disk's figures, "-" for counters only crashlab's engine keeps.
fn redb_set_row(io: IoStats, sets: u64) -> Vec<f64> {
    let per = |v: u64| v as f64 / sets as f64;
    let none = f64::NAN;
    vec![
        per(io.syncs),
        per(io.writes),
        per(io.bytes_written) / 1024.0,
        none,
        none,
        none,
        none,
        per(io.sim_time_ns) / 1000.0,
    ]
}

fn set_table(
    scale: Scale,
    size: Size,
    measured: &[(&str, Measured)],
    redb: Option<&super::redb::LargeDb>,
) -> Table {
    let mut rows = Vec::new();
    for (group, pick) in [
        (
            "large",
            (|m: &Measured| m.large_set) as fn(&Measured) -> (Counters, IoStats),
        ),
        ("fresh", |m: &Measured| m.fresh_set),
    ] {
        for (name, m) in measured {
            let (c, io) = pick(m);
            let per = |v: u64| v as f64 / size.sets as f64;
            let values = vec![
                per(io.syncs),
                per(io.writes),
                per(io.bytes_written) / 1024.0,
                per(c.freelist_bytes_written) / 1024.0,
                per(c.freelist_ids_moved),
                per(c.freelist_scan_steps),
                per(c.pages_read),
                per(io.sim_time_ns) / 1000.0,
            ];
            rows.push((group.to_string(), name.to_string(), values));
        }
        if let Some(redb) = redb {
            let io = if group == "large" {
                redb.large_set
            } else {
                redb.fresh_set
            };
            rows.push((
                group.to_string(),
                REDB_VARIANT.to_string(),
                redb_set_row(io, size.sets),
            ));
        }
    }
    let description = format!(
        "per durable Set (16 B key, 100 B value) after {} × {} KiB inserted then deleted (large) \
         and on an empty database (fresh)",
        size.values,
        size.value_size >> 10
    );
    Table::new(
        "large-db-set",
        scale,
        &description,
        &SET_COLUMNS,
        ("array/synced", "sim_us"),
        rows,
    )
}

fn reopen_table(
    scale: Scale,
    size: Size,
    measured: &[(&str, Measured)],
    redb: Option<&super::redb::LargeDb>,
) -> Table {
    let mut rows: Vec<_> = measured
        .iter()
        .map(|(name, m)| {
            let (c, io) = m.reopen;
            let values = vec![
                io.reads as f64,
                io.bytes_read as f64 / 1024.0,
                c.rebuild_pages_visited as f64,
                io.sim_time_ns as f64 / 1000.0,
            ];
            (String::new(), name.to_string(), values)
        })
        .collect();
    if let Some(redb) = redb {
        let io = redb.reopen;
        let redb_row = vec![
            io.reads as f64,
            io.bytes_read as f64 / 1024.0,
            f64::NAN,
            io.sim_time_ns as f64 / 1000.0,
        ];
        rows.push((String::new(), REDB_VARIANT.to_string(), redb_row));
    }
    let description = format!(
        "per reopen of the database that once held {} × {} KiB",
        size.values,
        size.value_size >> 10
    );
    Table::new(
        "large-db-reopen",
        scale,
        &description,
        &["reads", "KiB_read", "rebuild_pages", "sim_us"],
        ("array/synced", "sim_us"),
        rows,
    )
}

/// The template's bytes: filled, then emptied, with the default options.
pub fn template(size: Size) -> Vec<u8> {
    let disk = quiet_disk();
    let db = Db::open(disk.clone(), Options::default()).expect("open the template");
    db.update(|tx| tx.create_bucket(BUCKET).map(drop))
        .expect("bucket");
    let value = vec![0x5a; size.value_size];
    for start in (0..size.values).step_by(FILL_BATCH as usize) {
        let end = (start + FILL_BATCH).min(size.values);
        db.update(|tx| {
            let mut b = tx.bucket_mut(BUCKET)?.expect("bucket");
            (start..end).try_for_each(|i| b.put(&i.to_be_bytes(), &value))
        })
        .expect("fill");
    }
    for start in (0..size.values).step_by(DELETE_BATCH as usize) {
        let end = (start + DELETE_BATCH).min(size.values);
        db.update(|tx| {
            let mut b = tx.bucket_mut(BUCKET)?.expect("bucket");
            (start..end).try_for_each(|i| b.delete(&i.to_be_bytes()).map(drop))
        })
        .expect("empty");
    }
    drop(db);
    disk.image()
}

/// Run one variant on a copy of `template` and on an empty database.
pub fn measure(template: &[u8], options: &Options, size: Size) -> Measured {
    let disk = copy_of(template);
    let db = Db::open(disk.clone(), options.clone()).expect("open the large database");
    settle(&db);
    let large_set = sets(&db, &disk, size.sets);
    drop(db);
    let before = disk.io_stats();
    let db = Db::open(disk.clone(), options.clone()).expect("reopen");
    let reopen = (db.counters(), disk.io_stats().since(&before));
    drop(db);

    let fresh = quiet_disk();
    let db = Db::open(fresh.clone(), options.clone()).expect("open a fresh database");
    db.update(|tx| tx.create_bucket(BUCKET).map(drop))
        .expect("bucket");
    settle(&db);
    let fresh_set = sets(&db, &fresh, size.sets);
    Measured {
        large_set,
        fresh_set,
        reopen,
    }
}

/// A disk whose durable image is `image`.
fn copy_of(image: &[u8]) -> SimDisk {
    use crashlab_engine::Storage;
    let disk = quiet_disk();
    disk.write_at(0, image).expect("copy the template");
    disk.sync().expect("sync the copy");
    disk
}

/// One commit, so the file is in the variant's steady state before anything is counted.
fn settle(db: &Db) {
    db.update(|tx| {
        let mut b = tx.bucket_mut(BUCKET)?.expect("bucket");
        b.put(&(SET_BASE - 1).to_be_bytes(), &[0x5a; 100])
    })
    .expect("settle");
}

/// `n` durable Sets, one per transaction; the engine's and the disk's work summed.
fn sets(db: &Db, disk: &SimDisk, n: u64) -> (Counters, IoStats) {
    let (c0, io0) = (db.counters(), disk.io_stats());
    for i in 0..n {
        db.update(|tx| {
            let mut b = tx.bucket_mut(BUCKET)?.expect("bucket");
            b.put(&u128::from(SET_BASE + i).to_be_bytes(), &[0x5a; 100])
        })
        .expect("set");
    }
    (db.counters().since(&c0), disk.io_stats().since(&io0))
}
