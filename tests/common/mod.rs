//! Helpers shared by the workspace tests: dumping a database to the fixture JSON shape.
#![allow(dead_code)]

use crashlab_engine::{Bucket, Db, Result};
pub use crashlab_format::inspect::{hex, Dump};

pub mod fixture;
use std::collections::BTreeMap;

/// The contents as the engine's read API (transactions, buckets, cursors) sees them, in the shape
/// of `corpus/bbolt/*.json` (`crashlab db dump --json` prints the same shape from its own walk).
pub fn dump(db: &Db) -> Result<Dump> {
    let mut out = Dump {
        page_size: db.page_size(),
        ..Dump::default()
    };
    db.view(|tx| {
        let root = tx.root()?;
        let mut cur = root.cursor();
        let mut item = cur.first()?;
        while let Some(entry) = item {
            let name = entry.key();
            let b = root.bucket(name)?.expect("top-level keys are buckets");
            dump_bucket(&b, hex(name), &mut out)?;
            item = cur.next()?;
        }
        Ok(())
    })?;
    Ok(out)
}

fn dump_bucket(b: &Bucket<'_>, path: String, out: &mut Dump) -> Result<()> {
    if b.sequence() != 0 {
        out.sequences.insert(path.clone(), b.sequence());
    }
    let mut keys = BTreeMap::new();
    let mut cur = b.cursor();
    let mut item = cur.first()?;
    while let Some(entry) = item {
        let (k, v) = entry.to_item();
        match v {
            Some(v) => {
                keys.insert(hex(&k), hex(&v));
            }
            None => {
                let child = b.bucket(&k)?.expect("cursor said bucket");
                dump_bucket(&child, format!("{path}/{}", hex(&k)), out)?;
            }
        }
        item = cur.next()?;
    }
    out.buckets.insert(path, keys);
    Ok(())
}

/// Parse a fixture JSON (`page_size`, `buckets`, optional `sequences`).
pub fn parse_dump(text: &str) -> Dump {
    serde_json::from_str(text).expect("a dump in the fixture shape")
}

/// A small 512-byte-page file with nested, inline and overflow data, after `commits` one-key
/// commits on top: the input the corruption tests damage.
pub fn sample_file(commits: u32) -> Vec<u8> {
    use crashlab_engine::{MemStorage, Options};
    let mem = MemStorage::new();
    let db = Db::open(
        mem.clone(),
        Options {
            page_size: 512,
            ..Options::default()
        },
    )
    .unwrap();
    db.update(|tx| {
        let mut a = tx.create_bucket(b"a")?;
        for i in 0..60u32 {
            a.put(
                format!("key{i:03}").as_bytes(),
                &vec![i as u8; (i * 7 % 90) as usize],
            )?;
        }
        a.put(b"big", &[7u8; 3000])?;
        let mut n = a.create_bucket(b"nested")?;
        n.put(b"x", b"y")?;
        tx.create_bucket(b"small")?.put(b"s", b"t")?;
        Ok(())
    })
    .unwrap();
    for c in 0..commits {
        db.update(|tx| {
            tx.bucket_mut(b"small")?
                .unwrap()
                .put(b"commit", &c.to_le_bytes())
        })
        .unwrap();
    }
    drop(db);
    mem.snapshot()
}

/// The write the corruption tests run on a damaged sample file: new keys in, old keys out, so
/// commit rewrites, merges and frees pages across the tree.
pub fn write_after_damage(db: &Db) -> Result<()> {
    db.update(|tx| {
        let mut b = tx.create_bucket_if_missing(b"a")?;
        for i in 0..20u32 {
            b.put(format!("new{i}").as_bytes(), &[1; 100])?;
            b.delete(format!("key{:03}", i * 3).as_bytes())?;
        }
        Ok(())
    })
}

/// A storage that remembers the image as of the last successful `sync`: `crash()` returns what
/// a power cut would leave if every unsynced write were lost.
#[derive(Clone, Default)]
pub struct SyncedMem {
    current: crashlab_engine::MemStorage,
    durable: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl SyncedMem {
    pub fn new() -> SyncedMem {
        SyncedMem::default()
    }

    /// A fresh storage holding only the synced bytes.
    pub fn crash(&self) -> SyncedMem {
        let durable = self.durable.lock().unwrap().clone();
        SyncedMem {
            current: crashlab_engine::MemStorage::from_bytes(durable.clone()),
            durable: std::sync::Arc::new(std::sync::Mutex::new(durable)),
        }
    }
}

impl crashlab_engine::Storage for SyncedMem {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.current.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> std::io::Result<()> {
        self.current.write_at(offset, buf)
    }
    fn sync(&self) -> std::io::Result<()> {
        *self.durable.lock().unwrap() = self.current.snapshot();
        Ok(())
    }
    fn len(&self) -> std::io::Result<u64> {
        self.current.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.current.set_len(len)
    }
}
