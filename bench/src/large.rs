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
use std::path::Path;

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

/// Leave every file in `dir` out of the page cache (`posix_fadvise(DONTNEED)`; they were
/// written back by [`flush_os_cache`] first), as they would be after a restart: the state a
/// database that once grew large is opened in.
///
/// Without it the Sets measure the kernel's leftovers from building the template: its 1 MiB
/// writes leave the file in large page-cache folios, and ext4's buffered write then walks every
/// block of the large folio a 4 KiB page lands in (`block_write_begin`, `block_commit_write`:
/// about 20 µs of system time per Set here, against 7.5 µs on a fresh file, whatever the
/// engine did). A cold file is cached again page by page, as the Sets write it.
pub fn evict_from_os_cache(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("the template's directory lists") {
        let path = entry.expect("a directory entry").path();
        if path.is_file() {
            let file = std::fs::File::open(&path).expect("a template file opens");
            rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
                .unwrap_or_else(|e| panic!("posix_fadvise of {}: {e}", path.display()));
        }
    }
}

/// The key of small Set number `i` in measurement run `run` on a template (runs are numbered
/// across the configurations and modes that share it): every Set inserts a key no earlier run
/// has used.
pub fn set_key(run: u64, i: u64) -> u64 {
    assert!(i < LARGE_SET_MODE_STRIDE, "too many Sets in one run");
    LARGE_SET_BASE + run * LARGE_SET_MODE_STRIDE + i
}
