//! Scale patterns: the bursts the `scale` profile adds to a seed's workload so that it reaches
//! the sizes where the format changes shape, cheaply (on 512-byte pages every one is a few
//! megabytes at most, except the freelist escape's 33 MiB fill).
//!
//! | pattern | what it does | threshold it reaches |
//! |---|---|---|
//! | `escape` | fill with values of ≤ 12 MiB until 0xFFFF + 2,048 pages are taken, commit, delete them all, commit, put some back | a freelist page of ≥ 0xFFFF ids (the count escape) over ≥ 64 pages; 2,048-page overflow chains of ~22,500 pages; the file grown past 16 MiB |
//! | `deep` | hundreds of keys of 40–160 bytes in one bucket, committed in rounds; rounds of churn (below); then most of them deleted | bucket trees of ≥ 4 levels, merges below them, branch merges in commits that also put |
//! | `buckets` | 1,000–1,200 top-level buckets, a few filled, then most deleted | thousands of buckets (the root bucket's tree deep too) |
//! | `overflow` | values of 64–4,096 pages, overwritten and deleted | long overflow chains allocated from and freed to the freelist |
//!
//! Each seed draws its patterns (at least one) and where each goes, from a stream of its own, so
//! the rest of the workload is the seed's `default` workload. The deep pattern's churn draws from
//! a stream of its own too, so adding it moved no other draw. The patterns are added after the
//! workload is cut to its operation count: they come on top of it.
//!
//! **Churn.** Deleting most keys at once merges leaves and branches, but in commits that only
//! delete. A tree's separators also change between commits: when a branch's first key rises
//! and its left neighbour stays a page the commit did not read, the engine may keep the parent's
//! separator, lower than the branch's own first one; a later put lands between the two, under
//! the branch's first child. A merge in that commit must keep the tree in order (regression
//! 018, control (w) `merge-keeps-branch-separator`). So each churn round, around a key `k`
//! drawn from the sorted keys: delete `k` alone and commit; put `k` back and delete the run of
//! keys after it in one commit (the run can empty a branch, which then merges); put every other
//! key of the run back and commit, so the tree keeps its depth.

use crate::adapter::Capabilities;
use crate::op::{Name, Op, Path};
use crate::rng::SimRng;

/// A scale pattern's name, for docs and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pattern {
    Escape,
    Deep,
    Buckets,
    Overflow,
}

impl Pattern {
    pub const ALL: [Pattern; 4] = [
        Pattern::Escape,
        Pattern::Deep,
        Pattern::Buckets,
        Pattern::Overflow,
    ];
}

/// Churn rounds per deep pattern, and the longest run a round deletes after its key: on
/// 512-byte pages a leaf holds a few of these keys and a branch a handful of children, so a run
/// of 32 can empty a branch. Fewer rounds (4–10, runs of up to 40) caught control (w) on 3 of
/// seeds 0..60 under `scale`, these on 13.
const CHURN_ROUNDS_MIN: u64 = 16;
const CHURN_ROUNDS_MAX: u64 = 32;
const CHURN_RUN_MAX: u64 = 32;

/// The largest value of the escape fill (three of them at 512 B, chains of ~22,500 pages).
const ESCAPE_VALUE_LEN_MAX: u32 = 12 << 20;
/// Free ids the escape fill leaves once deleted: past 0xFFFF by a margin, so the escape holds
/// across the pages the next commits take back.
const ESCAPE_PAGES: u64 = 0xFFFF + 2048;
/// The escape fill is left out where it would take more than this (pages larger than 512 B).
const ESCAPE_BYTES_MAX: u64 = 40 << 20;

/// The patterns seed `seed` adds: each with probability 1/2, at least one.
pub fn patterns(seed: u64) -> Vec<Pattern> {
    let mut r = SimRng::derive(seed, "scale patterns");
    let mut chosen: Vec<Pattern> = Pattern::ALL.into_iter().filter(|_| r.chance(0.5)).collect();
    if chosen.is_empty() {
        chosen.push(*r.pick(&Pattern::ALL));
    }
    chosen
}

/// Add seed `seed`'s scale patterns to `ops`, each after a commit in the first half of the
/// workload (or at its end when it has none), for an engine of `caps`.
pub fn add(seed: u64, ops: &mut Vec<Op>, caps: &Capabilities) {
    add_with(seed, ops, caps, Churn::Drawn);
}

/// Whether the deep pattern churns: always in a run; `Off` is for tests that show what only
/// the churn catches (the rest of the workload is the same either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Churn {
    Drawn,
    Off,
}

