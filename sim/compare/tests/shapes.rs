//! The batch-building shapes write what their application would, and the pre-size policy changes
//! only how the batch's buffer is sized: the same inserts give the same batches (and the same
//! database file) under Grow, Exact and Estimate.

use crashlab_compare::shapes::geth::NodeBuffer;
use crashlab_compare::shapes::iavl::{IavlTree, NODE_KEY_SIZE};
use crashlab_compare::shapes::BUCKET;
use crashlab_engine::batch::WriteBatch;
use crashlab_engine::{Db, MemStorage, Options, PresizePolicy};
use crashlab_sim::rng::SimRng;
use std::collections::BTreeMap;

const POLICIES: [PresizePolicy; 3] = [
    PresizePolicy::Grow,
    PresizePolicy::Exact,
    PresizePolicy::Estimate,
];

fn key(r: &mut SimRng) -> Vec<u8> {
    // A small key space, so some inserts overwrite.
    let len = r.range(1, 20) as usize;
    (0..len).map(|_| r.below(8) as u8).collect()
}

fn value(r: &mut SimRng) -> Vec<u8> {
    vec![r.below(256) as u8; r.below(80) as usize]
}

fn open() -> (Db, MemStorage) {
    let storage = MemStorage::new();
    let options = Options {
        no_sync: true,
        ..Options::default()
    };
    let db = Db::open(storage.clone(), options).expect("open");
    db.update(|tx| tx.create_bucket(BUCKET).map(drop))
        .expect("bucket");
    (db, storage)
}

#[test]
fn the_iavl_tree_stays_balanced_and_holds_what_was_inserted() {
    let mut r = SimRng::derive(11, "iavl-test");
    let mut tree = IavlTree::new();
    let mut model = BTreeMap::new();
    for version in 0..40 {
        for _ in 0..r.range(1, 60) {
            let (k, v) = (key(&mut r), value(&mut r));
            tree.insert(&k, &v);
            model.insert(k, v);
            tree.check()
                .unwrap_or_else(|e| panic!("version {version}: {e}"));
        }
        assert_eq!(tree.len(), model.len() as u64);
        for (k, v) in &model {
            assert_eq!(tree.get(k), Some(v.as_slice()));
        }
        assert_eq!(tree.get(b"\xff\xff"), None);
        tree.save(PresizePolicy::Grow);
        tree.check().expect("a save keeps the tree valid");
    }
    // An AVL tree of n leaves is at most ≈1.44 log2(n) high.
    let bound = 1.45 * (model.len() as f64).log2() + 2.0;
    assert!(
        f64::from(tree.height()) <= bound,
        "{} > {bound}",
        tree.height()
    );
}

/// A decoded node record: (key, leaf value or children's node keys).
enum Stored {
    Leaf(Vec<u8>, Vec<u8>),
    Inner([u8; NODE_KEY_SIZE], [u8; NODE_KEY_SIZE]),
}

fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn node_key(version: u64, nonce: u64) -> [u8; NODE_KEY_SIZE] {
    let mut k = [0u8; NODE_KEY_SIZE];
    k[0] = b'n';
    k[1..9].copy_from_slice(&version.to_be_bytes());
    k[9..].copy_from_slice(&(nonce as u32).to_be_bytes());
    k
}

fn decode(bytes: &[u8]) -> Stored {
    let mut at = 0;
    let height = varint(bytes, &mut at);
    let _size = varint(bytes, &mut at);
    let _version = varint(bytes, &mut at);
    let key_len = varint(bytes, &mut at) as usize;
    let key = bytes[at..at + key_len].to_vec();
    at += key_len;
    if height == 0 {
        let value_len = varint(bytes, &mut at) as usize;
        assert_eq!(at + value_len, bytes.len(), "leaf value fills the record");
        return Stored::Leaf(key, bytes[at..].to_vec());
    }
    at += 32;
    let left = node_key(varint(bytes, &mut at), varint(bytes, &mut at));
    let right = node_key(varint(bytes, &mut at), varint(bytes, &mut at));
    assert_eq!(at, bytes.len(), "inner record fully read");
    Stored::Inner(left, right)
}

/// The leaves reachable from `version`'s root record, read back from the database.
fn read_version(db: &Db, version: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut leaves = BTreeMap::new();
    db.view(|tx| {
        let b = tx.bucket(BUCKET)?.expect("bucket");
        let mut root_key = vec![b'r'];
        root_key.extend_from_slice(&version.to_be_bytes());
        let mut stack = vec![b.get(&root_key)?.expect("root record").to_vec()];
        while let Some(node_key) = stack.pop() {
            let record = b.get(&node_key)?.expect("every referenced node is stored");
            match decode(&record) {
                Stored::Leaf(k, v) => assert!(leaves.insert(k, v).is_none()),
                Stored::Inner(l, r) => stack.extend([l.to_vec(), r.to_vec()]),
            }
        }
        Ok(())
    })
    .expect("read");
    leaves
}

