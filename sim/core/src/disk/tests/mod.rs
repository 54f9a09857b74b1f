//! Tests of `SimDisk`: the `Storage` contract with faults off, crashes, determinism and cost;
//! each fault kind alone in `faults.rs`.

mod faults;
mod length;
mod memory;

use super::*;
use crashlab_engine::MemStorage;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

const SS: usize = 512;

fn disk(seed: u64) -> SimDisk {
    SimDisk::new(seed, DiskConfig::default())
}

fn disk_with(seed: u64, faults: FaultConfig) -> SimDisk {
    SimDisk::new(
        seed,
        DiskConfig {
            faults,
            ..DiskConfig::default()
        },
    )
}

fn read(d: &SimDisk, offset: u64, n: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    d.read_at(offset, &mut buf)?;
    Ok(buf)
}

/// `n` sectors, sector `i` filled with byte `tag + i`.
fn sectors_tagged(n: usize, tag: u8) -> Vec<u8> {
    (0..n)
        .flat_map(|i| std::iter::repeat_n(tag.wrapping_add(i as u8), SS))
        .collect()
}

#[test]
fn keeps_the_storage_contract() {
    for sector_size in [1, 16, 512, 4096] {
        let d = SimDisk::new(
            1,
            DiskConfig {
                sector_size,
                ..DiskConfig::default()
            },
        );
        crashlab_engine::storage::contract::check(&d);
        let boxed: Box<dyn Storage> = Box::new(d.clone());
        assert_eq!(boxed.len().unwrap(), 12);
        assert_eq!(d.durable_len(), 12);
        assert!(d.pending_sectors().is_empty());
    }
    crashlab_engine::storage::contract::check(&std::sync::Arc::new(disk(2)));
}

#[test]
fn matches_mem_storage_on_random_unaligned_io() {
    for seed in 0..16 {
        // Reads see every write whatever the length model: it decides only what a crash keeps.
        let length = LengthModel::ALL[seed as usize % 2];
        let d = SimDisk::new(
            seed,
            DiskConfig {
                sector_size: 64,
                length,
                ..DiskConfig::default()
            },
        );
        let m = MemStorage::new();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for step in 0..300 {
            let len = m.len().unwrap();
            match rng.next_u32() % 8 {
                0..=3 => {
                    let offset = u64::from(rng.next_u32()) % 1200;
                    // At least 1 byte: MemStorage extends on an empty write, a file (and this
                    // disk) does not.
                    let n = 1 + (rng.next_u32() % 300) as usize;
                    let mut data = vec![0u8; n];
                    rng.fill_bytes(&mut data);
                    d.write_at(offset, &data).unwrap();
                    m.write_at(offset, &data).unwrap();
                }
                4 => {
                    let new_len = u64::from(rng.next_u32()) % 1500;
                    d.set_len(new_len).unwrap();
                    m.set_len(new_len).unwrap();
                }
                5 => d.sync().unwrap(),
                _ => {
                    let offset = u64::from(rng.next_u32()) % (len + 10);
                    let n = (rng.next_u32() % 200) as usize;
                    let got = read(&d, offset, n);
                    let mut want = vec![0u8; n];
                    match m.read_at(offset, &mut want) {
                        Ok(()) => assert_eq!(got.unwrap(), want, "seed {seed} step {step}"),
                        Err(e) => assert_eq!(got.unwrap_err().kind(), e.kind()),
                    }
                }
            }
            assert_eq!(d.len().unwrap(), m.len().unwrap());
            assert_eq!(d.image(), m.snapshot(), "seed {seed} step {step}");
        }
        match length {
            LengthModel::WithData => d.sync().unwrap(),
            LengthModel::OwnBarrier => d.make_all_durable(),
        }
        assert_eq!(d.durable_image(), m.snapshot());
    }
}

