//! Borrowed reads and iteration: `Bucket::get` hands out the stored bytes without copying,
//! `range` and `iter` walk any key range from either end as a model `BTreeMap` does, a write
//! transaction's iterators see its own writes (that neither a get nor a step of an iteration
//! allocates is `alloc.rs`, a binary of its own).

use crate::common;

use common::{filled, key};
use crashlab_engine::{Db, MemStorage, Options};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;

/// A key range as `BTreeMap::range` takes it.
type Range<'k> = (Bound<&'k [u8]>, Bound<&'k [u8]>);

fn keys<'a>(
    it: impl Iterator<Item = crashlab_engine::Result<crashlab_engine::Entry<'a>>>,
) -> Vec<Vec<u8>> {
    it.map(|e| e.unwrap().key().to_vec()).collect()
}

#[test]
fn ranges_from_either_end_agree_with_a_btreemap() {
    let db = filled(300);
    db.view(|tx| {
        let b = tx.bucket(b"b")?.unwrap();
        let model: BTreeMap<Vec<u8>, ()> =
            b.iter().map(|e| (e.unwrap().key().to_vec(), ())).collect();
        assert_eq!(model.len(), 301, "300 keys and the sub-bucket");
        let (lo, hi) = (key(100), key(201));
        let cases: Vec<Range<'_>> = vec![
            (Bound::Included(&lo), Bound::Excluded(&hi)),
            (Bound::Excluded(&lo), Bound::Included(&hi)),
            (Bound::Unbounded, Bound::Excluded(&lo)),
            (Bound::Excluded(&hi), Bound::Unbounded),
            (Bound::Included(b"a"), Bound::Included(b"zz")),
            (Bound::Included(b"zz"), Bound::Unbounded),
        ];
        for (l, h) in cases {
            let want: Vec<Vec<u8>> = model
                .range::<[u8], _>((l, h))
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(keys(b.range((l, h))), want, "{l:?}..{h:?}");
            let mut back = keys(b.range((l, h)).rev());
            back.reverse();
            assert_eq!(back, want, "{l:?}..{h:?} backwards");
        }
        let inverted = (Bound::Included(&hi[..]), Bound::Included(&lo[..]));
        assert!(b.range(inverted).next().is_none() && b.range(inverted).next_back().is_none());
        let v = b.get(&key(10))?.expect("present");
        assert_eq!(&*v, &[5u8; 100][..]);
        assert!(b.get(&key(11))?.is_none(), "odd keys are absent");
        assert!(b.get(b"k00001x")?.is_none(), "a sub-bucket is not a value");
        let sub = b.range(&b"k00001x"[..]..=&b"k00001x"[..]).next().unwrap()?;
        assert!(sub.is_bucket() && sub.value().is_none());
        Ok(())
    })
    .unwrap();
}

#[test]
fn both_ends_meet_without_handing_out_a_key_twice() {
    let db = filled(50);
    db.view(|tx| {
        let b = tx.bucket(b"b")?.unwrap();
        let mut it = b.iter();
        let (mut front, mut back) = (Vec::new(), Vec::new());
        while let Some(e) = it.next() {
            front.push(e?.key().to_vec());
            match it.next_back() {
                Some(e) => back.push(e?.key().to_vec()),
                None => break,
            }
        }
        assert!(
            it.next().is_none() && it.next_back().is_none(),
            "exhausted stays exhausted"
        );
        back.reverse();
        front.extend(back);
        assert_eq!(front, keys(b.iter()));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_write_transaction_iterates_its_own_writes() {
    let db = filled(20);
    let mut tx = db.begin_write().unwrap();
    let mut b = tx.bucket_mut(b"b").unwrap().unwrap();
    b.put(b"k00003", b"new").unwrap();
    b.delete(&key(0)).unwrap();
    let got = keys(b.range(&key(0)[..]..&key(6)[..]).unwrap());
    let want = [&b"k00001x"[..], b"k00002", b"k00003", b"k00004"];
    assert_eq!(got, want);
    assert_eq!(b.get(b"k00003").unwrap().as_deref(), Some(&b"new"[..]));
    tx.rollback();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any range, walked with any interleaving of steps from the front and the back, hands out
    /// what `BTreeMap::range` does.
    #[test]
    fn interleaved_steps_match_the_model(
        present in proptest::collection::btree_set(0u32..400, 0..200),
        lo in 0u32..420,
        len in 0u32..420,
        lo_inclusive in any::<bool>(),
        hi_inclusive in any::<bool>(),
        steps in proptest::collection::vec(any::<bool>(), 0..450),
    ) {
        let db = Db::open(MemStorage::new(), Options { page_size: 512, ..Options::default() }).unwrap();
        db.update(|tx| {
            let mut b = tx.create_bucket(b"b")?;
            for &i in &present {
                b.put(&key(i), &i.to_le_bytes())?;
            }
            Ok(())
        }).unwrap();
        let (lo, hi) = (key(lo), key(lo + len));
        let lo_b = if lo_inclusive { Bound::Included(&lo[..]) } else { Bound::Excluded(&lo[..]) };
        let hi_b = if hi_inclusive { Bound::Included(&hi[..]) } else { Bound::Excluded(&hi[..]) };
        let model: BTreeMap<Vec<u8>, ()> = present.iter().map(|&i| (key(i), ())).collect();
        let valid = lo < hi || (lo == hi && lo_inclusive && hi_inclusive);
        let tx = db.begin_read().unwrap();
        let b = tx.bucket(b"b").unwrap().unwrap();
        let mut it = b.range((lo_b, hi_b));
        let mut want: Box<dyn DoubleEndedIterator<Item = Vec<u8>>> = if valid {
            Box::new(model.range::<[u8], _>((lo_b, hi_b)).map(|(k, _)| k.clone()))
        } else {
            Box::new(std::iter::empty())
        };
        for from_front in steps {
            let (got, exp) = if from_front {
                (it.next(), want.next())
            } else {
                (it.next_back(), want.next_back())
            };
            prop_assert_eq!(got.map(|e| e.unwrap().key().to_vec()), exp);
        }
    }
}