#[test]
fn every_iavl_version_reads_back_and_saves_only_new_nodes() {
    let mut r = SimRng::derive(12, "iavl-test");
    let (db, _) = open();
    let mut tree = IavlTree::new();
    let mut model = BTreeMap::new();
    let mut history = Vec::new();
    for _ in 0..30 {
        let version = tree.version();
        for _ in 0..r.range(1, 40) {
            let (k, v) = (key(&mut r), value(&mut r));
            tree.insert(&k, &v);
            model.insert(k, v);
        }
        let batch = tree.save(PresizePolicy::Estimate);
        // Only nodes created by this version, and its root record: persisted subtrees are
        // referenced, never written again.
        for record in batch.records().expect("valid batch") {
            let crashlab_engine::batch::Record::Put { key, .. } = record else {
                panic!("a save only puts");
            };
            assert_eq!(&key[1..9], &version.to_be_bytes(), "record {key:02x?}");
        }
        db.write(batch).expect("write");
        history.push((version, model.clone()));
    }
    // Every version, old ones included, reads back exactly as it was.
    for (version, expected) in &history {
        assert_eq!(&read_version(&db, *version), expected, "version {version}");
    }
}

/// Run the same IAVL workload under `policy`: the batches, their buffer work, and the file.
fn iavl_run(policy: PresizePolicy) -> (Vec<WriteBatch>, Vec<(u64, u64)>, Vec<u8>) {
    let mut r = SimRng::derive(13, "iavl-test");
    let (db, storage) = open();
    let mut tree = IavlTree::new();
    let (mut batches, mut work) = (Vec::new(), Vec::new());
    for _ in 0..25 {
        for _ in 0..r.range(1, 200) {
            tree.insert(&key(&mut r), &value(&mut r));
        }
        let exact_size = tree.exact_size();
        let batch = tree.save(policy);
        let w = batch.buffer_work();
        if policy == PresizePolicy::Exact {
            assert_eq!(
                w.bytes_reserved,
                batch.encoded_len() as u64,
                "reserved exactly"
            );
            assert_eq!(exact_size, (batch.encoded_len(), w.size_computation_steps));
        }
        work.push((w.reallocations, w.size_computation_steps));
        batches.push(batch.clone());
        db.write(batch).expect("write");
    }
    drop(db);
    (batches, work, storage.snapshot())
}

#[test]
fn iavl_batches_and_files_are_the_same_under_every_policy() {
    let [grow, exact, estimate] = POLICIES.map(iavl_run);
    assert!(grow.0 == exact.0 && grow.0 == estimate.0, "same batches");
    assert!(grow.2 == exact.2 && grow.2 == estimate.2, "same file");
    for (i, batch) in exact.0.iter().enumerate() {
        let records = batch.len() as u64;
        // Exact walks every new node once (the root record is not a node) and never grows.
        assert_eq!(exact.1[i], (0, records - 1), "batch {i}");
        assert_eq!(grow.1[i].1, 0);
        assert_eq!(estimate.1[i].1, 0);
        assert!(grow.1[i].0 > 0, "a Grow batch of {records} records grew");
    }
}

#[test]
fn geth_batches_are_the_same_under_every_policy_and_the_free_size_is_exact() {
    let mut outputs = Vec::new();
    for policy in POLICIES {
        let mut r = SimRng::derive(14, "geth-test");
        let mut buffer = NodeBuffer::new();
        let mut flushed = Vec::new();
        for _ in 0..10 {
            for _ in 0..r.range(1, 300) {
                let mut hash = [0u8; 32];
                // A small hash space, so some nodes are replaced before the flush.
                hash[0] = r.below(64) as u8;
                hash[1] = r.below(16) as u8;
                buffer.insert(hash, vec![7; r.range(50, 600) as usize]);
            }
            let size = buffer.size();
            let len = buffer.len() as u64;
            let batch = buffer.flush(policy);
            assert!(buffer.is_empty());
            assert_eq!(batch.encoded_len(), size);
            assert_eq!(batch.len() as u64, len);
            let work = batch.buffer_work();
            match policy {
                PresizePolicy::Grow => assert!(work.reallocations > 0),
                PresizePolicy::Exact => {
                    assert_eq!((work.reallocations, work.size_computation_steps), (0, len))
                }
                PresizePolicy::Estimate => {
                    assert_eq!((work.reallocations, work.size_computation_steps), (0, 0))
                }
            }
            flushed.push(batch);
        }
        outputs.push(flushed);
    }
    assert!(outputs[0] == outputs[1] && outputs[0] == outputs[2]);
}
