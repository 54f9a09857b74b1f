//! Regression 011, found by the fuzzer `crashlab-fuzz` (issue 15; `corpus/fuzz/008` and `014`).
//!
//! Postmortem: a commit with `no_freelist_sync` on a file whose meta had a persisted freelist
//! wrote a meta with none, so the next open had to rebuild the free set by walking every bucket
//! — a walk no earlier open had needed, since they loaded the freelist page. On a file with
//! damage in a bucket the commit never read (`inline.db` with one leaf element's flags set to
//! 2), the walk failed: the commit had returned Ok and left a file that opened before and did not
//! open after, so even its own put could not be read. A sparse file whose metas claim 185
//! million pages but keep a short freelist met the same end through a limit: the rebuild found
//! every claimed page free, more than the array freelist takes. The fuzzer saw ~170 of its first
//! 2000 inputs fail this way; the earlier helpers' tests never committed with `no_freelist_sync`
//! on a file that had a freelist. The fix: the first such commit walks the tree as the next open
//! will, refuses with the walk's error (or `TooManyFreeIds`) when that open would fail, and
//! otherwise uses the walk's free set, which is the one the next open will rebuild (so a live
//! page the persisted list wrongly held free is not reused); a `no_freelist_sync` commit with the
//! array freelist also refuses to leave more free pages than the next open can load.

use common::fixture::{bbolt_fixture, get, stretched};
use crashlab_engine::limits::MAX_FREE_IDS;
use crashlab_engine::{
    Corruption, Db, Error, FileStorage, FormatError, FreelistKind, MemStorage, Options, PageId,
    ProblemKind,
};
use std::path::PathBuf;

use crate::common;

fn inline_db() -> Vec<u8> {
    bbolt_fixture("inline.db")
}

fn options(no_freelist_sync: bool, freelist: FreelistKind) -> Options {
    Options {
        no_freelist_sync,
        freelist,
        ..Options::default()
    }
}

fn put_small(db: &Db, key: &[u8]) -> crashlab_engine::Result<()> {
    db.update(|tx| {
        tx.bucket_mut(b"small")?
            .expect("bucket small")
            .put(key, b"x")
    })
}

/// `inline.db` with page 8's first leaf element (in bucket `parent`) flagged 2, an invalid leaf
/// flag: a loaded freelist never notices; a rebuild walk does.
fn damaged_in_an_unread_bucket() -> Vec<u8> {
    let mut b = inline_db();
    b[8 * 4096 + 16..8 * 4096 + 20].copy_from_slice(&2u32.to_le_bytes());
    b
}

#[test]
fn the_first_commit_that_drops_the_freelist_is_refused_when_the_rebuild_would_fail() {
    let mem = MemStorage::from_bytes(damaged_in_an_unread_bucket());
    let db = Db::open(mem.clone(), options(true, FreelistKind::Array)).unwrap();
    assert!(
        db.meta().has_freelist(),
        "the fixture persists its freelist"
    );
    assert!(!db.check().unwrap().is_empty(), "check sees the damage");
    let err = put_small(&db, b"k").unwrap_err();
    let reason = Corruption::LeafFlags {
        element: 0,
        flags: 2,
    };
    assert!(
        matches!(&err, Error::Format(FormatError::Corrupted { page: PageId(8), reason: r }) if *r == reason),
        "the walk's own error, not {err:?}"
    );
    drop(db);
    // Nothing was written: the freelist is still there, and the file opens as it did.
    let db = Db::open(mem.clone(), options(true, FreelistKind::Array)).unwrap();
    assert!(db.meta().has_freelist());
    drop(db);
    // Keeping the freelist, the same write commits: only dropping it needed the walk.
    let db = Db::open(mem, options(false, FreelistKind::Array)).unwrap();
    put_small(&db, b"k").unwrap();
    assert_eq!(get(&db, b"small", b"k").as_deref(), Some(&b"x"[..]));
}

