//! Commit rebalances a bucket's tree only when a delete went down it in the transaction
//! (`BucketTree::removed`): no other edit marks a node underfull. These tests hold the other
//! side of that rule: wherever the deletes are — the bucket the commit also inserts into, a
//! bucket beside one that only inserts, a bucket nested under one that only gets its header
//! rewritten — the emptied leaves are merged away, and the file checks clean. That nothing but a
//! removal marks a node is `leaf_edit.rs`'s unit test and a debug assertion in commit.

use crate::common::key;
use crashlab_engine::{Db, MemStorage, Options};

const KEYS: u32 = 400;

/// Buckets `a` and `b` of [`KEYS`] keys each, and `p` holding a bucket `c` of as many: every
/// tree a few levels deep on 512-byte pages.
fn filled() -> Db {
    let small_pages = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open(MemStorage::new(), small_pages).unwrap();
    db.update(|tx| {
        for name in [&b"a"[..], b"b"] {
            let mut b = tx.create_bucket(name)?;
            (0..KEYS).try_for_each(|i| b.put(&key(i), &[7; 20]))?;
        }
        let mut p = tx.create_bucket(b"p")?;
        let mut c = p.create_bucket(b"c")?;
        (0..KEYS).try_for_each(|i| c.put(&key(i), &[7; 20]))
    })
    .unwrap();
    db
}

/// Keys of `path`'s bucket, in order.
fn keys_of(db: &Db, path: &[&[u8]]) -> Vec<Vec<u8>> {
    db.view(|tx| {
        let mut b = tx.bucket(path[0])?.unwrap();
        for name in &path[1..] {
            b = b.bucket(name)?.unwrap();
        }
        b.iter().map(|e| e.map(|e| e.key().to_vec())).collect()
    })
    .unwrap()
}

/// All keys but every 40th deleted from `path`'s bucket, in one commit that also
/// puts one new key into bucket `b` (`put_into_b`); returns the merges that commit made.
fn delete_most(db: &Db, path: &[&[u8]], put_into_b: bool) -> u64 {
    let before = db.counters();
    db.update(|tx| {
        if put_into_b {
            tx.bucket_mut(b"b")?.unwrap().put(b"zzz", b"new")?;
        }
        let mut doomed = (0..KEYS).filter(|i| i % 40 != 0);
        let mut b = tx.bucket_mut(path[0])?.unwrap();
        match path {
            [_, child] => {
                let mut c = b.bucket_mut(child)?.unwrap();
                doomed.try_for_each(|i| c.delete(&key(i)).map(drop))
            }
            _ => doomed.try_for_each(|i| b.delete(&key(i)).map(drop)),
        }
    })
    .unwrap();
    db.counters().since(&before).node_merges
}

fn survivors() -> Vec<Vec<u8>> {
    (0..KEYS).filter(|i| i % 40 == 0).map(key).collect()
}

#[test]
fn deletes_beside_a_bucket_that_only_inserts_are_merged() {
    let db = filled();
    let merges = delete_most(&db, &[b"a"], true);
    assert!(merges > 0, "the emptied leaves of `a` were not merged");
    assert_eq!(keys_of(&db, &[b"a"]), survivors());
    assert_eq!(keys_of(&db, &[b"b"]).len(), KEYS as usize + 1);
    assert!(db.check().unwrap().is_empty());
}

#[test]
fn deletes_under_a_parent_that_only_gets_a_header_are_merged() {
    let db = filled();
    let merges = delete_most(&db, &[b"p", b"c"], false);
    assert!(merges > 0, "the emptied leaves of `p/c` were not merged");
    assert_eq!(keys_of(&db, &[b"p", b"c"]), survivors());
    assert!(db.check().unwrap().is_empty());
}

#[test]
fn deletes_in_the_bucket_a_commit_also_inserts_into_are_merged() {
    let db = filled();
    let merges = delete_most(&db, &[b"b"], true);
    assert!(merges > 0, "the emptied leaves of `b` were not merged");
    let mut want = survivors();
    want.push(b"zzz".to_vec());
    assert_eq!(keys_of(&db, &[b"b"]), want);
    assert!(db.check().unwrap().is_empty());
}
