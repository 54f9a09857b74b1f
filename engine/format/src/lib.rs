//! crashlab-format: bbolt's on-disk format as crashlab's engine reads and writes it.
//!
//! Everything here is about bytes, nothing about transactions: the identifier types, the limits
//! every decoder enforces, the page header, the meta page, branch and leaf nodes, the freelist
//! page, the bucket header, the untrusting page reader, and a read-only inspection of a whole
//! file (what `crashlab db` shows). The engine (`crashlab-engine`) builds its transactions on
//! top of it; the db tool and the fuzzer read files with it directly. Nothing here depends on
//! the engine, so an on-disk codec never reaches for transaction state.
//!
//! Layers, lowest first (a layer never uses a higher one): `limits`, `types`, `kind`,
//! `corruption`, `error`, `page`, `pageset`, `meta`, `node`, `freelist`, `bucket`, `storage`,
//! `problem`, `read`, `inspect`. `engine/FORMAT.md` describes the bytes.
#![forbid(unsafe_code)]

pub mod bucket;
pub mod corruption;
mod edit;
pub mod error;
pub mod freelist;
pub mod inspect;
pub mod kind;
pub mod limits;
pub mod meta;
pub mod node;
pub mod page;
pub mod pageset;
mod patch;
pub mod problem;
pub mod read;
pub mod storage;
pub mod types;

pub use corruption::{Corruption, FreeRefusal, RangeEdge};
pub use error::{Error, Result};
pub use kind::PageKind;
pub use pageset::PageSet;
pub use problem::Problem;
pub use storage::Storage;
pub use types::{PageId, PageSpan, TxId};
