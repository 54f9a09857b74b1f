//! The engine's public surface beyond get, scan and put: cursor ranges (seek to present and
//! absent keys, first, last, next, prev, limits), bucket sequences, and nesting up to and past
//! the limit (keys at and past theirs are in `key_limit`). Each from a stream of its own,
//! inserted into the generated operations, so the operations a seed drew before these existed
//! keep their order.

use super::keys::KeyShape;
use super::{key, path};
use crate::adapter::Capabilities;
use crate::op::{KeyRange, Name, Op, Path};
use crate::rng::SimRng;
use crashlab_models::BUCKET_DEPTH_MAX;

/// Insert the surface operations an engine with `caps` supports.
pub(super) fn add(
    seed: u64,
    ops: &mut Vec<Op>,
    buckets: &[&[&str]],
    caps: &Capabilities,
    shape: &KeyShape,
) {
    add_ranges(seed, ops, buckets, shape);
    if caps.sequences {
        add_sequences(seed, ops);
        add_lone_sequences(seed, ops, buckets);
    }
    if caps.nested_buckets {
        add_deep_nesting(seed, ops);
        add_collisions(seed, ops, buckets);
        add_bucket_lifecycles(seed, ops);
    }
    if caps.refuses_long_keys {
        super::key_limit::add(seed, ops, buckets);
    }
}

/// A range read after some reads and writes, over the same bucket or another.
fn add_ranges(seed: u64, ops: &mut Vec<Op>, buckets: &[&[&str]], shape: &KeyShape) {
    let mut r = SimRng::derive(seed, "ranges");
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 8);
    for op in ops.drain(..) {
        let after = matches!(op, Op::Get { .. } | Op::Scan { .. } | Op::Commit);
        out.push(op);
        if after && r.chance(0.25) {
            out.push(Op::Range {
                path: path(&mut r, buckets),
                range: key_range(&mut r, shape),
            });
        }
    }
    *ops = out;
}

/// A bound that names a key of the workload's universe (often present) or a key between two of
/// them (never present: a seek lands on the next key).
fn bound(r: &mut SimRng, shape: &KeyShape) -> Option<Name> {
    match r.below(3) {
        0 => None,
        1 => Some(key(r, shape)),
        _ => {
            let mut between = key(r, shape);
            between.0.push(b'x');
            Some(between)
        }
    }
}

fn key_range(r: &mut SimRng, shape: &KeyShape) -> KeyRange {
    let (a, b) = (bound(r, shape), bound(r, shape));
    // Ordered, so most ranges hold something; an inverted range is kept now and then.
    let (from, to) = match (&a, &b) {
        (Some(x), Some(y)) if x.0 > y.0 && !r.chance(0.1) => (b, a),
        _ => (a, b),
    };
    KeyRange {
        from,
        to,
        reverse: r.chance(0.5),
        limit: r.chance(0.4).then(|| r.below(6) as u32),
    }
}

/// Sequences: a put is sometimes followed by the bucket's next sequence number, and a few
/// buckets have theirs set (near `u64::MAX` too, so it wraps).
fn add_sequences(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "sequences");
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 16);
    for op in ops.drain(..) {
        let path = match &op {
            Op::Put { path, .. } => Some(path.clone()),
            _ => None,
        };
        out.push(op);
        let Some(path) = path else { continue };
        match r.below(100) {
            0..=7 => out.push(Op::NextSequence { path }),
            8 => {
                let value = *r.pick(&[0, 41, u64::MAX - 1, u64::MAX]);
                out.push(Op::SetSequence { path, value });
            }
            _ => {}
        }
    }
    *ops = out;
}

/// Transactions that change a bucket's sequence and nothing else, after some commits: the
/// sequences above always follow a put to the same bucket, which has made it dirty already, so
/// a sequence change that does not make its bucket dirty (written back at commit) shows only
/// here. From a stream of their own.
fn add_lone_sequences(seed: u64, ops: &mut Vec<Op>, buckets: &[&[&str]]) {
    let mut r = SimRng::derive(seed, "lone sequences");
    after_commits(ops, &mut r, 0.15, |r| {
        let path = path(r, buckets);
        let change = match r.below(4) {
            0 => Op::SetSequence {
                path,
                value: r.range(1, 1000),
            },
            _ => Op::NextSequence { path },
        };
        vec![change, Op::Commit]
    });
}

/// Insert `fragment`'s operations after each commit, with probability `p` (drawn from `r` at
/// each commit, before the fragment's own draws).
fn after_commits(
    ops: &mut Vec<Op>,
    r: &mut SimRng,
    p: f64,
    mut fragment: impl FnMut(&mut SimRng) -> Vec<Op>,
) {
    let mut out = Vec::with_capacity(ops.len() + ops.len() / 8);
    for op in ops.drain(..) {
        let commit = matches!(op, Op::Commit);
        out.push(op);
        if commit && r.chance(p) {
            out.extend(fragment(r));
        }
    }
    *ops = out;
}

