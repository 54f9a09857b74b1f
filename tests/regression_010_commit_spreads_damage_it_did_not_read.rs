//! Regression 010, found by the byte-flip property test (`tests/corruption.rs`) once it held
//! every committed write to the guarantee of issue 15 (a reopen's `check()` finds no more
//! problems, the write is there, and every key that read before reads the same).
//!
//! Postmortem: regression 006 stopped commits from writing what they read out of order, but a
//! commit could still spread damage in pages it never read. (1) A branch child flipped to point
//! at the root bucket's leaf: the write rewrote that leaf through the root bucket and freed it,
//! while the damaged branch it also rewrote kept pointing there, so the next commits reused a
//! page the tree still referenced. (2) A separator flipped below its left neighbour's last key
//! hid that key; deleting the right child's first key raised the separator (bbolt makes it the
//! child's new first key) and the hidden key came back — after the transaction had deleted it.
//! Removing an emptied child widens its neighbour's range the same way. (3) `check()` stopped
//! collecting a leaf's sub-buckets at the first damaged bucket value, so a bucket a commit
//! rewrote next to the damage looked unreachable. The harness had only asked for "no panic"
//! after a write on a damaged file. The fixes: commit refuses to write a node that references a
//! page free or freed by this commit (`ReferenceToFreePage`); spill keeps a separator that was
//! read when raising it would widen an unread neighbour's range, and removing an empty child
//! first checks the neighbour's facing edge against the range it had; `check()` walks every
//! sub-bucket of a leaf past a damaged one.

use crate::common;

use common::{sample_file, write_after_damage};
use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options, PageId};

fn opts() -> Options {
    Options {
        page_size: 512,
        ..Options::default()
    }
}

fn read_only() -> Options {
    Options {
        read_only: true,
        ..opts()
    }
}

/// `sample_file(3)` with byte `at` xored with `x`.
fn flipped(at: usize, x: u8) -> Vec<u8> {
    let mut b = sample_file(3);
    b[at] ^= x;
    b
}

fn get(db: &Db, key: &[u8]) -> crashlab_engine::Result<Option<Vec<u8>>> {
    db.view(|tx| {
        tx.bucket(b"a")?
            .expect("bucket a")
            .get(key)
            .map(|v| v.map(|v| v.to_vec()))
    })
}

/// Run `write` on `bytes`; if it commits, reopen and return the reopened database with the
/// problem counts before and after.
fn commit_and_reopen(
    bytes: Vec<u8>,
    write: impl FnOnce(&Db) -> crashlab_engine::Result<()>,
) -> Result<(Db, usize, usize), Error> {
    let mem = MemStorage::from_bytes(bytes);
    let db = Db::open(mem.clone(), opts()).unwrap();
    let before = db.check().unwrap().len();
    write(&db)?;
    drop(db);
    let db = Db::open(MemStorage::from_bytes(mem.snapshot()), read_only()).unwrap();
    let after = db.check().unwrap().len();
    Ok((db, before, after))
}

#[test]
fn a_page_reached_by_two_paths_is_not_freed_under_the_other() {
    // Branch page 27 of bucket `a`, element 15: its child 24 becomes 2, the root bucket's leaf.
    let bytes = flipped(27 * 512 + 16 + 15 * 16 + 8, 26);
    // The session's first commit finds page 2 reached twice and refuses to free it (regression
    // 015), before the spill's own refusal (`ReferenceToFreePage`, page 27 referencing 2)
    // would have been reached.
    match commit_and_reopen(bytes, write_after_damage) {
        Err(Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ReachedTwice { target },
        })) => {
            assert_eq!(target, PageId(2), "the shared page");
            assert_eq!(page, PageId(2));
        }
        Err(e) => panic!("expected ReachedTwice, got {e}"),
        Ok((_, before, after)) => panic!("committed: {before} problems, then {after}"),
    }
}

#[test]
fn raising_a_separator_does_not_bring_back_a_hidden_key() {
    // Page 27's separator "key001" (for leaf 10) becomes "k\x05y001": it sorts before "key000",
    // the last key of leaf 4 on its left, which no read finds any more.
    let bytes = flipped(27 * 512 + 308, 32);
    let db = Db::open(MemStorage::from_bytes(bytes.clone()), read_only()).unwrap();
    assert_eq!(get(&db, b"key000").unwrap(), None, "hidden by the damage");
    drop(db);
    // The write deletes "key000" (absent, as far as it can see) and "key003" from leaf 10.
    let (db, before, after) = commit_and_reopen(bytes, write_after_damage).unwrap();
    assert!(after <= before, "{before} problems, then {after}");
    assert_eq!(
        get(&db, b"key000").unwrap(),
        None,
        "a deleted key stays deleted"
    );
    assert_eq!(get(&db, b"new3").unwrap(), Some(vec![1; 100]));
}

#[test]
fn removing_an_emptied_child_does_not_bring_back_a_hidden_key() {
    // Page 27's separator for leaf 11 (keys key006..=key008) from "key006" to "key004": leaf
    // 10's "key004" and "key005" lie above it and no read finds them.
    let mut bytes = sample_file(3);
    let elem = 27 * 512 + 16 + 2 * 16;
    let pos = u32::from_le_bytes(bytes[elem..elem + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[elem + pos..elem + pos + 6], b"key006");
    bytes[elem + pos + 5] = b'4';
    let db = Db::open(MemStorage::from_bytes(bytes.clone()), read_only()).unwrap();
    assert_eq!(get(&db, b"key004").unwrap(), None, "hidden by the damage");
    drop(db);
    // Empty leaf 11: the commit removes it and leaf 10's range would grow over "key004".
    let empty_leaf_11 = |db: &Db| {
        db.update(|tx| {
            let mut a = tx.bucket_mut(b"a")?.expect("bucket a");
            for k in [b"key006", b"key007", b"key008"] {
                assert!(a.delete(k)?, "{k:?} is in leaf 11");
            }
            Ok(())
        })
    };
    match commit_and_reopen(bytes, empty_leaf_11) {
        Err(Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ChildOutsideSeparators { child, .. },
        })) => {
            assert_eq!(page, PageId(27));
            assert_eq!(child, PageId(10), "the neighbour whose range would grow");
        }
        Err(e) => panic!("expected ChildOutsideSeparators, got {e}"),
        Ok((db, _, _)) => {
            let back = get(&db, b"key004").unwrap();
            panic!("committed; key004 reads {back:?}");
        }
    }
}

#[test]
fn check_walks_every_sub_bucket_past_a_damaged_one() {
    // Root leaf page 2, element 0 (bucket `a`): its pos moves, so its key and bucket value no
    // longer decode. The write creates a new `a` beside it; check must still reach that one.
    let bytes = flipped(2 * 512 + 20, 96);
    let (db, before, after) = commit_and_reopen(bytes, write_after_damage).unwrap();
    assert!(after <= before, "{before} problems, then {after}");
    assert_eq!(get(&db, b"new0").unwrap(), Some(vec![1; 100]));
}
