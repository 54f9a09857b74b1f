//! The engine in lockstep with `KvModel`: random sequences of bucket and key operations,
//! commits, rollbacks and reopens, with read snapshots held across commits. After every
//! operation the engine's answer matches the model's; after every commit and reopen the whole
//! database equals the committed model, every open reader still sees its own snapshot, and
//! `check()` finds nothing. Runs for each freelist kind × freelist synced or not.

use crate::common;

use common::SyncedMem;
use crashlab_engine::{Db, Error, FreelistKind, Options, ReadTx, WriteTx};
use crashlab_models::{KvModel, ModelError};
use proptest::prelude::*;
use std::collections::BTreeMap;

type Path = Vec<Vec<u8>>;
/// Every bucket by path → (values, sequence).
type State = BTreeMap<Path, (BTreeMap<Vec<u8>, Vec<u8>>, u64)>;

#[derive(Clone, Debug)]
enum Op {
    CreateBucket(Path),
    DeleteBucket(Path),
    Put(Path, Vec<u8>, usize),
    Delete(Path, Vec<u8>),
    NextSequence(Path),
    Commit,
    Rollback,
    Reopen,
    /// Power cut: reopen from the last synced image.
    Crash,
    BeginReader,
    EndReader(usize),
}

fn path() -> impl Strategy<Value = Path> {
    prop::collection::vec(
        prop::sample::select(vec![b"a".to_vec(), b"b".to_vec(), b"k1".to_vec()]),
        1..=3,
    )
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => (0u8..48).prop_map(|i| format!("k{i}").into_bytes()),
        1 => (0u8..4).prop_map(|i| vec![b'L' + i; 300]),
    ]
}

fn value_len() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..80, 2 => 200usize..1500, 1 => 3000usize..12000]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => path().prop_map(Op::CreateBucket),
        1 => path().prop_map(Op::DeleteBucket),
        12 => (path(), key(), value_len()).prop_map(|(p, k, n)| Op::Put(p, k, n)),
        5 => (path(), key()).prop_map(|(p, k)| Op::Delete(p, k)),
        1 => path().prop_map(Op::NextSequence),
        3 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        1 => Just(Op::Reopen),
        1 => Just(Op::Crash),
        1 => Just(Op::BeginReader),
        1 => (0usize..4).prop_map(Op::EndReader),
    ]
}

fn value_of(key: &[u8], len: usize, salt: usize) -> Vec<u8> {
    (0..len)
        .map(|i| key[i % key.len()].wrapping_add((i + salt) as u8))
        .collect()
}

fn to_model(e: Error) -> ModelError {
    match e {
        Error::BucketNotFound => ModelError::BucketNotFound,
        Error::BucketExists => ModelError::BucketExists,
        Error::IncompatibleValue { .. } => ModelError::Incompatible,
        other => panic!("unexpected engine error: {other}"),
    }
}

/// Every bucket by path → (values, sequence), read through a snapshot.
fn snapshot(tx: &ReadTx<'_>) -> State {
    let mut out = BTreeMap::new();
    let mut stack: Vec<Path> = Vec::new();
    let mut c = tx.cursor().unwrap();
    let mut it = c.first().unwrap();
    while let Some(e) = it {
        stack.push(vec![e.key().to_vec()]);
        it = c.next().unwrap();
    }
    while let Some(p) = stack.pop() {
        let refs: Vec<&[u8]> = p.iter().map(Vec::as_slice).collect();
        let b = tx
            .bucket_path(&refs)
            .unwrap()
            .expect("listed bucket exists");
        let mut values = BTreeMap::new();
        let mut c = b.cursor();
        let mut it = c.first().unwrap();
        while let Some(e) = it {
            let (k, v) = e.to_item();
            match v {
                Some(v) => {
                    values.insert(k, v);
                }
                None => {
                    let mut child = p.clone();
                    child.push(k);
                    stack.push(child);
                }
            }
            it = c.next().unwrap();
        }
        out.insert(p, (values, b.sequence()));
    }
    out
}

fn model_snapshot(m: &KvModel) -> State {
    m.flatten()
        .into_iter()
        .map(|(p, b)| (p, (b.values.clone(), b.sequence)))
        .collect()
}

fn refs(p: &Path) -> Vec<&[u8]> {
    p.iter().map(Vec::as_slice).collect()
}