/// For some seeds, a chain of buckets as deep as the engine allows, one bucket past it (refused),
/// a value at the bottom read back through a range, and the chain deleted later.
fn add_deep_nesting(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "deep nesting");
    if !r.chance(0.15) || ops.len() < 4 {
        return;
    }
    let at = r.range(3, ops.len() as u64) as usize;
    let chain: Path = std::iter::once(Name::new("deep"))
        .chain((2..=BUCKET_DEPTH_MAX).map(|d| Name::new(format!("n{d}"))))
        .collect();
    let mut fragment: Vec<Op> = (1..=chain.len())
        .map(|d| Op::CreateBucket(chain[..d].to_vec()))
        .collect();
    fragment.push(Op::Commit);
    let mut past = chain.clone();
    past.push(Name::new("past"));
    fragment.push(Op::CreateBucket(past));
    fragment.push(Op::Put {
        path: chain.clone(),
        key: Name::new("bottom"),
        len: r.range(0, 3000) as u32,
        version: u32::MAX,
    });
    fragment.push(Op::Commit);
    fragment.push(Op::Range {
        path: chain,
        range: KeyRange::default(),
    });
    let end = r.range(at as u64, ops.len() as u64) as usize;
    ops.insert(end, Op::DeleteBucket(vec![Name::new("deep")]));
    ops.splice(at..at, fragment);
}

/// The name the collision fragments give to both kinds of item. No key shape draws it (a drawn
/// key ends in `k` and its number, or is a binary key of bytes below 8, 0x00 and 0xFF), and no
/// bucket path or group call uses it, so a fragment cut short by a rollback or a crash leaves an
/// item that only the next fragments meet (and the model knows).
pub const CROSSED: &str = "crossed";

/// For half the seeds, after some commits, a name used for both kinds of item in one bucket: a
/// sub-bucket, then a value put, read and deleted under its name, or a value, then a bucket
/// created and deleted under its key. A key holds a value or a bucket, never both (bbolt refuses
/// the other kind with "incompatible value"), and the workload's keys and bucket names never meet
/// otherwise. From a stream of its own.
fn add_collisions(seed: u64, ops: &mut Vec<Op>, buckets: &[&[&str]]) {
    let mut r = SimRng::derive(seed, "collisions");
    if !r.chance(0.5) {
        return;
    }
    // Versions above the workload's and below the groups' (which set bit 30), one per put.
    let mut version = 1 << 29;
    after_commits(ops, &mut r, 0.1, |r| {
        version += 1;
        collision(r, buckets, version)
    });
}

/// One fragment of [`add_collisions`]: the item of one kind, the other kind's operations on its
/// name (refused while the item is there; the get answers as the model does), and the item
/// deleted; committed half way now and then, so that the item is on disk too.
fn collision(r: &mut SimRng, buckets: &[&[&str]], version: u32) -> Vec<Op> {
    let parent = path(r, buckets);
    let key = Name::new(CROSSED);
    let mut bucket = parent.clone();
    bucket.push(key.clone());
    let put = Op::Put {
        path: parent.clone(),
        key: key.clone(),
        len: r.range(0, 200) as u32,
        version,
    };
    let get = Op::Get {
        path: parent.clone(),
        key: key.clone(),
    };
    let delete = Op::Delete { path: parent, key };
    let commit = r.chance(0.5).then_some(Op::Commit);
    if r.chance(0.5) {
        let mut ops = vec![Op::CreateBucket(bucket.clone()), put, get, delete];
        ops.extend(commit);
        ops.push(Op::DeleteBucket(bucket));
        ops
    } else {
        let mut ops = vec![put, Op::CreateBucket(bucket.clone()), get];
        ops.extend(commit);
        ops.extend([Op::DeleteBucket(bucket), delete]);
        ops
    }
}

/// The top-level bucket of the lifecycle fragments, its sub-bucket and one level below: names no
/// other operation uses, so a fragment cut short leaves buckets only the next fragments meet.
pub const LIFECYCLE: [&str; 3] = ["lifecycle", "held", "below"];

/// For half the seeds, after some commits, a bucket with sub-buckets below it that a later
/// transaction writes into and then deletes, then a live check. Deleting a bucket this
/// transaction wrote frees its tree from the nodes it holds and the sub-buckets stored in them
/// from their pages, unless it opened them too: the workload's own bucket deletes rarely meet
/// that mix. From a stream of its own.
fn add_bucket_lifecycles(seed: u64, ops: &mut Vec<Op>) {
    let mut r = SimRng::derive(seed, "bucket lifecycle");
    if !r.chance(0.5) {
        return;
    }
    // Versions above the collision fragments' and below the groups', one per put.
    let mut version = 3 << 28;
    after_commits(ops, &mut r, 0.05, |r| lifecycle(r, &mut version));
}

/// One fragment of [`add_bucket_lifecycles`]: the buckets built and committed, one value written
/// into the top one (and, now and then, into its sub-bucket, which opens it too), the top one
/// deleted, committed and checked.
fn lifecycle(r: &mut SimRng, version: &mut u32) -> Vec<Op> {
    let path =
        |depth: usize| -> Path { LIFECYCLE[..depth].iter().map(|s| Name::new(*s)).collect() };
    let mut put = |r: &mut SimRng, depth: usize, i: u64| {
        *version += 1;
        Op::Put {
            path: path(depth),
            key: Name::new(format!("v{i}")),
            // Past an inline bucket's quarter page at every page size up to 4 KiB.
            len: r.range(200, 1200) as u32,
            version: *version,
        }
    };
    let deep = if r.chance(0.5) { 3 } else { 2 };
    let mut ops: Vec<Op> = (1..=deep).map(|d| Op::CreateBucket(path(d))).collect();
    for i in 0..r.range(2, 6) {
        ops.push(put(r, 2, i));
    }
    if deep == 3 {
        ops.push(put(r, 3, 0));
    }
    ops.push(Op::Commit);
    ops.push(put(r, 1, 0));
    if r.chance(0.3) {
        ops.push(put(r, 2, 9));
    }
    ops.extend([Op::DeleteBucket(path(1)), Op::Commit, Op::Check]);
    ops
}
