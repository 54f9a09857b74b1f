//! The files mutations start from: the bbolt fixtures (written by real bbolt, read from
//! `corpus/bbolt`) and files the engine writes itself, generated from a seed — page sizes from
//! 512 to 65536, nested and inline buckets, overflow values, both freelists, with and without
//! `no_freelist_sync`, several commits with deletes so the freelist is not trivial.

use crate::layout::Layout;
use crate::rng::FuzzRng;
use crashlab_engine::{Db, FreelistKind, MemStorage, Options, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bbolt fixtures, smallest first.
pub const FIXTURES: [&str; 7] = [
    "inline",
    "pagesize1k",
    "nofreelist",
    "nested",
    "overflow",
    "pagesize64k",
    "freelist",
];

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Base {
    /// `corpus/bbolt/<name>.db`.
    Fixture { name: String },
    /// A file the engine writes from this seed ([`generate`]).
    Generated { seed: u64 },
}

/// A base's bytes and where its structures lie.
pub struct BaseFile {
    pub bytes: Vec<u8>,
    pub layout: Option<Layout>,
}

/// Bases built on first use and kept: a worker draws from a few dozen over and over.
pub struct BasePool {
    fixtures: PathBuf,
    cache: BTreeMap<Base, Arc<BaseFile>>,
    /// Where generated bases are shared between the workers of one campaign, so a worker that
    /// replaces a dead one does not generate them all again.
    disk: Option<PathBuf>,
}

/// The fixture directory of this checkout.
pub fn default_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/bbolt")
}

impl BasePool {
    pub fn new(fixtures: PathBuf) -> BasePool {
        BasePool {
            fixtures,
            cache: BTreeMap::new(),
            disk: None,
        }
    }

    /// Share generated bases through files in `dir` (one campaign's own directory: the files
    /// are only as current as the generator that wrote them).
    pub fn with_disk_cache(mut self, dir: PathBuf) -> BasePool {
        self.disk = Some(dir);
        self
    }

    fn generated(&self, seed: u64) -> std::result::Result<Vec<u8>, String> {
        let file = self
            .disk
            .as_ref()
            .map(|d| d.join(format!("generated-{seed}.db")));
        if let Some(bytes) = file.as_ref().and_then(|f| std::fs::read(f).ok()) {
            return Ok(bytes);
        }
        let bytes = generate(seed).map_err(|e| format!("generating base {seed}: {e}"))?;
        if let Some(f) = file {
            // Write, then rename: another worker never reads a half-written file.
            let tmp = f.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, &bytes).is_ok() {
                let _ = std::fs::rename(&tmp, &f);
            }
        }
        Ok(bytes)
    }

    pub fn get(&mut self, base: &Base) -> std::result::Result<Arc<BaseFile>, String> {
        if let Some(f) = self.cache.get(base) {
            return Ok(f.clone());
        }
        let bytes = match base {
            Base::Fixture { name } => {
                let path = self.fixtures.join(format!("{name}.db"));
                std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?
            }
            Base::Generated { seed } => self.generated(*seed)?,
        };
        let file = Arc::new(BaseFile {
            layout: Layout::parse(&bytes),
            bytes,
        });
        self.cache.insert(base.clone(), file.clone());
        Ok(file)
    }
}

/// Options of a generated file, drawn from its seed.
fn options(rng: &mut FuzzRng) -> Options {
    let sizes = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];
    let page_size = sizes[rng.weighted(&[5, 4, 3, 4, 2, 1, 1, 1])];
    Options {
        page_size,
        fill_percent: *rng.pick(&[0.1, 0.5, 0.9, 1.0]),
        no_freelist_sync: rng.ratio(1, 4),
        freelist: *rng.pick(&[FreelistKind::Array, FreelistKind::Hashmap]),
        ..Options::default()
    }
}

/// A bucket path: 1 to 3 names, some binary.
fn bucket_path(rng: &mut FuzzRng, tops: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut path = vec![rng.pick(tops).clone()];
    for _ in 0..rng.weighted(&[6, 3, 1]) {
        path.push(match rng.below(3) {
            0 => vec![0, 0xff, rng.below(4) as u8],
            _ => format!("sub{}", rng.below(3)).into_bytes(),
        });
    }
    path
}

fn value(rng: &mut FuzzRng, page_size: u32) -> Vec<u8> {
    let ps = u64::from(page_size);
    let len = match rng.weighted(&[5, 60, 20, 12, 3]) {
        0 => 0,
        1 => rng.range(1, 40),
        2 => rng.range(40, ps / 4),
        3 => rng.range(ps / 2, 3 * ps),
        _ => rng.range(3 * ps, 5 * ps),
    };
    let fill = rng.next_u64() as u8;
    (0..len).map(|i| fill.wrapping_add(i as u8)).collect()
}

fn key(rng: &mut FuzzRng) -> Vec<u8> {
    match rng.weighted(&[70, 20, 10]) {
        0 => format!("k{:05}", rng.below(5000)).into_bytes(),
        1 => rng.bytes_in(1, 24),
        _ => {
            let mut k = b"long-".to_vec();
            k.extend(std::iter::repeat_n(b'x', rng.range(20, 300) as usize));
            k.extend(rng.bytes(4));
            k
        }
    }
}

