//! Regression 008, found by the structure-aware fuzzing campaign of issue 15.
//!
//! Postmortem: a sparse 1 TiB file (48 KiB on disk) whose valid metas say "no persisted
//! freelist" and a high-water mark of 2^28 pages (4 KiB pages) or 2^31 (512-byte pages) made
//! `crashlab db check` abort allocating 2 GB and `db stats` try 16 GB. Every free set was one
//! 8-byte id per free page: the rebuild collected `(2..hwm)` minus the reached pages into a
//! `Vec`, the inspection walk did the same, the array freelist copied it again, and `check()`
//! and the statistics walked every page below the high-water mark one by one; bitmaps sized by
//! the mark took 256 MiB more. The harness missed it because every test file was small and dense:
//! the open-time check that the file is as long as its high-water mark holds for a sparse file,
//! and no test measured memory. The same class had two more members: a header's overflow count
//! sized the buffer of a page read (up to the file's length), and freeing or checking a run
//! walked every page it claimed. The fix keeps reached and free sets as runs
//! (`PageSet`, memory per run, not per page), derives free spans from the reachable set's gaps,
//! has check, stats and the page map work segment by segment, gives the hashmap freelist spans
//! directly, bounds the structures that hold one id per page by design (the array freelist, the
//! freelist page) with `limits::MAX_FREE_IDS` and a typed error, and reads a run only as far as
//! its contents reach, refusing a run that claims more pages than its contents need. This test
//! counts every byte the process allocates (a counting global allocator) while each entry point
//! handles such files, and asserts a bound far below what the claims would cost.

use crashlab_engine::limits::MAX_FREE_IDS;
use crashlab_engine::{
    Corruption, Db, Error, FileStorage, FormatError, FreelistKind, Options, PageId, TxId,
};
use crashlab_format::inspect::{self, Image};
use crashlab_format::meta::fnv1a64;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// What one entry point may allocate in all (every allocation counted, none subtracted: an
/// upper bound on its peak). The claims below would cost 2 to 16 GiB; handling them costs tens
/// of KiB, and 4 MiB is less than one id per free page of even 2^20 pages would take.
const BOUND: usize = 4 << 20;

/// Run `f`, asserting that everything it allocates stays under [`BOUND`].
fn bounded<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let region = Region::new(GLOBAL);
    let out = f();
    let bytes = region.change().bytes_allocated;
    assert!(bytes < BOUND, "{what}: allocated {bytes} bytes");
    out
}

const TIB: u64 = 1 << 40;

/// Rewrite the meta at `slot` of the file at `path` with `edit`, recomputing its checksum.
fn edit_meta(path: &Path, page_size: u64, slot: u64, edit: impl Fn(&mut [u8])) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut m = [0u8; 80];
    f.read_exact_at(&mut m, slot * page_size).unwrap();
    edit(&mut m[16..]);
    let sum = fnv1a64(&m[16..72]);
    m[72..80].copy_from_slice(&sum.to_le_bytes());
    f.write_all_at(&m, slot * page_size).unwrap();
}

fn put_u64(m: &mut [u8], at: usize, v: u64) {
    m[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// A database with bucket `b` holding `k → v`, stretched to a sparse 1 TiB: both metas say "no
/// persisted freelist" and a high-water mark of the whole file.
fn sparse_file(dir: &Path, name: &str, page_size: u32) -> PathBuf {
    let path = dir.join(format!("{name}-{page_size}.db"));
    let options = Options {
        page_size,
        no_freelist_sync: true,
        ..Options::default()
    };
    let db = Db::open_path(&path, options).unwrap();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k", b"v"))
        .unwrap();
    drop(db);
    let ps = u64::from(page_size);
    for slot in 0..2 {
        edit_meta(&path, ps, slot, |m| {
            put_u64(m, 32, u64::MAX); // freelist: not persisted
            put_u64(m, 40, TIB / ps); // high-water mark
        });
    }
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(TIB).unwrap();
    path
}

fn open(path: &Path, options: Options) -> Result<Db, Error> {
    Db::open_path(path, options)
}

fn read_only(freelist: FreelistKind) -> Options {
    Options {
        read_only: true,
        freelist,
        ..Options::default()
    }
}

fn image(path: &Path) -> Image {
    Image::open(FileStorage::open_read_only(path).unwrap()).unwrap()
}

fn value(db: &Db) -> Option<Vec<u8>> {
    db.view(|tx| {
        tx.bucket(b"b")?
            .expect("bucket")
            .get(b"k")
            .map(|v| v.map(|v| v.to_vec()))
    })
    .unwrap()
}

/// Every entry point on a sparse file that claims `high_water` pages, nearly all free.
fn sparse_claims_cost_what_the_file_holds(dir: &Path, page_size: u32) {
    let path = sparse_file(dir, "sparse", page_size);
    let high_water = TIB / u64::from(page_size);
    let what = |s: &str| format!("{page_size}-byte pages: {s}");

    // The array freelist holds one id per free page by design: a writer is refused past its
    // limit. (A reader loads no freelist: regression 012.)
    let err = bounded(&what("open, array freelist"), || {
        let options = Options {
            no_freelist_sync: true,
            ..Options::default()
        };
        open(&path, options).err()
    });
    match err {
        Some(Error::Format(FormatError::TooManyFreeIds { count, max, .. })) => {
            assert!(count > high_water - 16, "{count}");
            assert_eq!(max, MAX_FREE_IDS);
        }
        other => panic!("expected TooManyFreeIds, got {other:?}"),
    }
    // The file opens read-only, reads and checks clean.
    bounded(&what("open and check, read-only"), || {
        let db = open(&path, read_only(FreelistKind::Array)).unwrap();
        assert_eq!(db.meta().high_water, PageId(high_water));
        assert_eq!(value(&db).as_deref(), Some(&b"v"[..]));
        assert_eq!(db.check().unwrap(), vec![]);
    });
    // `crashlab db check` and `db stats`, `db pages`, `db dump`.
    bounded(&what("inspect"), || {
        let image = image(&path);
        assert_eq!(crashlab_engine::Db::check_image(&image).unwrap(), vec![]);
        let stats = inspect::stats(&image).unwrap();
        let used = stats.branch.pages + stats.leaf.pages;
        assert_eq!(stats.meta_pages, 2);
        assert_eq!(
            stats.free_pages + stats.pending_pages,
            high_water - 2 - used
        );
        assert_eq!(stats.unreachable_pages + stats.damaged_pages, 0);
        let map = inspect::page_map(&image).unwrap();
        assert!(map.runs.len() < 16, "{} runs", map.runs.len());
        let (dump, problems) = inspect::dump(&image).unwrap();
        assert!(problems.is_empty());
        assert_eq!(dump.buckets["62"]["6b"], "76");
    });
    // A writer with spans and no persisted freelist commits; one persisting a freelist page (one
    // id per free page, by the format) is refused.
    bounded(&what("write, hashmap freelist, no freelist sync"), || {
        let options = Options {
            freelist: FreelistKind::Hashmap,
            no_freelist_sync: true,
            page_size,
            ..Options::default()
        };
        let db = open(&path, options).unwrap();
        // The hashmap freelist keeps spans: every claimed page is free, at the cost of a few.
        let (free, pending) = db.freelist_counts();
        assert!(free > high_water - 16 && pending == 0, "{free} free");
        db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"k2", b"v2"))
            .unwrap();
        assert_eq!(db.check().unwrap(), vec![]);
        assert_eq!(db.meta().txid, TxId(3));
    });
    let err = bounded(&what("open, persisting the freelist"), || {
        let options = Options {
            freelist: FreelistKind::Hashmap,
            ..Options::default()
        };
        open(&path, options).err()
    });
    assert!(
        matches!(
            err,
            Some(Error::Format(FormatError::TooManyFreeIds {
                what: "freelist page",
                ..
            }))
        ),
        "{err:?}"
    );
}

