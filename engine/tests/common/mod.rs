//! Fixtures shared by the engine's test binaries.

use crashlab_engine::{Db, MemStorage, Options};

/// The `i`th key of [`filled`]: `k00000`, `k00001`, …
pub fn key(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

/// A database whose bucket `b` holds `n` keys (`k00000`, `k00002`, … even numbers only) with
/// values of 100 bytes, and a sub-bucket `k00001x`.
pub fn filled(n: u32) -> Db {
    let db = Db::open(MemStorage::new(), Options::default()).unwrap();
    db.update(|tx| {
        let mut b = tx.create_bucket(b"b")?;
        for i in 0..n {
            b.put(&key(2 * i), &[i as u8; 100])?;
        }
        b.create_bucket(b"k00001x")?;
        Ok(())
    })
    .unwrap();
    db
}
