//! The [`Storage`] the pipeline hands the engine: a [`FileImage`] behind a lock, plus the
//! deliberate harness faults of the negative controls ([`Control`]).
//!
//! It keeps the engine's storage contract: reads past `len()` fail with `UnexpectedEof`, writes
//! past it extend the file, new space reads as zeros, `sync` always succeeds (this is not a
//! crash test: every write is durable at once).

use crate::image::FileImage;
use crashlab_engine::{PageId, Storage};
use crashlab_format::limits::MAX_FREE_IDS;
use crashlab_format::meta::Meta;
use crashlab_format::page::{read_u16, FLAG_META};
use serde::{Deserialize, Serialize};
use std::io;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A deliberate fault for a negative control: each one is caught by exactly one capability of
/// the harness, and a run without it passes on the same inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Control {
    #[default]
    None,
    /// Panic on the first write: `catch_unwind` must report a panic.
    PanicOnWrite,
    /// Allocate past the memory cap on the first write: the cap must stop the worker.
    HogOnWrite,
    /// Never return from the first write: the watchdog must kill the worker.
    HangOnWrite,
    /// Drop every meta page write: commits "succeed" but never land, which only the model
    /// comparison after reopen sees.
    LoseMetaWrites,
    /// Drop every write that is not a meta page: the new meta points at pages never written,
    /// which the `check()` after the commit sees.
    LoseDataWrites,
    /// Rewrite every meta written to claim `MAX_FREE_IDS` + 1 more pages (the file stretched
    /// sparse to hold them) and no persisted freelist: the file reads and checks clean, but the
    /// array freelist can no longer load its free set, which only the writable reopen sees.
    InflateMetaWrites,
}

pub struct FuzzStorage {
    image: RwLock<FileImage>,
    control: Control,
    /// Bytes the hog control asks for: more than the input's cap.
    hog_bytes: usize,
}

impl FuzzStorage {
    pub fn new(image: FileImage, control: Control, hog_bytes: usize) -> Arc<FuzzStorage> {
        Arc::new(FuzzStorage {
            image: RwLock::new(image),
            control,
            hog_bytes,
        })
    }

    pub fn real_bytes(&self) -> u64 {
        self.read().real_bytes()
    }

    fn read(&self) -> RwLockReadGuard<'_, FileImage> {
        // A poisoned lock only means a panic mid-access (a control, or an engine panic that
        // catch_unwind reports); the bytes are plain data.
        self.image.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, FileImage> {
        self.image.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the deliberate fault drops this write.
    fn drops(&self, offset: u64, buf: &[u8]) -> bool {
        let is_meta = offset <= 65536
            && buf.len() >= 80
            && read_u16(buf, 8) == FLAG_META
            && Meta::checksum_matches(buf);
        match self.control {
            Control::LoseMetaWrites => is_meta,
            Control::LoseDataWrites => !is_meta,
            _ => false,
        }
    }

    fn misbehave_on_write(&self) {
        match self.control {
            Control::PanicOnWrite => panic!("negative control: deliberate panic in write_at"),
            Control::HogOnWrite => {
                let hog = vec![1u8; self.hog_bytes];
                std::hint::black_box(&hog);
            }
            Control::HangOnWrite => loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            },
            _ => {}
        }
    }

    /// The inflated meta for `buf` under [`Control::InflateMetaWrites`], if `buf` is a meta.
    fn inflated(&self, offset: u64, buf: &[u8]) -> Option<Meta> {
        if self.control != Control::InflateMetaWrites || offset > 65536 {
            return None;
        }
        let mut meta = Meta::decode(buf, PageId(offset.min(1))).ok()?;
        meta.freelist = PageId::NO_FREELIST;
        meta.high_water = meta.high_water.plus(MAX_FREE_IDS + 1);
        Some(meta)
    }
}

impl Storage for FuzzStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read().read_at(offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.misbehave_on_write();
        if self.drops(offset, buf) {
            return Ok(());
        }
        if let Some(meta) = self.inflated(offset, buf) {
            let mut image = self.write();
            let needed = meta.high_water.0 * u64::from(meta.page_size);
            if image.len() < needed {
                image.set_len(needed)?;
            }
            return image.write_at(offset, &meta.encode_page());
        }
        self.write().write_at(offset, buf)
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.read().len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.write().set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crashlab_engine::storage::contract;

    #[test]
    fn keeps_the_storage_contract() {
        contract::check(&*FuzzStorage::new(FileImage::default(), Control::None, 0));
    }
}
