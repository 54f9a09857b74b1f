//! Seeded workload generation over [`Op`].
//!
//! A small universe of bucket paths and keys, so operations collide (overwrites, deletes of
//! present keys, buckets deleted with data in them). Values range from empty to several pages
//! (overflow). Bursts of fill-then-delete fragment the freelist. Commits are frequent; rollbacks,
//! long-lived readers, reopens and power cuts are sprinkled in.

mod key_limit;
pub mod keys;
pub mod scale;
mod surface;

pub use surface::{CROSSED, LIFECYCLE};

use crate::adapter::Capabilities;
use crate::op::{KeyRange, Name, Op, Path};
use crate::rng::SimRng;
use keys::{KeyShape, KEYS};

/// Bucket paths for engines with nested buckets.
const BUCKETS: [&[&str]; 5] = [&["a"], &["b"], &["a", "x"], &["b", "y"], &["b", "y", "z"]];
/// Bucket paths for engines whose buckets (tables) are all top-level: as many paths, so the
/// mix of operations per bucket is the same shape; "c" is created on demand.
const FLAT_BUCKETS: [&[&str]; 5] = [&["a"], &["b"], &["c"], &["a"], &["b"]];

fn path(r: &mut SimRng, buckets: &[&[&str]]) -> Path {
    r.pick(buckets).iter().map(|s| Name::new(*s)).collect()
}

fn key(r: &mut SimRng, shape: &KeyShape) -> Name {
    shape.key(r.below(KEYS))
}

fn value_len(r: &mut SimRng) -> u32 {
    match r.below(20) {
        0 => r.range(2000, 9000) as u32, // overflow pages at every page size
        1..=4 => r.range(200, 1200) as u32,
        _ => r.range(0, 80) as u32,
    }
}

/// `count` operations for `seed` on an engine that can do `caps`: one without nested buckets
/// gets top-level buckets only (the operation mix is otherwise the same). `crashes` allows power
/// cuts in the mix.
pub fn generate(seed: u64, count: usize, crashes: bool, caps: &Capabilities) -> Vec<Op> {
    let buckets: &[&[&str]] = if caps.nested_buckets {
        &BUCKETS
    } else {
        &FLAT_BUCKETS
    };
    let mut r = SimRng::derive(seed, "workload");
    let shape = KeyShape::of_seed(seed).for_run(count);
    let mut ops = vec![
        Op::CreateBucket(vec![Name::new("a")]),
        Op::CreateBucket(vec![Name::new("b")]),
        Op::Commit,
    ];
    let mut version = 0u32;
    while ops.len() < count {
        version += 1;
        let roll = r.below(100);
        match roll {
            0..=34 => ops.push(Op::Put {
                path: path(&mut r, buckets),
                key: key(&mut r, &shape),
                len: value_len(&mut r),
                version,
            }),
            35..=46 => ops.push(Op::Delete {
                path: path(&mut r, buckets),
                key: key(&mut r, &shape),
            }),
            47..=56 => ops.push(Op::Get {
                path: path(&mut r, buckets),
                key: key(&mut r, &shape),
            }),
            57..=59 => ops.push(Op::Scan {
                path: path(&mut r, buckets),
            }),
            60..=64 => ops.push(Op::CreateBucket(path(&mut r, buckets))),
            65 => ops.push(Op::DeleteBucket(path(&mut r, buckets))),
            66..=79 => ops.push(Op::Commit),
            80..=81 => ops.push(Op::Rollback),
            82..=84 => ops.push(Op::BeginReader),
            85..=87 => ops.push(Op::EndReader(r.below(4) as u32)),
            88 => ops.push(Op::Reopen),
            89..=90 if crashes => ops.push(Op::Crash),
            91 if crashes => ops.push(Op::PowerCutIn(r.range(1, 12) as u32)),
            93..=94 if crashes => {
                // Cut the power inside the next commit.
                ops.push(Op::PowerCutIn(r.range(1, 8) as u32));
                ops.push(Op::Commit);
            }
            92 => fragment(&mut r, buckets, &mut ops, &mut version),
            _ => ops.push(Op::Commit),
        }
    }
    add_reader_patterns(seed, &mut ops);
    if caps.concurrent_callers {
        add_groups(seed, &mut ops);
    }
    surface::add(seed, &mut ops, buckets, caps, &shape);
    add_live_checks(seed, &mut ops);
    ops.truncate(count);
    ops
}

