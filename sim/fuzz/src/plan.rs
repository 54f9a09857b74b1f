//! The writes an input makes: a put (new key, overwrite, or a neighbour of an existing key;
//! empty, small, inline-sized or overflow value) and some deletes in one bucket, per commit,
//! drawn from what the file was read to hold. [`Plan::apply_to`] is the model's side of the
//! same writes.

use crate::edit::{check_hex, unhex};
use crate::model::{Contents, Path};
use crate::rng::FuzzRng;
use crashlab_engine::limits::MAX_KEY_SIZE;
use crashlab_engine::{Result, WriteTx};
use crashlab_format::inspect::hex;
use serde::{Deserialize, Serialize};

/// Most deletes in one commit.
const DELETES_MAX: usize = 256;

/// The bucket a plan creates when the file shows none to write into.
pub const FUZZ_BUCKET: &[u8] = b"crashlab-fuzz";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub path: Path,
    /// Create the (top-level) bucket when it is missing.
    pub create: bool,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    pub deletes: Vec<Vec<u8>>,
}

impl Plan {
    pub fn draw(contents: Option<&Contents>, rng: &mut FuzzRng, page_size: u32) -> Plan {
        let buckets = contents.map(Contents::value_buckets).unwrap_or_default();
        let (path, create) = if buckets.is_empty() || rng.ratio(1, 10) {
            (vec![FUZZ_BUCKET.to_vec()], true)
        } else {
            ((*rng.pick(&buckets)).clone(), false)
        };
        // A damaged file may hold keys no write may use (empty, or past MAX_KEY_SIZE): a put or
        // delete of one is the harness misusing the API, not the engine failing.
        let existing: Vec<Vec<u8>> = contents
            .and_then(|c| c.buckets.get(&path))
            .map(|b| b.values.keys().filter(|k| usable(k)).cloned().collect())
            .unwrap_or_default();
        let key = match rng.below(10) {
            0..=2 if !existing.is_empty() => rng.pick(&existing).clone(),
            3..=5 if !existing.is_empty() => {
                let mut k = rng.pick(&existing).clone();
                if k.len() < MAX_KEY_SIZE {
                    k.push(rng.next_u64() as u8);
                }
                k
            }
            _ => rng.bytes_in(1, 16),
        };
        let value = value(rng, page_size);
        let mut deletes: Vec<Vec<u8>> = if !existing.is_empty() && rng.ratio(1, 3) {
            // Many at once: merges, rebalancing, a bucket shrinking back inline.
            let share = *rng.pick(&[25, 50, 90, 100]);
            existing
                .iter()
                .filter(|_| rng.below(100) < share)
                .take(DELETES_MAX)
                .cloned()
                .collect()
        } else {
            (0..rng.below(7))
                .filter(|_| !existing.is_empty())
                .map(|_| rng.pick(&existing).clone())
                .collect()
        };
        if rng.ratio(1, 4) {
            deletes.push(rng.bytes_in(1, 8));
        }
        deletes.retain(|k| *k != key);
        deletes.sort();
        deletes.dedup();
        Plan {
            path,
            create,
            key,
            value,
            deletes,
        }
    }

    /// Make the writes in `tx`. `Ok(false)`: the bucket is not there (the file changed under
    /// the reading, or damage hides it) and nothing was written.
    pub fn run(&self, tx: &mut WriteTx<'_>) -> Result<bool> {
        if self.create {
            tx.create_bucket_if_missing(&self.path[0])?;
        }
        let names: Vec<&[u8]> = self.path.iter().map(Vec::as_slice).collect();
        let Some(mut b) = tx.bucket_path_mut(&names)? else {
            return Ok(false);
        };
        b.put(&self.key, &self.value)?;
        for k in &self.deletes {
            b.delete(k)?;
        }
        Ok(true)
    }

    /// The model's side: `contents` after the writes.
    pub fn apply_to(&self, contents: &mut Contents) {
        let b = contents.buckets.entry(self.path.clone()).or_default();
        b.values.insert(self.key.clone(), self.value.clone());
        for k in &self.deletes {
            b.values.remove(k);
        }
    }
}

fn value(rng: &mut FuzzRng, page_size: u32) -> Vec<u8> {
    let ps = u64::from(page_size);
    let len = match rng.weighted(&[1, 6, 2, 1]) {
        0 => 0,
        1 => rng.range(1, 32),
        2 => rng.range(ps / 8, ps / 3),
        _ => rng.range(ps, 3 * ps),
    };
    let fill = rng.next_u64() as u8;
    (0..len).map(|i| fill ^ i as u8).collect()
}

/// A plan as JSON: names, keys and values in hex. Saved with a failure (what the input wrote),
/// and the way a hand-written input states its writes exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanText {
    pub path: Vec<String>,
    #[serde(default)]
    pub create: bool,
    pub key: String,
    pub value: String,
    #[serde(default)]
    pub deletes: Vec<String>,
}

impl From<&Plan> for PlanText {
    fn from(p: &Plan) -> PlanText {
        PlanText {
            path: p.path.iter().map(|n| hex(n)).collect(),
            create: p.create,
            key: hex(&p.key),
            value: hex(&p.value),
            deletes: p.deletes.iter().map(|k| hex(k)).collect(),
        }
    }
}

impl From<&PlanText> for Plan {
    fn from(t: &PlanText) -> Plan {
        Plan {
            path: t.path.iter().map(|n| unhex(n)).collect(),
            create: t.create,
            key: unhex(&t.key),
            value: unhex(&t.value),
            deletes: t.deletes.iter().map(|k| unhex(k)).collect(),
        }
    }
}

impl PlanText {
    /// Why write `n` is not one the API takes (a hand-edited or damaged saved input): hex that
    /// is not bytes, no bucket, an empty name or key, or one past `MAX_KEY_SIZE`.
    pub fn check(&self, n: usize) -> Result<(), String> {
        let at = |what: String| format!("writes[{n}].{what}");
        if self.path.is_empty() {
            return Err(at("path: no bucket named".into()));
        }
        for (i, name) in self.path.iter().enumerate() {
            check_name(&at(format!("path[{i}]")), name)?;
        }
        check_name(&at("key".into()), &self.key)?;
        check_hex(&at("value".into()), &self.value)?;
        for (i, key) in self.deletes.iter().enumerate() {
            check_name(&at(format!("deletes[{i}]")), key)?;
        }
        Ok(())
    }
}

/// A bucket name or key in hex: bytes, at least one and at most `MAX_KEY_SIZE`.
fn check_name(what: &str, hex: &str) -> Result<(), String> {
    check_hex(what, hex)?;
    let len = hex.len() / 2;
    if len == 0 || len > MAX_KEY_SIZE {
        return Err(format!(
            "{what}: {len} bytes, where a name or key takes 1 to {MAX_KEY_SIZE}"
        ));
    }
    Ok(())
}

/// Whether a write may name `key`.
fn usable(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_SIZE
}