/// [`add`], with the deep pattern's churn as `churn` says.
pub fn add_with(seed: u64, ops: &mut Vec<Op>, caps: &Capabilities, churn: Churn) {
    let mut r = SimRng::derive(seed, "scale");
    let mut churn_rng = SimRng::derive(seed, "scale churn");
    let rounds = match churn {
        Churn::Drawn => churn_rng.range(CHURN_ROUNDS_MIN, CHURN_ROUNDS_MAX),
        Churn::Off => 0,
    };
    for pattern in patterns(seed) {
        let burst = match pattern {
            Pattern::Escape => escape(&mut r, caps.page_size),
            Pattern::Deep => deep(&mut r, (&mut churn_rng, rounds)),
            Pattern::Buckets => buckets(&mut r),
            Pattern::Overflow => overflow(&mut r, caps.page_size),
        };
        let at = insertion_point(&mut r, ops);
        ops.splice(at..at, burst);
    }
}

/// Just after a seeded commit in the first half of `ops`, or the end.
fn insertion_point(r: &mut SimRng, ops: &[Op]) -> usize {
    let half = ops.len() / 2;
    let commits: Vec<usize> = ops[..half]
        .iter()
        .enumerate()
        .filter(|(_, op)| matches!(op, Op::Commit))
        .map(|(i, _)| i + 1)
        .collect();
    if commits.is_empty() {
        ops.len()
    } else {
        *r.pick(&commits)
    }
}

fn name(s: String) -> Name {
    Name::new(s)
}

fn bucket(s: &str) -> Path {
    vec![Name::new(s)]
}

/// A version no other put of the workload uses (theirs count up from 1).
fn version(r: &mut SimRng) -> u32 {
    (1 << 30) + r.below(1 << 20) as u32
}

fn escape(r: &mut SimRng, page_size: u32) -> Vec<Op> {
    let page_size = u64::from(page_size.max(512));
    let bytes = ESCAPE_PAGES * page_size;
    if bytes > ESCAPE_BYTES_MAX {
        return Vec::new();
    }
    // Few values, so the 33 MiB is in the committed state for as few operations as possible:
    // every reader that begins then reads all of it.
    let values = bytes.div_ceil(u64::from(ESCAPE_VALUE_LEN_MAX));
    let len = bytes.div_ceil(values).div_ceil(page_size) * page_size;
    let len = u32::try_from(len).expect("at most ESCAPE_VALUE_LEN_MAX");
    let p = bucket("scale");
    let v = version(r);
    let mut ops = vec![Op::CreateBucket(p.clone())];
    for i in 0..values {
        ops.push(Op::Put {
            path: p.clone(),
            key: name(format!("big{i}")),
            len,
            version: v,
        });
        if r.chance(0.3) {
            ops.push(Op::Commit);
        }
    }
    ops.push(Op::Commit);
    for i in 0..values {
        ops.push(Op::Delete {
            path: p.clone(),
            key: name(format!("big{i}")),
        });
    }
    ops.push(Op::Commit);
    // Take some of it back: up to 1.5 MiB, so the list stays escaped or drops under 0xFFFF ids
    // (the margin is 1 MiB at 512 B), as the seed says.
    for i in 0..r.below(4) {
        ops.push(Op::Put {
            path: p.clone(),
            key: name(format!("back{i}")),
            len: ESCAPE_VALUE_LEN_MAX / 24,
            version: v + 1,
        });
    }
    ops.push(Op::Commit);
    ops
}

fn deep(r: &mut SimRng, (churn_rng, rounds): (&mut SimRng, u64)) -> Vec<Op> {
    let p = bucket("deep");
    let n = r.range(300, 1200);
    let v = version(r);
    let mut ops = vec![Op::CreateBucket(p.clone())];
    let keys: Vec<Name> = (0..n).map(|i| long_key(r, i)).collect();
    for (i, key) in keys.iter().enumerate() {
        ops.push(Op::Put {
            path: p.clone(),
            key: key.clone(),
            len: r.range(0, 40) as u32,
            version: v,
        });
        if i % 200 == 199 {
            ops.push(Op::Commit);
        }
    }
    ops.push(Op::Commit);
    ops.extend(churn(churn_rng, rounds, &p, &keys, v));
    // Most go again (merges below four levels), so the rest of the run reads a small tree.
    for key in keys.iter().filter(|_| r.chance(0.85)) {
        ops.push(Op::Delete {
            path: p.clone(),
            key: key.clone(),
        });
    }
    ops.push(Op::Commit);
    ops
}

