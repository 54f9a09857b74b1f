//! Regression 015, found by the fuzzer `crashlab-fuzz` (issue 15; `corpus/fuzz/015`, `016`,
//! `019`-`021`, `023`).
//!
//! Postmortem: a commit reads only the paths it rewrites, so three kinds of damage elsewhere in
//! the file were invisible to it: a live page the freelist lists as free (the commit allocated
//! it and overwrote a leaf another bucket still used), a page two references share (a cycle, or
//! two parents: rewriting one path freed it, and the new copy of the node shared all its old
//! children with the copy the other reference kept), and a reference past the high-water mark
//! (the next allocation there wrote a node under it). Each commit returned Ok and left a file
//! `check()` found worse than before. The fuzzer's oracle had been scoped around these pages,
//! on the ground that only a walk of the whole file can see them; that is true, and the walk is
//! affordable once per session. The fix: the first commit after each open runs `check()` once
//! (`engine/src/guard.rs`); live pages listed free leave the free set, a commit that would free a
//! shared page is refused with `ReachedTwice`, and one that would allocate at the high-water
//! mark a page a reference reaches with `AllocatesReferencedPage`. The oracle is strict again.

use crashlab_engine::{
    Corruption, Db, Error, FormatError, MemStorage, Options, PageId, ProblemKind,
};
use crashlab_format::inspect::{self, Dump, Image};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/bbolt/{name}.db"));
    std::fs::read(path).expect("the fixture")
}

/// `bytes` with the little-endian `value` written at byte `at`.
fn with(mut bytes: Vec<u8>, at: usize, value: &[u8]) -> Vec<u8> {
    bytes[at..at + value.len()].copy_from_slice(value);
    bytes
}

fn inspected(mem: &MemStorage) -> (Vec<crashlab_engine::Problem>, Dump) {
    let image = Image::open(mem.clone()).unwrap();
    (
        Db::check_image(&image).unwrap(),
        inspect::dump(&image).unwrap().0,
    )
}

/// pagesize1k.db with branch page 43's child 19 (the pointer at byte 44360) redirected to
/// `target`, and the problems its check finds.
fn redirected(target: u64) -> (MemStorage, Vec<crashlab_engine::Problem>) {
    let mem = MemStorage::from_bytes(with(fixture("pagesize1k"), 44360, &target.to_le_bytes()));
    let (before, _) = inspected(&mem);
    (mem, before)
}

#[test]
fn a_live_page_listed_free_is_never_allocated() {
    // corpus/fuzz/015: pagesize1k.db's freelist page 63 also lists page 23, a live leaf.
    let b = with(fixture("pagesize1k"), 64522, &3u16.to_le_bytes());
    let b = with(b, 64544, &23u64.to_le_bytes());
    let mem = MemStorage::from_bytes(b);
    let (problems, dump) = inspected(&mem);
    let named = |p: &[crashlab_engine::Problem]| {
        p.iter()
            .any(|p| p.page == Some(PageId(23)) && p.kind == ProblemKind::ReachableFree)
    };
    assert!(named(&problems), "check names it: {problems:?}");
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    for i in 0..40u32 {
        // Enough new leaves that a free set still holding page 23 would hand it out.
        let key = format!("z{i:04}");
        db.update(|tx| {
            tx.bucket_mut(b"a")?
                .expect("a")
                .put(key.as_bytes(), &[7; 200])
        })
        .unwrap();
    }
    drop(db);
    let (after, now) = inspected(&mem);
    assert!(
        !named(&after),
        "page 23 is no longer listed free: {after:?}"
    );
    assert!(after.len() < problems.len(), "{problems:?} then {after:?}");
    for (bucket, keys) in &dump.buckets {
        if bucket != "61" {
            assert_eq!(
                now.buckets.get(bucket),
                Some(keys),
                "bucket {bucket} unchanged"
            );
        }
    }
    let a = &now.buckets["61"];
    assert!(dump.buckets["61"].iter().all(|(k, v)| a.get(k) == Some(v)));
    assert_eq!(a.len(), dump.buckets["61"].len() + 40, "every put landed");
}

