//! Data operations applied to the engine and to the model side by side: the engine's answer is
//! compared with the model's, and the model follows only what both did.

use crate::op::{value_bytes, Name, Op};
use crashlab_models::{BucketModel, KvModel, ModelError};

pub fn owned(p: &[Name]) -> Vec<Vec<u8>> {
    p.iter().map(|n| n.0.clone()).collect()
}

pub fn path_refs(p: &[Name]) -> Vec<&[u8]> {
    p.iter().map(|n| n.0.as_slice()).collect()
}

/// How a data operation went when engine and model agreed.
pub(crate) enum Applied {
    /// Both did it; for a delete, whether its key was there (the model's answer, which an
    /// engine that answers gave too).
    Done(Option<bool>),
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
/// `engine` answers a delete with whether its key was there, when the engine says
/// ([`Engine::delete_in`](crate::adapter::Engine::delete_in)): an answer other than the
/// model's is a mismatch too.
///
/// The model takes the operation first and is put back from an [`Undo`] of the one slot it
/// touches when the engine did not follow: cloning the whole model per operation made a run
/// quadratic in the size of its database (the `scale` profile's thousands of buckets and 33 MiB
/// of values).
pub(crate) fn apply_checked<E>(
    model: &mut KvModel,
    op: &Op,
    engine: impl FnOnce(&Op) -> Result<Option<bool>, E>,
    refusal: impl Fn(&E) -> Option<ModelError>,
) -> Result<Applied, ApplyFailure<E>> {
    let undo = Undo::before(model, op);
    let answer = model_answer(model, op);
    let want_existed = answer.as_ref().ok().copied().flatten();
    let want = answer.map(drop);
    let took_it = want.is_ok();
    let outcome = match engine(op) {
        Ok(Some(got)) if want_existed.is_some_and(|w| w != got) => {
            Err(ApplyFailure::Mismatch(format!(
                "{op}: the engine answered that the key {}, the model that it {}",
                existed(got),
                existed(!got)
            )))
        }
        Ok(_) if want.is_ok() => return Ok(Applied::Done(want_existed)),
        Ok(_) => Err(ApplyFailure::Mismatch(format!(
            "engine accepted, model says {want:?}"
        ))),
        Err(e) => match (refusal(&e), want) {
            (Some(me), Err(w)) if me == w => Ok(Applied::Refused(me)),
            (Some(me), w) => Err(ApplyFailure::Mismatch(format!(
                "engine refused {me:?}, model {w:?}"
            ))),
            (None, _) => Err(ApplyFailure::Engine(e)),
        },
    };
    if took_it {
        undo.restore(model);
    }
    outcome
}

/// The one slot of the model a data operation writes, as it was before: a value, a bucket or a
/// sequence. The model's operations change nothing when they fail, so only a success is undone.
enum Undo {
    Value {
        bucket: Vec<Vec<u8>>,
        key: Vec<u8>,
        old: Option<Vec<u8>>,
    },
    Bucket {
        parent: Vec<Vec<u8>>,
        name: Vec<u8>,
        old: Option<BucketModel>,
    },
    Sequence {
        bucket: Vec<Vec<u8>>,
        old: u64,
    },
}

impl Undo {
    fn before(m: &KvModel, op: &Op) -> Undo {
        match op {
            Op::Put { path, key, .. } | Op::Delete { path, key } => {
                let bucket = owned(path);
                let old = m.get(&bucket, &key.0).map(<[u8]>::to_vec);
                Undo::Value {
                    bucket,
                    key: key.0.clone(),
                    old,
                }
            }
            Op::CreateBucket(p) | Op::DeleteBucket(p) => {
                let path = owned(p);
                let old = m.bucket(&path).cloned();
                let (name, parent) = path.split_last().expect("bucket paths are non-empty");
                Undo::Bucket {
                    parent: parent.to_vec(),
                    name: name.clone(),
                    old,
                }
            }
            Op::SetSequence { path, .. } | Op::NextSequence { path } => {
                let bucket = owned(path);
                let old = m.bucket(&bucket).map_or(0, |b| b.sequence);
                Undo::Sequence { bucket, old }
            }
            other => unreachable!("{other} is not a data operation"),
        }
    }