/// Readers in the patterns a single draw rarely makes: a second reader of the same snapshot
/// right after one begins, and a reader opened first thing after a reopen or a crash (on the
/// recovered state). From a stream of their own, like the groups below.
fn add_reader_patterns(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "reader patterns");
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 16);
    for op in ops.drain(..) {
        let after = match op {
            Op::BeginReader => 0.3,
            Op::Reopen | Op::Crash => 0.4,
            _ => 0.0,
        };
        out.push(op);
        if after > 0.0 && r.chance(after) {
            out.push(Op::BeginReader);
        }
    }
    *ops = out;
}

/// Live integrity checks at seeded points: after commits, after rollbacks, and while readers
/// are open (a check right after a reader begins runs beside it).
fn add_live_checks(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "live checks");
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 16);
    for op in ops.drain(..) {
        let after = match op {
            Op::Commit => 0.08,
            Op::Rollback => 0.3,
            Op::BeginReader => 0.15,
            _ => 0.0,
        };
        out.push(op);
        if after > 0.0 && r.chance(after) {
            out.push(Op::Check);
        }
    }
    *ops = out;
}

/// Swarm over concurrent callers: half the seeds get groups of callers after some commits, up
/// to a per-seed maximum from 1 to 64 callers. From a stream of their own, so the operations of
/// a seed without groups are what they were before groups existed.
fn add_groups(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "callers");
    if !r.chance(0.5) {
        return;
    }
    let most = *r.pick(&[1u64, 2, 4, 8, 16, 32, 64]);
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 8);
    for op in ops.drain(..) {
        let after_commit = matches!(op, Op::Commit);
        out.push(op);
        if after_commit && r.chance(0.15) {
            out.push(Op::Group {
                callers: r.range(1, most) as u32,
                calls: 1,
                seed: r.next_u64() as u32,
                schedule: None,
            });
        }
    }
    *ops = out;
}

/// Fill a bucket with many values, commit, delete most of them, scan it forward and read it
/// backward, commit. The values are large, so most leaves hold one or two and the deletes empty
/// some: both walks cross them before the commit rebalances them away (a committed tree has no
/// empty leaf to show a cursor that stops at one: controls `empty-leaf-ends-scan` and
/// `empty-leaf-ends-reverse-scan`). The backward read draws nothing, so no other draw moves.
fn fragment(r: &mut SimRng, buckets: &[&[&str]], ops: &mut Vec<Op>, version: &mut u32) {
    let p = path(r, buckets);
    let n = r.range(10, 40);
    let len = r.range(300, 3000) as u32;
    for i in 0..n {
        *version += 1;
        ops.push(Op::Put {
            path: p.clone(),
            key: Name::new(format!("f{i}")),
            len,
            version: *version,
        });
    }
    ops.push(Op::Commit);
    for i in (0..n).filter(|i| i % 3 != 0) {
        ops.push(Op::Delete {
            path: p.clone(),
            key: Name::new(format!("f{i}")),
        });
    }
    ops.push(Op::Scan { path: p.clone() });
    ops.push(Op::Range {
        path: p,
        range: KeyRange {
            reverse: true,
            ..KeyRange::default()
        },
    });
    ops.push(Op::Commit);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generate(seed: u64, count: usize, crashes: bool) -> Vec<Op> {
        let caps = Capabilities {
            nested_buckets: true,
            ..Capabilities::default()
        };
        super::generate(seed, count, crashes, &caps)
    }

    #[test]
    fn generation_is_deterministic_and_varied() {
        let a = generate(9, 500, true);
        assert_eq!(a, generate(9, 500, true));
        assert_ne!(a, generate(10, 500, true));
        assert_eq!(a.len(), 500);
        assert!(a.iter().any(|o| matches!(o, Op::Crash)));
        assert!(a
            .iter()
            .any(|o| matches!(o, Op::Put { len, .. } if *len >= 2000)));
        assert!(a.iter().any(|o| matches!(o, Op::PowerCutIn(_))));
        assert!(!generate(9, 500, false)
            .iter()
            .any(|o| matches!(o, Op::Crash | Op::PowerCutIn(_))));
    }
}