/// `rounds` churn rounds on the deep tree of `keys` in bucket `p` (the module's doc says why).
fn churn(r: &mut SimRng, rounds: u64, p: &Path, keys: &[Name], version: u32) -> Vec<Op> {
    let mut sorted = keys.to_vec();
    sorted.sort();
    let put = |key: &Name| Op::Put {
        path: p.clone(),
        key: key.clone(),
        len: 8,
        version,
    };
    let delete = |key: &Name| Op::Delete {
        path: p.clone(),
        key: key.clone(),
    };
    let mut ops = Vec::new();
    for _ in 0..rounds {
        let at = r.below(sorted.len() as u64) as usize;
        let end = (at + 1 + r.range(1, CHURN_RUN_MAX) as usize).min(sorted.len());
        let (k, run) = (&sorted[at], &sorted[at + 1..end]);
        ops.extend([delete(k), Op::Commit, put(k)]);
        ops.extend(run.iter().map(delete));
        ops.push(Op::Commit);
        ops.extend(run.iter().step_by(2).map(put));
        ops.push(Op::Commit);
    }
    ops
}

/// Key `i` of a deep tree: 40–160 bytes, so a 512-byte branch holds a handful and a few hundred
/// keys make four levels. Keys sort in a seeded order, not the order they are put in.
fn long_key(r: &mut SimRng, i: u64) -> Name {
    let len = r.range(40, 160) as usize;
    let mut s = format!("{:016x}-{i}-", r.next_u64());
    while s.len() < len {
        s.push('x');
    }
    name(s)
}

fn buckets(r: &mut SimRng) -> Vec<Op> {
    let n = r.range(1000, 1200);
    let v = version(r);
    let mut ops = Vec::new();
    for i in 0..n {
        let p = bucket(&format!("w{i:05}"));
        ops.push(Op::CreateBucket(p.clone()));
        if r.chance(0.02) {
            ops.push(Op::Put {
                path: p,
                key: name(format!("k{i}")),
                len: r.range(0, 300) as u32,
                version: v,
            });
        }
        if i % 400 == 399 {
            ops.push(Op::Commit);
        }
    }
    ops.push(Op::Commit);
    // Most go again: every reader and every recovery for the rest of the run reads them all.
    for i in (0..n).filter(|_| r.chance(0.9)) {
        ops.push(Op::DeleteBucket(bucket(&format!("w{i:05}"))));
    }
    ops.push(Op::Commit);
    ops
}

fn overflow(r: &mut SimRng, page_size: u32) -> Vec<Op> {
    let p = bucket("long");
    let v = version(r);
    let mut ops = vec![Op::CreateBucket(p.clone())];
    let count = r.range(1, 5);
    let len = |r: &mut SimRng| (r.range(64, 4096) * u64::from(page_size.max(512))) as u32;
    for i in 0..count {
        let len = len(r);
        ops.push(Op::Put {
            path: p.clone(),
            key: name(format!("o{i}")),
            len,
            version: v,
        });
    }
    ops.push(Op::Commit);
    let len = len(r);
    ops.push(Op::Put {
        path: p.clone(),
        key: name("o0".into()),
        len,
        version: v + 1,
    });
    ops.push(Op::Delete {
        path: p,
        key: name(format!("o{}", count - 1)),
    });
    ops.push(Op::Commit);
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Capabilities {
        Capabilities {
            nested_buckets: true,
            page_size: 512,
            directory: false,
            ..Capabilities::default()
        }
    }

    #[test]
    fn every_pattern_is_drawn_and_every_seed_has_one() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let p = patterns(seed);
            assert!(!p.is_empty(), "seed {seed}");
            seen.extend(p);
        }
        assert_eq!(seen.len(), Pattern::ALL.len());
    }

    #[test]
    fn the_escape_fill_frees_more_than_0xffff_pages_of_512_bytes() {
        let ops = escape(&mut SimRng::new(3), 512);
        let filled: u64 = ops
            .iter()
            .take_while(|op| !matches!(op, Op::Delete { .. }))
            .map(|op| match op {
                Op::Put { len, .. } => u64::from(*len),
                _ => 0,
            })
            .sum();
        assert!(filled / 512 >= 0xFFFF + 2048, "{filled} bytes");
        assert!(escape(&mut SimRng::new(3), 4096).is_empty());
    }

    #[test]
    fn patterns_come_on_top_of_the_workload_and_are_deterministic() {
        let mut a = vec![Op::Commit; 10];
        add(5, &mut a, &caps());
        let mut b = vec![Op::Commit; 10];
        add(5, &mut b, &caps());
        assert_eq!(a, b);
        assert!(a.len() > 100, "{}", a.len());
    }
}
