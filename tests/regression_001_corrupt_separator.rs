//! Regression 001, found by the byte-flip property test (`tests/corruption.rs`).
//!
//! Postmortem: one flipped bit in a key of a branch page (page 19, byte 64 of a 512-byte-page
//! file) leaves every page individually valid — keys sorted within each page — but makes a
//! separator disagree with the child below it. A write transaction then descended by the bad
//! separator, and at commit rebuilt the parent from the children's first keys, which were no
//! longer ascending: `Node::encode` hit its key-order assertion and the process panicked on
//! bytes read from disk. The fix checks key order when commit assembles each node and reports
//! `Corrupted` instead; the assertion stays for nodes the engine builds itself.

mod common;

use common::{sample_file, write_after_damage};
use crashlab_engine::{Db, Error, MemStorage, Options};

#[test]
fn flipped_separator_key_gives_an_error_not_a_panic() {
    let mut bytes = sample_file(3);
    bytes[9792] ^= 32;
    let db = Db::open(
        MemStorage::from_bytes(bytes),
        Options {
            page_size: 512,
            ..Options::default()
        },
    )
    .unwrap();
    let res = write_after_damage(&db);
    match res {
        Err(Error::Corrupted { reason, .. }) => assert!(reason.contains("order"), "{reason}"),
        other => panic!("expected a Corrupted error, got {other:?}"),
    }
    // The failed commit latched the database.
    assert!(matches!(db.begin_write(), Err(Error::Latched(_))));
}
