//! Regression 012, found by the fuzzer `crashlab-fuzz` (issue 15; `corpus/fuzz/004`, `005`).
//!
//! Postmortem: a read-only open loaded the free set as a writer does — decoding the freelist
//! page, or without one rebuilding it by walking every bucket into the chosen freelist kind —
//! though a reader never allocates. So a sparse file whose metas claim 2^28 free pages and no
//! persisted freelist, which `inspect::check` called clean, failed a plain read-only open with
//! the array freelist (`TooManyFreeIds`: one id per page, past its limit); a damaged freelist
//! page, or a tree the rebuild could not walk, made every bucket of the file unreadable, even
//! those the damage did not touch. The fuzzer saw it as "check found no problem, yet the
//! read-only open failed"; every earlier test opened read-only files that a writer could open
//! too. The fix: a read-only open loads no freelist, and `check()` on a read-only database takes
//! its free set from the file (the freelist page when it decodes, otherwise every page its walk
//! does not reach), so it still reports a damaged freelist page instead of failing.

use common::fixture::{bbolt_fixture, claim, get, Claim};
use crashlab_engine::{Db, FileStorage, FreelistKind, MemStorage, Options, PageId};

use crate::common;

fn inline_db() -> Vec<u8> {
    bbolt_fixture("inline.db")
}

fn read_only(freelist: FreelistKind) -> Options {
    Options {
        read_only: true,
        freelist,
        ..Options::default()
    }
}

#[test]
fn a_sparse_file_claiming_more_free_pages_than_the_array_holds_opens_for_reading() {
    // corpus/fuzz/004: both metas claim 2^28 pages of 4 KiB and no persisted freelist.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.db");
    std::fs::write(&path, inline_db()).unwrap();
    let (high_water, len) = (1 << 28, 1 << 40);
    claim(
        &path,
        Claim {
            high_water,
            drop_freelist: true,
            len,
        },
    );
    for kind in [FreelistKind::Array, FreelistKind::Hashmap] {
        let storage = FileStorage::open_read_only(&path).unwrap();
        let db = Db::open(storage, read_only(kind)).unwrap();
        assert_eq!(db.meta().high_water, PageId(1 << 28));
        assert_eq!(get(&db, b"small", b"a").as_deref(), Some(&b"1"[..]));
        assert_eq!(db.check().unwrap(), vec![], "{kind:?}");
        assert_eq!(db.freelist_counts(), (0, 0), "a reader loads no freelist");
    }
}

#[test]
fn a_damaged_freelist_page_keeps_no_bucket_from_being_read() {
    let mut b = inline_db();
    // Freelist page 13's flags say "leaf": it no longer decodes as a freelist.
    b[13 * 4096 + 8..13 * 4096 + 10].copy_from_slice(&0x02u16.to_le_bytes());
    let mem = MemStorage::from_bytes(b);
    let db = Db::open(mem.clone(), read_only(FreelistKind::Array)).unwrap();
    assert_eq!(get(&db, b"small", b"c").as_deref(), Some(&b"333"[..]));
    assert_eq!(get(&db, b"parent", b"key").as_deref(), Some(&b"val"[..]));
    let problems = db.check().unwrap();
    assert!(
        problems.iter().any(|p| p.page == Some(PageId(13))),
        "check still names the freelist page: {problems:?}"
    );
    drop(db);
    // A writer needs the free set, and says why it cannot have it.
    assert!(Db::open(mem, Options::default()).is_err());
}

#[test]
fn without_a_persisted_freelist_a_damaged_bucket_leaves_the_others_readable() {
    // Without a persisted freelist a writable open rebuilds the free set: damage in one bucket's
    // leaf made that rebuild, and so any open, fail.
    let mem = MemStorage::from_bytes(inline_db());
    let options = Options {
        no_freelist_sync: true,
        ..Options::default()
    };
    let db = Db::open(mem.clone(), options.clone()).unwrap();
    db.update(|tx| tx.bucket_mut(b"small")?.expect("small").put(b"d", b"4"))
        .unwrap();
    assert!(!db.meta().has_freelist());
    drop(db);
    let mut b = mem.snapshot();
    // Page 8 is bucket parent's leaf (untouched by the write): flag its first element 2.
    b[8 * 4096 + 16..8 * 4096 + 20].copy_from_slice(&2u32.to_le_bytes());
    let mem = MemStorage::from_bytes(b);
    assert!(
        Db::open(mem.clone(), options).is_err(),
        "a writer's rebuild meets it"
    );
    let db = Db::open(mem, read_only(FreelistKind::Array)).unwrap();
    assert_eq!(get(&db, b"small", b"d").as_deref(), Some(&b"4"[..]));
    assert!(db
        .view(|tx| tx
            .bucket(b"parent")?
            .expect("parent")
            .get(b"key")
            .map(|v| v.map(|v| v.to_vec())))
        .is_err());
    let problems = db.check().unwrap();
    assert!(
        problems.iter().any(|p| p.page == Some(PageId(8))),
        "{problems:?}"
    );
}
