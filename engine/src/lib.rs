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
//!     Ok(())
//! })?;
//! let v = db.view(|tx| tx.bucket(b"users")?.expect("exists").get(b"alice"))?;
//! assert_eq!(v.as_deref(), Some(&b"1"[..]));
//! assert!(db.check()?.is_empty());
//! # Ok::<(), crashlab_engine::Error>(())
//! ```
//!
//! Layers, lowest first (a layer never uses a higher one): `presize`, `types`, `pageset`,
//! `page`, `meta`, `freelist`, `node`, `pager`, `tree`, `spill`, `cursor`, `bucket`, `tx`,
//! `commit`, `db`, `check`, `inspect` (read-only views of an untrusted file, for `crashlab db`).
//! `error` and `corruption` (the typed reasons of a corruption error) are shared by all of them.
//! `FORMAT.md` next to this crate describes the bytes and the commit protocol.
#![forbid(unsafe_code)]

pub mod batch;
mod bucket;
mod check;
mod commit;
pub mod corruption;
pub mod counters;
mod cursor;
mod db;
pub mod error;
pub mod freelist;
mod guard;
pub mod inspect;
pub mod limits;
pub mod meta;
pub mod node;
pub mod options;
pub mod page;
mod pager;
pub mod pageset;
pub mod presize;
mod rebuild;
mod spill;
pub mod storage;
mod tree;
mod tx;
pub mod types;

pub use bucket::{Bucket, BucketMut};
pub use check::{Problem, ProblemKind};
pub use counters::Counters;
pub use cursor::{Cursor, CursorItem};
pub use db::Db;
pub use error::{Corruption, Error, Result};
pub use freelist::FreelistKind;
#[doc(hidden)]
pub use options::DebugHooks;
pub use options::Options;
pub use pageset::PageSet;
pub use presize::{PresizePolicy, SizedBuf};
pub use storage::{FileStorage, MemStorage, Storage};
pub use tx::{ReadTx, WriteTx};
pub use types::{PageId, PageSpan, TxId};
