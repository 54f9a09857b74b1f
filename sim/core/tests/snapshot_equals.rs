//! `snapshot_equals`, the reader checks' comparison that walks a snapshot instead of building
//! its model, answers exactly what `read_snapshot` and `==` answer: the same verdict for every
//! model, equal or differing in any one place, and the same error for a snapshot that fails to
//! read, even when the difference comes before the damage.

use crashlab_engine::{Db, MemStorage, Options, Storage};
use crashlab_models::{BucketModel, KvModel};
use crashlab_sim::crashlab::{read_model, read_snapshot, snapshot_equals};
use proptest::prelude::*;

/// A bucket to write: values, sub-buckets and a sequence.
#[derive(Clone, Debug)]
struct Spec {
    values: Vec<(u8, u16)>,
    children: Vec<(u8, Spec)>,
    sequence: u64,
}

fn spec(depth: u32) -> BoxedStrategy<Spec> {
    let values = prop::collection::vec((any::<u8>(), 0u16..600), 0..40);
    let sequence = prop_oneof![Just(0u64), 1u64..5];
    if depth == 0 {
        return (values, sequence)
            .prop_map(|(values, sequence)| Spec {
                values,
                children: vec![],
                sequence,
            })
            .boxed();
    }
    let children = prop::collection::vec((any::<u8>(), spec(depth - 1)), 0..3);
    (values, children, sequence)
        .prop_map(|(values, children, sequence)| Spec {
            values,
            children,
            sequence,
        })
        .boxed()
}

/// Write `s` into `b`. Names collide on purpose (a value and a bucket may want one key): the
/// first writer of a key keeps it.
fn write(b: &mut crashlab_engine::BucketMut<'_>, s: &Spec) {
    b.set_sequence(s.sequence);
    for (name, child) in &s.children {
        let key = [b'b', *name];
        if let Ok(mut c) = b.create_bucket(&key) {
            write(&mut c, child);
        }
    }
    for &(k, len) in &s.values {
        let key = [b'b', k];
        if b.bucket_mut(&key).ok().flatten().is_none() {
            let value: Vec<u8> = (0..len).map(|i| (i as u8) ^ k).collect();
            b.put(&key, &value).unwrap();
        }
    }
}

fn db_of(top: &[(u8, Spec)], storage: MemStorage) -> Db {
    let db = Db::open(storage, Options::default()).unwrap();
    db.update(|tx| {
        for (name, s) in top {
            if let Ok(mut b) = tx.create_bucket(&[b't', *name]) {
                write(&mut b, s);
            }
        }
        Ok(())
    })
    .unwrap();
    db
}

/// How many buckets `m` holds, itself included.
fn count(m: &BucketModel) -> usize {
    1 + m.buckets.values().map(count).sum::<usize>()
}

/// The `n`th bucket of `m` in depth-first order, itself first.
fn bucket_at<'m>(m: &'m mut BucketModel, n: &mut usize) -> Option<&'m mut BucketModel> {
    if *n == 0 {
        return Some(m);
    }
    *n -= 1;
    for child in m.buckets.values_mut() {
        if let Some(found) = bucket_at(child, n) {
            return Some(found);
        }
    }
    None
}

/// `m` with one change of kind `kind` in its `at`th bucket (wrapping), or unchanged (kind 0).
fn changed(m: &KvModel, kind: u8, at: usize, key: u8) -> KvModel {
    let mut out = m.clone();
    let mut n = at % count(&out.root);
    let b = bucket_at(&mut out.root, &mut n).expect("an index below the count");
    let key = vec![b'b', key];
    match kind {
        1 => match b.values.values_mut().next() {
            Some(v) => v.push(1),
            None => drop(b.values.insert(key, vec![])),
        },
        2 => drop(b.values.pop_last()),
        3 => drop(b.values.insert(key, vec![7])),
        4 => b.sequence += 1,
        5 => drop(b.buckets.pop_first()),
        6 => drop(b.buckets.insert(key, BucketModel::default())),
        7 => {
            // A value's key named as a bucket instead.
            if let Some((k, _)) = b.values.pop_first() {
                b.buckets.insert(k, BucketModel::default());
            }
        }
        _ => {}
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn it_answers_what_a_whole_read_and_a_comparison_answer(
        top in prop::collection::vec((any::<u8>(), spec(2)), 0..4),
        kind in 0u8..8,
        at in any::<usize>(),
        key in any::<u8>(),
    ) {
        let db = db_of(&top, MemStorage::new());
        let read = read_model(&db).unwrap();
        let want = changed(&read, kind, at, key);
        let tx = db.begin_read().unwrap();
        let equal = snapshot_equals(&tx, &want).unwrap();
        prop_assert_eq!(equal, read == want);
        prop_assert!(snapshot_equals(&tx, &read).unwrap());
    }
}

/// Damage each page of a database in turn: wherever a whole read fails, the comparison fails
/// with the same error, whether the model it is given is the snapshot's or differs from it in
/// its first bucket (read before the damaged one); wherever the read succeeds, they agree.
#[test]
fn a_snapshot_that_fails_to_read_is_an_error_even_after_a_difference() {
    let spec = |n: u8| Spec {
        values: (0..n).map(|k| (k, 300)).collect(),
        children: vec![],
        sequence: 0,
    };
    let storage = MemStorage::new();
    let db = db_of(&[(1, spec(2)), (2, spec(120))], storage.clone());
    let model = read_model(&db).unwrap();
    drop(db);
    let mut early = model.clone();
    let first = early.root.buckets.values_mut().next().unwrap();
    first.values.values_mut().next().unwrap().push(0);
    let image = storage.snapshot();
    let page = 4096;
    let (mut failed, mut pages) = (0, 0);
    for at in (2 * page..image.len()).step_by(page) {
        let mut bad = image.clone();
        bad[at + 16..at + 64].fill(0xa5);
        let damaged = MemStorage::from_bytes(bad);
        let options = Options {
            read_only: true,
            page_cache_pages: 0,
            ..Options::default()
        };
        let Ok(db) = Db::open(damaged.clone(), options) else {
            continue;
        };
        pages += 1;
        let tx = db.begin_read().unwrap();
        let whole = read_snapshot(&tx);
        for want in [&model, &early] {
            let got = snapshot_equals(&tx, want);
            match &whole {
                Ok(m) => assert_eq!(got.unwrap(), m == want, "page at {at}"),
                Err(e) => {
                    let err = got.expect_err("a read that fails is an error, not a difference");
                    assert_eq!(err.to_string(), e.to_string(), "page at {at}");
                }
            }
        }
        failed += usize::from(whole.is_err());
        assert!(damaged.len().unwrap() > 0);
    }
    assert!(
        pages > 3 && failed > 0,
        "{failed} of {pages} damaged pages failed to read"
    );
}
