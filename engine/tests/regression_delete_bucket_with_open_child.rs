//! Regression: deleting a bucket whose sub-bucket was opened earlier in the same transaction
//! freed the sub-bucket's pages twice.
//!
//! What broke: `delete_bucket` frees the deleted bucket's stored pages by walking them, and that
//! walk also freed every sub-bucket it found in the leaves; then it freed the sub-buckets the
//! transaction had opened from their in-memory trees, so an opened sub-bucket that was still
//! all pages (opened, nothing changed) was freed twice and the commit failed with "freed twice
//! … the tree references it more than once". How it was caught: `tests/engine_model.rs`
//! (proptest against `KvModel`) shrank it to the operations below, at 512-byte pages, on two
//! branches at once; main's fix (skip opened sub-buckets in the stored walk) is the one kept, and
//! this test pins the case at the engine's own level.

use crashlab_engine::{Db, MemStorage, Options};

#[test]
fn deleting_a_bucket_after_opening_its_sub_bucket_commits() {
    let options = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open(MemStorage::new(), options).unwrap();
    db.update(|tx| {
        tx.create_bucket(b"b")?
            .create_bucket(b"k1")?
            .create_bucket(b"a")?;
        tx.create_bucket(b"a").map(drop)
    })
    .unwrap();
    db.update(|tx| {
        let deleted = tx
            .bucket_path_mut(&[b"b", b"k1"])?
            .expect("exists")
            .delete(b"k0")?;
        assert!(!deleted, "k0 was never written");
        tx.delete_bucket(b"b")
    })
    .unwrap();
    assert!(db.check().unwrap().is_empty());
    db.view(|tx| {
        assert!(tx.bucket(b"b")?.is_none());
        assert!(tx.bucket(b"a")?.is_some());
        Ok(())
    })
    .unwrap();
}