#[test]
fn on_an_undamaged_file_it_commits_and_the_rebuild_reopens_it() {
    let mem = MemStorage::from_bytes(inline_db());
    let db = Db::open(mem.clone(), options(true, FreelistKind::Array)).unwrap();
    put_small(&db, b"k").unwrap();
    assert!(!db.meta().has_freelist(), "the freelist is dropped");
    assert_eq!(db.check().unwrap(), vec![]);
    drop(db);
    let db = Db::open(mem, options(true, FreelistKind::Array)).unwrap();
    assert_eq!(get(&db, b"small", b"k").as_deref(), Some(&b"x"[..]));
    assert_eq!(db.check().unwrap(), vec![]);
}

#[test]
fn the_walks_free_set_replaces_a_list_that_holds_a_live_page() {
    // corpus/fuzz/009: freelist page 13 lists one id, page 8, the live leaf of bucket `parent`.
    let mut b = inline_db();
    b[13 * 4096 + 10..13 * 4096 + 12].copy_from_slice(&1u16.to_le_bytes());
    b[13 * 4096 + 16..13 * 4096 + 24].copy_from_slice(&8u64.to_le_bytes());
    let mem = MemStorage::from_bytes(b);
    let db = Db::open(mem.clone(), options(true, FreelistKind::Array)).unwrap();
    let problems = db.check().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.page == Some(PageId(8)) && p.kind == ProblemKind::ReachableFree),
        "{problems:?}"
    );
    let before = get(&db, b"parent", b"key");
    assert!(before.is_some(), "bucket parent holds key");
    // Big enough to need a page of its own: with the loaded list, page 8 would be the one.
    db.update(|tx| {
        tx.bucket_mut(b"small")?
            .expect("small")
            .put(b"fuzz", &[b'x'; 600])
    })
    .unwrap();
    assert_eq!(get(&db, b"parent", b"key"), before, "page 8 was not reused");
    assert_eq!(
        db.check().unwrap(),
        vec![],
        "nothing is listed wrongly any more"
    );
    drop(db);
    let db = Db::open(mem, options(true, FreelistKind::Array)).unwrap();
    assert_eq!(get(&db, b"parent", b"key"), before);
    assert_eq!(db.check().unwrap(), vec![]);
}

/// The inline fixture, stretched sparse so that both metas claim `high_water` pages while keeping
/// their freelist page.
fn sparse_claim(dir: &std::path::Path, high_water: u64) -> PathBuf {
    stretched(dir, "claims.db", &inline_db(), high_water)
}

#[test]
fn a_commit_leaving_more_free_pages_than_the_array_freelist_loads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = sparse_claim(dir.path(), MAX_FREE_IDS + 1000);
    let open = |nfs| {
        Db::open(
            FileStorage::create(&path).unwrap(),
            options(nfs, FreelistKind::Array),
        )
    };
    let db = open(true).unwrap();
    assert!(db.meta().has_freelist());
    match put_small(&db, b"k") {
        Err(Error::Format(FormatError::TooManyFreeIds { what, count, max })) => {
            assert_eq!(what, "array freelist");
            assert!(count > MAX_FREE_IDS, "{count}");
            assert_eq!(max, MAX_FREE_IDS);
        }
        other => panic!("expected TooManyFreeIds, got {other:?}"),
    }
    drop(db);
    // The file still opens with the options that tried the write, and reads.
    let db = open(true).unwrap();
    assert!(db.meta().has_freelist());
    assert!(get(&db, b"small", b"a").is_some());
    drop(db);
    // The hashmap freelist keeps spans: it may drop the freelist, and reopens.
    let hashmap = || {
        let storage = FileStorage::create(&path).unwrap();
        Db::open(storage, options(true, FreelistKind::Hashmap)).unwrap()
    };
    put_small(&hashmap(), b"k").unwrap();
    let db = hashmap();
    assert!(!db.meta().has_freelist());
    assert_eq!(get(&db, b"small", b"k").as_deref(), Some(&b"x"[..]));
}
