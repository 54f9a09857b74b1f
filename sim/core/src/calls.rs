//! Groups of concurrent callers (`group callers=N seed=S`): what each caller submits, how a call
//! changes the model, and how an engine tells the driver what its coalescer did.
//!
//! A call is a few puts and deletes, submitted as a write batch or as a batch function, and one
//! call in ten fails by design after its operations (an invalid record, or the function's own
//! error). Both kinds share one rule, the one write batches have: a put creates missing buckets
//! on its path, and a delete in a missing bucket does nothing — so a call fails only by design,
//! whatever state it meets, and its expected answer is known.

use crate::adapter::caps::Capabilities;
use crate::adapter::error::{Ack, EngineError};
use crate::apply::owned;
use crate::limits::{CALLERS_MAX, CALLS_PER_CALLER_MAX};
use crate::op::{value_bytes, Name, Op, Path};
use crate::rng::SimRng;
use crate::workload::keys::{KeyShape, KEYS};
use crashlab_models::KvModel;
use std::sync::Arc;
use std::time::Duration;

/// One call of one caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSpec {
    /// Which caller makes it; a caller's calls are in group order, each submitted after the
    /// previous one's answer.
    pub caller: u32,
    /// How long the caller thinks before submitting it: after the group starts for its first
    /// call, after its previous answer for the others (simulated time).
    pub think: Duration,
    /// Submitted as a write batch of records, else as a batch function.
    pub as_write_batch: bool,
    /// Puts and deletes, shared with the batch function that applies them (a call is taken
    /// into a batch, and run again alone when its batch asks, without copying them).
    pub ops: Arc<[Op]>,
    /// The call fails by design after its operations.
    pub fails: bool,
}

/// The calls of `group callers=N calls=C seed=S` for an engine that can do `caps`: `calls`
/// per caller, caller by caller.
pub fn group_calls(callers: u32, calls: u32, seed: u32, caps: &Capabilities) -> Vec<CallSpec> {
    let paths: &[&[&str]] = if caps.nested_buckets {
        &[&["a"], &["b"], &["a", "x"], &["b", "y"]]
    } else {
        &[&["a"], &["b"]]
    };
    let mut r = SimRng::derive(u64::from(seed), "group");
    let per = calls.clamp(1, CALLS_PER_CALLER_MAX);
    (0..callers.min(CALLERS_MAX))
        .flat_map(|c| (0..per).map(move |k| (c, k)))
        .map(|(c, k)| {
            let ops = (0..r.range(1, 3))
                .map(|j| {
                    let path: Path = r.pick(paths).iter().map(|s| Name::new(*s)).collect();
                    // Short keys whatever the seed's key shape: a group's calls are drawn from
                    // the group's own seed, which a case file pins apart from the run's.
                    let key = KeyShape::Short.key(r.below(KEYS));
                    if r.chance(0.2) {
                        return Op::Delete { path, key };
                    }
                    // Versions far above a workload's, one per put of the group.
                    let version = 1 << 30 | (seed % (1 << 8)) << 22 | c << 16 | k << 4 | j as u32;
                    let len = match r.below(10) {
                        0 => r.range(1000, 3000),
                        _ => r.range(1, 300),
                    } as u32;
                    Op::Put {
                        path,
                        key,
                        len,
                        version,
                    }
                })
                .collect();
            CallSpec {
                caller: c,
                // A madsim sleep lasts at least 1 ms, as does a batch's I/O: thinking up to 2 ms
                // makes callers miss or catch the batch being formed.
                think: Duration::from_micros(r.range(0, 2000)),
                as_write_batch: r.chance(0.5),
                ops,
                fails: r.chance(0.1),
            }
        })
        .collect()
}

/// Apply a call that succeeded to the model: puts create missing buckets on their path, deletes
/// in a missing bucket do nothing.
pub fn apply_call(model: &mut KvModel, call: &CallSpec) {
    for op in call.ops.iter() {
        match op {
            Op::Put {
                path,
                key,
                len,
                version,
            } => {
                for depth in 1..=path.len() {
                    let _ = model.create_bucket(&owned(&path[..depth]));
                }
                let value = value_bytes(key, *len, *version);
                model
                    .put(&owned(path), &key.0, &value)
                    .unwrap_or_else(|e| panic!("a call's put cannot be refused: {e:?}"));
            }
            Op::Delete { path, key } => {
                let _ = model.delete(&owned(path), &key.0);
            }
            other => unreachable!("{other} is not in a call"),
        }
    }
}

/// What an engine tells the driver while it runs a group: every commit its coalescer makes,
/// before it writes anything and when it ended, so the oracle and the checker know at every
/// storage call what may be on disk.
pub trait GroupObserver {
    /// The calls `calls` (indexes into the group, in the order they were applied) are about to
    /// become one commit.
    fn before_commit(&mut self, calls: &[usize]);
    /// That commit ended.
    fn after_commit(&mut self, result: &Result<Ack, EngineError>);
    /// The simulated time the disk spent on I/O since the last time this was asked: how long
    /// the leader's batch took, for callers to wait on.
    fn io_time(&mut self) -> Duration;
}
