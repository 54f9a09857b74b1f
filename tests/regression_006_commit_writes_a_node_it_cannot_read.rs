//! Regression 006, found by the structure-aware fuzzing campaign of issue 15.
//!
//! Postmortem: in `corpus/bbolt/inline.db`, branch page 11 of bucket `grow` has separators "g0"
//! and "g17"; growing element 1's key size from 3 to 4 makes the second separator "g17\0".
//! Every page still decodes and `check()` reports one problem (page 3's first key lies below its
//! separator). A put of "g17" is then routed by the damaged separator to the left leaf, deletes
//! leave both leaves underfull, rebalance merges them into one node holding "g17" twice, and the
//! bucket, now small, is written inline. Spilled pages had an order check since regression 001,
//! but the inline path (commit → `encode_header` → `Node::encode`) had only a `debug_assert!`:
//! debug builds panicked ("keys out of order at element …"), release builds committed Ok and left
//! a file neither the process nor a reopen could read. The harness missed it because the
//! byte-flip tests damage a 512-byte-page sample whose buckets are too big to become inline, and
//! they only ask for "no panic", so a release-mode commit of a corrupt file passed. The fix is
//! for the class: `Node::encode` refuses (typed, before writing a byte) any node decoding would
//! reject; a write takes a child from a page only if its keys lie inside the range its parent's
//! separators give it, so a damaged separator fails the write at the page it was read from; and
//! spill checks every node it writes against that range too. This test keeps the example and
//! sweeps separator damage over fixture files, holding every write to the guarantee: it fails
//! with a typed error, or it commits and a reopen finds no more problems and the write.

use crate::common;

use crashlab_engine::{Corruption, Db, Error, FormatError, MemStorage, Options, PageId, Storage};
use crashlab_format::inspect::{self, Image, PageBody, PageUse};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/corpus/bbolt/{name}.db", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).expect("fixture")
}

fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn write_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One write: puts (key, value) and deletes, in bucket `path`.
#[derive(Clone, Debug)]
struct Write {
    path: Vec<Vec<u8>>,
    puts: Vec<(Vec<u8>, Vec<u8>)>,
    deletes: Vec<Vec<u8>>,
}

fn apply(db: &Db, w: &Write) -> Result<(), Error> {
    db.update(|tx| {
        let path: Vec<&[u8]> = w.path.iter().map(Vec::as_slice).collect();
        let mut b = tx.bucket_path_mut(&path)?.expect("bucket exists");
        for (k, v) in &w.puts {
            b.put(k, v)?;
        }
        for k in &w.deletes {
            b.delete(k)?;
        }
        Ok(())
    })
}

/// The value `key` reads as in bucket `path` after a reopen of `bytes`.
fn read_back(bytes: Vec<u8>, path: &[Vec<u8>], key: &[u8]) -> Option<Vec<u8>> {
    let db = Db::open(MemStorage::from_bytes(bytes), Options::default()).expect("reopen");
    db.view(|tx| {
        let path: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
        Ok(tx
            .bucket_path(&path)?
            .expect("bucket")
            .get(key)?
            .map(|v| v.to_vec()))
    })
    .expect("the committed bucket reads")
}

/// Run `w` on a copy of `damaged` and hold it to the guarantee. Returns the error, if the write
/// failed.
fn attempt(damaged: &[u8], w: &Write, what: &str) -> Option<Error> {
    let mem = MemStorage::from_bytes(damaged.to_vec());
    let db = Db::open(mem.clone(), Options::default()).expect("the damaged file opens");
    let before = db.check().expect("check").len();
    let outcome = catch_unwind(AssertUnwindSafe(|| apply(&db, w)));
    let result = outcome.unwrap_or_else(|_| panic!("{what}: the write panicked ({w:?})"));
    drop(db);
    let after_bytes = mem.snapshot();
    let reopened = Db::open(
        MemStorage::from_bytes(after_bytes.clone()),
        Options::default(),
    )
    .unwrap_or_else(|e| panic!("{what}: the file no longer opens after {result:?}: {e}"));
    let after = reopened.check().expect("check after");
    assert!(
        after.len() <= before,
        "{what}: {before} problems before, after {result:?}: {after:?} ({w:?})"
    );
    drop(reopened);
    match result {
        Ok(()) => {
            for (k, v) in &w.puts {
                let got = read_back(after_bytes.clone(), &w.path, k);
                assert_eq!(got.as_ref(), Some(v), "{what}: put of {k:?} not held");
            }
            None
        }
        Err(e) => Some(e),
    }
}

