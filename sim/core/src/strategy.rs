//! A proptest strategy over [`Op`], drawing from the same universe as the seeded generator, so
//! a property over whole workloads shrinks a failure to a short list of operations.

use crate::op::{Name, Op, Path};
use crate::workload::keys::{KeyShape, KEYS};
use proptest::prelude::*;

fn path() -> impl Strategy<Value = Path> {
    prop::sample::select(vec![
        vec!["a"],
        vec!["b"],
        vec!["a", "x"],
        vec!["b", "y"],
        vec!["b", "y", "z"],
    ])
    .prop_map(|p| p.into_iter().map(Name::new).collect())
}

fn key() -> impl Strategy<Value = Name> {
    (0..KEYS).prop_map(|n| KeyShape::Short.key(n))
}

fn len() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0u32..80, 3 => 200u32..1200, 1 => 2000u32..9000]
}

/// One operation; `crashes` allows power cuts.
pub fn op(crashes: bool) -> BoxedStrategy<Op> {
    let base = prop_oneof![
        30 => (path(), key(), len(), 0u32..1000).prop_map(|(path, key, len, version)| Op::Put { path, key, len, version }),
        10 => (path(), key()).prop_map(|(path, key)| Op::Delete { path, key }),
        8 => (path(), key()).prop_map(|(path, key)| Op::Get { path, key }),
        3 => path().prop_map(|path| Op::Scan { path }),
        5 => path().prop_map(Op::CreateBucket),
        1 => path().prop_map(Op::DeleteBucket),
        12 => Just(Op::Commit),
        2 => Just(Op::Rollback),
        2 => Just(Op::BeginReader),
        2 => (0u32..4).prop_map(Op::EndReader),
        1 => Just(Op::Reopen),
    ];
    if crashes {
        prop_oneof![20 => base, 1 => Just(Op::Crash), 1 => (1u32..12).prop_map(Op::PowerCutIn)]
            .boxed()
    } else {
        base.boxed()
    }
}

/// A workload: the two top-level buckets created and committed, then `ops`.
pub fn workload(max_ops: usize, crashes: bool) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(crashes), 1..max_ops).prop_map(|rest| {
        let mut ops = vec![
            Op::CreateBucket(vec![Name::new("a")]),
            Op::CreateBucket(vec![Name::new("b")]),
            Op::Commit,
        ];
        ops.extend(rest);
        ops
    })
}