#[test]
fn a_commit_that_would_free_a_page_reached_twice_is_refused() {
    // corpus/fuzz/016: in pagesize1k.db, branch page 43's child 19 points back at page 62,
    // its own ancestor.
    let (mem, before) = redirected(62);
    assert!(before
        .iter()
        .any(|p| p.page == Some(PageId(62)) && p.kind == ProblemKind::ReachedTwice));
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    let txid = db.meta().txid;
    let err = db
        .update(|tx| {
            let path: [&[u8]; 3] = [b"d", b"e", b"f"];
            tx.bucket_path_mut(&path)?
                .expect("d/e/f")
                .put(b"leaf0", b"")
        })
        .unwrap_err();
    let target = PageId(62);
    assert!(
        matches!(
            err,
            Error::Format(FormatError::Corrupted { page, reason: Corruption::ReachedTwice { target: t } })
                if page == target && t == target
        ),
        "{err:?}"
    );
    drop(db);
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    assert_eq!(db.meta().txid, txid, "refused before the meta");
    assert_eq!(inspected(&mem).0, before, "the file is as it was");
}

#[test]
fn a_commit_never_allocates_a_page_a_reference_past_the_high_water_mark_reaches() {
    // The same child pointer, at page 64: pagesize1k.db's high-water mark.
    let (mem, before) = redirected(64);
    let beyond = ProblemKind::BeyondHighWater { target: PageId(64) };
    assert!(before.iter().any(|p| p.kind == beyond), "{before:?}");
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    // A value of 20 pages: no free run holds it, so it goes to the high-water mark.
    let err = db
        .update(|tx| {
            tx.bucket_mut(b"a")?
                .expect("a")
                .put(b"big", &[1; 20 * 1024])
        })
        .unwrap_err();
    // The refusal names the branch holding the reference: page 64 is past the file's end
    // when the file is no longer than its high-water mark (corpus/fuzz/028).
    assert!(
        matches!(
            err,
            Error::Format(FormatError::Corrupted {
                page: PageId(43),
                reason: Corruption::AllocatesReferencedPage {
                    allocated: PageId(64)
                }
            })
        ),
        "{err:?}"
    );
    drop(db);
    assert_eq!(inspected(&mem).0, before, "the file is as it was");
}

/// A commit reserves a run for its pages (`engine/src/commit/reserve.rs`), at the high-water
/// mark when no free run holds it, reaching further than the pages it will use. A reference past
/// the mark into that reach must not refuse commits that never need the page it reaches: the
/// reservation steps aside and the commits allocate as before.
#[test]
fn a_reservation_steps_around_a_page_a_reference_past_the_high_water_mark_reaches() {
    // The same child pointer as above, to page 70: six past the high-water mark.
    let (mem, before) = redirected(70);
    let beyond = ProblemKind::BeyondHighWater { target: PageId(70) };
    assert!(before.iter().any(|p| p.kind == beyond), "{before:?}");
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    let mut seen = Vec::new();
    for i in 0..6u32 {
        let key = format!("z{i:04}");
        db.update(|tx| {
            tx.bucket_mut(b"a")?
                .expect("a")
                .put(key.as_bytes(), &[7; 40])
        })
        .unwrap_or_else(|e| panic!("commit {i}: {e}"));
        seen.push(db.meta().high_water.0);
    }
    assert!(
        seen.iter().all(|&hw| hw <= 70),
        "no commit allocated page 70: high-water marks {seen:?}"
    );
}

#[test]
fn the_walk_is_once_per_session_and_never_for_a_file_the_open_created() {
    // Pages read by the commits putting `keys` (no page cache: every read reaches storage).
    let reads_of = |db: &Db, keys: std::ops::Range<u32>| {
        let before = db.counters().pages_read;
        for i in keys {
            db.update(|tx| {
                tx.create_bucket_if_missing(b"b")?
                    .put(format!("k{i:05}").as_bytes(), &[3; 100])
            })
            .unwrap();
        }
        db.counters().pages_read - before
    };
    let options = Options {
        page_cache_pages: 0,
        ..Options::default()
    };
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options.clone()).unwrap();
    let created_first = reads_of(&db, 0..1);
    let created_second = reads_of(&db, 1..2);
    reads_of(&db, 2..400);
    drop(db);
    let db = Db::open(mem.clone(), options).unwrap();
    let reopened_first = reads_of(&db, 400..401);
    let reopened_second = reads_of(&db, 401..402);
    // A created file's first commit reads no more than its second: a walk would read its
    // tree and freelist pages on top of the path.
    assert!(
        created_first <= created_second,
        "a created file is not walked: {created_first} pages, then {created_second}"
    );
    assert!(
        reopened_first > reopened_second + 10,
        "the first commit walks the file: {reopened_first} pages, then {reopened_second}"
    );
}
