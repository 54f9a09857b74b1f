//! Properties of `WriteBatch`: both merge strategies give the records of the inputs, in order;
//! `from_bytes` never panics on random or mutated bytes, and what it accepts re-encodes to the
//! same bytes.

use crashlab_engine::batch::{MergeStrategy, Record, WriteBatch};
use proptest::prelude::*;

/// One operation as plain owned data: the model the batches are checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    is_put: bool,
    path: Vec<Vec<u8>>,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn op() -> impl Strategy<Value = Op> {
    let component = prop::collection::vec(any::<u8>(), 0..8);
    let path = prop::collection::vec(component, 1..=3);
    let bytes = || prop::collection::vec(any::<u8>(), 0..=300);
    (any::<bool>(), path, bytes(), bytes()).prop_map(|(is_put, path, key, value)| Op {
        is_put,
        path,
        key,
        // A delete carries no value.
        value: if is_put { value } else { Vec::new() },
    })
}

fn batches() -> impl Strategy<Value = Vec<Vec<Op>>> {
    prop::collection::vec(prop::collection::vec(op(), 0..8), 0..6)
}

fn build(ops: &[Op]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for op in ops {
        let path: Vec<&[u8]> = op.path.iter().map(Vec::as_slice).collect();
        if op.is_put {
            batch.put(&path, &op.key, &op.value);
        } else {
            batch.delete(&path, &op.key);
        }
    }
    batch
}

fn to_op(record: &Record<'_>) -> Op {
    let owned = |path: &[&[u8]]| path.iter().map(|c| c.to_vec()).collect();
    match record {
        Record::Put { path, key, value } => Op {
            is_put: true,
            path: owned(path),
            key: key.to_vec(),
            value: value.to_vec(),
        },
        Record::Delete { path, key } => Op {
            is_put: false,
            path: owned(path),
            key: key.to_vec(),
            value: Vec::new(),
        },
    }
}

/// Encode decoded records again through the public API.
fn reencode(records: &[Record<'_>]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for record in records {
        match record {
            Record::Put { path, key, value } => batch.put(path, key, value),
            Record::Delete { path, key } => batch.delete(path, key),
        }
    }
    batch
}

/// `from_bytes` must not panic; when it accepts, decoding succeeds and re-encodes identically.
fn check_adoption(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let original = bytes.clone();
    if let Ok(batch) = WriteBatch::from_bytes(bytes) {
        prop_assert_eq!(batch.as_bytes(), &original[..]);
        let records = batch
            .records()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(records.len(), batch.len());
        let reencoded = reencode(&records);
        prop_assert_eq!(reencoded.as_bytes(), &original[..]);
    }
    Ok(())
}

/// A byte change to apply to a valid encoding.
#[derive(Clone, Debug)]
enum Mutation {
    Set {
        index: prop::sample::Index,
        byte: u8,
    },
    Truncate {
        index: prop::sample::Index,
    },
    Append {
        bytes: Vec<u8>,
    },
    Insert {
        index: prop::sample::Index,
        byte: u8,
    },
    Remove {
        index: prop::sample::Index,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let index = any::<prop::sample::Index>;
    prop_oneof![
        (index(), any::<u8>()).prop_map(|(index, byte)| Mutation::Set { index, byte }),
        (
            index(),
            prop_oneof![Just(0u8), Just(1), Just(2), Just(64), Just(65), Just(0xff)]
        )
            .prop_map(|(index, byte)| Mutation::Set { index, byte }),
        index().prop_map(|index| Mutation::Truncate { index }),
        prop::collection::vec(any::<u8>(), 1..12).prop_map(|bytes| Mutation::Append { bytes }),
        (index(), any::<u8>()).prop_map(|(index, byte)| Mutation::Insert { index, byte }),
        index().prop_map(|index| Mutation::Remove { index }),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    match mutation {
        Mutation::Set { index, byte } => bytes[index.index(len)] = *byte,
        Mutation::Truncate { index } => bytes.truncate(index.index(len)),
        Mutation::Append { bytes: extra } => bytes.extend_from_slice(extra),
        Mutation::Insert { index, byte } => bytes.insert(index.index(len + 1), *byte),
        Mutation::Remove { index } => {
            bytes.remove(index.index(len));
        }
    }
}

proptest! {
    #[test]
    fn both_merges_give_the_concatenated_records(ops in batches()) {
        let inputs: Vec<WriteBatch> = ops.iter().map(|ops| build(ops)).collect();
        let refs: Vec<&WriteBatch> = inputs.iter().collect();
        let (appended, append_work) = WriteBatch::merge(&refs, MergeStrategy::Append).unwrap();
        let (rebuilt, rebuild_work) = WriteBatch::merge(&refs, MergeStrategy::Rebuild).unwrap();

        let mut concatenated = Vec::new();
        for batch in &inputs {
            concatenated.extend(batch.records().unwrap());
        }
        prop_assert_eq!(appended.records().unwrap(), concatenated.clone());
        prop_assert_eq!(rebuilt.records().unwrap(), concatenated.clone());

        // And against the plain model: the ops themselves, in order.
        let model: Vec<Op> = ops.iter().flatten().cloned().collect();
        let decoded: Vec<Op> = concatenated.iter().map(to_op).collect();
        prop_assert_eq!(decoded, model.clone());
        prop_assert_eq!(appended.len(), model.len());

        // Work figures: both write every record byte once; only Rebuild decodes and encodes.
        let record_size: usize = inputs.iter().map(|b| b.encoded_len() - 4).sum();
        prop_assert_eq!(append_work.bytes_copied, record_size as u64);
        prop_assert_eq!(rebuild_work.bytes_copied, record_size as u64);
        prop_assert_eq!(append_work.records_decoded + append_work.records_encoded, 0);
        prop_assert_eq!(rebuild_work.records_decoded, model.len() as u64);
        prop_assert_eq!(rebuild_work.records_encoded, model.len() as u64);
        prop_assert_eq!(appended.encoded_len(), 4 + record_size);
        prop_assert_eq!(appended.as_bytes(), rebuilt.as_bytes());
    }

    #[test]
    fn from_bytes_on_random_bytes_never_panics(
        count in 0u32..4,
        body in prop::collection::vec(any::<u8>(), 0..200),
        raw in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        // Raw bytes, and bytes behind a plausible small count.
        check_adoption(raw)?;
        let mut bytes = count.to_le_bytes().to_vec();
        bytes.extend_from_slice(&body);
        check_adoption(bytes)?;
    }

    #[test]
    fn from_bytes_on_mutated_encodings_never_panics(
        ops in prop::collection::vec(op(), 0..5),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = build(&ops).as_bytes().to_vec();
        for mutation in &mutations {
            if !bytes.is_empty() {
                apply(&mut bytes, mutation);
            }
        }
        check_adoption(bytes)?;
    }

    #[test]
    fn valid_encodings_are_adopted_unchanged(ops in prop::collection::vec(op(), 0..8)) {
        let batch = build(&ops);
        let adopted = WriteBatch::from_bytes(batch.as_bytes().to_vec()).unwrap();
        prop_assert_eq!(&adopted, &batch);
        check_adoption(batch.as_bytes().to_vec())?;
    }
}
