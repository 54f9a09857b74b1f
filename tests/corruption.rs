//! Damaged files: every outcome is a typed error or data, never a panic, a hang or a huge
//! allocation, and a write that commits on a damaged file leaves it no worse. A damaged newest
//! meta falls back to the previous commit.

use crate::common;

use common::{sample_file, write_after_damage};
use crashlab_engine::{Db, Error, FormatError, MemStorage, Options, Storage};
use proptest::prelude::*;

const PS: usize = 512;

fn opts() -> Options {
    Options {
        page_size: PS as u32,
        ..Options::default()
    }
}

fn small_value(bytes: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
    let db = Db::open(MemStorage::from_bytes(bytes), opts())?;
    db.view(|tx| {
        tx.bucket(b"small")?
            .expect("bucket")
            .get(b"commit")
            .map(|v| v.map(|v| v.to_vec()))
    })
}

#[test]
fn zeroed_newest_meta_falls_back_to_the_previous_commit() {
    let bytes = sample_file(2); // commits: base (txid 2), 0 (txid 3), 1 (txid 4)
    assert_eq!(
        small_value(bytes.clone()).unwrap(),
        Some(1u32.to_le_bytes().to_vec())
    );
    let newest = 4 % 2;
    let mut damaged = bytes;
    damaged[newest * PS..(newest + 1) * PS].fill(0);
    assert_eq!(
        small_value(damaged).unwrap(),
        Some(0u32.to_le_bytes().to_vec())
    );
}

#[test]
fn torn_newest_meta_falls_back() {
    let bytes = sample_file(2);
    let mut damaged = bytes;
    // A torn write: the second half of the meta struct holds old garbage.
    for b in &mut damaged[40..80] {
        *b ^= 0x5a;
    }
    assert_eq!(
        small_value(damaged).unwrap(),
        Some(0u32.to_le_bytes().to_vec())
    );
}

#[test]
fn bad_magic_in_one_slot_falls_back_and_in_both_is_a_typed_error() {
    let bytes = sample_file(2);
    let mut one = bytes.clone();
    one[16] ^= 1;
    assert_eq!(
        small_value(one.clone()).unwrap(),
        Some(0u32.to_le_bytes().to_vec())
    );
    let mut both = one;
    both[PS + 16] ^= 1;
    match small_value(both) {
        Err(Error::Format(FormatError::NoValidMeta { meta0, meta1 })) => {
            assert!(meta0.to_string().contains("magic"), "{meta0}");
            assert!(meta1.to_string().contains("no meta page found"), "{meta1}");
        }
        other => panic!("expected NoValidMeta, got {other:?}"),
    }
}

#[test]
fn both_metas_with_bad_checksums_is_a_typed_error() {
    let mut bytes = sample_file(1);
    bytes[50] ^= 0xff;
    bytes[PS + 50] ^= 0xff;
    assert!(matches!(
        small_value(bytes),
        Err(Error::Format(FormatError::NoValidMeta { .. }))
    ));
}

#[test]
fn truncated_files_are_errors() {
    let bytes = sample_file(3);
    let db = Db::open(MemStorage::from_bytes(bytes.clone()), opts()).unwrap();
    let used = db.meta().high_water.0 as usize * PS;
    drop(db);
    // The file is padded past the high-water mark; only cuts below it lose pages.
    assert!(bytes.len() >= used);
    for len in [
        1,
        79,
        100,
        PS,
        2 * PS - 1,
        2 * PS + 10,
        4 * PS,
        used / 2,
        used - 1,
    ] {
        let cut = bytes[..len].to_vec();
        let res = Db::open(
            MemStorage::from_bytes(cut),
            Options {
                read_only: true,
                ..opts()
            },
        );
        match res {
            Err(Error::Format(FormatError::Truncated { .. }))
            | Err(Error::Format(FormatError::NoValidMeta { .. })) => {}
            Err(e) => panic!("length {len}: unexpected error kind {e}"),
            Ok(_) => panic!("length {len}: a truncated file opened"),
        }
    }
}

#[test]
fn empty_file_read_only_is_an_error_and_writable_creates() {
    let r = Db::open(
        MemStorage::new(),
        Options {
            read_only: true,
            ..opts()
        },
    );
    assert!(matches!(
        r,
        Err(Error::Format(FormatError::Truncated { len: 0, .. }))
    ));
    let mem = MemStorage::new();
    Db::open(mem.clone(), opts()).unwrap();
    assert_eq!(mem.len().unwrap(), 4 * PS as u64);
}

