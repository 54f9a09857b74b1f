//! A transaction's operations as one batched call: a `WriteBatch` through `Db::write` when they
//! are all puts and deletes, else a `Db::batch` function (bucket creation and deletion have no
//! record in a write batch).

use super::engine_apply;
use crate::apply::path_refs;
use crate::op::{value_bytes, Op};
use crashlab_engine::batch::{Record, WriteBatch};
use crashlab_engine::{Db, Error, PresizePolicy};
use std::sync::Arc;

pub(super) fn commit(db: &Db, ops: &[Op]) -> Result<(), Error> {
    let records_only = ops
        .iter()
        .all(|op| matches!(op, Op::Put { .. } | Op::Delete { .. }));
    if records_only {
        db.write(write_batch(ops, db.options().presize))
    } else {
        let ops = Arc::new(ops.to_vec());
        db.batch(move |tx| ops.iter().try_for_each(|op| engine_apply(tx, op)))
    }
}

/// The puts and deletes of `ops` as one batch, its buffer sized by `policy`.
fn write_batch(ops: &[Op], policy: PresizePolicy) -> WriteBatch {
    let values: Vec<Vec<u8>> = ops
        .iter()
        .map(|op| match op {
            Op::Put {
                key, len, version, ..
            } => value_bytes(key, *len, *version),
            _ => Vec::new(),
        })
        .collect();
    let records: Vec<Record<'_>> = ops
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
    // A size known for free: the values' bytes plus a guess per record for the rest.
    let estimate = values.iter().map(Vec::len).sum::<usize>() + 32 * records.len();
    WriteBatch::with_policy(policy, &records, estimate)
}
