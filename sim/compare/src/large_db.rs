//! bbolt's "large DB once" finding (docs/DESIGN.md, "The three findings", item 1) on the simulated
//! disk: a database that once held many large values keeps a huge free set after they are
//! deleted, and what a small durable Set and a reopen then cost depends on the freelist kind and
//! on whether the freelist is synced.
//!
//! The template — `values` values of `value_size` bytes, 20 per transaction, then all deleted,
//! 500 keys per transaction — is built once, and each variant runs on a fork of its disk
//! ([`SimDisk::fork`]: the template's image as a fresh synced disk, sharing the template's
//! sectors), so the seed scale holds one 2 GB image, not one per copy. Each
//! variant opens the copy with its options and commits once (so a not-synced freelist has
//! replaced the stored one), then runs `sets` durable Sets (a 16-byte key and a 100-byte value,
//! one per transaction) and one reopen. The same Sets on an empty database form the `fresh`
//! group.

use super::{quiet_config, quiet_disk, Scale, Table};
use crate::redb::REDB_VARIANT;
pub use crate::scale::Size;
use crashlab_engine::{Counters, Db, FreelistKind, Options};
use crashlab_sim::disk::{distinct_held_bytes, IoStats, SimDisk};
use std::cell::Cell;

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
    /// Sector bytes the template and this variant's fork held together at the end, each
    /// shared buffer once.
    pub held_bytes: u64,
}

/// The simulated file's length and the sector bytes held for it (template and forks, shared
/// buffers once, the largest over the variants): deterministic counters, unlike the process's
/// resident memory printed beside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateMemory {
    pub file_bytes: u64,
    pub held_bytes: u64,
}

thread_local! {
    /// The last [`tables`] call's figures, for `compare` to print on stderr without putting
    /// them in a table (a table's figures are per Set or per reopen; these are per run).
    static LAST_MEMORY: Cell<Option<TemplateMemory>> = const { Cell::new(None) };
}

/// What the last [`tables`] call on this thread held for its template, if there was one.
pub fn last_template_memory() -> Option<TemplateMemory> {
    LAST_MEMORY.with(Cell::get)
}

/// The Set table and the reopen table, with redb's rows when `with_redb`.
pub fn tables(scale: Scale, with_redb: bool) -> (Table, Table) {
    let size = Size::of(scale);
    let template = template(size);
    let measured: Vec<_> = variants()
        .into_iter()
        .map(|(name, options)| (name, measure(&template, &options, size)))
        .collect();
    let held = measured
        .iter()
        .map(|(_, m)| m.held_bytes)
        .max()
        .unwrap_or(0);
    LAST_MEMORY.with(|c| {
        c.set(Some(TemplateMemory {
            file_bytes: template.memory().len,
            held_bytes: held,
        }))
    });
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

/// The options the template is built with: the defaults, but a page cache of 64 nodes. The
/// cache counts nodes, not bytes, and each leaf the fill writes holds a 1 MiB value, so the
/// default 16 Ki nodes would keep every value (2 GB at the seed scale) beside the disk. The
/// cache changes no byte written (`template_bytes_do_not_depend_on_the_page_cache`).
fn template_options() -> Options {
    Options {
        page_cache_pages: 64,
        ..Options::default()
    }
}

/// The template's disk: filled, then emptied, with the default options (and a small cache).
pub fn template(size: Size) -> SimDisk {
    build(size, template_options())
}

fn build(size: Size, options: Options) -> SimDisk {
    let disk = quiet_disk();
    let db = Db::open(disk.clone(), options).expect("open the template");
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
    disk
}

/// Run one variant on a copy of `template` and on an empty database.
pub fn measure(template: &SimDisk, options: &Options, size: Size) -> Measured {
    let disk = template.fork(0, quiet_config());
    let db = Db::open(disk.clone(), options.clone()).expect("open the large database");
    settle(&db);
    let large_set = sets(&db, &disk, size.sets);
    drop(db);
    let before = disk.io_stats();
    let db = Db::open(disk.clone(), options.clone()).expect("reopen");
    let reopen = (db.counters(), disk.io_stats().since(&before));
    drop(db);
    let held_bytes = distinct_held_bytes(&[template, &disk]);
    drop(disk);

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
        held_bytes,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The template's small page cache changes only what the engine remembers, never what it
    /// writes: the same bytes as with the default cache.
    #[test]
    fn template_bytes_do_not_depend_on_the_page_cache() {
        // More leaves than the small cache holds, so it evicts as at the seed scale.
        let size = Size {
            values: 256,
            value_size: 16 << 10,
            sets: 1,
        };
        let small = template(size);
        assert!(size.values > 2 * template_options().page_cache_pages as u64);
        let default = build(size, Options::default());
        assert_eq!(small.image(), default.image());
        assert!(small.memory().len > size.largest_ever());
    }

    /// The variants run on forks sharing the template's disk: the template and a fork together
    /// hold about one file, not two (a fork that copied would hold twice the file).
    #[test]
    fn the_variants_share_the_templates_image() {
        let _ = tables(Scale::Small, false);
        let m = last_template_memory().expect("tables records its template");
        assert!(
            m.file_bytes > Size::of(Scale::Small).largest_ever(),
            "{m:?}"
        );
        assert!(
            m.held_bytes <= m.file_bytes + m.file_bytes / 5 + (64 << 10),
            "{m:?}"
        );
    }
}
