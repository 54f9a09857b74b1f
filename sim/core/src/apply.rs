//! Data operations applied to the engine and to the model side by side: the engine's answer is
//! compared with the model's, and the model follows only what both did. Used by the runner and
//! by the crash-state checker's recorded run.

use crate::op::{value_bytes, Op, Path};
use crashlab_engine::{Error, WriteTx};
use crashlab_models::{KvModel, ModelError};

pub(crate) fn owned(p: &Path) -> Vec<Vec<u8>> {
    p.iter().map(|n| n.0.clone()).collect()
}

pub(crate) fn path_refs(p: &Path) -> Vec<&[u8]> {
    p.iter().map(|n| n.0.as_slice()).collect()
}

fn model_error(e: &Error) -> Option<ModelError> {
    match e {
        Error::BucketNotFound => Some(ModelError::BucketNotFound),
        Error::BucketExists => Some(ModelError::BucketExists),
        Error::IncompatibleValue { .. } => Some(ModelError::Incompatible),
        _ => None,
    }
}

/// How a data operation went when engine and model agreed.
pub(crate) enum Applied {
    Done,
    /// Both refused it, for this reason.
    Refused(ModelError),
}

/// How a data operation went when they did not.
pub(crate) enum ApplyFailure<E = Error> {
    /// Engine and model disagree: a violation.
    Mismatch(String),
    /// The engine failed with an error the model has no counterpart for.
    Engine(E),
}

/// Apply a data operation in `tx` and to `model`. `model` changes only when both did it.
pub(crate) fn apply_checked(
    tx: &mut WriteTx<'_>,
    model: &mut KvModel,
    op: &Op,
) -> Result<Applied, ApplyFailure> {
    apply_checked_with(model, op, |op| engine_apply(tx, op), model_error)
}

/// [`apply_checked`] for any engine: `engine` applies the operation, `refusal` says which
/// of its errors are refusals the model also makes.
pub(crate) fn apply_checked_with<E>(
    model: &mut KvModel,
    op: &Op,
    engine: impl FnOnce(&Op) -> Result<(), E>,
    refusal: impl Fn(&E) -> Option<ModelError>,
) -> Result<Applied, ApplyFailure<E>> {
    let mut next = model.clone();
    let want = model_apply(&mut next, op);
    match engine(op) {
        Ok(()) if want.is_ok() => {
            *model = next;
            Ok(Applied::Done)
        }
        Ok(()) => Err(ApplyFailure::Mismatch(format!(
            "engine accepted, model says {want:?}"
        ))),
        Err(e) => match (refusal(&e), want) {
            (Some(me), Err(w)) if me == w => Ok(Applied::Refused(me)),
            (Some(me), w) => Err(ApplyFailure::Mismatch(format!(
                "engine refused {me:?}, model {w:?}"
            ))),
            (None, _) => Err(ApplyFailure::Engine(e)),
        },
    }
}

/// Apply a data operation to the model alone.
pub(crate) fn model_apply(m: &mut KvModel, op: &Op) -> Result<(), ModelError> {
    match op {
        Op::CreateBucket(p) => m.create_bucket(&owned(p)),
        Op::DeleteBucket(p) => m.delete_bucket(&owned(p)),
        Op::Put {
            path,
            key,
            len,
            version,
        } => m.put(&owned(path), &key.0, &value_bytes(key, *len, *version)),
        Op::Delete { path, key } => m.delete(&owned(path), &key.0).map(|_| ()),
        other => unreachable!("{other} is not a data operation"),
    }
}

/// Apply a data operation in the engine's write transaction alone.
pub(crate) fn engine_apply(tx: &mut WriteTx<'_>, op: &Op) -> Result<(), Error> {
    let missing = || Err(Error::BucketNotFound);
    match op {
        Op::CreateBucket(p) | Op::DeleteBucket(p) => {
            let (name, parent) = p.split_last().expect("paths are non-empty");
            let parent = parent.to_vec();
            match tx.bucket_path_mut(&path_refs(&parent)) {
                Ok(Some(mut b)) if matches!(op, Op::CreateBucket(_)) => {
                    b.create_bucket(&name.0).map(|_| ())
                }
                Ok(Some(mut b)) => b.delete_bucket(&name.0),
                Ok(None) => missing(),
                Err(e) => Err(e),
            }
        }
        Op::Put {
            path,
            key,
            len,
            version,
        } => match tx.bucket_path_mut(&path_refs(path)) {
            Ok(Some(mut b)) => b.put(&key.0, &value_bytes(key, *len, *version)),
            Ok(None) => missing(),
            Err(e) => Err(e),
        },
        Op::Delete { path, key } => match tx.bucket_path_mut(&path_refs(path)) {
            Ok(Some(mut b)) => b.delete(&key.0).map(|_| ()),
            Ok(None) => missing(),
            Err(e) => Err(e),
        },
        other => unreachable!("{other} is not a data operation"),
    }
}
