//! Branch merges on trees several levels deep (regression 018, at the engine's own level).
//!
//! How the state arises. When a branch's first key rises (its first keys were deleted) and its
//! left neighbour is a page the transaction did not read, spill keeps the parent's separator
//! for it (`spill_children`): the branch's own first separator now exceeds the parent's. A key
//! between the two, put later, goes to the branch's first child, below the branch's first
//! separator. That is legal, since a branch's first separator bounds nothing. But a rebalance
//! that merges the branch into its left sibling in the same commit appends the branch's items,
//! and there the first separator becomes a real lower bound. Before the fix it stayed as it
//! was, the commit's order check saw a leaf below its separator, and a valid commit was refused
//! with `CrossPageOrder`; now it takes the parent's separator.
//!
//! Long keys on 512-byte pages give a tree four or five levels deep from a few hundred keys,
//! each branch holding a handful of separators, and seeded rounds of deletes and puts walk
//! every branch through that sequence. Every commit must succeed, and the file must check clean
//! and hold exactly the model's keys. With the fix taken out, this test fails in its first
//! rounds.

use crashlab_engine::{Db, MemStorage, Options};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};
use std::collections::BTreeSet;

const KEYS: u32 = 600;
const ROUNDS: u32 = 120;

/// Keys 64 bytes long: a branch page of 512 bytes holds at most six separators.
fn long_key(i: u32) -> Vec<u8> {
    let mut k = format!("key{i:05}").into_bytes();
    k.resize(64, b'.');
    k
}

/// Draws below `n` from a seeded ChaCha stream, so the rounds are the same on every run.
fn below(rng: &mut TestRng, n: u32) -> u32 {
    (rng.next_u64() % u64::from(n)) as u32
}

fn keys_of(db: &Db) -> BTreeSet<Vec<u8>> {
    db.view(|tx| {
        let b = tx.bucket(b"b")?.expect("bucket b exists");
        b.iter().map(|e| e.map(|e| e.key().to_vec())).collect()
    })
    .unwrap()
}

/// One commit putting `puts` and deleting `deletes` in bucket `b`, mirrored in `model`.
fn commit(db: &Db, model: &mut BTreeSet<Vec<u8>>, puts: &[u32], deletes: &[u32]) {
    db.update(|tx| {
        let mut b = tx.bucket_mut(b"b")?.expect("bucket b exists");
        puts.iter()
            .try_for_each(|&i| b.put(&long_key(i), &i.to_be_bytes()))?;
        deletes
            .iter()
            .try_for_each(|&i| b.delete(&long_key(i)).map(drop))
    })
    .unwrap_or_else(|e| panic!("putting {puts:?}, deleting {deletes:?}: {e}"));
    model.extend(puts.iter().map(|&i| long_key(i)));
    for &i in deletes {
        model.remove(&long_key(i));
    }
}

/// One round around key `start`. First delete it alone: when it was its branch's first key and
/// the branch's left neighbour is untouched, the parent keeps its separator while the branch's
/// own first separator rises above it. Then put it back (under the branch's first child, below
/// that separator) and, in the same commit, delete the run of keys after it, which can leave the
/// branch underfull and merge it into its left neighbour. Last, put every other key of the run
/// back, so the tree keeps its depth.
fn round(db: &Db, model: &mut BTreeSet<Vec<u8>>, rng: &mut TestRng) {
    let start = below(rng, KEYS);
    let width = 1 + below(rng, 40);
    let run: Vec<u32> = (start + 1..(start + width).min(KEYS)).collect();
    commit(db, model, &[], &[start]);
    commit(db, model, &[start], &run);
    let half: Vec<u32> = run.iter().copied().step_by(2).collect();
    commit(db, model, &half, &[]);
}

#[test]
fn merged_branches_keep_every_commit_valid() {
    let options = Options {
        page_size: 512,
        ..Options::default()
    };
    let db = Db::open(MemStorage::new(), options).unwrap();
    // Every other key first, the rest later: keys land below first separators.
    let mut model = BTreeSet::new();
    for parity in [0, 1] {
        db.update(|tx| {
            let mut b = tx.create_bucket_if_missing(b"b")?;
            (parity..KEYS)
                .step_by(2)
                .try_for_each(|i| b.put(&long_key(i), &i.to_be_bytes()))
        })
        .unwrap();
        model.extend((parity..KEYS).step_by(2).map(long_key));
    }
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let before = db.counters();
    for r in 0..ROUNDS {
        round(&db, &mut model, &mut rng);
        assert_eq!(keys_of(&db), model, "round {r}");
        assert_eq!(db.check().unwrap(), vec![], "round {r}");
    }
    let merges = db.counters().since(&before).node_merges;
    assert!(
        merges > ROUNDS as u64,
        "only {merges} merges: the rounds did not rebalance"
    );
}
