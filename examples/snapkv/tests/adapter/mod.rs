//! snapkv behind crashlab's adapter trait, on crashlab's simulated directory (capability
//! `directory`): the engine's [`Dir`] and [`File`] over [`SimDir`] and [`DirFile`], buckets as
//! tables (no nesting), every commit acknowledged as durable.

use crashlab_sim::adapter::{
    Ack, BucketModel, Capabilities, DirFile, Engine, EngineConfig, EngineError, ErrorKind, KvModel,
    Listing, ModelError, SimDir, Storage,
};
use crashlab_sim::op::{value_bytes, Name, Op, Path};
use crashlab_sim::profile::Profile;
use crashlab_sim::words::{flag, pairs};
use snapkv::{Db, Dir, Error, File, Options, Tables};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

/// crashlab's directory as snapkv's.
pub struct OnSim(SimDir);

impl File for DirFileOf {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.0.write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        self.0.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

/// A file of the simulated directory (a newtype: the trait and the type are both foreign here).
pub struct DirFileOf(DirFile);

impl Dir for OnSim {
    type File = DirFileOf;
    fn open(&self, name: &str) -> io::Result<Option<DirFileOf>> {
        match self.0.open(name) {
            Ok(f) => Ok(Some(DirFileOf(f))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn create(&self, name: &str) -> io::Result<DirFileOf> {
        self.0.create(name).map(DirFileOf)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.0.rename(from, to)
    }
    fn delete(&self, name: &str) -> io::Result<()> {
        self.0.delete(name)
    }
    fn sync_dir(&self) -> io::Result<()> {
        self.0.sync_dir()
    }
}

/// snapkv's options (a newtype, as for every foreign engine).
#[derive(Clone, Debug, PartialEq)]
pub struct SnapConfig(pub Options);

impl EngineConfig for SnapConfig {
    const ENGINE: &'static str = "snapkv";

    fn from_seed(_seed: u64, _profile: Profile) -> SnapConfig {
        SnapConfig(Options::default())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            directory: true,
            // A whole-file snapshot has no meta region: no torn metas to count.
            meta_region_len: 0,
            ..Capabilities::default()
        }
    }

    fn describe(&self) -> String {
        format!("debug_skip_dir_sync={}", self.0.debug_skip_dir_sync)
    }

    fn to_case_text(&self) -> Option<String> {
        Some(self.describe())
    }

    fn parse_case_text(text: &str, seed: u64, profile: Profile) -> Result<SnapConfig, String> {
        let mut c = SnapConfig::from_seed(seed, profile);
        for (k, v) in pairs(text)? {
            match k {
                "debug_skip_dir_sync" => c.0.debug_skip_dir_sync = flag(k, v)?,
                _ => {
                    return Err(format!(
                        "unknown snapkv option `{k}` (expected debug_skip_dir_sync)"
                    ))
                }
            }
        }
        Ok(c)
    }
}

/// An open snapkv store under test.
pub struct SnapDb(RefCell<Db<OnSim>>);

fn err(e: Error) -> EngineError {
    let kind = match &e {
        Error::Io(_) => ErrorKind::Io,
        Error::Corrupt(_) => ErrorKind::Corrupt,
    };
    EngineError {
        kind,
        message: e.to_string(),
    }
}

fn refused(e: ModelError) -> EngineError {
    EngineError {
        kind: ErrorKind::Refused(e),
        message: format!("snapkv: {e:?}"),
    }
}

/// The table a one-component bucket path names.
fn table(path: &Path) -> Result<&[u8], EngineError> {
    match path.as_slice() {
        [name] => Ok(&name.0),
        _ => Err(EngineError::other(format!(
            "snapkv has no nested tables: a path of {} components",
            path.len()
        ))),
    }
}

fn listing(t: &BTreeMap<Vec<u8>, Vec<u8>>) -> Listing {
    t.iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect()
}

impl Engine for SnapDb {
    type Config = SnapConfig;
    type Reader<'a> = Arc<Tables>;
    type Writer<'a> = Tables;

    fn open(_: Box<dyn Storage>, _: &SnapConfig, _: u64) -> Result<Self, EngineError> {
        unreachable!("snapkv declares a directory: the driver opens it with open_dir")
    }

    fn open_dir(dir: SimDir, cfg: &SnapConfig, _opens: u64) -> Result<Self, EngineError> {
        let db = Db::open(OnSim(dir), cfg.0.clone()).map_err(err)?;
        Ok(SnapDb(RefCell::new(db)))
    }

    fn close(self) -> Result<(), EngineError> {
        Ok(()) // every commit is synced: a close writes nothing
    }

    fn begin_read(&self) -> Result<Arc<Tables>, EngineError> {
        Ok(self.0.borrow().snapshot())
    }

    fn snapshot_id(_reader: &Arc<Tables>) -> u64 {
        0
    }

    fn read_snapshot(reader: &Arc<Tables>) -> Result<KvModel, EngineError> {
        let mut m = KvModel::new();
        for (name, t) in reader.iter() {
            let bucket = BucketModel {
                values: t.clone(),
                ..BucketModel::default()
            };
            m.root.buckets.insert(name.clone(), bucket);
        }
        Ok(m)
    }

    fn get(&self, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        let snap = self.begin_read()?;
        Ok(snap.get(table(path)?).and_then(|t| t.get(&key.0)).cloned())
    }

    fn scan(&self, path: &Path) -> Result<Option<Listing>, EngineError> {
        let snap = self.begin_read()?;
        Ok(snap.get(table(path)?).map(listing))
    }

    fn begin_write(&self) -> Result<Tables, EngineError> {
        Ok(Tables::clone(&self.0.borrow().snapshot()))
    }

    fn apply(tx: &mut Tables, op: &Op) -> Result<(), EngineError> {
        match op {
            Op::CreateBucket(p) => {
                let t = table(p)?.to_vec();
                if tx.contains_key(&t) {
                    return Err(refused(ModelError::BucketExists));
                }
                tx.insert(t, BTreeMap::new());
            }
            Op::DeleteBucket(p) => {
                tx.remove(table(p)?)
                    .ok_or_else(|| refused(ModelError::BucketNotFound))?;
            }
            Op::Put {
                path,
                key,
                len,
                version,
            } => {
                let t = tx
                    .get_mut(table(path)?)
                    .ok_or_else(|| refused(ModelError::BucketNotFound))?;
                t.insert(key.0.clone(), value_bytes(key, *len, *version));
            }
            Op::Delete { path, key } => {
                let t = tx
                    .get_mut(table(path)?)
                    .ok_or_else(|| refused(ModelError::BucketNotFound))?;
                t.remove(&key.0);
            }
            other => unreachable!("{other} is not a data operation"),
        }
        Ok(())
    }

    fn get_in(tx: &mut Tables, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        Ok(tx.get(table(path)?).and_then(|t| t.get(&key.0)).cloned())
    }

    fn scan_in(tx: &mut Tables, path: &Path) -> Result<Option<Listing>, EngineError> {
        Ok(tx.get(table(path)?).map(listing))
    }

    fn commit(&self, tx: Tables) -> Result<Ack, EngineError> {
        self.0.borrow_mut().commit(tx).map_err(err)?;
        Ok(Ack::Durable)
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        self.0.borrow().check().map_err(err)
    }
}
