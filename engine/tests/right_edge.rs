//! A leaf at the right edge of its tree that only appends grew splits full (`spill.rs`,
//! `RIGHT_EDGE_FILL`): ascending keys fill their pages to nine tenths instead of half, and any
//! other order of the same keys splits at `fill_percent` as before.

use crashlab_engine::{Db, MemStorage, Options};
use crashlab_format::inspect::{stats, Image};

const KEYS: u32 = 20_000;
/// Keys a commit, as the benchmarks' Set100.
const BATCH: u32 = 100;

/// Leaf pages once keys `order(0)`, `order(1)`, … (16 bytes, values of 100) are put, `BATCH` a
/// commit.
fn leaf_pages(order: impl Fn(u32) -> u32) -> u64 {
    let storage = MemStorage::new();
    let db = Db::open(storage.clone(), Options::default()).unwrap();
    db.update(|tx| tx.create_bucket(b"b").map(drop)).unwrap();
    for first in (0..KEYS).step_by(BATCH as usize) {
        db.update(|tx| {
            let mut b = tx.bucket_mut(b"b")?.unwrap();
            (first..first + BATCH)
                .try_for_each(|i| b.put(&u128::from(order(i)).to_be_bytes(), &[7; 100]))
        })
        .unwrap();
    }
    assert!(db.check().unwrap().is_empty());
    db.view(|tx| {
        assert_eq!(tx.bucket(b"b")?.unwrap().iter().count(), KEYS as usize);
        Ok(())
    })
    .unwrap();
    drop(db);
    let image = Image::open(MemStorage::from_bytes(storage.snapshot())).unwrap();
    stats(&image).unwrap().leaf.pages
}

/// An item takes 132 bytes (16 of element header, 16 of key, 100 of value) of a 4,096-byte page
/// with a 16-byte header: 27 fit in nine tenths of it (741 leaves for 20,000 keys), 15 in half
/// of it (1,334 leaves, a little fewer where a split's last piece keeps more than half a page).
#[test]
fn ascending_keys_fill_their_leaves_and_other_orders_keep_fill_percent() {
    let ascending = leaf_pages(|i| i);
    assert!(ascending < 800, "ascending: {ascending} leaves");
    // Each block of 16 keys in the order 0, 7, 14, 5, …: no commit only appends.
    let shuffled = leaf_pages(|i| (i & !15) + (i & 15) * 7 % 16);
    assert!(
        shuffled > 1_300,
        "shuffled within blocks: {shuffled} leaves"
    );
    // The left edge grows, never the right.
    let descending = leaf_pages(|i| KEYS - i);
    assert!(descending > 1_100, "descending: {descending} leaves");
}