fn inline_db_with_long_separator() -> Vec<u8> {
    let mut b = fixture("inline");
    let ksize = 11 * 4096 + 16 + 16 + 4; // page 11, element 1, ksize
    assert_eq!(read_u32(&b, ksize), 3, "the fixture's separator \"g17\"");
    write_u32(&mut b, ksize, 4);
    b
}

#[test]
fn put_routed_by_a_damaged_separator_fails_and_names_the_branch() {
    let damaged = inline_db_with_long_separator();
    let db = Db::open(MemStorage::from_bytes(damaged.clone()), Options::default()).unwrap();
    let problems = db.check().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].page, Some(PageId(3)));
    drop(db);
    // The fuzzer's write: "g17" again, then everything else out, so both leaves are underfull
    // and merge, and the bucket is small enough to be written inline.
    let mut deletes: Vec<Vec<u8>> = (1..17).map(|i| format!("g{i:02}").into_bytes()).collect();
    deletes.extend((18..40).map(|i| format!("g{i}").into_bytes()));
    let w = Write {
        path: vec![b"grow".to_vec()],
        puts: vec![(b"g17".to_vec(), b"new".to_vec())],
        deletes,
    };
    let err = attempt(&damaged, &w, "inline.db example").expect("the write is refused");
    match err {
        Error::Format(FormatError::Corrupted {
            page,
            reason: Corruption::ChildOutsideSeparators { child, .. },
        }) => {
            assert_eq!(page, PageId(11), "the branch holding the separator");
            assert_eq!(child, PageId(3), "the leaf that disagrees with it");
        }
        other => panic!("expected ChildOutsideSeparators, got {other}"),
    }
    // A write the damage does not touch still commits.
    let w = Write {
        path: vec![b"small".to_vec()],
        puts: vec![(b"more".to_vec(), b"1".to_vec())],
        deletes: Vec::new(),
    };
    assert!(attempt(&damaged, &w, "untouched bucket").is_none());
}

/// A separator mutation: the branch page, the element and the kind of damage.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    LongerKey,
    ShorterKey,
    LastByteUp,
    LastByteDown,
}

const MUTATIONS: [Mutation; 4] = [
    Mutation::LongerKey,
    Mutation::ShorterKey,
    Mutation::LastByteUp,
    Mutation::LastByteDown,
];

/// `bytes` with element `i` of branch page `page` damaged by `m`; `None` if `m` does not apply.
fn mutate(bytes: &[u8], ps: usize, page: u64, i: usize, m: Mutation) -> Option<Vec<u8>> {
    let mut b = bytes.to_vec();
    let elem = page as usize * ps + 16 + 16 * i;
    let (pos, ksize) = (read_u32(&b, elem) as usize, read_u32(&b, elem + 4));
    let last = elem + pos + ksize as usize - 1;
    match m {
        Mutation::LongerKey => write_u32(&mut b, elem + 4, ksize + 1),
        Mutation::ShorterKey if ksize > 1 => write_u32(&mut b, elem + 4, ksize - 1),
        Mutation::LastByteUp if b[last] < 0xff => b[last] += 1,
        Mutation::LastByteDown if b[last] > 0 => b[last] -= 1,
        _ => return None,
    }
    Some(b)
}

/// Writes near every separator of a branch: the separator itself and its neighbours, alone and
/// with most of the bucket deleted (merges, and buckets that become inline).
fn writes_near(path: &[Vec<u8>], separator: &[u8], keys: &[Vec<u8>]) -> Vec<Write> {
    let mut below = separator.to_vec();
    below.pop();
    let mut above = separator.to_vec();
    above.push(0);
    let value = b"v006".to_vec();
    let puts: Vec<(Vec<u8>, Vec<u8>)> = [separator.to_vec(), below, above]
        .into_iter()
        .filter(|k| !k.is_empty())
        .map(|k| (k, value.clone()))
        .collect();
    let keep = |k: &Vec<u8>| puts.iter().any(|(p, _)| p == k);
    let most: Vec<Vec<u8>> = keys.iter().filter(|k| !keep(k)).cloned().collect();
    let half: Vec<Vec<u8>> = most.iter().step_by(2).cloned().collect();
    [Vec::new(), half, most]
        .into_iter()
        .map(|deletes| Write {
            path: path.to_vec(),
            puts: puts.clone(),
            deletes,
        })
        .collect()
}

