//! The large-DB-once shape: a database that once held 2,000 values of 1 MiB (inserted 20 per
//! transaction, then all deleted, 500 per transaction), on which small Sets then run.
//!
//! Every engine keeps the space it freed (bbolt's format, LMDB and SQLite in a free list, redb
//! in its allocator), so what the Sets measure is each engine's cost of carrying a large, empty
//! free set: bbolt's seed finding was a 100× slower Set with its default freelist.

use crate::kv::Kv;
use crate::shape::{
    LARGE_DELETE_BATCH, LARGE_FILL_BATCH, LARGE_SET_BASE, LARGE_SET_MODE_STRIDE, LARGE_VALUES,
    LARGE_VALUE_SIZE,
};

/// Fill `kv` with the large values and delete them all again.
pub fn build_template(kv: &mut dyn Kv) {
    let value = vec![0xa5; LARGE_VALUE_SIZE];
    for start in (0..LARGE_VALUES).step_by(LARGE_FILL_BATCH as usize) {
        kv.put(start..(start + LARGE_FILL_BATCH).min(LARGE_VALUES), &value);
    }
    for start in (0..LARGE_VALUES).step_by(LARGE_DELETE_BATCH as usize) {
        kv.delete(start..(start + LARGE_DELETE_BATCH).min(LARGE_VALUES));
    }
}

/// Write every dirty page of the machine back (sync(1)), so that the kernel is not still
/// flushing the 2 GB template while the Sets on it are measured.
pub fn flush_os_cache() {
    let ok = std::process::Command::new("sync")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "sync(1) failed");
}

/// The key of small Set number `i` in measurement run `run` on a template (runs are numbered
/// across the configurations and modes that share it): every Set inserts a key no earlier run
/// has used.
pub fn set_key(run: u64, i: u64) -> u64 {
    assert!(i < LARGE_SET_MODE_STRIDE, "too many Sets in one run");
    LARGE_SET_BASE + run * LARGE_SET_MODE_STRIDE + i
}
