//! Batched commits: many callers, one write transaction and one sync.
//!
//! - [`core`]: the coalescing state machine (no threads, no clock), shared by the threaded front
//!   end and the simulator.
//! - [`group`]: the threaded front end behind `Db::batch` and `Db::write`.
//! - `write_batch`: [`WriteBatch`], an encoded record buffer, and its two merge strategies.
//! - [`call`]: one caller's contribution to a batch.
//! - [`apply`]: running a batch of calls against a `Db`, and `Db::batch` and `Db::write`.

pub mod apply;
pub mod call;
pub mod core;
mod decode;
pub mod group;
mod record;
mod sync;
mod write_batch;

pub use write_batch::*;
