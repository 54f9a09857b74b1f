//! The engine's only door to bytes (and the page reader's: see [`crate::read`]).
//!
//! There is no mmap: every page is read and written through [`Storage`], so a simulated disk can
//! stand in for a file and see every byte the engine moves.
//!
//! Contract shared by every implementation (the engine relies on each point):
//! - `read_at` fills the whole buffer or fails; a read that reaches past `len()` fails with
//!   `UnexpectedEof` and is never partially satisfied.
//! - `write_at` writes the whole buffer or fails; writing past `len()` extends the storage, and
//!   any gap reads as zeros.
//! - Nothing written is durable until `sync` returns `Ok`. After a failed `sync` the written data
//!   may or may not be durable, and a later `sync` may succeed without persisting it (Linux drops
//!   the dirty pages); the engine therefore never retries a failed sync as if the data were still
//!   pending.
//! - `set_len` changes the length; new space reads as zeros. The new length is durable only after
//!   a successful `sync`.
//! - All methods take `&self`: implementations synchronise internally, so readers can read while
//!   the single writer writes (to different pages — the engine never writes a page a reader can
//!   see).

pub mod contract;

use std::io;

pub trait Storage: Send + Sync {
    /// Read exactly `buf.len()` bytes at byte `offset`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Write all of `buf` at byte `offset`.
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Make every completed write and length change durable.
    fn sync(&self) -> io::Result<()>;
    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Set the length in bytes (grow with zeros or truncate).
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// True when the storage holds no bytes.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl<S: Storage + ?Sized> Storage for Box<S> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        (**self).read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        (**self).write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        (**self).sync()
    }
    fn len(&self) -> io::Result<u64> {
        (**self).len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        (**self).set_len(len)
    }
}

impl<S: Storage + ?Sized> Storage for std::sync::Arc<S> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        (**self).read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        (**self).write_at(offset, buf)
    }
    fn sync(&self) -> io::Result<()> {
        (**self).sync()
    }
    fn len(&self) -> io::Result<u64> {
        (**self).len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        (**self).set_len(len)
    }
}
