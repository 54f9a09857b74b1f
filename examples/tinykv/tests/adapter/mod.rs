//! tinykv behind crashlab's adapter trait: what a storage engineer writes to crash-test an
//! engine of their own (walked through in `docs/crash-test-your-engine.md`).
//!
//! - Storage: crashlab hands the engine a `Box<dyn Storage>` (the simulated, faulty disk); the
//!   engine's own I/O trait, [`tinykv::Disk`], is implemented over it in four lines each.
//! - Buckets are tables; tinykv has no nested tables, so the adapter declares no
//!   `nested_buckets` and the workloads use top-level buckets only.
//! - Every commit is synced before it returns: acknowledged as durable.
//! - After an I/O error the application reopens (the default `io_error_ends_session`).

use crashlab_sim::adapter::{
    Ack, BucketModel, Capabilities, Engine, EngineConfig, EngineError, ErrorKind, KvModel, Listing,
    ModelError, Storage,
};
use crashlab_sim::op::{value_bytes, Name, Op, Path};
use crashlab_sim::profile::Profile;
use crashlab_sim::rng::SimRng;
use crashlab_sim::words::{flag, num, pairs};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;
use tinykv::{Db, Disk, Error, Options, Tables, Tx};

/// crashlab's storage as tinykv's disk.
pub struct OnSim(Box<dyn Storage>);

impl Disk for OnSim {
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

/// tinykv's options as a seed draws them (a newtype: the trait and `Options` are both foreign
/// to this test crate).
#[derive(Clone, Debug, PartialEq)]
pub struct TinyConfig(pub Options);

/// Growth chunks a seed picks from: 512 bytes grows the file on most commits (every growth
/// path under every length model), 64 KiB almost never.
const GROW_CHUNKS: [u64; 3] = [512, 4096, 65536];

impl EngineConfig for TinyConfig {
    const ENGINE: &'static str = "tinykv";

    fn from_seed(seed: u64, _profile: Profile) -> TinyConfig {
        let grow_chunk = *SimRng::derive(seed, "tinykv").pick(&GROW_CHUNKS);
        TinyConfig(Options {
            grow_chunk,
            debug_skip_checksum: false,
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // A log has no meta region at the file's start: no torn metas to count.
            meta_region_len: 0,
            ..Capabilities::default()
        }
    }

    fn describe(&self) -> String {
        format!(
            "grow_chunk={} debug_skip_checksum={}",
            self.0.grow_chunk, self.0.debug_skip_checksum
        )
    }

    fn to_case_text(&self) -> Option<String> {
        Some(self.describe())
    }

    fn parse_case_text(text: &str, seed: u64, profile: Profile) -> Result<TinyConfig, String> {
        let mut c = TinyConfig::from_seed(seed, profile);
        for (k, v) in pairs(text)? {
            match k {
                "grow_chunk" => c.0.grow_chunk = num(k, v)?,
                "debug_skip_checksum" => c.0.debug_skip_checksum = flag(k, v)?,
                _ => {
                    return Err(format!(
                        "unknown tinykv option `{k}` (expected grow_chunk or debug_skip_checksum)"
                    ))
                }
            }
        }
        if c.0.grow_chunk < tinykv::record::HEADER_LEN as u64 {
            return Err(format!("grow_chunk {} is below 24", c.0.grow_chunk));
        }
        Ok(c)
    }
}

/// An open tinykv store under test. Commits need `&mut Db` and the adapter's `&self`.
pub struct TinyDb(RefCell<Db<OnSim>>);

fn err(e: Error) -> EngineError {
    let kind = match &e {
        Error::Io(_) => ErrorKind::Io,
        Error::Corrupt { .. } => ErrorKind::Corrupt,
        Error::NoSuchTable => ErrorKind::Refused(ModelError::BucketNotFound),
        Error::TableExists => ErrorKind::Refused(ModelError::BucketExists),
    };
    EngineError {
        kind,
        message: e.to_string(),
    }
}

/// The table a one-component bucket path names.
fn table(path: &Path) -> Result<&[u8], EngineError> {
    match path.as_slice() {
        [name] => Ok(&name.0),
        _ => Err(EngineError::other(format!(
            "tinykv has no nested tables: a path of {} components",
            path.len()
        ))),
    }
}

fn listing(t: &BTreeMap<Vec<u8>, Vec<u8>>) -> Listing {
    t.iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect()
}

impl Engine for TinyDb {
    type Config = TinyConfig;
    type Reader<'a> = Arc<Tables>;
    type Writer<'a> = Tx;

    fn open(storage: Box<dyn Storage>, cfg: &TinyConfig, _opens: u64) -> Result<Self, EngineError> {
        let db = Db::open(OnSim(storage), cfg.0.clone()).map_err(err)?;
        Ok(TinyDb(RefCell::new(db)))
    }

    fn close(self) -> Result<(), EngineError> {
        Ok(()) // every commit is synced: a close writes nothing
    }

    fn begin_read(&self) -> Result<Arc<Tables>, EngineError> {
        Ok(self.0.borrow().snapshot())
    }

    fn snapshot_id(_reader: &Arc<Tables>) -> u64 {
        0 // tinykv's snapshots carry no id
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

    fn begin_write(&self) -> Result<Tx, EngineError> {
        Ok(self.0.borrow().begin())
    }

    fn apply(tx: &mut Tx, op: &Op) -> Result<(), EngineError> {
        match op {
            Op::CreateBucket(p) => tx.create_table(table(p)?),
            Op::DeleteBucket(p) => tx.drop_table(table(p)?),
            Op::Put {
                path,
                key,
                len,
                version,
            } => tx.put(table(path)?, &key.0, &value_bytes(key, *len, *version)),
            Op::Delete { path, key } => tx.delete(table(path)?, &key.0),
            other => unreachable!("{other} is not a data operation"),
        }
        .map_err(err)
    }

    fn get_in(tx: &mut Tx, path: &Path, key: &Name) -> Result<Option<Vec<u8>>, EngineError> {
        Ok(tx.table(table(path)?).and_then(|t| t.get(&key.0)).cloned())
    }

    fn scan_in(tx: &mut Tx, path: &Path) -> Result<Option<Listing>, EngineError> {
        Ok(tx.table(table(path)?).map(listing))
    }

    fn commit(&self, tx: Tx) -> Result<Ack, EngineError> {
        self.0.borrow_mut().commit(tx).map_err(err)?;
        Ok(Ack::Durable)
    }

    fn check(&mut self) -> Result<Vec<String>, EngineError> {
        self.0.borrow().check().map_err(err)
    }
}
