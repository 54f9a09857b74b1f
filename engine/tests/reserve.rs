//! A commit's pages come from one run (`commit/reserve.rs`): a stream of one-key commits
//! writes its data pages in one call instead of one call per page, leaves no page unreachable
//! and unlisted, and does not grow the file beyond what the tree needs.

use crashlab_engine::{Counters, Db, FreelistKind, MemStorage, Options};

/// Keys as the benchmarks write them: 16 bytes, big-endian, so new keys append.
fn key(i: u32) -> [u8; 16] {
    u128::from(i).to_be_bytes()
}

fn options(freelist: FreelistKind, no_freelist_sync: bool) -> Options {
    Options {
        freelist,
        no_freelist_sync,
        ..Options::default()
    }
}

const CONFIGS: [(FreelistKind, bool); 4] = [
    (FreelistKind::Array, false),
    (FreelistKind::Array, true),
    (FreelistKind::Hashmap, false),
    (FreelistKind::Hashmap, true),
];

/// A database of 10,000 keys of 100 bytes, filled 1,000 to a commit as the benchmarks fill
/// theirs: the free set the load leaves is what sets the one-key commits' pages interleaving.
fn filled(storage: &MemStorage, options: &Options) -> Db {
    let db = Db::open(storage.clone(), options.clone()).unwrap();
    db.update(|tx| tx.create_bucket(b"b").map(drop)).unwrap();
    for first in (0..10_000).step_by(1000) {
        db.update(|tx| {
            let mut b = tx.bucket_mut(b"b")?.unwrap();
            (first..first + 1000).try_for_each(|i| b.put(&key(i), &[1; 100]))
        })
        .unwrap();
    }
    db
}

fn put_one(db: &Db, i: u32) {
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(&key(i), &[2; 100]))
        .unwrap();
}

/// Data write calls (the meta's excluded) per commit since `before`.
fn data_calls_per_commit(db: &Db, before: &Counters) -> f64 {
    let c = db.counters().since(before);
    (c.write_calls - c.meta_writes) as f64 / c.commits as f64
}

/// Without the reservation each of these commits took its five pages from two interleaved
/// generations (696, 698, … then 697, 699, …) and wrote them in as many calls: 4.71 data write
/// calls a commit here, against 1.07 with it.
#[test]
fn steady_one_key_commits_write_their_pages_in_one_call() {
    for (freelist, no_sync) in CONFIGS {
        let db = filled(&MemStorage::new(), &options(freelist, no_sync));
        (0..50).for_each(|i| put_one(&db, 100_000 + i));
        let before = db.counters();
        (50..550).for_each(|i| put_one(&db, 100_000 + i));
        let calls = data_calls_per_commit(&db, &before);
        // A leaf split (every ~30 appends) makes a commit one page longer than the last, which
        // then reserves no run; the next one reserves again.
        assert!(
            calls < 1.3,
            "{freelist:?}, no_freelist_sync {no_sync}: {calls:.2} data write calls per commit"
        );
    }
}

/// Each commit either uses its whole reservation or gives the rest back: after every commit the
/// file checks whole (no page unreachable and unlisted), and reopened it holds every key.
#[test]
fn leftover_reservations_go_back_to_the_free_set() {
    for (freelist, no_sync) in CONFIGS {
        let storage = MemStorage::new();
        let opts = options(freelist, no_sync);
        let db = filled(&storage, &opts);
        for i in 0..120 {
            // Alternate one key with ten: the one-key commit reserves the ten-key commit's
            // page count and gives most of it back.
            if i % 2 == 0 {
                put_one(&db, 100_000 + i);
            } else {
                db.update(|tx| {
                    let mut b = tx.bucket_mut(b"b")?.unwrap();
                    (0..10).try_for_each(|k| b.put(&key(k * 97 + i), &[3; 100]))
                })
                .unwrap();
            }
            let problems = db.check().unwrap();
            assert!(problems.is_empty(), "{freelist:?} commit {i}: {problems:?}");
        }
        drop(db);
        let db = Db::open(MemStorage::from_bytes(storage.snapshot()), opts).unwrap();
        assert!(db.check().unwrap().is_empty());
        db.view(|tx| {
            assert_eq!(tx.bucket(b"b")?.unwrap().iter().count(), 10_060);
            Ok(())
        })
        .unwrap();
    }
}

/// A reservation taken at the high-water mark (no free run was long enough) passes over the
/// free pages that were too scattered to hold it; they stay free for commits that need single
/// pages, and later commits reuse the runs it leaves. So after thousands of commits only a
/// few pages are free: the file did not grow beyond the tree by more than that slack.
#[test]
fn reservations_grow_the_file_by_a_bounded_slack() {
    for (freelist, no_sync) in CONFIGS {
        let db = filled(&MemStorage::new(), &options(freelist, no_sync));
        (0..2000).for_each(|i| put_one(&db, 100_000 + i));
        let (free, pending) = db.freelist_counts();
        assert!(
            free + pending <= 40,
            "{freelist:?}, no_freelist_sync {no_sync}: {free} free and {pending} pending pages"
        );
        assert!(db.check().unwrap().is_empty());
    }
}

/// An open reader keeps the pages it can see pending: commits then find no free run and
/// reserve at the high-water mark while the file has room, and every page still checks.
#[test]
fn a_reader_holding_pages_leaves_commits_whole() {
    for (freelist, no_sync) in CONFIGS {
        let db = filled(&MemStorage::new(), &options(freelist, no_sync));
        let reader = db.begin_read().unwrap();
        (0..40).for_each(|i| put_one(&db, 100_000 + i));
        assert_eq!(
            reader.bucket(b"b").unwrap().unwrap().iter().count(),
            10_000,
            "the reader's snapshot is untouched"
        );
        drop(reader);
        (40..80).for_each(|i| put_one(&db, 100_000 + i));
        assert!(db.check().unwrap().is_empty());
        db.view(|tx| {
            assert_eq!(tx.bucket(b"b")?.unwrap().iter().count(), 10_080);
            Ok(())
        })
        .unwrap();
    }
}
