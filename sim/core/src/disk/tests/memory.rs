//! A disk's memory stays near its file's length: sparse sectors, one buffer per sector, no
//! copy at a crash, and forks sharing buffers (`memory.rs`). The evidence is the disk's own byte
//! count, a deterministic function of the calls, not a timed or resident-memory measurement.

use super::*;
use crate::disk::memory::distinct_held_bytes;

const MIB: u64 = 1 << 20;

/// The memory check: 1.2 × the file's length, plus 64 KiB for the sectors a workload has
/// pending at any moment.
fn within_budget(held: u64, len: u64) -> bool {
    held <= len + len / 5 + (64 << 10)
}

/// Page `i` of a file, 4 KiB, tagged so that a wrong page shows.
fn page(i: u64, round: u8) -> Vec<u8> {
    (0..4096u64)
        .map(|b| (i.wrapping_mul(31) ^ b ^ u64::from(round)) as u8)
        .collect()
}

/// Write an 8 MiB file in 4 KiB pages, synced every 256 pages, then three rounds of rewriting
/// a seeded scatter of 12 pages (48 KiB pending) and crashing. Checks the budget after every
/// call; returns the file's length.
fn write_sync_crash(d: &SimDisk) -> u64 {
    let pages = 8 * MIB / 4096;
    let check = |d: &SimDisk| {
        let m = d.memory();
        assert!(within_budget(m.held_bytes, m.len), "{m:?}");
    };
    for i in 0..pages {
        d.write_at(i * 4096, &page(i, 0)).unwrap();
        if i % 256 == 255 {
            d.sync().unwrap();
        }
        check(d);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for round in 1..=3u8 {
        for _ in 0..12 {
            let i = rng.next_u64() % pages;
            d.write_at(i * 4096, &page(i, round)).unwrap();
            check(d);
        }
        let outcome = d.crash();
        assert!(outcome.kept > 0 && outcome.lost > 0, "{outcome:?}");
        check(d);
    }
    d.memory().len
}

#[test]
fn a_disk_holds_about_its_file_through_writes_syncs_and_crashes() {
    for sector_size in [512, 4096] {
        let d = SimDisk::new(
            3,
            DiskConfig {
                sector_size,
                ..DiskConfig::default()
            },
        );
        let len = write_sync_crash(&d);
        assert_eq!(len, 8 * MIB);
        let m = d.memory();
        assert!(within_budget(m.peak_held_bytes, len), "{m:?}");
        // After a crash nothing is pending: one buffer per written sector, exactly the file.
        assert_eq!(m.held_bytes, len, "{sector_size}: {m:?}");
        assert!(
            m.peak_held_bytes > len,
            "the rewrites were pending once: {m:?}"
        );
    }
}

#[test]
fn a_never_written_region_holds_nothing() {
    let d = disk(1);
    d.set_len(64 * MIB).unwrap();
    d.write_at(32 * MIB, &[7; SS]).unwrap();
    d.sync().unwrap();
    assert_eq!(d.memory().held_bytes, SS as u64);
    assert_eq!(read(&d, 0, SS).unwrap(), vec![0; SS]);
}

fn template() -> (SimDisk, u64) {
    let t = SimDisk::new(
        5,
        DiskConfig {
            sector_size: 4096,
            ..DiskConfig::default()
        },
    );
    let len = write_sync_crash(&t);
    (t, len)
}

/// Fork `t`, run the workload's rewrites and crashes on the fork, and return the bytes the
/// two hold together.
fn fork_and_crash(t: &SimDisk) -> (SimDisk, u64) {
    let image = t.image();
    let f = t.fork(9, t.config());
    assert_eq!(f.image(), image, "a fork reads as its source");
    assert_eq!(f.durable_image(), image, "and all of it is durable");
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for round in 1..=3u8 {
        for _ in 0..12 {
            let i = rng.next_u64() % (f.memory().len / 4096);
            f.write_at(i * 4096, &page(i, 100 + round)).unwrap();
        }
        f.sync().unwrap();
        f.write_at(0, &page(0, 200 + round)).unwrap();
        f.crash();
    }
    assert_eq!(
        t.image(),
        image,
        "the fork's writes do not reach its source"
    );
    let together = distinct_held_bytes(&[t, &f]);
    (f, together)
}

#[test]
fn a_fork_shares_its_sources_sectors() {
    let (t, len) = template();
    let (f, together) = fork_and_crash(&t);
    assert_eq!(
        distinct_held_bytes(&[&t, &f, &t]),
        together,
        "each buffer once"
    );
    assert!(within_budget(together, len), "{together} for {len}");
    // Each disk alone holds the whole file: the sharing is what the check sees.
    assert!(f.memory().held_bytes >= len, "{:?}", f.memory());
}

/// Negative control: a fork that copies its source is a full second image, and the check fails.
#[test]
fn the_memory_check_catches_a_fork_that_copies() {
    let (t, len) = template();
    t.set_debug_fork_copies(true);
    let (_f, together) = fork_and_crash(&t);
    assert!(!within_budget(together, len), "{together} for {len}");
    assert!(together >= 2 * len, "{together} for {len}");
}

/// A fork behaves as a fresh disk written its source's image and synced: the same reads, and
/// the same costs for the same calls, even past a partial last sector holding stale bytes.
#[test]
fn a_fork_behaves_as_a_synced_copy() {
    for garbage in [false, true] {
        let config = DiskConfig {
            faults: FaultConfig {
                garbage_unwritten: garbage,
                ..FaultConfig::none()
            },
            ..DiskConfig::default()
        };
        let src = SimDisk::new(2, config.clone());
        src.write_at(0, &sectors_tagged(4, 1)).unwrap();
        src.sync().unwrap();
        src.set_len(3 * SS as u64 + 10).unwrap(); // stale bytes past the length
        src.set_len(5 * SS as u64 + 10).unwrap(); // a never-written sector inside it
        src.set_len(2 * SS as u64 + 100).unwrap();
        let copy = SimDisk::new(4, config.clone());
        copy.write_at(0, &src.image()).unwrap();
        copy.sync().unwrap();
        let fork = src.fork(4, config);
        let before = (copy.io_stats(), fork.io_stats());
        for d in [&copy, &fork] {
            d.set_len(6 * SS as u64).unwrap();
            d.write_at(4 * SS as u64, &[9; 7]).unwrap();
            d.sync().unwrap();
        }
        assert_eq!(fork.image(), copy.image(), "garbage {garbage}");
        assert_eq!(
            fork.io_stats().since(&before.1),
            copy.io_stats().since(&before.0),
            "garbage {garbage}"
        );
    }
}
