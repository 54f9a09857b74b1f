//! Neither a `Bucket::get` nor a step of an iteration allocates: reads borrow the stored bytes.
//! Nor does beginning and ending a read transaction of a snapshot another reader already used,
//! nor a delete from a leaf the write transaction already holds.
//!
//! The counting allocator is process-wide, so this test is alone in its binary: another test
//! running on another thread would have its allocations counted here (it did, while it shared
//! `iter.rs` with the proptests).

mod common;

use common::{filled, key};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn gets_and_iteration_steps_allocate_nothing() {
    let db = filled(2000);
    db.view(|tx| {
        let b = tx.bucket(b"b")?.unwrap();
        // Warm the page cache so no page is decoded below, and the cached nodes' key indexes,
        // which a node's first search builds.
        assert_eq!(b.iter().count(), 2001);
        let wanted: Vec<Vec<u8>> = (0..500).map(|i| key(2 * i)).collect();
        for k in &wanted {
            assert!(b.get(k)?.is_some());
        }
        let region = Region::new(GLOBAL);
        for k in &wanted {
            assert!(b.get(k)?.is_some());
        }
        assert_eq!(region.change().allocations, 0, "gets copy nothing");
        let count = |n: usize| {
            let region = Region::new(GLOBAL);
            assert_eq!(b.iter().take(n).count(), n);
            region.change().allocations
        };
        // A cursor's path is allocated once; its steps allocate nothing.
        assert_eq!(count(10), count(2000));
        Ok(())
    })
    .unwrap();
    // (In the same test: the counting allocator would see another test's allocations.) The
    // view above registered this snapshot; ending the last reader of it keeps its entry.
    let region = Region::new(GLOBAL);
    for _ in 0..10 {
        drop(db.begin_read().unwrap());
    }
    assert_eq!(
        region.change().allocations,
        0,
        "begin and end allocate nothing"
    );
    // A delete checks the stored item's kind where it lies. Once the first delete has taken
    // the leaf's path out of the cache, deleting its neighbours allocates nothing: no copy of
    // an item's key and value (each delete once cloned the item it was about to remove).
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"b")?.unwrap();
        assert!(b.delete(&key(0))?);
        // Keys of the first leaf only: a leaf not yet taken would be moved into a new box.
        let stored: Vec<Vec<u8>> = (1..8).map(|i| key(2 * i)).collect();
        let absent = key(1);
        let region = Region::new(GLOBAL);
        for k in &stored {
            assert!(b.delete(k)?, "{k:?} was stored");
        }
        assert!(!b.delete(&absent)?, "an absent key is no delete");
        assert_eq!(region.change().allocations, 0, "deletes copy nothing");
        Ok(())
    })
    .unwrap();
}
