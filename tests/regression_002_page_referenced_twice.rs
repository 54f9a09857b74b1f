//! Regression 002, found by the byte-flip property test (`tests/corruption.rs`, 60,000 cases).
//!
//! Postmortem: one flipped bit in a child pointer of a branch page (byte 11276 of a 512-byte-page
//! file) made two branch elements point at the same page. Reading was fine — each page decodes —
//! but a write transaction that rewrote both paths freed that page twice, and the freelist's
//! double-free assertion panicked on bytes read from disk. The fix makes freeing fallible:
//! `Freelist::try_free` checks every page of the span before changing anything, and commit
//! turns a refusal into `Corrupted` naming the page; the infallible `free` keeps its assertion
//! for the engine's own bookkeeping. (The sample file has changed since: the byte now lands in a
//! leaf's overflow count, so the leaf's run covers the next leaf, a page reached twice again.
//! Since issue 15 a run claiming more pages than its contents use is refused when it is read,
//! before anything is freed.)

use crate::common;

use common::{sample_file, write_after_damage};
use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options};

#[test]
fn page_referenced_twice_gives_an_error_not_a_panic() {
    let mut bytes = sample_file(3);
    bytes[11276] ^= 1;
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
        Err(Error::Format(FormatError::Corrupted {
            reason: Corruption::FreedTwice { .. } | Corruption::OverflowBeyondContents { .. },
            ..
        })) => {}
        other => panic!("expected a Corrupted error, got {other:?}"),
    }
    assert!(
        !db.check().unwrap().is_empty(),
        "check reports the double reference"
    );
}
