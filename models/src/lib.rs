//! Reference models for crashlab: the obvious, slow implementations that the engine and the
//! simulator are diffed against.
#![forbid(unsafe_code)]

pub mod calls;
pub mod freelist;

pub mod kv;
pub mod oracle;

pub use calls::{Answer, CallIndex, CallOracle};
pub use kv::{BucketModel, KvModel, ModelError, BUCKET_DEPTH_MAX, KEY_LEN_MAX};
pub use oracle::{CommitOutcome, DurabilityOracle, Violation};
