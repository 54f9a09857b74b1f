//! crashlab-engine: an embedded copy-on-write B+tree key-value store in bbolt's on-disk format.
#![forbid(unsafe_code)]

pub mod error;
pub mod freelist;
pub mod page;
pub mod storage;
pub mod types;

pub use error::{Error, Result};
pub use storage::{FileStorage, MemStorage, Storage};
pub use types::{PageId, PageSpan, TxId};
