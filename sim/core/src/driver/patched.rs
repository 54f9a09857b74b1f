//! The checksum probe's copies of the file, made without copying it: reads come from the disk as
//! reads see it now, with one range overwritten. A copy of the whole file per probe would cost
//! more than the two opens it serves (they read the metas and the live pages, not the file).

use crate::disk::SimDisk;
use crashlab_engine::{MemStorage, Storage};
use std::io;
use std::sync::Mutex;

/// The disk's file with `patch` over the bytes from `at`. The disk must not change while a
/// copy is open (the probe opens its copies between the run's operations). The first write or
/// length change makes the copy a [`MemStorage`] of its own, so nothing reaches the disk.
pub(super) struct Patched {
    disk: SimDisk,
    len: u64,
    at: u64,
    patch: Vec<u8>,
    owned: Mutex<Option<MemStorage>>,
}

impl Patched {
    /// `disk`'s file of `len` bytes (its length now), with `patch` over the bytes from `at`.
    pub(super) fn new(disk: &SimDisk, len: u64, at: u64, patch: Vec<u8>) -> Patched {
        assert!(
            at + patch.len() as u64 <= len,
            "the patch lies inside the file"
        );
        Patched {
            disk: disk.clone(),
            len,
            at,
            patch,
            owned: Mutex::new(None),
        }
    }

    /// The copy of its own, once there is one.
    fn owned(&self) -> Option<MemStorage> {
        self.owned.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Make the copy one of its own (the whole file, patched) before it changes.
    fn own(&self) -> io::Result<MemStorage> {
        let mut owned = self.owned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = &*owned {
            return Ok(m.clone());
        }
        let mut bytes = vec![0u8; usize::try_from(self.len).expect("the file fits memory")];
        self.read_shared(0, &mut bytes)?;
        let m = MemStorage::from_bytes(bytes);
        *owned = Some(m.clone());
        Ok(m)
    }

    /// A read of the shared copy: the disk's bytes, then the patch where it overlaps.
    fn read_shared(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past end",
            ));
        }
        self.disk.read_seen(offset, buf);
        let (from, to) = (
            offset.max(self.at),
            (offset + buf.len() as u64).min(self.at + self.patch.len() as u64),
        );
        if from < to {
            let into = (from - offset) as usize..(to - offset) as usize;
            let src = (from - self.at) as usize..(to - self.at) as usize;
            buf[into].copy_from_slice(&self.patch[src]);
        }
        Ok(())
    }
}

impl Storage for Patched {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match self.owned() {
            Some(m) => m.read_at(offset, buf),
            None => self.read_shared(offset, buf),
        }
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.own()?.write_at(offset, buf)
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        match self.owned() {
            Some(m) => m.len(),
            None => Ok(self.len),
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.own()?.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::DiskConfig;

    #[test]
    fn a_copy_reads_the_disk_with_its_patch_and_keeps_its_writes() {
        let disk = SimDisk::new(7, DiskConfig::default());
        let bytes: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        disk.write_at(0, &bytes).unwrap();
        let mut want = bytes.clone();
        want[1000..1100].fill(0xEE);
        let copy = Patched::new(&disk, 3000, 1000, vec![0xEE; 100]);
        assert_eq!(copy.len().unwrap(), 3000);
        // Reads that start before, inside and after the patch, and one across it.
        for (at, n) in [
            (0, 1000),
            (990, 20),
            (1050, 10),
            (1095, 30),
            (0, 3000),
            (2999, 1),
        ] {
            let mut buf = vec![0u8; n];
            copy.read_at(at as u64, &mut buf).unwrap();
            assert_eq!(buf, want[at..at + n], "{at}+{n}");
        }
        let mut past = [0u8; 2];
        assert!(
            copy.read_at(2999, &mut past).is_err(),
            "a read past the end"
        );
        copy.write_at(2990, &[1; 20]).unwrap();
        want[2990..].fill(1);
        want.resize(3010, 1);
        let mut all = vec![0u8; 3010];
        copy.read_at(0, &mut all).unwrap();
        assert_eq!(all, want);
        assert_eq!(disk.image(), bytes, "the disk is untouched");
    }
}
