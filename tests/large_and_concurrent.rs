//! A 100,000-key database with values from 0 B to 64 KiB survives reopen byte for byte; readers
//! on other threads see stable snapshots while a writer commits.

use crashlab_engine::{Db, Options};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const KEYS: u32 = 100_000;

fn key(i: u32) -> [u8; 8] {
    // Spread keys so inserts land all over the tree, not only at its right edge.
    (i.wrapping_mul(2_654_435_761) as u64 | (u64::from(i) << 32)).to_be_bytes()
}

fn value(i: u32) -> Vec<u8> {
    // Mostly small values; every 97th key gets up to 64 KiB, spanning overflow pages.
    let len = if i.is_multiple_of(97) {
        (i as usize * 131) % (64 * 1024 + 1)
    } else {
        i as usize % 700
    };
    (0..len).map(|j| (i as usize + j * 31) as u8).collect()
}

#[test]
fn hundred_thousand_keys_survive_reopen_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.db");
    let opts = Options {
        no_sync: true,
        ..Options::default()
    };
    {
        let db = Db::open_path(&path, opts.clone()).unwrap();
        for chunk in (0..KEYS).collect::<Vec<_>>().chunks(10_000) {
            db.update(|tx| {
                let mut b = tx.create_bucket_if_missing(b"data")?;
                for &i in chunk {
                    b.put(&key(i), &value(i))?;
                }
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(db.check().unwrap(), vec![]);
    }
    let db = Db::open_path(&path, opts).unwrap();
    assert_eq!(db.check().unwrap(), vec![]);
    db.view(|tx| {
        let b = tx.bucket(b"data")?.expect("bucket");
        for i in 0..KEYS {
            assert_eq!(b.get(&key(i))?.as_deref(), Some(&value(i)[..]), "key {i}");
        }
        let (mut n, mut c) = (0u32, b.cursor());
        let mut it = c.first()?;
        let mut prev: Option<Vec<u8>> = None;
        while let Some(e) = it {
            let k = e.key().to_vec();
            assert!(prev.as_deref() < Some(k.as_slice()), "cursor order");
            prev = Some(k);
            n += 1;
            it = c.next()?;
        }
        assert_eq!(n, KEYS);
        Ok(())
    })
    .unwrap();
}

#[test]
fn db_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Db>();
}

/// The writer moves units between two keys so their sum stays 1000 in every committed state; a
/// reader that ever sees another sum saw a torn snapshot.
#[test]
fn readers_see_stable_snapshots_while_a_writer_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(
        Db::open_path(
            dir.path().join("c.db"),
            Options {
                no_sync: true,
                ..Options::default()
            },
        )
        .unwrap(),
    );
    db.update(|tx| {
        let mut b = tx.create_bucket(b"acct")?;
        b.put(b"x", &1000u64.to_le_bytes())?;
        b.put(b"y", &0u64.to_le_bytes())?;
        Ok(())
    })
    .unwrap();
    let read = |b: &crashlab_engine::Bucket<'_>, k: &[u8]| -> u64 {
        u64::from_le_bytes(b.get(k).unwrap().unwrap()[..].try_into().unwrap())
    };
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let tx = db.begin_read().unwrap();
                    let b = tx.bucket(b"acct").unwrap().unwrap();
                    let x1 = read(&b, b"x");
                    std::thread::yield_now();
                    let y = read(&b, b"y");
                    let x2 = read(&b, b"x");
                    assert_eq!(x1, x2, "a snapshot changed under its reader");
                    assert_eq!(x1 + y, 1000, "torn snapshot");
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for i in 0..300u64 {
        db.update(|tx| {
            let mut b = tx.bucket_mut(b"acct")?.unwrap();
            let x = 1000 - (i % 1000) - 1;
            b.put(b"x", &x.to_le_bytes())?;
            // Churn so pages are freed and reused while readers hold old snapshots.
            b.put(format!("pad{}", i % 50).as_bytes(), &vec![i as u8; 600])?;
            b.put(b"y", &(1000 - x).to_le_bytes())?;
            Ok(())
        })
        .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(db.check().unwrap(), vec![]);
}
