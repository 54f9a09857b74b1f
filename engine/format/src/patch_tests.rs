//! Tests of `patch.rs`: on random nodes and edits, a patched image is the encoded one.

use super::*;
use crate::node::{BranchItem, LeafItem};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }

    fn bytes(&mut self, max: u64) -> Vec<u8> {
        (0..self.below(max + 1))
            .map(|_| self.below(256) as u8)
            .collect()
    }
}

fn node(body: Body) -> Node {
    Node {
        body,
        ..Node::empty_leaf()
    }
}

fn encoded(n: &Node, id: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    n.encode(&mut buf, PageId(id), 4096).unwrap();
    buf
}

/// A leaf of up to 30 items with ascending, distinct, non-empty keys; some are buckets.
fn random_leaf(rng: &mut Rng) -> Vec<LeafItem> {
    let mut keys: Vec<Vec<u8>> = (0..rng.below(31)).map(|_| rng.bytes(12)).collect();
    keys.retain(|k| !k.is_empty());
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|key| match rng.below(8) {
            0 => LeafItem::new(LEAF_FLAG_BUCKET, &key, &vec![3; 16 + rng.below(8) as usize]),
            _ => LeafItem::new(0, &key, &rng.bytes(60)),
        })
        .collect()
}

/// A key not in `items`, and where it goes.
fn new_key(rng: &mut Rng, items: &[LeafItem]) -> Option<(usize, Vec<u8>)> {
    let key = rng.bytes(12);
    match items.binary_search_by(|it| it.key().cmp(&key)) {
        Err(i) if !key.is_empty() => Some((i, key)),
        _ => None,
    }
}

#[test]
fn a_leaf_patched_with_one_edit_is_the_leaf_encoded() {
    let mut rng = Rng(7);
    let mut seen = [0usize; 4];
    for round in 0..3_000 {
        let old = random_leaf(&mut rng);
        let mut items = old.clone();
        let edit = match rng.below(4) {
            0 => LeafEdit::None,
            1 => match new_key(&mut rng, &items) {
                Some((i, key)) => {
                    let value = rng.bytes(60);
                    items.insert(i, LeafItem::new(0, &key, &value));
                    LeafEdit::Inserted(i)
                }
                None => continue,
            },
            2 if !items.is_empty() => {
                let i = rng.below(items.len() as u64) as usize;
                let value = match items[i].is_bucket() {
                    true => vec![4; 16 + rng.below(8) as usize],
                    false => rng.bytes(60),
                };
                items[i].set_value(&value);
                LeafEdit::Replaced(i)
            }
            3 if !items.is_empty() => {
                let i = rng.below(items.len() as u64) as usize;
                items.remove(i);
                LeafEdit::Removed(i)
            }
            _ => continue,
        };
        let (old, new) = (node(Body::Leaf(old)), node(Body::Leaf(items)));
        let mut buf = encoded(&old, 5, 4096);
        new.patch_leaf_image(&mut buf, PageId(9), (old.size(), new.size()), edit)
            .unwrap();
        assert_eq!(buf, encoded(&new, 9, 4096), "round {round}: {edit:?}");
        seen[match edit {
            LeafEdit::None => 0,
            LeafEdit::Inserted(_) => 1,
            LeafEdit::Replaced(_) => 2,
            _ => 3,
        }] += 1;
    }
    assert!(
        seen.iter().all(|&n| n > 300),
        "every kind of edit: {seen:?}"
    );
}

#[test]
fn a_patch_refuses_what_encoding_refuses_and_writes_nothing() {
    let old = node(Body::Leaf(vec![LeafItem::new(0, b"b", b"1")]));
    let short = LeafItem::new(LEAF_FLAG_BUCKET, b"a", &[0; BUCKET_HEADER_SIZE - 1]);
    let mut new = old.clone();
    if let Body::Leaf(items) = &mut new.body {
        items.insert(0, short);
    }
    let before = encoded(&old, 5, 4096);
    let mut buf = before.clone();
    let sizes = (old.size(), new.size());
    let err = new.patch_leaf_image(&mut buf, PageId(9), sizes, LeafEdit::Inserted(0));
    assert_eq!(err, Err(Corruption::BucketValueTooShort { element: 0 }));
    assert_eq!(buf, before, "nothing written");
}

#[test]
fn a_branch_patched_over_its_image_is_the_branch_encoded() {
    let mut rng = Rng(11);
    for _ in 0..1_000 {
        let mut keys: Vec<Vec<u8>> = (0..1 + rng.below(40)).map(|_| rng.bytes(10)).collect();
        keys.retain(|k| !k.is_empty());
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            continue;
        }
        let item = |key: Vec<u8>, child| BranchItem {
            key,
            child: Child::Page(PageId(child)),
        };
        let old: Vec<BranchItem> = keys
            .iter()
            .map(|k| item(k.clone(), 10 + rng.below(90)))
            .collect();
        let mut items = old.clone();
        let mut moved: Vec<usize> = (0..1 + rng.below(3))
            .map(|_| rng.below(items.len() as u64) as usize)
            .collect();
        moved.sort();
        moved.dedup();
        for &i in &moved {
            items[i].child = Child::Page(PageId(100 + rng.below(100)));
        }
        // One separator to a key of its length that keeps the order, when there is one.
        let i = moved[0];
        let mut rekeyed = None;
        let mut key = items[i].key.clone();
        if let Some(last) = key.last_mut() {
            *last = last.wrapping_add(1);
        }
        let above = i == 0 || items[i - 1].key < key;
        let below = items.get(i + 1).is_none_or(|n| key < n.key);
        if *key.last().unwrap() != 0 && above && below && key > items[i].key {
            items[i].key = key;
            rekeyed = Some(i);
        }
        let (old, new) = (node(Body::Branch(old)), node(Body::Branch(items)));
        let mut buf = encoded(&old, 5, 4096);
        let named = rng.below(2) == 0;
        let moved = named.then_some(&moved[..]);
        new.patch_branch_image(&mut buf, PageId(9), moved, rekeyed)
            .unwrap();
        assert_eq!(buf, encoded(&new, 9, 4096));
    }
}
