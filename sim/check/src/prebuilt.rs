//! Pre-built images (`check --from-image SHAPE`): a large database built once, before the checked
//! workload, so that the workload's crash states start where the format changes shape — places
//! the checker's small workloads never reach from an empty file.
//!
//! | shape | what the image holds | what a commit of the checked workload then does |
//! |---|---|---|
//! | `escaped-freelist` | 0xFFFF + 2,048 free pages (34 MiB filled in one commit, deleted in the next) | rewrites a freelist of ≥ 0xFFFF ids, whose count field escapes (`freelist-escape`), over ≥ 64 pages (`freelist-pages`) |
//! | `deep-tree` | 2,000 keys of 40–160 bytes in each of the workload's buckets `a` and `b` | rewrites a leaf of a tree of ≥ 4 levels and every branch above it (`tree-depth`) |
//! | `many-buckets` | 1,100 top-level buckets besides the workload's | acknowledges states of ≥ 1,000 buckets (`buckets`) |
//! | `long-overflow` | the workload's keys `k0`..`k7` of bucket `a` as values of 64–256 pages | frees or reads those chains when it overwrites, deletes or gets them |
//!
//! Every shape is sized for 512-byte pages, where each is cheap (the escape's 34 MiB is the
//! largest); an engine with other pages is refused. The image is built by the engine under test
//! with its options but without the check's negative control (so the image is one a correct
//! engine wrote, and a control's bug is found in what the checked workload does to it), on a
//! fault-free disk, and made durable whole; the state it holds is computed by the model from the
//! same operations. The checked run starts from it: its oracle's first state is the image's, so
//! every allowed set of a crash point includes it until a commit replaces it.
//!
//! Invariants: building is deterministic (no seeded choice at all: a shape is one image per
//! engine configuration); the returned image opens to exactly the returned state (asserted by
//! reading it back once).

use crate::CheckConfig;
use crashlab_engine::Storage;
use crashlab_models::KvModel;
use crashlab_sim::adapter::{Engine, EngineConfig};
use crashlab_sim::apply::model_apply;
use crashlab_sim::op::{Name, Op, Path};
use crashlab_sim::thresholds::{bucket_count, Thresholds, MANY_BUCKETS};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The page size every shape is sized for.
pub const IMAGE_PAGE_SIZE: u32 = 512;

/// Free pages the `escaped-freelist` image leaves: past 0xFFFF by a margin, so the list stays
/// escaped across the pages the checked workload takes back (1 MiB at 512 B; its values are at
/// most 9,000 B each).
const ESCAPE_FREE_PAGES: u64 = 0xFFFF + 2048;
/// The escape fill's values: few, so the fill is a handful of overflow chains.
const ESCAPE_VALUES: u64 = 5;
/// Keys of the `deep-tree` image, and per commit while it is built.
const DEEP_KEYS: u64 = 2000;
const DEEP_KEYS_PER_COMMIT: u64 = 500;
/// Buckets of the `many-buckets` image besides the workload's.
const MANY_BUCKETS_IMAGE: u64 = 1100;
/// Long values of the `long-overflow` image (keys `k0`..), and their length range in pages.
const LONG_VALUES: u64 = 8;
const LONG_PAGES: (u64, u64) = (64, 256);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    EscapedFreelist,
    DeepTree,
    ManyBuckets,
    LongOverflow,
}

