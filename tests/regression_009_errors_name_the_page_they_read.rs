//! Regression 009, found by the structure-aware fuzzing campaign of issue 15.
//!
//! Postmortem: corruption errors did not always name the page whose bytes showed the damage. A
//! branch element pointing outside the file was reported as "corrupted page
//! 4461319140530639695: page reference outside [2, 315)" — the pointer's value shown as if it
//! were a page — because the pager checked the reference and knew only the reference; write-path
//! errors assembled in memory (`tree.rs`, `bucket.rs`) named page 0 as a placeholder; and a
//! bucket header found in a leaf was blamed on its tree's root page. The harness never looked:
//! the corruption tests assert only that damage gives an error, not which page it names, and the
//! reasons were free text (`db.rs` even matched on `reason.contains("invalid magic")`). The fix
//! makes reasons typed (`Corruption`), passes the referencing page down to every read of a
//! reference, records on each node the page it was decoded from, and has the write path name
//! the page it read (or, for a node built in memory, the page its tree hangs from). The bad
//! reference is a field of its own: `ChildOutOfRange { child, .. }`, `ReachedTwice { target }`,
//! `ChildOutsideSeparators { child, .. }`.

use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options, PageId};
use crashlab_format::inspect::{self, Image};

const BAD: u64 = 4461319140530639695;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/corpus/bbolt/{name}.db", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).expect("fixture")
}

fn write_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// `inline.db` with branch page 11 (bucket `grow`, separators "g0" → page 2 and "g17" → page
/// 3) pointing its second child at `child`.
fn inline_with_child(child: u64) -> Vec<u8> {
    let mut b = fixture("inline");
    let pgid = 11 * 4096 + 16 + 16 + 8; // page 11, element 1, pgid
    assert_eq!(b[pgid], 3, "the fixture's second child is page 3");
    write_u64(&mut b, pgid, child);
    b
}

fn assert_bad_reference(e: &Error, high_water: PageId) {
    let want = Corruption::ChildOutOfRange {
        child: PageId(BAD),
        low: PageId(2),
        high: high_water,
    };
    match e {
        Error::Format(FormatError::Corrupted { page, reason }) => {
            assert_eq!(
                *page,
                PageId(11),
                "named the branch the pointer was read from"
            );
            assert_eq!(*reason, want);
        }
        other => panic!("expected Corrupted, got {other}"),
    }
    assert_eq!(
        e.to_string(),
        format!("corrupted page 11: page reference {BAD} outside [2, {high_water})")
    );
}

#[test]
fn a_bad_child_pointer_names_the_branch_and_the_value_apart() {
    let db = Db::open(
        MemStorage::from_bytes(inline_with_child(BAD)),
        Options::default(),
    )
    .unwrap();
    let hwm = db.meta().high_water;
    // A read routed through the bad pointer.
    let err = db
        .view(|tx| {
            tx.bucket(b"grow")?
                .expect("bucket")
                .get(b"g20")
                .map(|v| v.map(|v| v.to_vec()))
        })
        .unwrap_err();
    assert_bad_reference(&err, hwm);
    // A write routed through it, refused in its transaction.
    let err = db
        .update(|tx| tx.bucket_mut(b"grow")?.expect("bucket").put(b"g20", b"x"))
        .unwrap_err();
    assert_bad_reference(&err, hwm);
    // check() reports the problem at the branch, with the value in the message.
    let problems = db.check().unwrap();
    let at_branch: Vec<String> = problems
        .iter()
        .filter(|p| p.page == Some(PageId(11)))
        .map(|p| p.message.clone())
        .collect();
    assert_eq!(
        at_branch,
        vec![format!("page reference {BAD} outside [2, {hwm})")],
        "{problems:?}"
    );
    assert!(
        problems.iter().all(|p| p.page != Some(PageId(BAD))),
        "no problem names the pointer's value as a page: {problems:?}"
    );
    // So does the tolerant walk of `crashlab db`.
    let image = Image::open(MemStorage::from_bytes(inline_with_child(BAD))).unwrap();
    let (_, walked) = inspect::dump(&image).unwrap();
    let messages: Vec<String> = walked.iter().map(ToString::to_string).collect();
    let want = format!("page 11: page reference {BAD} outside [2, {hwm})");
    assert_eq!(messages, vec![want], "{walked:?}");
}

#[test]
fn a_page_reached_twice_names_the_second_reference() {
    // nofreelist.db: branch page 12 of bucket `more` points at leaves 4..=11. Point its second
    // element at its first child: open rebuilds the free set and meets page 4 twice.
    let mut b = fixture("nofreelist");
    let pgid = |i: usize| 12 * 4096 + 16 + 16 * i + 8;
    let first = u64::from_le_bytes(b[pgid(0)..pgid(0) + 8].try_into().unwrap());
    write_u64(&mut b, pgid(1), first);
    let err = match Db::open(MemStorage::from_bytes(b), Options::default()) {
        Err(e) => e,
        Ok(_) => panic!("a page reached twice fails the rebuild"),
    };
    match err {
        Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ReachedTwice { target },
        }) => {
            assert_eq!(page, PageId(12), "the branch holding the second reference");
            assert_eq!(target, PageId(first));
        }
        other => panic!("expected ReachedTwice, got {other}"),
    }
}

#[test]
fn a_write_refused_on_damage_names_a_real_page() {
    // Swap the two children of page 11: "g0" → page 3 (keys from "g17") and "g17" → page 2.
    let mut b = inline_with_child(2);
    write_u64(&mut b, 11 * 4096 + 16 + 8, 3);
    let db = Db::open(MemStorage::from_bytes(b), Options::default()).unwrap();
    let err = db
        .update(|tx| tx.bucket_mut(b"grow")?.expect("bucket").put(b"g30", b"x"))
        .unwrap_err();
    match err {
        Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ChildOutsideSeparators { child, .. },
        }) => {
            assert_eq!(page, PageId(11), "the branch whose separator disagrees");
            assert_eq!(child, PageId(2), "the child it disagrees with");
        }
        other => panic!("expected ChildOutsideSeparators, got {other}"),
    }
    assert!(db.latched().is_none(), "refused before commit");
}