#[test]
fn pending_writes_are_visible_but_not_durable_until_sync() {
    let d = disk(3);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    d.write_at(SS as u64, &sectors_tagged(1, 9)).unwrap();
    assert_eq!(d.pending_sectors(), vec![1]);
    assert_eq!(read(&d, SS as u64, SS).unwrap(), sectors_tagged(1, 9));
    assert_eq!(d.durable_image(), sectors_tagged(2, 1));
    assert_ne!(d.image(), d.durable_image());
    d.sync().unwrap();
    assert!(d.pending_sectors().is_empty());
    assert_eq!(d.durable_image(), d.image());
}

#[test]
fn an_empty_write_changes_nothing() {
    let d = disk(26);
    d.write_at(100, b"").unwrap();
    assert_eq!(d.len().unwrap(), 0);
    assert!(d.pending_sectors().is_empty());
    assert!(d.read_at(0, &mut []).is_ok());
    assert_eq!(
        d.read_at(1, &mut []).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
}

#[test]
fn clones_share_one_disk() {
    let a = disk(4);
    let b = a.clone();
    a.write_at(0, b"shared").unwrap();
    assert_eq!(read(&b, 0, 6).unwrap(), b"shared");
    assert_eq!(b.io_stats().writes, 1);
}

/// Sync 16 sectors of tag 1, then overwrite each with tag 100 (one write call each): 16 pending.
fn disk_with_16_pending(seed: u64) -> SimDisk {
    let d = disk(seed);
    d.write_at(0, &sectors_tagged(16, 1)).unwrap();
    d.sync().unwrap();
    for i in 0..16u64 {
        let data = vec![100 + i as u8; SS];
        d.write_at(i * SS as u64, &data).unwrap();
    }
    assert_eq!(d.pending_sectors(), (0..16).collect::<Vec<_>>());
    d
}

/// The image a crash keeping exactly `kept` of `disk_with_16_pending` must leave.
fn expected_after_keeping(kept: &BTreeSet<u64>) -> Vec<u8> {
    let mut want = sectors_tagged(16, 1);
    for &s in kept {
        let start = s as usize * SS;
        want[start..start + SS].fill(100 + s as u8);
    }
    want
}

/// Which sectors of `image` hold the tag-100 bytes.
fn new_sectors_in(image: &[u8]) -> BTreeSet<u64> {
    (0..16u64)
        .filter(|&s| image[s as usize * SS] == 100 + s as u8)
        .collect()
}

#[test]
fn crash_keeps_a_seeded_subset() {
    let d = disk_with_16_pending(5);
    let outcome = d.crash();
    assert_eq!(outcome.pending_sectors, 16);
    assert_eq!(outcome.kept + outcome.lost, 16);
    assert!(outcome.kept > 0 && outcome.lost > 0, "{outcome:?}");
    let image = d.image();
    let kept = new_sectors_in(&image);
    assert_eq!(kept.len() as u64, outcome.kept);
    assert_eq!(image, expected_after_keeping(&kept));
    assert_eq!(d.durable_image(), image);
    assert!(d.pending_sectors().is_empty());
    let c = d.fault_counts();
    assert_eq!(c.crashes, 1);
    assert_eq!(c.sectors_kept_in_crash, outcome.kept);
    assert_eq!(c.sectors_lost_in_crash, outcome.lost);
    // Same seed, same calls: same subset.
    let again = disk_with_16_pending(5);
    assert_eq!(again.crash(), outcome);
    assert_eq!(again.image(), image);
    // The disk stays usable.
    d.write_at(0, b"after").unwrap();
    d.sync().unwrap();
    assert_eq!(read(&d, 0, 5).unwrap(), b"after");
}

#[test]
fn crash_with_keeps_exactly_the_chosen_sectors() {
    let d = disk_with_16_pending(6);
    let mut asked = Vec::new();
    let outcome = d.crash_with(&mut |s| {
        asked.push(s);
        s % 3 == 0
    });
    assert_eq!(asked, (0..16).collect::<Vec<_>>());
    let kept: BTreeSet<u64> = (0..16).filter(|s| s % 3 == 0).collect();
    assert_eq!(
        outcome,
        CrashOutcome {
            pending_sectors: 16,
            kept: kept.len() as u64,
            lost: 16 - kept.len() as u64,
            sub_sector_tears: 0,
        }
    );
    assert_eq!(d.image(), expected_after_keeping(&kept));
}

#[test]
fn crash_tears_and_reorders_write_calls() {
    let d = disk(7);
    d.set_len(8 * SS as u64).unwrap();
    d.sync().unwrap();
    // One write call of 4 sectors, then a later one of 1 sector.
    d.write_at(0, &sectors_tagged(4, 10)).unwrap();
    d.write_at(5 * SS as u64, &sectors_tagged(1, 50)).unwrap();
    // Keep sectors 0 and 2 of the first call and the later call: torn and reordered.
    d.crash_with(&mut |s| s == 0 || s == 2 || s == 5);
    let image = d.image();
    assert_eq!(image[0], 10);
    assert_eq!(image[SS], 0, "sector 1 of the first call lost");
    assert_eq!(image[2 * SS], 12);
    assert_eq!(
        image[5 * SS],
        50,
        "the later write survives the earlier one's loss"
    );
    assert_eq!(d.fault_counts().torn_writes_in_crash, 1);
}

#[test]
fn crash_reverts_unsynced_length_changes() {
    let d = disk(8);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    // Growth by writing past the end: lost with the length, even if the sector is kept.
    d.write_at(2 * SS as u64, &sectors_tagged(2, 7)).unwrap();
    let outcome = d.crash_with(&mut |_| true);
    assert_eq!((outcome.kept, outcome.lost), (0, 2));
    assert_eq!(d.len().unwrap(), 2 * SS as u64);
    assert_eq!(d.image(), sectors_tagged(2, 1));
    // Synced set_len growth counts.
    d.set_len(3 * SS as u64).unwrap();
    d.sync().unwrap();
    d.crash();
    assert_eq!(d.len().unwrap(), 3 * SS as u64);
    // An unsynced truncation is undone by a crash.
    d.set_len(10).unwrap();
    assert_eq!(d.len().unwrap(), 10);
    d.crash();
    assert_eq!(d.len().unwrap(), 3 * SS as u64);
    assert_eq!(read(&d, 0, 2 * SS).unwrap(), sectors_tagged(2, 1));
}

#[test]
fn truncate_then_grow_never_resurrects_old_bytes() {
    let d = disk(9);
    d.write_at(0, &sectors_tagged(4, 1)).unwrap();
    d.sync().unwrap();
    d.set_len(100).unwrap();
    d.set_len(4 * SS as u64).unwrap();
    let image = d.image();
    assert_eq!(&image[..100], &sectors_tagged(1, 1)[..100]);
    assert!(image[100..].iter().all(|&b| b == 0));
    d.sync().unwrap();
    assert_eq!(d.durable_image(), image);
    d.crash();
    assert_eq!(d.image(), image);
}

/// A fixed call sequence with every fault on at a moderate rate; errors are ignored.
fn faulty_workload(seed: u64) -> SimDisk {
    let d = disk_with(
        seed,
        FaultConfig {
            read_eio: 0.1,
            write_eio: 0.1,
            sync_eio: 0.2,
            latent: 0.1,
            bit_flip: 0.3,
            misdirect: 0.1,
            enospc_capacity: Some(64 * SS as u64),
            lying_sync: false,
            garbage_unwritten: true,
            sub_sector_tear: 0.3,
        },
    );
    for round in 0..20u64 {
        for i in 0..5u64 {
            let offset = ((round * 7 + i * 13) % 70) * SS as u64 + (i % 2) * 100;
            let _ = d.write_at(offset, &vec![(round * 5 + i) as u8; SS + 50]);
            let _ = read(&d, offset / 2, 700);
        }
        let _ = d.sync();
        if round % 6 == 5 {
            d.crash();
        }
        if round % 9 == 8 {
            let _ = d.set_len(10 * SS as u64 + 77);
        }
    }
    d
}

#[test]
fn same_seed_same_faults_other_seed_other_faults() {
    let a = faulty_workload(100);
    let b = faulty_workload(100);
    assert_eq!(a.image_hash(), b.image_hash());
    assert_eq!(a.fault_counts(), b.fault_counts());
    assert_eq!(a.io_stats(), b.io_stats());
    assert_eq!(a.latent_sectors(), b.latent_sectors());
    let c = faulty_workload(101);
    assert_ne!(
        (a.image_hash(), a.fault_counts()),
        (c.image_hash(), c.fault_counts())
    );
    let counts = a.fault_counts();
    assert!(counts.crashes == 3 && counts.write_eio > 0 && counts.sync_eio > 0);
    assert!(counts.misdirected_writes > 0 && counts.garbage_sector_reads > 0);
}

#[test]
fn image_hash_is_xxh3_of_the_image() {
    let d = disk(20);
    // XXH3-64 of no bytes (seed 0), the published test vector.
    assert_eq!(d.image_hash(), 0x2d06_8005_38d3_94c2);
    d.write_at(0, b"a").unwrap();
    assert_eq!(d.image_hash(), xxhash_rust::xxh3::xxh3_64(b"a"));
    // Past one piece of the streamed hash, and with a never-written hole inside the length.
    let big: Vec<u8> = (0..150_000u32).map(|i| (i % 251) as u8).collect();
    d.write_at(4096, &big).unwrap();
    d.write_at(300_000, b"end").unwrap();
    assert_eq!(d.image().len(), 300_003);
    assert_eq!(d.image_hash(), xxhash_rust::xxh3::xxh3_64(&d.image()));
}

#[test]
fn io_stats_sum_the_cost_model() {
    let cost = CostModel {
        read_latency_ns: 1_000,
        write_latency_ns: 2_000,
        sync_latency_ns: 50_000,
        bandwidth_bytes_per_s: 1_000_000_000,
    };
    let d = SimDisk::new(
        21,
        DiskConfig {
            cost,
            ..DiskConfig::default()
        },
    );
    d.write_at(0, &[1u8; 1000]).unwrap(); // 2 sectors pending
    d.read_at(0, &mut [0u8; 100]).unwrap();
    assert!(d.read_at(5000, &mut [0u8; 10]).is_err()); // counted and charged anyway
    d.sync().unwrap();
    d.set_len(10).unwrap();
    let s = d.io_stats();
    let want = cost.write_ns(1000) + cost.read_ns(100) + cost.read_ns(10) + cost.sync_ns(1024);
    assert_eq!(
        s,
        IoStats {
            reads: 2,
            writes: 1,
            syncs: 1,
            set_lens: 1,
            bytes_read: 100,
            bytes_written: 1000,
            sim_time_ns: want,
        }
    );
}

#[test]
#[should_panic(expected = "overflows u64")]
fn offset_overflow_is_a_caller_bug() {
    let _ = disk(22).write_at(u64::MAX - 1, b"xyz");
}

#[test]
#[should_panic(expected = "not a power of two")]
fn sector_size_must_be_a_power_of_two() {
    SimDisk::new(
        23,
        DiskConfig {
            sector_size: 500,
            ..DiskConfig::default()
        },
    );
}

#[test]
#[should_panic(expected = "read_eio")]
fn rates_must_be_probabilities() {
    disk(24).set_faults(FaultConfig {
        read_eio: 2.0,
        ..FaultConfig::none()
    });
}

#[test]
fn lengths_past_the_bound_are_errors() {
    let d = disk(25);
    let err = d.set_len(SIM_DISK_LEN_MAX + 1).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    let err = d.write_at(SIM_DISK_LEN_MAX, b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    assert_eq!(d.len().unwrap(), 0);
}
