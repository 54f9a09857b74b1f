//! Regression 013, found by the fuzzer `crashlab-fuzz` (issue 15; `corpus/fuzz/012`, `013`).
//!
//! Postmortem: regression 008 bounded the structures that hold one 8-byte id per free page (the
//! array free set, a freelist page) at `MAX_FREE_IDS` = 2^24, 128 MiB. That stopped the
//! gigabytes, but not memory out of proportion to a file: `nofreelist.db` stretched to a sparse
//! 64 GiB (430 KiB on disk) whose metas claim 2^24 pages and no persisted freelist built a
//! 128 MiB id array on opening with the array freelist, and a hashmap writer — spans, cheap —
//! persisting the freelist at open built a 128 MiB id list that it grew by doubling while it
//! copied, then as much again for the page image and the commit buffer. Regression 008 measured
//! claims far past the limit (refused before allocating), never claims just under it; the
//! fuzzer's memory cap (64 MiB + 64 x the file's real bytes) caught both. The fix lowers the
//! limit to 2^20 ids (8 MiB), so the four copies a commit holds stay near 32 MiB whatever a
//! file claims, and `Freelist::all_ids` allocates its exact length once.

use crashlab_engine::limits::MAX_FREE_IDS;
use crashlab_engine::{Db, Error, FileStorage, FormatError, FreelistKind, Options, TxId};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::path::{Path, PathBuf};

mod common;

use common::fixture::{bbolt_fixture, persists_no_freelist, stretched};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Everything `f` allocates (every allocation counted, none subtracted: a bound on its peak).
fn allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let region = Region::new(GLOBAL);
    let out = f();
    (out, region.change().bytes_allocated)
}

/// `nofreelist.db` stretched sparse, both metas (checksums recomputed) claiming `high_water`
/// pages of 4 KiB and no persisted freelist.
fn claiming(dir: &Path, name: &str, high_water: u64) -> PathBuf {
    let fixture = bbolt_fixture("nofreelist.db");
    assert!((0..2).all(|slot| persists_no_freelist(&fixture, slot)));
    stretched(dir, name, &fixture, high_water)
}

fn open(path: &Path, freelist: FreelistKind, no_freelist_sync: bool) -> Result<Db, Error> {
    let options = Options {
        freelist,
        no_freelist_sync,
        ..Options::default()
    };
    Db::open(FileStorage::create(path).unwrap(), options)
}

const MIB: usize = 1 << 20;

fn claims_past_the_limit_are_refused_before_allocating(dir: &Path) {
    // corpus/fuzz/012 and 013: 2^24 pages claimed.
    let path = claiming(dir, "past.db", 1 << 24);
    let (err, bytes) = allocated(|| open(&path, FreelistKind::Array, true).err());
    assert!(
        matches!(
            err,
            Some(Error::Format(FormatError::TooManyFreeIds {
                what: "array freelist",
                ..
            }))
        ),
        "{err:?}"
    );
    assert!(bytes < 4 * MIB, "array open allocated {bytes} bytes");
    // The hashmap keeps spans, but persisting the freelist at open lists one id per page.
    let (err, bytes) = allocated(|| open(&path, FreelistKind::Hashmap, false).err());
    assert!(
        matches!(
            err,
            Some(Error::Format(FormatError::TooManyFreeIds {
                what: "freelist page",
                ..
            }))
        ),
        "{err:?}"
    );
    assert!(bytes < 4 * MIB, "hashmap open allocated {bytes} bytes");
}

fn claims_just_under_the_limit_cost_a_few_copies_of_it(dir: &Path) {
    let ids_bytes = (MAX_FREE_IDS * 8) as usize;
    // A few pages are reached, so MAX_FREE_IDS + 2 claimed leave just under the limit free.
    let path = claiming(dir, "under.db", MAX_FREE_IDS + 2);
    for kind in [FreelistKind::Array, FreelistKind::Hashmap] {
        // The open persists a freelist page of nearly MAX_FREE_IDS ids, then a commit rewrites it.
        let (db, bytes) = allocated(|| {
            let db = open(&path, kind, false).unwrap();
            db.update(|tx| tx.create_bucket_if_missing(b"x")?.put(b"k", b"v"))
                .unwrap();
            db
        });
        assert!(db.meta().has_freelist());
        assert!(db.meta().txid > TxId(2));
        // Two commits, each holding the id list, the page and the commit buffer, and the array
        // set itself: about eight copies of the ids in all, not the 128 MiB of one at 2^24.
        assert!(
            bytes < 9 * ids_bytes,
            "{kind:?}: allocated {bytes} bytes, {} id lists",
            bytes / ids_bytes
        );
        assert_eq!(db.check().unwrap(), vec![]);
    }
}

// One test, so that nothing else allocates while a region counts.
#[test]
fn one_id_per_free_page_costs_at_most_a_few_times_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    claims_past_the_limit_are_refused_before_allocating(dir.path());
    claims_just_under_the_limit_cost_a_few_copies_of_it(dir.path());
}
