//! Keys at the engine's size limit and one byte past it. The keys the workload draws are at most
//! a tenth of the limit (the long key shape's 3,003 bytes), so a limit off by one, either way,
//! would never be met: a key of exactly the limit refused, or one past it taken. From a stream
//! of its own, for engines that declare the limit only.

use super::path;
use crate::op::{KeyRange, Name, Op, Path};
use crate::rng::SimRng;
use crashlab_models::KEY_LEN_MAX;

/// The share of seeds that put keys at the limit: each such key is 32 KiB, spelled out in every
/// operation of a saved case, so a few seeds in a sweep carry them and most stay small.
const SEEDS: f64 = 0.125;

/// The byte a limit key repeats: one sorts before every drawn key, one among them (`k` is the
/// short keys' first byte, so `kkk…` sorts after `k47`) and one after all but the binary keys.
const FILL: &[u8] = b"0Mk~";

/// For some seeds: a value put under a key of exactly the limit and one past it (refused), both
/// read back, committed; a top-level bucket named at the limit (one past it refused) holding a
/// value; the limit key's bucket read through a range; the key and the bucket deleted later. The
/// limit key shares a bucket with the workload's keys, so it also becomes a branch separator
/// eight times a 4 KiB page.
pub(super) fn add(seed: u64, ops: &mut Vec<Op>, buckets: &[&[&str]]) {
    let mut r = SimRng::derive(seed, "key limit");
    if !r.chance(SEEDS) || ops.len() < 4 {
        return;
    }
    let at = r.range(3, ops.len() as u64) as usize;
    let bucket = path(&mut r, buckets);
    let fill = *r.pick(FILL);
    let limit = Name::new(vec![fill; KEY_LEN_MAX]);
    let past = Name::new(vec![fill; KEY_LEN_MAX + 1]);
    let named: Path = vec![limit.clone()];
    let mut put = |path: &Path, key: &Name| Op::Put {
        path: path.clone(),
        key: key.clone(),
        len: r.range(0, 3000) as u32,
        version: u32::MAX,
    };
    let fragment = vec![
        put(&bucket, &limit),
        put(&bucket, &past),
        Op::Get {
            path: bucket.clone(),
            key: limit.clone(),
        },
        Op::Get {
            path: bucket.clone(),
            key: past.clone(),
        },
        Op::Commit,
        Op::CreateBucket(vec![past.clone()]),
        Op::CreateBucket(named.clone()),
        put(&named, &limit),
        Op::Commit,
        Op::Range {
            path: bucket.clone(),
            range: KeyRange {
                reverse: r.chance(0.5),
                ..KeyRange::default()
            },
        },
    ];
    let end = r.range(at as u64, ops.len() as u64) as usize;
    let cleanup = [
        Op::Delete {
            path: bucket.clone(),
            key: limit,
        },
        Op::Delete {
            path: bucket,
            key: past,
        },
        Op::DeleteBucket(named),
    ];
    ops.splice(end..end, cleanup);
    ops.splice(at..at, fragment);
}
