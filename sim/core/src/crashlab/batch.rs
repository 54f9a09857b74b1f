//! A transaction's operations as one batched call: a `WriteBatch` through `Db::write` when they
//! are all puts and deletes, else a `Db::batch` function (bucket creation and deletion have no
//! record in a write batch).

use super::engine_apply;
use crate::apply::path_refs;
use crate::op::{value_bytes, Op};
use crashlab_engine::batch::{Record, WriteBatch};
use crashlab_engine::{Db, Error, PresizePolicy, WriteTx};
use std::sync::Arc;

pub(super) fn commit(db: &Db, ops: &[Op]) -> Result<(), Error> {
    let records_only = ops
        .iter()
        .all(|op| matches!(op, Op::Put { .. } | Op::Delete { .. }));
    if records_only {
        db.write(write_batch(ops, db.options().presize, false))
    } else {
        let ops = Arc::new(ops.to_vec());
        db.batch(move |tx| ops.iter().try_for_each(|op| engine_apply(tx, op)))
    }
}

/// The puts and deletes of `ops` as one batch, its buffer sized by `policy`; with `fails`, a last
/// record no engine accepts (an empty key), so the batch fails by design after its records.
pub(super) fn write_batch(ops: &[Op], policy: PresizePolicy, fails: bool) -> WriteBatch {
    let values: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match op {
            Op::Put {
                key, len, version, ..
            } => value_bytes(key, *len, *version),
            _ => Vec::new(),
        })
        .collect();
    let mut records: Vec<Record<'_>> = ops
        .iter()
        .zip(&values)
        .map(|(op, value)| match op {
            Op::Put { path, key, .. } => Record::Put {
                path: path_refs(path),
                key: &key.0,
                value,
            },
            Op::Delete { path, key } => Record::Delete {
                path: path_refs(path),
                key: &key.0,
            },
            other => unreachable!("{other} is not a record"),
        })
        .collect();
    if fails {
        let path = records.first().map_or_else(Vec::new, |r| match r {
            Record::Put { path, .. } | Record::Delete { path, .. } => path.clone(),
        });
        records.push(Record::Put {
            path,
            key: b"",
            value: b"an empty key is refused",
        });
    }
    // A size known for free: the values' bytes plus a guess per record for the rest.
    let estimate = values.iter().map(Vec::len).sum::<usize>() + 32 * records.len();
    WriteBatch::with_policy(policy, &records, estimate)
}

/// Apply a call's operation as a write batch's record would: a put creates missing buckets on
/// its path, a delete in a missing bucket does nothing.
pub(super) fn apply_creating(tx: &mut WriteTx<'_>, op: &Op) -> Result<(), Error> {
    match op {
        Op::Put {
            path,
            key,
            len,
            version,
        } => {
            for depth in 1..=path.len() {
                let (parent, name) = path[..depth].split_at(depth - 1);
                if tx.bucket_path_mut(&path_refs(&path[..depth]))?.is_none() {
                    match tx.bucket_path_mut(&path_refs(parent))? {
                        Some(mut b) => {
                            b.create_bucket(&name[0].0)?;
                        }
                        None => unreachable!("the parent was created at the depth before"),
                    }
                }
            }
            match tx.bucket_path_mut(&path_refs(path))? {
                Some(mut b) => b.put(&key.0, &value_bytes(key, *len, *version)),
                None => unreachable!("every bucket on the path was just created"),
            }
        }
        Op::Delete { path, key } => match tx.bucket_path_mut(&path_refs(path))? {
            Some(mut b) => b.delete(&key.0).map(|_| ()),
            None => Ok(()),
        },
        other => unreachable!("{other} is not in a call"),
    }
}
