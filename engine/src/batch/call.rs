//! One caller's contribution to a batch: a function, or an encoded write batch.

use super::WriteBatch;
use crate::error::Result;
use crate::tx::WriteTx;
use std::sync::Arc;

/// A function run inside a batch's write transaction. It may run more than once.
pub type BatchFn = Arc<dyn Fn(&mut WriteTx<'_>) -> Result<()> + Send + Sync>;

/// One caller's contribution to a batch.
pub enum Call {
    Fn(BatchFn),
    Write(WriteBatch),
}