/// Apply one data operation to the open write transaction and the pending model.
fn apply(tx: &mut WriteTx<'_>, m: &mut KvModel, op: &Op, salt: usize) {
    match op {
        Op::CreateBucket(p) => {
            let (name, parent) = p.split_last().unwrap();
            let got = match tx.bucket_path_mut(&refs(&parent.to_vec())) {
                Ok(Some(mut b)) => b.create_bucket(name).map(|_| ()).map_err(to_model),
                Ok(None) => Err(ModelError::BucketNotFound),
                Err(e) => Err(to_model(e)),
            };
            assert_eq!(got, m.create_bucket(p), "{op:?}");
        }
        Op::DeleteBucket(p) => {
            let (name, parent) = p.split_last().unwrap();
            let got = match tx.bucket_path_mut(&refs(&parent.to_vec())) {
                Ok(Some(mut b)) => b.delete_bucket(name).map_err(to_model),
                Ok(None) => Err(ModelError::BucketNotFound),
                Err(e) => Err(to_model(e)),
            };
            assert_eq!(got, m.delete_bucket(p), "{op:?}");
        }
        Op::Put(p, k, n) => {
            let v = value_of(k, *n, salt);
            let got = match tx.bucket_path_mut(&refs(p)).unwrap() {
                Some(mut b) => b
                    .put(k, &v)
                    .map_err(to_model)
                    .map(|()| b.get(k).unwrap().map(|v| v.to_vec())),
                None => Err(ModelError::BucketNotFound),
            };
            let want = m.put(p, k, &v).map(|()| Some(v));
            assert_eq!(got, want, "{op:?}");
        }
        Op::Delete(p, k) => {
            let got = match tx.bucket_path_mut(&refs(p)).unwrap() {
                Some(mut b) => b.delete(k).map_err(to_model),
                None => Err(ModelError::BucketNotFound),
            };
            assert_eq!(got, m.delete(p, k), "{op:?}");
            if let Some(b) = tx.bucket_path_mut(&refs(p)).unwrap() {
                assert!(b.get(k).unwrap().is_none(), "deleted key still readable");
            }
        }
        Op::NextSequence(p) => {
            let got = tx
                .bucket_path_mut(&refs(p))
                .unwrap()
                .map(|mut b| b.next_sequence());
            let want = m.bucket_mut(p).map(|b| {
                b.sequence += 1;
                b.sequence
            });
            assert_eq!(got, want, "{op:?}");
        }
        _ => unreachable!("not a data operation"),
    }
}

fn run(ops: &[Op], options: Options) {
    let mut mem = SyncedMem::new();
    let mut committed = KvModel::new();
    let mut i = 0;
    while i < ops.len() {
        let db = Db::open(mem.clone(), options.clone()).unwrap();
        assert_eq!(
            snapshot(&db.begin_read().unwrap()),
            model_snapshot(&committed),
            "after open"
        );
        assert_eq!(db.check().unwrap(), vec![], "check after open");
        let mut readers: Vec<(ReadTx<'_>, KvModel)> = Vec::new();
        let mut tx: Option<(WriteTx<'_>, KvModel)> = None;
        let mut crashed = false;
        while i < ops.len() {
            let op = &ops[i];
            i += 1;
            match op {
                Op::Reopen => break,
                Op::Crash => {
                    crashed = true;
                    break;
                }
                Op::Commit => {
                    if let Some((t, pending)) = tx.take() {
                        t.commit().unwrap();
                        committed = pending;
                    }
                    assert_eq!(
                        snapshot(&db.begin_read().unwrap()),
                        model_snapshot(&committed)
                    );
                    for (r, m) in &readers {
                        assert_eq!(snapshot(r), model_snapshot(m), "reader snapshot moved");
                    }
                    assert_eq!(db.check().unwrap(), vec![], "check after commit");
                }
                Op::Rollback => {
                    if let Some((t, _)) = tx.take() {
                        t.rollback();
                    }
                }
                Op::BeginReader => {
                    if readers.len() < 4 {
                        readers.push((db.begin_read().unwrap(), committed.clone()));
                    }
                }
                Op::EndReader(n) => {
                    if *n < readers.len() {
                        readers.remove(*n);
                    }
                }
                data => {
                    let (t, m) =
                        tx.get_or_insert_with(|| (db.begin_write().unwrap(), committed.clone()));
                    apply(t, m, data, i);
                }
            }
        }
        drop(tx);
        drop(readers);
        drop(db);
        if crashed {
            // Every acknowledged commit was synced, so the synced image holds all of them.
            mem = mem.crash();
        }
    }
}

fn configs() -> Vec<Options> {
    let mut out = Vec::new();
    for freelist in [FreelistKind::Array, FreelistKind::Hashmap] {
        for no_freelist_sync in [false, true] {
            out.push(Options {
                freelist,
                no_freelist_sync,
                ..Options::default()
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_model(
        ops in prop::collection::vec(op(), 1..160),
        page_size in prop::sample::select(vec![512u32, 1024, 4096]),
    ) {
        for options in configs() {
            run(&ops, Options { page_size, ..options });
        }
    }
}
