//! Regression 007, found by the structure-aware fuzzing campaign of issue 15.
//!
//! Postmortem: a checksum-valid meta may carry any txid, and `TxId::next` used `wrapping_add`.
//! From txid 2^64 − 2 the next commit took 2^64 − 1 (slot 1) and the one after wrapped to 0
//! (slot 0): it overwrote the meta it was built on, and its new meta had the *lowest* txid, so
//! the next open chose the stale meta of 2^64 − 1, whose pages that commit had just reused. The
//! acknowledged commit was lost, or the file no longer opened. Meanwhile `check()` and `crashlab
//! db check` passed the file. The harness never produced such a meta: the simulator starts every
//! file fresh and runs hundreds of commits, not 2^64, and the byte-flip tests rarely leave a meta
//! checksum valid; the fuzzer recomputes the checksum after editing a meta field. The fix: txids
//! never wrap (`TxId::next` is `None` past `limits::MAX_TXID`), a write transaction on a meta
//! with no txid left is refused with `Error::TxIdExhausted` before anything is written, and
//! `check()` reports such a meta.

use crashlab_engine::{Db, Error, MemStorage, Options, PageId, TxId};
use crashlab_format::inspect::Image;
use crashlab_format::meta::fnv1a64;

const PS: usize = 4096;

/// A file with bucket `b` holding `k → 1`, whose meta in use is rewritten into slot 0 with
/// `txid`, checksum recomputed; slot 1 keeps an older meta.
fn file_with_txid(txid: u64, options: &Options) -> Vec<u8> {
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options.clone()).unwrap();
    db.update(|tx| tx.create_bucket(b"b")?.put(b"k", b"1"))
        .unwrap();
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"k2", b"2"))
        .unwrap();
    let in_use = db.meta().slot().0 as usize;
    drop(db);
    let mut bytes = mem.snapshot();
    let newest = bytes[in_use * PS..(in_use + 1) * PS].to_vec();
    bytes[..PS].copy_from_slice(&newest);
    bytes[..8].copy_from_slice(&0u64.to_le_bytes()); // header id: slot 0
    bytes[16 + 48..16 + 56].copy_from_slice(&txid.to_le_bytes());
    let sum = fnv1a64(&bytes[16..16 + 56]);
    bytes[16 + 56..16 + 64].copy_from_slice(&sum.to_le_bytes());
    bytes
}

fn value(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    db.view(|tx| {
        tx.bucket(b"b")?
            .expect("bucket")
            .get(key)
            .map(|v| v.map(|v| v.to_vec()))
    })
    .unwrap()
}

fn exhausted_problem() -> String {
    format!(
        "page 1: txid {} leaves no room for another commit",
        u64::MAX
    )
}

#[test]
fn the_last_txid_commits_once_and_then_refuses_without_losing_it() {
    let bytes = file_with_txid(u64::MAX - 1, &Options::default());
    let mem = MemStorage::from_bytes(bytes);
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    assert_eq!(db.meta().txid, TxId(u64::MAX - 1));
    assert!(
        db.check().unwrap().is_empty(),
        "one commit is still possible"
    );
    db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"last", b"x"))
        .unwrap();
    assert_eq!(db.meta().txid, TxId(u64::MAX));
    assert_eq!(
        db.meta().slot(),
        PageId(1),
        "the other slot: the base meta is kept"
    );
    let problems: Vec<String> = db.check().unwrap().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, vec![exhausted_problem()]);

    // The next write is refused before anything is written, and latches nothing.
    let before = mem.snapshot();
    let err = db
        .update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"wrapped", b"y"))
        .unwrap_err();
    assert!(
        matches!(err, Error::TxIdExhausted { txid } if txid == TxId(u64::MAX)),
        "{err}"
    );
    assert_eq!(mem.snapshot(), before, "nothing written");
    assert!(db.latched().is_none());
    drop(db);

    // A reopen finds the acknowledged commit, not a stale meta.
    let db = Db::open(MemStorage::from_bytes(before.clone()), Options::default()).unwrap();
    assert_eq!(db.meta().txid, TxId(u64::MAX));
    assert_eq!(value(&db, b"last").as_deref(), Some(&b"x"[..]));
    assert_eq!(value(&db, b"wrapped"), None);
    drop(db);

    // `crashlab db check` (the inspect path, a read-only open) reports it too.
    let image = Image::open(MemStorage::from_bytes(before)).unwrap();
    let problems: Vec<String> = crashlab_engine::Db::check_image(&image)
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(problems, vec![exhausted_problem()]);
}

#[test]
fn a_file_without_freelist_at_the_last_txid_opens_for_reading() {
    // Open persists a missing freelist with a commit; with no txid left it must not try.
    let options = Options {
        no_freelist_sync: true,
        ..Options::default()
    };
    let mut bytes = file_with_txid(u64::MAX, &options);
    // Move the crafted meta to slot 1, where txid 2^64 − 1 belongs, and let slot 0 keep the
    // older one.
    let crafted = bytes[..PS].to_vec();
    let older = bytes[PS..2 * PS].to_vec();
    bytes[PS..2 * PS].copy_from_slice(&crafted);
    bytes[PS..PS + 8].copy_from_slice(&1u64.to_le_bytes());
    bytes[..PS].copy_from_slice(&older);
    bytes[..8].copy_from_slice(&0u64.to_le_bytes());
    let mem = MemStorage::from_bytes(bytes);
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    assert_eq!(db.meta().txid, TxId(u64::MAX));
    assert!(!db.meta().has_freelist());
    assert_eq!(value(&db, b"k2").as_deref(), Some(&b"2"[..]));
    let problems: Vec<String> = db.check().unwrap().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, vec![exhausted_problem()]);
    let before = mem.snapshot();
    assert!(matches!(
        db.update(|tx| tx.bucket_mut(b"b")?.unwrap().put(b"k3", b"3")),
        Err(Error::TxIdExhausted { .. })
    ));
    assert_eq!(mem.snapshot(), before, "nothing written");
}