impl Shape {
    pub const ALL: [Shape; 4] = [
        Shape::EscapedFreelist,
        Shape::DeepTree,
        Shape::ManyBuckets,
        Shape::LongOverflow,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::EscapedFreelist => "escaped-freelist",
            Shape::DeepTree => "deep-tree",
            Shape::ManyBuckets => "many-buckets",
            Shape::LongOverflow => "long-overflow",
        }
    }

    /// The threshold (by its name in [`Thresholds::named`]) a commit of the checked workload
    /// crosses on this image, if the threshold counters see one.
    pub fn threshold(self) -> Option<&'static str> {
        match self {
            Shape::EscapedFreelist => Some("freelist-escape"),
            Shape::DeepTree => Some("tree-depth"),
            Shape::ManyBuckets => Some("buckets"),
            // The counters count long chains written; the workload frees and reads them.
            Shape::LongOverflow => None,
        }
    }

    /// Why an engine of `cfg` cannot build this shape, if it cannot.
    pub fn unsupported_by<C: EngineConfig>(self, cfg: &C) -> Option<String> {
        let page_size = cfg.capabilities().page_size;
        (page_size != IMAGE_PAGE_SIZE).then(|| {
            format!(
                "--from-image {self} is sized for {IMAGE_PAGE_SIZE}-byte pages, where it is cheap \
                 to build; {}'s pages are {page_size} bytes",
                C::ENGINE
            )
        })
    }

    /// The image's operations, one transaction per inner list (each is committed).
    fn transactions(self) -> Vec<Vec<Op>> {
        match self {
            Shape::EscapedFreelist => escaped_freelist(),
            Shape::DeepTree => deep_tree(),
            Shape::ManyBuckets => many_buckets(),
            Shape::LongOverflow => long_overflow(),
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        Shape::ALL
            .into_iter()
            .find(|shape| shape.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Shape::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown image shape `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// A built image and what it holds.
#[derive(Debug)]
pub struct Prebuilt {
    pub shape: Shape,
    /// The durable image, every byte of the file.
    pub bytes: Arc<[u8]>,
    /// The state it holds: the oracle's first state in the checked run.
    pub state: Arc<KvModel>,
    pub commits: u64,
    /// What building it crossed (the checked workload's own crossings are in the report).
    pub thresholds: Thresholds,
}

/// The facts of a pre-built image a report gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageFacts {
    pub shape: Shape,
    pub bytes: u64,
    pub commits: u64,
    pub buckets: u64,
    pub thresholds: Thresholds,
}

impl Prebuilt {
    pub fn facts(&self) -> ImageFacts {
        ImageFacts {
            shape: self.shape,
            bytes: self.bytes.len() as u64,
            commits: self.commits,
            buckets: bucket_count(&self.state),
            thresholds: self.thresholds,
        }
    }
}

/// Build `shape` with `cfg`'s engine options (its control off) on a fault-free disk of `cfg`'s
/// sector size. An error is the engine's, on a disk that has no faults: a bug.
pub fn build<E: Engine>(cfg: &CheckConfig<E::Config>, shape: Shape) -> Result<Prebuilt, String> {
    if let Some(why) = shape.unsupported_by(&cfg.engine) {
        return Err(why);
    }
    let disk = cfg.fresh_disk();
    let fail = |what: &str, e: &dyn fmt::Display| format!("building image {shape}: {what}: {e}");
    let db = E::open(Box::new(disk.clone()), &cfg.engine, 0).map_err(|e| fail("open", &e))?;
    let mut state = KvModel::new();
    let mut commits = 0;
    for ops in shape.transactions() {
        let mut tx = db.begin_write().map_err(|e| fail("begin", &e))?;
        for op in &ops {
            E::apply(&mut tx, op).map_err(|e| fail(&op.to_string(), &e))?;
            model_apply(&mut state, op)
                .map_err(|e| fail(&op.to_string(), &format!("the model refuses it: {e:?}")))?;
        }
        db.commit(tx).map_err(|e| fail("commit", &e))?;
        commits += 1;
    }
    let counters = db.counters();
    db.close().map_err(|e| fail("close", &e))?;
    disk.make_all_durable();
    let bytes: Arc<[u8]> = disk.durable_image().into();
    read_back::<E>(cfg, &bytes, &state).map_err(|e| fail("reading it back", &e))?;
    let many = u64::from(bucket_count(&state) >= MANY_BUCKETS);
    Ok(Prebuilt {
        shape,
        bytes,
        state: Arc::new(state),
        commits,
        thresholds: Thresholds::of_run(&counters, many),
    })
}

/// The built image opens clean to the state the model computed.
fn read_back<E: Engine>(
    cfg: &CheckConfig<E::Config>,
    bytes: &[u8],
    state: &KvModel,
) -> Result<(), String> {
    let disk = cfg.fresh_disk();
    disk.write_at(0, bytes).map_err(|e| e.to_string())?;
    let mut db = E::open(Box::new(disk), &cfg.engine, 1).map_err(|e| e.to_string())?;
    let problems = db.check().map_err(|e| e.to_string())?;
    if !problems.is_empty() {
        return Err(format!("integrity: {}", problems.join("; ")));
    }
    let reader = db.begin_read().map_err(|e| e.to_string())?;
    let read = E::read_snapshot(&reader).map_err(|e| e.to_string())?;
    drop(reader);
    if read != *state {
        return Err("the image holds another state than the model's".into());
    }
    db.close().map_err(|e| e.to_string())
}

fn bucket(name: &str) -> Path {
    vec![Name::new(name)]
}

fn put(path: &Path, key: String, len: u64) -> Op {
    Op::Put {
        path: path.clone(),
        key: Name::new(key),
        len: u32::try_from(len).expect("an image's value fits a put"),
        // Versions the generated workload's puts (counting up from 1) never reach.
        version: 1 << 30,
    }
}

/// Fill with [`ESCAPE_VALUES`] values covering [`ESCAPE_FREE_PAGES`] pages, commit, delete them
/// (keeping one small key, so the bucket is not empty), commit: the second commit frees them all.
fn escaped_freelist() -> Vec<Vec<Op>> {
    let p = bucket("image");
    let page = u64::from(IMAGE_PAGE_SIZE);
    let len = (ESCAPE_FREE_PAGES * page).div_ceil(ESCAPE_VALUES);
    let mut fill = vec![Op::CreateBucket(p.clone())];
    fill.extend((0..ESCAPE_VALUES).map(|i| put(&p, format!("big{i}"), len)));
    let mut free: Vec<Op> = (0..ESCAPE_VALUES)
        .map(|i| Op::Delete {
            path: p.clone(),
            key: Name::new(format!("big{i}")),
        })
        .collect();
    free.push(put(&p, "kept".into(), 16));
    vec![fill, free]
}

/// Key `i` of the deep tree: 40–160 bytes (a 512-byte branch holds a handful), in an order
/// unlike the order they are put in; every one sorts before the workload's `k…` keys.
fn deep_key(i: u64) -> String {
    let len = 40 + (i * 37) % 121;
    let mut s = format!("deep-{:08x}-", (i.wrapping_mul(0x9E37_79B9)) & 0xFFFF_FFFF);
    while (s.len() as u64) < len {
        s.push('x');
    }
    s
}

/// The same deep tree in both of the workload's top-level buckets, so most workloads that
/// commit a write rewrite one.
fn deep_tree() -> Vec<Vec<Op>> {
    let buckets = [bucket("a"), bucket("b")];
    let mut txs = vec![buckets.iter().cloned().map(Op::CreateBucket).collect()];
    for round in 0..DEEP_KEYS / DEEP_KEYS_PER_COMMIT {
        let keys = round * DEEP_KEYS_PER_COMMIT..(round + 1) * DEEP_KEYS_PER_COMMIT;
        txs.push(
            buckets
                .iter()
                .flat_map(|p| keys.clone().map(|i| put(p, deep_key(i), i % 40)))
                .collect(),
        );
    }
    txs
}

fn many_buckets() -> Vec<Vec<Op>> {
    let names: Vec<Path> = (0..MANY_BUCKETS_IMAGE)
        .map(|i| bucket(&format!("w{i:05}")))
        .collect();
    let mut tx: Vec<Op> = names.iter().cloned().map(Op::CreateBucket).collect();
    // A few hold a value, so not every bucket is an inline empty one.
    tx.extend(names.iter().step_by(50).map(|p| put(p, "v".into(), 100)));
    vec![tx]
}

fn long_overflow() -> Vec<Vec<Op>> {
    let p = bucket("a");
    let page = u64::from(IMAGE_PAGE_SIZE);
    let (lo, hi) = LONG_PAGES;
    let mut tx = vec![Op::CreateBucket(p.clone())];
    tx.extend((0..LONG_VALUES).map(|i| {
        let pages = lo + (hi - lo) * i / (LONG_VALUES - 1);
        put(&p, format!("k{i}"), pages * page)
    }));
    vec![tx]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_print_and_a_bad_name_lists_them() {
        for s in Shape::ALL {
            assert_eq!(s.name().parse::<Shape>(), Ok(s));
        }
        let e = "deep".parse::<Shape>().unwrap_err();
        assert!(e.contains("unknown image shape `deep`"), "{e}");
        assert!(e.contains("escaped-freelist, deep-tree"), "{e}");
    }

    #[test]
    fn the_escape_fill_covers_more_than_0xffff_pages() {
        let txs = escaped_freelist();
        let filled: u64 = txs[0]
            .iter()
            .map(|op| match op {
                Op::Put { len, .. } => u64::from(*len),
                _ => 0,
            })
            .sum();
        assert!(filled / u64::from(IMAGE_PAGE_SIZE) >= 0xFFFF + 2048);
        let deletes = txs[1]
            .iter()
            .filter(|op| matches!(op, Op::Delete { .. }))
            .count();
        assert_eq!(deletes as u64, ESCAPE_VALUES);
    }

    #[test]
    fn deep_keys_are_distinct_long_and_before_the_workloads() {
        let keys: std::collections::BTreeSet<String> = (0..DEEP_KEYS).map(deep_key).collect();
        assert_eq!(keys.len() as u64, DEEP_KEYS);
        assert!(keys.iter().all(|k| (40..=160).contains(&k.len())));
        assert!(keys.iter().all(|k| k.as_str() < "k0"));
    }
}
