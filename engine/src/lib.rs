//! crashlab-engine: an embedded copy-on-write B+tree key-value store in bbolt's on-disk format.
//!
//! Every byte goes through a [`Storage`], so the same engine runs on a file, in memory, or on
//! crashlab's simulated disk. Every cost is a deterministic [`Counters`] figure.
//!
//! ```
//! use crashlab_engine::{Db, MemStorage, Options};
//!
//! let db = Db::open(MemStorage::new(), Options::default())?;
//! db.update(|tx| {
//!     let mut users = tx.create_bucket(b"users")?;
//!     users.put(b"alice", b"1")?;
//!     users.put(b"bob", b"2")?;
//!     Ok(())
//! })?;
//! db.view(|tx| {
//!     let users = tx.bucket(b"users")?.expect("exists");
//!     // Reads borrow from the transaction: no copy.
//!     assert_eq!(users.get(b"alice")?.as_deref(), Some(&b"1"[..]));
//!     let keys: Vec<Vec<u8>> = users
//!         .range(&b"b"[..]..)
//!         .map(|e| e.map(|e| e.key().to_vec()))
//!         .collect::<Result<_, _>>()?;
//!     assert_eq!(keys, [b"bob".to_vec()]);
//!     Ok(())
//! })?;
//! assert!(db.check()?.is_empty());
//! # Ok::<(), crashlab_engine::Error>(())
//! ```
//!
//! The public surface is the user API: [`Db`], its transactions ([`ReadTx`], [`WriteTx`]),
//! buckets ([`Bucket`], [`BucketMut`]), cursors and iterators ([`Cursor`], [`Iter`]) with what
//! they borrow ([`Value`], [`Entry`]), [`Error`], [`Options`], [`Counters`], [`Storage`] and
//! batched writes ([`batch`]). The on-disk codecs, the untrusting page reader and the
//! inspection of a file are the `crashlab-format` crate, below this one.
//!
//! Layers, lowest first (a layer never uses a higher one; `crashlab-format` is below them
//! all): `presize`, `arena`, `page_map`, `by_name`, `error`, `counters`, `batch/write_batch`, `options`, `storage`, `freelist`,
//! `cached`, `pager`, `leaf_edit`, `tree`, `spill`, `entry`, `cursor`, `iter`, `bucket`, `shared`, `tx`, `commit`,
//! `rebuild`, `db`, `batch/call`, `batch/apply`, `check`. `FORMAT.md` next to this crate
//! describes the bytes and the commit protocol.
#![forbid(unsafe_code)]

mod arena;
pub mod batch;
mod bucket;
mod by_name;
mod cached;
mod check;
mod commit;
mod counters;
mod cursor;
mod db;
mod entry;
mod error;
mod flush;
mod freelist;
mod guard;
mod iter;
mod leaf_edit;
mod options;
mod page_map;
mod pager;
mod presize;
mod rebuild;
mod shared;
mod spill;
pub mod storage;
mod tree;
mod tx;

pub use crashlab_format::limits;

pub use bucket::{Bucket, BucketMut};
pub use counters::Counters;
pub use crashlab_format::meta::Meta;
pub use crashlab_format::problem::{Problem, ProblemKind};
pub use crashlab_format::types::{PageId, TxId};
pub use cursor::Cursor;
pub use db::Db;
pub use entry::{CursorItem, Entry, Value};
pub use error::{Corruption, Error, FormatError, Invariant, RangeEdge, Result};
pub use freelist::FreelistKind;
pub use iter::Iter;
#[cfg(feature = "debug-hooks")]
pub use options::DebugHooks;
pub use options::Options;
pub use presize::{BufferWork, PresizePolicy};
pub use storage::{FileStorage, MemStorage, Storage};
pub use tx::{ReadTx, WriteTx};

/// Engine internals a model test drives directly (the in-memory freelist, diffed against the
/// reference model in `crashlab-models`). Only with the `internals` feature; not an API.
#[cfg(feature = "internals")]
pub mod internals {
    pub use crate::freelist::Freelist;
    pub use crashlab_format::types::PageSpan;
}
