//! The commit's last check before it writes anything (`commit::check_references`): no node it
//! writes references a page that is free or pending. The first commit of a session has already
//! walked the file (`guard.rs`), so on a healthy file only an engine bug can trip it; its
//! negative control is one, `DebugHooks::free_referenced_child`: the commit frees a page that a
//! branch it writes still points at, as a rebalance freeing the wrong child would. The commit
//! must be refused, typed and naming both pages, with the file as the last commit left it. The
//! clean twin commits the same write. Without the check, the control's commit returns Ok and
//! hands a live page to the next allocation.

use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options, PageId};

fn options(control: bool) -> Options {
    let mut options = Options {
        page_size: 512,
        ..Options::default()
    };
    options.debug.free_referenced_child = control;
    options
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// A file whose bucket `b` is a tree of a few levels (200 keys on 512-byte pages).
fn file_with_branches() -> Vec<u8> {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options(false)).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in 0..200 {
            b.put(&key(i), &[i as u8; 40])?;
        }
        Ok(())
    })
    .unwrap();
    drop(db);
    mem.snapshot()
}

fn put_one(db: &Db) -> crashlab_engine::Result<()> {
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"new", b"value"))
}

/// Whether page `branch` of `file` is a branch page listing `child` among its children.
fn branch_lists(file: &[u8], branch: PageId, child: PageId) -> bool {
    let page = &file[branch.0 as usize * 512..][..512];
    let is_branch = u16::from_le_bytes([page[8], page[9]]) == 0x01;
    let count = u16::from_le_bytes([page[10], page[11]]) as usize;
    // A branch element: pos (4), key size (4), child page id (8), from byte 16.
    is_branch
        && (0..count).any(|i| {
            let at = 16 + i * 16 + 8;
            u64::from_le_bytes(page[at..at + 8].try_into().unwrap()) == child.0
        })
}

#[test]
fn a_commit_that_frees_a_page_a_written_branch_references_is_refused_before_it_writes() {
    let before = file_with_branches();
    let mem = MemStorage::from_bytes(before.clone());
    let db = Db::open(mem.clone(), options(true)).unwrap();
    match put_one(&db) {
        Err(Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ReferenceToFreePage { child },
        })) => {
            // The branch named is the one read from the file, and it does list the child.
            assert!(branch_lists(&before, page, child), "{page} -> {child}");
        }
        other => panic!("expected ReferenceToFreePage, got {other:?}"),
    }
    drop(db);
    assert!(
        mem.snapshot() == before,
        "the refused commit wrote to the file"
    );
    let db = Db::open(MemStorage::from_bytes(mem.snapshot()), options(false)).unwrap();
    assert_eq!(db.check().unwrap(), Vec::new());
}

#[test]
fn the_clean_twin_commits_the_same_write() {
    let db = Db::open(MemStorage::from_bytes(file_with_branches()), options(false)).unwrap();
    put_one(&db).unwrap();
    assert_eq!(db.check().unwrap(), Vec::new());
    let got = db.view(|tx| Ok(tx.bucket(b"b")?.unwrap().get(b"new")?.map(|v| v.to_vec())));
    assert_eq!(got.unwrap(), Some(b"value".to_vec()));
}
