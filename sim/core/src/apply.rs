//! Data operations applied to the engine and to the model side by side: the engine's answer is
//! compared with the model's, and the model follows only what both did.

use crate::op::{value_bytes, Name, Op};
use crashlab_models::{KvModel, ModelError};

pub fn owned(p: &[Name]) -> Vec<Vec<u8>> {
    p.iter().map(|n| n.0.clone()).collect()
}

pub fn path_refs(p: &[Name]) -> Vec<&[u8]> {
    p.iter().map(|n| n.0.as_slice()).collect()
}

/// How a data operation went when engine and model agreed.
pub(crate) enum Applied {
    Done,
    /// Both refused it, for this reason.
    Refused(ModelError),
}

/// How a data operation went when they did not.
pub(crate) enum ApplyFailure<E> {
    /// Engine and model disagree: a violation.
    Mismatch(String),
    /// The engine failed with an error the model has no counterpart for.
    Engine(E),
}

/// Apply a data operation in the engine (`engine`) and to `model`; `model` changes only when
/// both did it. `refusal` says which of the engine's errors are refusals the model also makes.
pub(crate) fn apply_checked<E>(
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
pub fn model_apply(m: &mut KvModel, op: &Op) -> Result<(), ModelError> {
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
        Op::SetSequence { path, value } => m.set_sequence(&owned(path), *value),
        Op::NextSequence { path } => m.next_sequence(&owned(path)).map(|_| ()),
        other => unreachable!("{other} is not a data operation"),
    }
}