/// Make every bucket along `path`.
fn ensure_path(tx: &mut crashlab_engine::WriteTx<'_>, path: &[Vec<u8>]) -> Result<()> {
    tx.create_bucket_if_missing(&path[0])?;
    for depth in 1..path.len() {
        let parents: Vec<&[u8]> = path[..depth].iter().map(Vec::as_slice).collect();
        let mut parent = tx.bucket_path_mut(&parents)?.expect("made above");
        parent.create_bucket_if_missing(&path[depth])?;
    }
    Ok(())
}

/// The bytes of a file the engine writes from `seed`: several commits of puts into nested
/// buckets, small buckets that stay inline, overflow values, then deletes.
pub fn generate(seed: u64) -> Result<Vec<u8>> {
    let mut rng = FuzzRng::derive(seed, 0, "generate");
    let options = options(&mut rng);
    let ps = options.page_size;
    let mem = MemStorage::new();
    let db = Db::open(mem.clone(), options)?;
    let tops: Vec<Vec<u8>> = (0..rng.range(2, 5))
        .map(|i| match i {
            0 => b"data".to_vec(),
            1 => b"small".to_vec(),
            _ => vec![0, i as u8, 0xff],
        })
        .collect();
    // Bytes of keys and values to write: some dozens of pages, at most about 1 MiB.
    let budget = (u64::from(ps) * rng.range(6, 40)).min(768 << 10);
    let mut written = 0u64;
    let mut keys: BTreeMap<Vec<Vec<u8>>, Vec<Vec<u8>>> = BTreeMap::new();
    let commits = rng.range(3, 6);
    for c in 0..commits {
        db.update(|tx| {
            // Buckets of one or two small keys stay inline.
            let small = vec![b"small".to_vec(), format!("s{}", rng.below(6)).into_bytes()];
            ensure_path(tx, &small)?;
            let names: Vec<&[u8]> = small.iter().map(Vec::as_slice).collect();
            let mut b = tx.bucket_path_mut(&names)?.expect("made above");
            let (k, v) = (key(&mut rng), rng.bytes_in(0, 20));
            b.put(&k, &v)?;
            while written < budget * (c + 1) / commits {
                let path = bucket_path(&mut rng, &tops);
                ensure_path(tx, &path)?;
                let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
                let mut b = tx.bucket_path_mut(&names)?.expect("made above");
                let (k, v) = (key(&mut rng), value(&mut rng, ps));
                written += (k.len() + v.len() + 16) as u64;
                if b.put(&k, &v).is_ok() {
                    keys.entry(path).or_default().push(k);
                }
            }
            if c > 0 {
                delete_some(tx, &mut keys, &mut rng)?;
            }
            if rng.ratio(1, 3) {
                let path = bucket_path(&mut rng, &tops);
                ensure_path(tx, &path)?;
                let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
                let mut b = tx.bucket_path_mut(&names)?.expect("made above");
                b.set_sequence(rng.next_u64() >> rng.below(64));
            }
            Ok(())
        })?;
    }
    drop(db);
    Ok(mem.snapshot())
}

/// Delete a share of the keys written so far (a put that replaced a sub-bucket name failed and
/// was never recorded, so every recorded key holds a value).
fn delete_some(
    tx: &mut crashlab_engine::WriteTx<'_>,
    keys: &mut BTreeMap<Vec<Vec<u8>>, Vec<Vec<u8>>>,
    rng: &mut FuzzRng,
) -> Result<()> {
    let share = *rng.pick(&[10u64, 30, 60, 90]);
    for (path, ks) in keys.iter_mut() {
        let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
        let Some(mut b) = tx.bucket_path_mut(&names)? else {
            continue;
        };
        let mut kept = Vec::new();
        for k in ks.drain(..) {
            if rng.below(100) < share {
                b.delete(&k)?;
            } else {
                kept.push(k);
            }
        }
        *ks = kept;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_deterministic_and_clean() {
        for seed in 0..6 {
            let a = generate(seed).unwrap();
            assert_eq!(a, generate(seed).unwrap(), "seed {seed}");
            let db = Db::open(
                MemStorage::from_bytes(a.clone()),
                Options {
                    read_only: true,
                    ..Options::default()
                },
            )
            .unwrap();
            assert!(db.check().unwrap().is_empty(), "seed {seed}");
            let layout = Layout::parse(&a).expect("a layout");
            assert!(layout.nodes.len() >= 2, "seed {seed}");
            assert!(!layout.buckets.is_empty(), "seed {seed}");
        }
    }

    #[test]
    fn generated_files_cover_the_format() {
        let mut sizes = std::collections::BTreeSet::new();
        let (mut inline, mut branches, mut overflow, mut no_freelist) = (0, 0, 0, 0);
        for seed in 0..48 {
            let bytes = generate(seed).unwrap();
            let l = Layout::parse(&bytes).unwrap();
            sizes.insert(l.page_size);
            inline += l.nodes.iter().filter(|n| n.page.is_none()).count();
            branches += l.nodes.iter().filter(|n| n.branch).count();
            overflow += l
                .nodes
                .iter()
                .filter(|n| {
                    n.page.is_some()
                        && bytes[n.offset as usize + 12..n.offset as usize + 16] != [0; 4]
                })
                .count();
            no_freelist += usize::from(l.freelist.is_none());
        }
        assert!(sizes.len() >= 6, "page sizes {sizes:?}");
        assert!(inline > 0 && branches > 0 && overflow > 0 && no_freelist > 0);
    }
}