/// Runs whose headers claim far more than they hold: an overflow count on a node, a freelist
/// page claiming a billion ids. Reads are sized by the contents and the claims refused.
fn overflow_and_count_claims_are_refused_without_allocating(dir: &Path) {
    let path = sparse_file(dir, "claims", 4096);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let root = image(&path).meta().root;
    // The root leaf claims 2^27 overflow pages (512 GiB, inside the file and the mark).
    let at = root.0 * 4096;
    let mut header = [0u8; 16];
    f.read_exact_at(&mut header, at).unwrap();
    f.write_all_at(&(1u32 << 27).to_le_bytes(), at + 12)
        .unwrap();
    let err = bounded("open with an overflow claim", || {
        // A writer rebuilds the free set, so it reads the root.
        let options = Options {
            freelist: FreelistKind::Hashmap,
            no_freelist_sync: true,
            ..Options::default()
        };
        open(&path, options).err()
    });
    match err {
        Some(Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::OverflowBeyondContents { overflow, .. },
        })) => {
            assert_eq!(page, root);
            assert_eq!(overflow, 1 << 27);
        }
        other => panic!("expected OverflowBeyondContents, got {other:?}"),
    }
    bounded("check with an overflow claim", || {
        let problems = crashlab_engine::Db::check_image(&image(&path)).unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p.page == Some(root) && p.message.contains("claims more pages")),
            "{problems:?}"
        );
        let stats = inspect::stats(&image(&path)).unwrap();
        assert_eq!(stats.damaged_pages, 1);
    });
    f.write_all_at(&header, at).unwrap(); // the root is whole again

    // A freelist page at page 1000 whose escaped count says 2^30 ids, over 2^27 pages.
    let page = 1000u64;
    let mut fl = [0u8; 24];
    put_u64(&mut fl, 0, page);
    fl[8..10].copy_from_slice(&0x10u16.to_le_bytes());
    fl[10..12].copy_from_slice(&0xFFFFu16.to_le_bytes());
    fl[12..16].copy_from_slice(&(1u32 << 27).to_le_bytes());
    put_u64(&mut fl, 16, 1 << 30);
    f.write_all_at(&fl, page * 4096).unwrap();
    for slot in 0..2 {
        edit_meta(&path, 4096, slot, |m| put_u64(m, 32, page));
    }
    let err = bounded("open with a freelist count claim", || {
        open(&path, Options::default()).err()
    });
    assert!(
        matches!(err, Some(Error::Format(FormatError::TooManyFreeIds { what: "freelist page", count, .. })) if count == 1 << 30),
        "{err:?}"
    );
    bounded("check with a freelist count claim", || {
        let problems = crashlab_engine::Db::check_image(&image(&path)).unwrap();
        assert!(
            problems.iter().any(|p| p.page == Some(PageId(page))),
            "{problems:?}"
        );
    });
}

// One test, so that nothing else allocates while a region counts.
#[test]
fn memory_follows_what_a_file_holds_not_what_it_claims() {
    let dir = tempfile::tempdir().unwrap();
    sparse_claims_cost_what_the_file_holds(dir.path(), 4096);
    sparse_claims_cost_what_the_file_holds(dir.path(), 512);
    overflow_and_count_claims_are_refused_without_allocating(dir.path());
}