    /// Put the slot back (the operation succeeded, so its bucket exists).
    fn restore(self, m: &mut KvModel) {
        match self {
            Undo::Value { bucket, key, old } => {
                let b = m.bucket_mut(&bucket).expect("the value's bucket");
                match old {
                    Some(v) => b.values.insert(key, v),
                    None => b.values.remove(&key),
                };
            }
            Undo::Bucket { parent, name, old } => {
                let b = m.bucket_mut(&parent).expect("the bucket's parent");
                match old {
                    Some(old) => b.buckets.insert(name, old),
                    None => b.buckets.remove(&name),
                };
            }
            Undo::Sequence { bucket, old } => {
                m.bucket_mut(&bucket)
                    .expect("the sequence's bucket")
                    .sequence = old;
            }
        }
    }
}

fn existed(yes: bool) -> &'static str {
    if yes {
        "was there"
    } else {
        "was not"
    }
}

/// [`model_apply`], with what a delete answers: whether its key was there (`None` for every
/// other operation).
fn model_answer(m: &mut KvModel, op: &Op) -> Result<Option<bool>, ModelError> {
    match op {
        Op::Delete { path, key } => m.delete(&owned(path), &key.0).map(Some),
        _ => model_apply(m, op).map(|()| None),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::new(s)
    }

    #[test]
    fn an_engine_failure_leaves_the_model_as_it_was() {
        let mut m = KvModel::new();
        for op in [
            Op::CreateBucket(vec![n("a")]),
            Op::CreateBucket(vec![n("a"), n("x")]),
            Op::Put {
                path: vec![n("a")],
                key: n("k"),
                len: 3,
                version: 1,
            },
        ] {
            model_apply(&mut m, &op).unwrap();
        }
        let a = vec![n("a")];
        let ops = [
            Op::Put {
                path: a.clone(),
                key: n("k"),
                len: 9,
                version: 2,
            },
            Op::Put {
                path: a.clone(),
                key: n("new"),
                len: 1,
                version: 2,
            },
            Op::Delete {
                path: a.clone(),
                key: n("k"),
            },
            Op::CreateBucket(vec![n("b")]),
            Op::DeleteBucket(vec![n("a"), n("x")]),
            Op::DeleteBucket(a.clone()),
            Op::SetSequence {
                path: a.clone(),
                value: 7,
            },
            Op::NextSequence { path: a.clone() },
        ];
        for op in ops {
            let before = m.clone();
            let r = apply_checked(&mut m, &op, |_| Err("io"), |_| None);
            assert!(matches!(r, Err(ApplyFailure::Engine("io"))), "{op}");
            assert_eq!(m, before, "{op}");
            let r = apply_checked(&mut m, &op, |_| Ok::<_, &str>(None), |_| None);
            assert!(matches!(r, Ok(Applied::Done(_))), "{op}");
            let mut want = before.clone();
            model_apply(&mut want, &op).unwrap();
            assert_eq!(m, want, "{op}");
            m = before;
        }
    }

    #[test]
    fn a_deletes_answer_is_compared_with_the_models() {
        let mut m = KvModel::new();
        let a = vec![n("a")];
        model_apply(&mut m, &Op::CreateBucket(a.clone())).unwrap();
        let put = Op::Put {
            path: a.clone(),
            key: n("k"),
            len: 3,
            version: 1,
        };
        model_apply(&mut m, &put).unwrap();
        let before = m.clone();
        for (key, there) in [("k", true), ("absent", false)] {
            let op = Op::Delete {
                path: a.clone(),
                key: n(key),
            };
            let wrong = apply_checked(&mut m, &op, |_| Ok::<_, &str>(Some(!there)), |_| None);
            let Err(ApplyFailure::Mismatch(detail)) = wrong else {
                panic!("{op}: a wrong answer taken");
            };
            assert!(detail.contains("the engine answered"), "{detail}");
            assert_eq!(
                m, before,
                "{op}: the model follows only an engine that agrees"
            );
            for answer in [Some(there), None] {
                let r = apply_checked(&mut m, &op, |_| Ok::<_, &str>(answer), |_| None);
                assert!(
                    matches!(r, Ok(Applied::Done(existed)) if existed == Some(there)),
                    "{op} answered {answer:?}"
                );
                m = before.clone();
            }
        }
    }
}
