//! Opening an LMDB environment through heed, the only place where crashlab's benchmarks need
//! `unsafe`.
//!
//! heed marks `EnvOpenOptions::open` `unsafe` because LMDB reads through a memory map: if the
//! file is changed behind LMDB's back (another process ignoring the lock file, truncation), the
//! map can hand out bytes that break Rust's aliasing rules. It marks `EnvOpenOptions::flags`
//! `unsafe` because `NO_SYNC` gives up durability on power loss. Neither is about memory
//! safety of the code here, and both preconditions hold in the benchmarks: each environment
//! lives in its own temporary directory that no other process touches, and `NO_SYNC` is the
//! point of the no-sync measurements. Everything else in the benchmark crate stays
//! `#![forbid(unsafe_code)]`.

use heed::{Env, EnvFlags, EnvOpenOptions};
use std::path::Path;

/// Open (or create) the environment in directory `dir` with one named database, a map of
/// `map_size` bytes and, when `no_sync`, LMDB's `MDB_NOSYNC` (commits skip fsync).
pub fn open(dir: &Path, map_size: usize, no_sync: bool) -> heed::Result<Env> {
    let mut options = EnvOpenOptions::new();
    options.map_size(map_size).max_dbs(1);
    if no_sync {
        #[expect(
            unsafe_code,
            reason = "NO_SYNC is what the no-sync rows measure; heed marks it unsafe because it gives up durability"
        )]
        // SAFETY: the benchmark accepts losing commits on power loss; no memory is at stake.
        unsafe {
            options.flags(EnvFlags::NO_SYNC);
        }
    }
    #[expect(
        unsafe_code,
        reason = "heed's open is unsafe because of the memory map; the directory is private to this process"
    )]
    // SAFETY: `dir` is a temporary directory that only this process opens, through LMDB's own
    // lock file, and nothing truncates or rewrites the file while the environment is open.
    unsafe {
        options.open(dir)
    }
}