/// A branch page of a fixture.
struct Branch {
    page: u64,
    /// Its bucket's path and plain keys.
    path: Vec<Vec<u8>>,
    keys: Vec<Vec<u8>>,
    separators: Vec<Vec<u8>>,
}

/// Every branch page of `bytes` outside the root bucket.
fn branches(bytes: &[u8]) -> Vec<Branch> {
    let image = Image::open(MemStorage::from_bytes(bytes.to_vec())).unwrap();
    let map = inspect::page_map(&image).unwrap();
    let (dump, _) = inspect::dump(&image).unwrap();
    let mut out = Vec::new();
    for run in map.runs.iter().filter(|r| r.kind == PageUse::Branch) {
        let bucket = run.bucket.expect("a branch belongs to a bucket");
        let path: Vec<Vec<u8>> = map
            .buckets
            .path(bucket)
            .iter()
            .map(|n| n.to_vec())
            .collect();
        if path.is_empty() {
            continue; // the root bucket holds only buckets
        }
        let hex_path: Vec<String> = path.iter().map(|n| inspect::hex(n)).collect();
        let keys = dump.buckets[&hex_path.join("/")]
            .keys()
            .map(|k| unhex(k))
            .collect();
        let PageBody::Branch(items) = inspect::page_detail(&image, run.start).unwrap().body else {
            panic!("page {} is a branch", run.start);
        };
        let separators = items.into_iter().map(|it| it.key).collect();
        out.push(Branch {
            page: run.start.0,
            path,
            keys,
            separators,
        });
    }
    out
}

#[test]
fn damaged_separators_in_fixtures_never_lead_to_a_worse_file() {
    let mut files = vec![("inline", fixture("inline"), 4096)];
    files.push(("nested", fixture("nested"), 4096));
    files.push(("sample", common::sample_file(2), 512));
    let (mut runs, mut refused) = (0, 0);
    for (name, bytes, ps) in &files {
        let found = branches(bytes);
        assert!(!found.is_empty(), "{name} has branch pages");
        for Branch {
            page,
            path,
            keys,
            separators,
        } in found
        {
            // The first two and the last separator of each branch: the edges where ranges meet.
            let last = separators.len() - 1;
            for (i, sep) in separators.iter().enumerate() {
                if i > 1 && i < last {
                    continue;
                }
                for m in MUTATIONS {
                    let Some(damaged) = mutate(bytes, *ps, page, i, m) else {
                        continue;
                    };
                    let what = format!("{name} page {page} element {i} {m:?}");
                    for w in writes_near(&path, sep, &keys) {
                        runs += 1;
                        if let Some(e) = attempt(&damaged, &w, &what) {
                            // A put onto a sub-bucket's name is the one error that is not damage.
                            let typed = matches!(
                                e,
                                Error::Format(FormatError::Corrupted { .. })
                                    | Error::IncompatibleValue { .. }
                            );
                            assert!(typed, "{what}: {e}");
                            // Damage in a branch is named at a page of the tree (issue 15's
                            // defect 4: never the page-0 placeholder).
                            if let Error::Format(FormatError::Corrupted { page, .. }) = e {
                                assert!(page.0 >= 2, "{what}: {e}");
                            }
                            refused += 1;
                        }
                    }
                }
            }
        }
    }
    // The sweep reaches both outcomes: damage that writes must refuse, and damage they survive.
    assert!(runs > 100, "{runs} writes");
    assert!(refused > 0 && refused < runs, "{refused} of {runs} refused");
}

#[test]
fn reopened_storage_is_untouched_by_a_refused_write() {
    let damaged = inline_db_with_long_separator();
    let mem = MemStorage::from_bytes(damaged.clone());
    let db = Db::open(mem.clone(), Options::default()).unwrap();
    let w = Write {
        path: vec![b"grow".to_vec()],
        puts: vec![(b"g170".to_vec(), b"x".to_vec())],
        deletes: vec![b"g18".to_vec()],
    };
    // "g170" goes to page 3, whose first key lies below its separator: refused there.
    assert!(apply(&db, &w).is_err());
    drop(db);
    assert_eq!(mem.len().unwrap(), damaged.len() as u64);
    assert_eq!(
        mem.snapshot(),
        damaged,
        "a write refused in its transaction writes nothing"
    );
}