/// Read everything reachable and run check and a write. Any error is fine, a panic is not, and
/// a write that commits must leave a file no worse than it found it: a reopen's `check()` finds
/// no more problems, and the write is there.
fn exercise(bytes: Vec<u8>, read_only: bool) {
    let mem = MemStorage::from_bytes(bytes);
    let Ok(db) = Db::open(
        mem.clone(),
        Options {
            read_only,
            ..opts()
        },
    ) else {
        return;
    };
    let _ = db.view(|tx| {
        let root = tx.root()?;
        let mut c = root.cursor();
        let mut it = c.first()?;
        while let Some(entry) = it {
            if let Some(b) = root.bucket(entry.key())? {
                let mut bc = b.cursor();
                let mut x = bc.last()?;
                while let Some(entry) = x {
                    let (k, v) = entry.to_item();
                    if v.is_none() {
                        let _ = b.bucket(&k)?;
                    }
                    let _ = b.get(&k)?;
                    x = bc.prev()?;
                }
            }
            it = c.next()?;
        }
        Ok(())
    });
    let before = db.check();
    if read_only {
        return;
    }
    let readable = readable_keys(&db);
    let committed = write_after_damage(&db).is_ok();
    let _ = db.check();
    drop(db);
    if let (true, Ok(before)) = (committed, before) {
        assert_no_worse(mem.snapshot(), before.len(), &readable);
    }
}

/// The keys `write_after_damage` touches or leaves alone in bucket `a`.
fn sample_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..60u32)
        .map(|i| format!("key{i:03}").into_bytes())
        .collect();
    keys.push(b"big".to_vec());
    keys
}

fn written(i: u32) -> Vec<u8> {
    format!("new{i}").into_bytes()
}

fn deleted(key: &[u8]) -> bool {
    (0..20u32).any(|i| key == format!("key{:03}", i * 3).as_bytes())
}

/// Every key of `sample_keys` that reads without an error, with what it reads as.
fn readable_keys(db: &Db) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let _ = db.view(|tx| {
        let Some(a) = tx.bucket(b"a")? else {
            return Ok(());
        };
        for key in sample_keys() {
            if let Ok(v) = a.get(&key) {
                out.push((key, v.map(|v| v.to_vec())));
            }
        }
        Ok(())
    });
    out
}

/// The file a committed write left: it opens, `check()` finds at most `before` problems, it
/// holds what `write_after_damage` wrote and deleted, and every key that read before and was
/// not written reads the same (damage elsewhere may make a deleted key's lookup an error).
fn assert_no_worse(bytes: Vec<u8>, before: usize, readable: &[(Vec<u8>, Option<Vec<u8>>)]) {
    let options = Options {
        read_only: true,
        ..opts()
    };
    let db = Db::open(MemStorage::from_bytes(bytes), options).expect("a committed file opens");
    let after = db.check().expect("check");
    assert!(
        after.len() <= before,
        "{before} problems before, then {after:?}"
    );
    db.view(|tx| {
        let a = tx.bucket(b"a")?.expect("the written bucket");
        for i in 0..20u32 {
            let v = a.get(&written(i))?;
            assert_eq!(v.as_deref(), Some(&[1u8; 100][..]), "new{i}");
        }
        for key in sample_keys().iter().filter(|k| deleted(k)) {
            assert!(!matches!(a.get(key), Ok(Some(_))), "{key:?} was deleted");
        }
        for (key, value) in readable.iter().filter(|(k, _)| !deleted(k)) {
            assert_eq!(
                a.get(key)?.as_deref(),
                value.as_deref(),
                "{key:?} read before the write"
            );
        }
        Ok(())
    })
    .expect("what read before still reads");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Random byte flips anywhere in a valid file.
    #[test]
    fn byte_flips_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..8),
        read_only in any::<bool>(),
    ) {
        let mut bytes = sample_file(3);
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        exercise(bytes, read_only);
    }

    /// Whole pages overwritten with random bytes (a misdirected or garbage write).
    #[test]
    fn garbage_pages_never_panic(page in 0usize..40, seed in any::<u64>(), read_only in any::<bool>()) {
        let mut bytes = sample_file(3);
        let pages = bytes.len() / PS;
        let p = page % pages;
        let mut x = seed | 1;
        for b in &mut bytes[p * PS..(p + 1) * PS] {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            *b = x as u8;
        }
        exercise(bytes, read_only);
    }
}
