//! A database's contents as plain ordered maps, read through the engine's public API (every
//! bucket walked forward and backward with cursors, keys probed with get and seek), and the
//! same contents in the shape `inspect::dump` reports, to compare the two readers.

use crate::edit::unhex;
use crate::rng::FuzzRng;
use crashlab_engine::{Bucket, Db, ReadTx, Result};
use crashlab_format::inspect::{hex, Dump};
use std::collections::BTreeMap;

/// Bucket names from the top level down; the root bucket is the empty path.
pub type Path = Vec<Vec<u8>>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BucketData {
    pub sequence: u64,
    pub values: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl BucketData {
    /// Key and value bytes held.
    pub fn bytes(&self) -> u64 {
        self.values
            .iter()
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    pub buckets: BTreeMap<Path, BucketData>,
}

/// What reading a file found: its contents, or where the reads went wrong.
pub struct Reading {
    pub contents: Contents,
    /// Disagreements between the ways of reading (forward vs backward, get, seek), and walks
    /// that returned more items than the file holds.
    pub disagreements: Vec<String>,
    /// A cursor kept returning items long past what its tree could hold, even counting every
    /// page once per level of the deepest tree the engine accepts.
    pub runaway: bool,
    /// The read stopped early: more buckets, or more key and value bytes, than the file can
    /// hold (a cycle of bucket headers, or pages shared between buckets).
    pub truncated: bool,
}

/// How much one read may take, from the file's real size.
#[derive(Clone, Copy, Debug)]
pub struct ReadBounds {
    /// Items a bucket can hold (each takes an element header and a key byte).
    pub items: u64,
    /// Items past which a cursor is running away.
    pub runaway: u64,
    /// Buckets the whole file can hold.
    pub buckets: u64,
    /// Key and value bytes the whole file can hold: each is stored once, in a page. A reading
    /// holds no more, bucket paths counted in (a file whose pages are shared can be read as
    /// more: it is cut there), so what the harness keeps follows the file, not how often a
    /// damaged tree repeats it.
    pub bytes: u64,
}

impl ReadBounds {
    pub fn for_bytes(real_bytes: u64) -> ReadBounds {
        let items = real_bytes / 17 + 64;
        ReadBounds {
            items,
            runaway: items * crashlab_engine::limits::MAX_TREE_DEPTH as u64,
            buckets: real_bytes / 32 + 64,
            bytes: real_bytes,
        }
    }
}

/// Deepest nesting followed (the engine bounds it lower; this guards the harness itself).
const NESTING_MAX: usize = 80;
/// Keys probed with get and seek per bucket.
const PROBES: usize = 24;

impl Contents {
    /// Paths of the buckets that hold plain keys (the root bucket holds only buckets).
    pub fn value_buckets(&self) -> Vec<&Path> {
        self.buckets.keys().filter(|p| !p.is_empty()).collect()
    }

    /// Contents from a dump (a damaged file's, to find buckets to write into).
    pub fn from_dump(dump: &Dump) -> Contents {
        let mut c = Contents::default();
        for (name, keys) in &dump.buckets {
            let b = c.buckets.entry(path_of(name)).or_default();
            b.values = keys.iter().map(|(k, v)| (unhex(k), unhex(v))).collect();
        }
        c
    }

    /// The same contents as `inspect::dump` shows them.
    pub fn to_dump(&self, page_size: u32) -> Dump {
        let mut dump = Dump {
            page_size,
            ..Dump::default()
        };
        for (path, b) in &self.buckets {
            let name: Vec<String> = path.iter().map(|n| hex(n)).collect();
            let name = name.join("/");
            if b.sequence != 0 {
                dump.sequences.insert(name.clone(), b.sequence);
            }
            if !path.is_empty() || !b.values.is_empty() {
                let keys = b.values.iter().map(|(k, v)| (hex(k), hex(v))).collect();
                dump.buckets.insert(name, keys);
            }
        }
        dump
    }
}

/// Read every bucket of `db`'s current snapshot, within `bounds`.
pub fn read(db: &Db, rng: &mut FuzzRng, bounds: ReadBounds) -> Result<Reading> {
    db.view(|tx| {
        let mut reading = Reading {
            contents: Contents::default(),
            disagreements: Vec::new(),
            runaway: false,
            truncated: false,
        };
        let mut stack: Vec<Path> = vec![Vec::new()];
        let mut visited = 0u64;
        let mut held = 0u64;
        while let Some(path) = stack.pop() {
            visited += 1;
            if visited > bounds.buckets || held > bounds.bytes {
                reading.truncated = true;
                break;
            }
            let Some(bucket) = open(tx, &path)? else {
                reading.disagreements.push(format!(
                    "bucket {} listed by its parent but not found",
                    show(&path)
                ));
                continue;
            };
            let (data, subs) = read_bucket(&bucket, &path, rng, bounds, &mut reading)?;
            if reading.runaway {
                return Ok(reading);
            }
            held += data.bytes() + path_cost(&path);
            reading.contents.buckets.insert(path.clone(), data);
            if path.len() < NESTING_MAX {
                for name in subs {
                    let mut child = path.clone();
                    child.push(name);
                    stack.push(child);
                }
            }
        }
        Ok(reading)
    })
}

/// What a reading pays to hold a bucket's path, counted with its keys and values against what
/// the file could store: the names and each one's own allocation. A cycle of empty buckets
/// holds nothing else, and a path per bucket visited (corpus/fuzz/024).
fn path_cost(path: &Path) -> u64 {
    const PER_NAME: u64 = 48;
    path.iter().map(|name| name.len() as u64 + PER_NAME).sum()
}

fn open<'t>(tx: &'t ReadTx<'_>, path: &Path) -> Result<Option<Bucket<'t>>> {
    if path.is_empty() {
        return tx.root().map(Some);
    }
    let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
    tx.bucket_path(&names)
}

/// The path of a bucket the dump names `name` (its names in hex, joined by `/`).
pub fn path_of(name: &str) -> Path {
    if name.is_empty() {
        Vec::new()
    } else {
        name.split('/').map(unhex).collect()
    }
}

pub fn show(path: &Path) -> String {
    let names: Vec<String> = path.iter().map(|n| hex(n)).collect();
    format!("/{}", names.join("/"))
}

type Items = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// Walk one bucket both ways and probe it; returns its data and its sub-bucket names.
fn read_bucket(
    b: &Bucket<'_>,
    path: &Path,
    rng: &mut FuzzRng,
    bounds: ReadBounds,
    reading: &mut Reading,
) -> Result<(BucketData, Vec<Vec<u8>>)> {
    let forward = walk(b, bounds, false)?;
    let backward = walk(b, bounds, true)?;
    let (forward, mut backward) = match (forward, backward) {
        (Walked::Items(f), Walked::Items(b)) => (f, b),
        (Walked::Runaway, _) | (_, Walked::Runaway) => {
            reading.runaway = true;
            return Ok((BucketData::default(), Vec::new()));
        }
        _ => {
            let why = format!(
                "bucket {}: more than {} items or {} bytes",
                show(path),
                bounds.items,
                bounds.bytes
            );
            reading.disagreements.push(why);
            return Ok((BucketData::default(), Vec::new()));
        }
    };
    backward.reverse();
    if forward != backward {
        reading.disagreements.push(format!(
            "bucket {}: {} items forward, {} backward, or in another order",
            show(path),
            forward.len(),
            backward.len()
        ));
    }
    let mut data = BucketData {
        sequence: b.sequence(),
        values: BTreeMap::new(),
    };
    let mut subs = Vec::new();
    for (k, v) in &forward {
        match v {
            Some(v) => drop(data.values.insert(k.clone(), v.clone())),
            None => subs.push(k.clone()),
        }
    }
    probe(b, path, &forward, rng, reading)?;
    Ok((data, subs))
}

enum Walked {
    Items(Items),
    /// More items, or more bytes, than the bucket can hold (kept no further).
    Overlong,
    Runaway,
}

/// Every item in order (`backward`: from the last).
fn walk(b: &Bucket<'_>, bounds: ReadBounds, backward: bool) -> Result<Walked> {
    let mut c = b.cursor();
    let mut out = Vec::new();
    let (mut seen, mut bytes) = (0u64, 0u64);
    let mut item = if backward { c.last()? } else { c.first()? };
    while let Some(it) = item {
        seen += 1;
        if seen > bounds.runaway {
            return Ok(Walked::Runaway);
        }
        bytes += (it.key().len() + it.value().map_or(0, <[u8]>::len)) as u64;
        if seen <= bounds.items && bytes <= bounds.bytes {
            out.push(it.to_item());
        }
        item = if backward { c.prev()? } else { c.next()? };
    }
    Ok(if seen > bounds.items || bytes > bounds.bytes {
        Walked::Overlong
    } else {
        Walked::Items(out)
    })
}

/// Get and seek some present keys and some absent ones; note where they disagree with the walk.
fn probe(
    b: &Bucket<'_>,
    path: &Path,
    items: &Items,
    rng: &mut FuzzRng,
    reading: &mut Reading,
) -> Result<()> {
    let sorted: BTreeMap<&[u8], &Option<Vec<u8>>> =
        items.iter().map(|(k, v)| (k.as_slice(), v)).collect();
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for _ in 0..PROBES.min(items.len()) {
        let (k, _) = &items[rng.index(items.len())];
        keys.push(k.clone());
        let mut after = k.clone();
        after.push(0);
        keys.push(after);
    }
    keys.push(vec![0]);
    keys.push(vec![0xff; 9]);
    keys.push(rng.bytes_in(1, 12));
    for k in keys {
        let want_get = sorted.get(k.as_slice()).and_then(|v| (*v).clone());
        let got = b.get(&k)?.map(|v| v.to_vec());
        if got != want_get {
            reading.disagreements.push(format!(
                "bucket {}: get {} disagrees with the walk",
                show(path),
                hex(&k)
            ));
        }
        let want_seek = sorted.range(k.as_slice()..).next().map(|(k, _)| k.to_vec());
        let got = b.cursor().seek(&k)?.map(|e| e.key().to_vec());
        if got != want_seek {
            reading.disagreements.push(format!(
                "bucket {}: seek {} disagrees with the walk",
                show(path),
                hex(&k)
            ));
        }
    }
    Ok(())
}
