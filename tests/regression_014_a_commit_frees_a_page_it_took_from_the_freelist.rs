//! Regression 014, found by the fuzzer `crashlab-fuzz` (issue 15; `corpus/fuzz/019`-`021`).
//!
//! Postmortem: FORMAT.md §10 leaves a freelist page that lists a live page to `check()`: a
//! commit that never reads the page cannot know. But two cases were visible and went unseen.
//! (1) A freelist page listing itself: `check()` did not report it, and a commit allocated the
//! page for a node, then freed the old freelist span — the same page — so it was pending while
//! the new tree used it, and a later commit would have overwritten live data. The same happens
//! to any page a commit takes from the free set and then frees as the old copy of a node it
//! rewrites. (2) A listed live page that does not decode: `check()` reported the damage but not
//! that the page was free, so nothing said a commit might overwrite it. The engine's guard
//! (`engine/src/guard.rs`) depends on `check()` naming exactly this damage. The fixes: `check()` reports a
//! freelist page listing itself, and a free page the tree references whether or not it reads
//! (every page of a damaged node's claimed run included), as `ProblemKind::ReachableFree`; a commit that frees a page it took from the free set is
//! refused with `LiveListedFree`. (The claimed run counts only when the claim is not itself the
//! damage, and since regression 015 a listed live page never reaches the allocator.)

use crashlab_engine::{Db, MemStorage, Options, PageId, ProblemKind};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/bbolt/{name}.db"));
    std::fs::read(path).expect("the fixture")
}

/// `bytes` with the freelist page at `page` (of `page_size` bytes) listing exactly `ids`.
fn listing(mut bytes: Vec<u8>, page_size: usize, page: usize, ids: &[u64]) -> Vec<u8> {
    let at = page * page_size;
    bytes[at + 10..at + 12].copy_from_slice(&(ids.len() as u16).to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        bytes[at + 16 + 8 * i..at + 24 + 8 * i].copy_from_slice(&id.to_le_bytes());
    }
    bytes
}

fn reachable_free(db: &Db, page: u64) -> bool {
    let problems = db.check().unwrap();
    problems
        .iter()
        .any(|p| p.page == Some(PageId(page)) && p.kind == ProblemKind::ReachableFree)
}

#[test]
fn a_freelist_page_that_lists_itself_is_named_and_never_reused_under_a_node() {
    // inline.db's freelist is page 13: make it list only itself.
    let mem = MemStorage::from_bytes(listing(fixture("inline"), 4096, 13, &[13]));
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    assert!(reachable_free(&db, 13), "check names it");
    // The put's new leaf would take page 13, the only free page, and freeing the old freelist
    // would free it again (refused with `LiveListedFree`, which stays as a second line). The
    // session's first commit takes it out of the free set instead (regression 015), so the
    // leaf goes to the high-water mark and the freelist page is freed once.
    db.update(|tx| tx.bucket_mut(b"small")?.expect("small").put(b"d", b"4"))
        .unwrap();
    drop(db);
    let db = Db::open(mem, Options::default()).unwrap();
    assert_eq!(db.meta().txid.0, 4, "the commit landed");
    assert!(!reachable_free(&db, 13), "{:?}", db.check().unwrap());
    let got = db.view(|tx| {
        tx.bucket(b"small")?
            .expect("small")
            .get(b"d")
            .map(|v| v.map(|v| v.to_vec()))
    });
    assert_eq!(got.unwrap().as_deref(), Some(&b"4"[..]));
}

#[test]
fn a_listed_live_page_is_named_free_even_when_it_does_not_decode() {
    // corpus/fuzz/020: pagesize1k.db's page 14, a live leaf, zeroed and listed free.
    let mut b = fixture("pagesize1k");
    b[14 * 1024..15 * 1024].fill(0);
    let b = listing(b, 1024, 63, &[14]);
    let db = Db::open(MemStorage::from_bytes(b), Options::default()).unwrap();
    let problems = db.check().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.page == Some(PageId(14)) && p.kind == ProblemKind::Other),
        "the damage: {problems:?}"
    );
    assert!(reachable_free(&db, 14), "and that it is free: {problems:?}");
}

#[test]
fn a_damaged_node_whose_claim_is_the_damage_holds_its_first_page_only() {
    // inline.db's page 8, a one-page leaf, claims page 9 (free) as its overflow: it no longer
    // reads, and the reason is the claim itself (its contents need one page). Whatever page 9
    // holds, page 8 reads the same, so page 9 is free and not named; trusting the claim would
    // report pages a node does not use. (A node damaged otherwise holds the run its header
    // claims, and the free pages in it are named: corpus/fuzz/021.)
    let mut b = fixture("inline");
    b[8 * 4096 + 12..8 * 4096 + 16].copy_from_slice(&1u32.to_le_bytes());
    let db = Db::open(MemStorage::from_bytes(b), Options::default()).unwrap();
    let problems = db.check().unwrap();
    assert!(
        problems.iter().any(|p| p.page == Some(PageId(8))),
        "{problems:?}"
    );
    assert!(!reachable_free(&db, 9), "{problems:?}");
    assert!(!reachable_free(&db, 8), "page 8 itself is not free");
}
