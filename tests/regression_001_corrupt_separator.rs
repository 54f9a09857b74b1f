//! Regression 001, found by the byte-flip property test (`tests/corruption.rs`).
//!
//! Postmortem: one flipped bit in a key of a branch page (page 19, byte 64 of a 512-byte-page
//! file) leaves every page individually valid — keys sorted within each page — but makes a
//! separator disagree with the child below it. A write transaction then descended by the bad
//! separator, and at commit rebuilt the parent from the children's first keys, which were no
//! longer ascending: `Node::encode` hit its key-order assertion and the process panicked on
//! bytes read from disk. The fix checks key order when commit assembles each node and reports
//! `Corrupted` instead; the assertion stays for nodes the engine builds itself. (Since
//! regression 006 the write path refuses earlier, when it takes a child whose keys disagree with
//! the separators above it, and names the branch page the separator was read from.)

use crate::common;

use common::{sample_file, write_after_damage};
use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options};

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
    let before = db.check().unwrap();
    let res = write_after_damage(&db);
    match res {
        // Refused in the transaction, when it took the child: nothing reached commit.
        Err(Error::Format(FormatError::Corrupted {
            reason: Corruption::ChildOutsideSeparators { .. },
            ..
        })) => assert!(db.latched().is_none()),
        // Refused by commit's own check: the failed commit latched the database.
        Err(Error::Format(FormatError::Corrupted {
            reason: Corruption::CrossPageOrder,
            ..
        })) => assert!(matches!(db.begin_write(), Err(Error::Latched(_)))),
        other => panic!("expected a Corrupted error, got {other:?}"),
    }
    assert_eq!(db.check().unwrap(), before, "nothing was written");
}
