//! A file's bytes as the fuzzer holds them: a dense prefix and a logical length that may lie far
//! past it. Bytes past the prefix read as zeros unless something wrote them, and what is
//! written there is kept in small blocks, so a "1 TiB" file whose metas claim a huge high-water
//! mark costs only the bytes that exist — what a sparse file on disk costs.
//!
//! Invariants: `dense.len() <= len`; every block lies below `len` (a shrink drops or trims the
//! blocks past it); a byte below `dense.len()` lives in `dense`, any other byte in its block or
//! nowhere (zero). `dense` never grows, so a block never shadows a dense byte.

use std::collections::BTreeMap;
use std::io;

/// Bytes per block of the sparse part.
const BLOCK: u64 = 4096;
/// Largest logical length accepted: far past any file the engine can address with its page
/// sizes, far below what would overflow offset arithmetic.
pub const LEN_MAX: u64 = 1 << 60;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileImage {
    dense: Vec<u8>,
    blocks: BTreeMap<u64, Vec<u8>>,
    len: u64,
}

impl FileImage {
    pub fn from_bytes(bytes: Vec<u8>) -> FileImage {
        let len = bytes.len() as u64;
        FileImage {
            dense: bytes,
            blocks: BTreeMap::new(),
            len,
        }
    }

    /// The logical length.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes held in memory: what the file really contains (the memory cap's measure).
    pub fn real_bytes(&self) -> u64 {
        self.dense.len() as u64 + self.blocks.len() as u64 * BLOCK
    }

    /// The dense prefix (where the mutations aim).
    pub fn dense(&self) -> &[u8] {
        &self.dense
    }

    /// Whether bytes beyond the dense prefix are claimed (a sparse file).
    pub fn is_sparse(&self) -> bool {
        self.len > self.dense.len() as u64
    }

    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past end",
            ));
        }
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let n = self.read_piece(at, &mut buf[done..]);
            done += n;
        }
        Ok(())
    }

    /// Fill the start of `out` from byte `at` up to the next dense/block boundary; the count.
    fn read_piece(&self, at: u64, out: &mut [u8]) -> usize {
        let dense_len = self.dense.len() as u64;
        if at < dense_len {
            let n = out.len().min((dense_len - at) as usize);
            out[..n].copy_from_slice(&self.dense[at as usize..at as usize + n]);
            return n;
        }
        let (block, within) = (at / BLOCK, (at % BLOCK) as usize);
        let n = out.len().min(BLOCK as usize - within);
        match self.blocks.get(&block) {
            Some(b) => out[..n].copy_from_slice(&b[within..within + n]),
            None => out[..n].fill(0),
        }
        n
    }

    pub fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= LEN_MAX)
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "offset beyond LEN_MAX"))?;
        let mut done = 0usize;
        while done < buf.len() {
            done += self.write_piece(offset + done as u64, &buf[done..]);
        }
        self.len = self.len.max(end);
        Ok(())
    }

    fn write_piece(&mut self, at: u64, data: &[u8]) -> usize {
        let dense_len = self.dense.len() as u64;
        if at < dense_len {
            let n = data.len().min((dense_len - at) as usize);
            self.dense[at as usize..at as usize + n].copy_from_slice(&data[..n]);
            return n;
        }
        let (block, within) = (at / BLOCK, (at % BLOCK) as usize);
        let n = data.len().min(BLOCK as usize - within);
        let b = self
            .blocks
            .entry(block)
            .or_insert_with(|| vec![0; BLOCK as usize]);
        b[within..within + n].copy_from_slice(&data[..n]);
        n
    }

    /// Grow (sparse: nothing is allocated) or shrink to `len`.
    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        if len > LEN_MAX {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                "length beyond LEN_MAX",
            ));
        }
        if len < self.len {
            self.dense.truncate(len as usize);
            self.blocks.retain(|&b, _| b * BLOCK < len);
            let within = (len % BLOCK) as usize;
            if let Some(b) = self.blocks.get_mut(&(len / BLOCK)) {
                b[within..].fill(0);
            }
        }
        self.len = len;
        Ok(())
    }

    /// The whole logical file, for saving a failing input. `None` when it is sparse beyond
    /// `max` bytes (it is then saved as its recipe only).
    pub fn to_vec(&self, max: u64) -> Option<Vec<u8>> {
        if self.len > max {
            return None;
        }
        let mut out = vec![0u8; self.len as usize];
        self.read_at(0, &mut out).ok()?;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_tail_reads_zero_and_keeps_writes() {
        let mut f = FileImage::from_bytes(vec![7; 10_000]);
        f.set_len(1 << 40).unwrap();
        assert!(f.is_sparse());
        assert_eq!(f.real_bytes(), 10_000);
        let mut buf = [1u8; 8];
        f.read_at((1 << 40) - 8, &mut buf).unwrap();
        assert_eq!(buf, [0; 8]);
        assert!(f.read_at((1 << 40) - 7, &mut buf).is_err());
        // A write straddling the dense end and a block boundary.
        f.write_at(9_996, &[9; 8200]).unwrap();
        let mut back = vec![0u8; 8210];
        f.read_at(9_990, &mut back).unwrap();
        assert_eq!(&back[..6], &[7; 6]);
        assert!(back[6..8206].iter().all(|&b| b == 9));
        assert_eq!(&back[8206..], &[0; 4]);
        assert_eq!(f.real_bytes(), 10_000 + 3 * BLOCK);
    }

    #[test]
    fn shrink_drops_and_trims() {
        let mut f = FileImage::from_bytes(vec![7; 100]);
        f.write_at(5000, &[3; 100]).unwrap();
        f.set_len(5050).unwrap();
        f.set_len(6000).unwrap();
        let mut buf = [1u8; 100];
        f.read_at(5000, &mut buf).unwrap();
        assert_eq!(&buf[..50], &[3; 50]);
        assert_eq!(&buf[50..], &[0; 50]);
        f.set_len(50).unwrap();
        assert_eq!(f.real_bytes(), 50);
        assert_eq!(f.to_vec(1 << 20).unwrap(), vec![7; 50]);
        assert!(f.write_at(LEN_MAX, &[1]).is_err());
    }
}
