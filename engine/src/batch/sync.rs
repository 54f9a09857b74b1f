//! The synchronisation primitives the threaded batch front end uses: std's normally, loom's
//! under `--cfg kv_loom` so the loom tests explore every interleaving of the real code.

#[cfg(kv_loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(kv_loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
