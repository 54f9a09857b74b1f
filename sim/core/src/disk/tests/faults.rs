//! Each fault kind of `SimDisk` alone: what it does, that it is counted, and where it lands.

use super::*;

#[test]
fn read_eio_is_transient_and_counted() {
    let d = disk_with(10, FaultConfig::none());
    d.write_at(0, b"data").unwrap();
    d.set_faults(FaultConfig {
        read_eio: 1.0,
        ..FaultConfig::none()
    });
    assert!(read(&d, 0, 4).is_err());
    assert!(read(&d, 0, 4).is_err());
    assert_eq!(d.fault_counts().read_eio, 2);
    d.set_faults(FaultConfig {
        read_eio: 0.5,
        ..FaultConfig::none()
    });
    let ok = (0..200).filter(|_| read(&d, 0, 4).is_ok()).count();
    assert!((50..150).contains(&ok), "{ok}");
    assert_eq!(d.fault_counts().read_eio, 2 + 200 - ok as u64);
    assert_eq!(d.io_stats().bytes_read, 4 * ok as u64);
}

#[test]
fn write_eio_writes_nothing() {
    let d = disk_with(
        11,
        FaultConfig {
            write_eio: 1.0,
            ..FaultConfig::none()
        },
    );
    assert!(d.write_at(0, b"lost").is_err());
    assert_eq!(d.len().unwrap(), 0);
    assert!(d.pending_sectors().is_empty());
    assert_eq!(d.fault_counts().write_eio, 1);
    assert_eq!(d.io_stats().bytes_written, 0);
    d.set_faults(FaultConfig::none());
    d.write_at(0, b"kept").unwrap();
    assert_eq!(d.image(), b"kept");
}

#[test]
fn failed_sync_drops_some_dirty_data_and_a_later_sync_succeeds() {
    let d = disk_with_16_pending(12);
    d.set_faults(FaultConfig {
        sync_eio: 1.0,
        ..FaultConfig::none()
    });
    assert!(d.sync().is_err());
    let c = d.fault_counts();
    assert_eq!(c.sync_eio, 1);
    let still = d.pending_sectors();
    assert_eq!(still.len() as u64 + c.sectors_dropped_by_failed_sync, 16);
    assert!(
        c.sectors_dropped_by_failed_sync > 0 && !still.is_empty(),
        "{c:?}"
    );
    // Dropped sectors read their durable bytes again; the rest still reads the new bytes.
    let kept: BTreeSet<u64> = still.iter().copied().collect();
    assert_eq!(d.image(), expected_after_keeping(&kept));
    assert_eq!(d.durable_image(), sectors_tagged(16, 1));
    d.set_faults(FaultConfig::none());
    d.sync().unwrap();
    assert_eq!(d.durable_image(), expected_after_keeping(&kept));
}

#[test]
fn latent_error_persists_across_retries_and_heals_on_rewrite() {
    let d = disk_with(
        13,
        FaultConfig {
            latent: 1.0,
            ..FaultConfig::none()
        },
    );
    d.write_at(0, &sectors_tagged(8, 1)).unwrap();
    let bad = d.latent_sectors();
    assert_eq!(bad.len(), 1);
    let bad = bad[0];
    assert!(bad < 8);
    d.set_faults(FaultConfig::none());
    for _ in 0..3 {
        assert!(read(&d, 0, 8 * SS).is_err(), "a retry does not heal it");
    }
    assert!(read(&d, bad * SS as u64 + 7, 1).is_err());
    let good = (bad + 1) % 8;
    assert!(read(&d, good * SS as u64, SS).is_ok());
    d.sync().unwrap();
    d.crash();
    assert!(
        read(&d, bad * SS as u64, SS).is_err(),
        "latent errors survive a crash"
    );
    let c = d.fault_counts();
    assert_eq!(c.latent_sectors, 1);
    assert_eq!(c.latent_read_errors, 5);
    d.write_at(bad * SS as u64, &[0u8; SS]).unwrap();
    assert!(d.latent_sectors().is_empty());
    assert!(read(&d, 0, 8 * SS).is_ok());
}

#[test]
fn bit_flip_changes_one_durable_bit() {
    let d = disk_with(
        14,
        FaultConfig {
            bit_flip: 1.0,
            ..FaultConfig::none()
        },
    );
    let data = sectors_tagged(4, 0x10);
    d.write_at(0, &data).unwrap();
    d.sync().unwrap();
    let durable = d.durable_image();
    let differing_bits: u32 = durable
        .iter()
        .zip(&data)
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    assert_eq!(differing_bits, 1);
    assert_eq!(d.image(), durable, "reads see the flip");
    assert_eq!(d.fault_counts().bit_flips, 1);
    // A sync with no durable sectors has nothing to flip.
    let empty = disk_with(14, d.config().faults);
    empty.sync().unwrap();
    assert_eq!(empty.fault_counts().bit_flips, 0);
}

#[test]
fn misdirected_write_lands_elsewhere() {
    let d = disk(15);
    d.write_at(0, &sectors_tagged(8, 1)).unwrap();
    d.set_faults(FaultConfig {
        misdirect: 1.0,
        ..FaultConfig::none()
    });
    let meant = 3 * SS as u64;
    d.write_at(meant, &[0xEEu8; SS]).unwrap();
    assert_eq!(d.fault_counts().misdirected_writes, 1);
    let image = d.image();
    assert_eq!(
        image[meant as usize], 4,
        "the intended place is not written"
    );
    let landed: Vec<usize> = (0..8).filter(|&s| image[s * SS] == 0xEE).collect();
    assert_eq!(landed.len(), 1);
    assert_ne!(landed[0], 3);
    assert!(image[landed[0] * SS..(landed[0] + 1) * SS]
        .iter()
        .all(|&b| b == 0xEE));
    // Nothing inside the length to land on: written where meant, not counted.
    let fresh = disk_with(15, d.config().faults);
    fresh.write_at(0, b"first").unwrap();
    assert_eq!(fresh.image(), b"first");
    assert_eq!(fresh.fault_counts().misdirected_writes, 0);
}

#[test]
fn enospc_changes_nothing() {
    let d = disk_with(
        16,
        FaultConfig {
            enospc_capacity: Some(1024),
            ..FaultConfig::none()
        },
    );
    d.write_at(0, &[1u8; 1000]).unwrap();
    let before = d.image();
    let pending = d.pending_sectors();
    let err = d.write_at(1000, &[2u8; 100]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    assert_eq!(
        d.set_len(2048).unwrap_err().kind(),
        io::ErrorKind::StorageFull
    );
    assert_eq!(d.image(), before);
    assert_eq!(d.pending_sectors(), pending);
    assert_eq!(d.fault_counts().enospc, 2);
    d.write_at(1000, &[2u8; 24]).unwrap();
    d.set_len(1024).unwrap();
}

#[test]
fn lying_sync_persists_nothing() {
    let d = disk(17);
    d.write_at(0, &sectors_tagged(2, 1)).unwrap();
    d.sync().unwrap();
    d.set_faults(FaultConfig {
        lying_sync: true,
        ..FaultConfig::none()
    });
    d.write_at(0, &sectors_tagged(3, 50)).unwrap();
    d.sync().unwrap();
    assert_eq!(d.fault_counts().lying_syncs, 1);
    assert_eq!(d.durable_image(), sectors_tagged(2, 1));
    assert_eq!(d.pending_sectors(), vec![0, 1, 2]);
    d.crash_with(&mut |_| false);
    assert_eq!(
        d.image(),
        sectors_tagged(2, 1),
        "everything since the lie is lost"
    );
}

#[test]
fn garbage_unwritten_is_seeded_and_not_zero() {
    let faults = FaultConfig {
        garbage_unwritten: true,
        ..FaultConfig::none()
    };
    let a = disk_with(18, faults.clone());
    a.set_len(4 * SS as u64).unwrap();
    let first = read(&a, 0, 4 * SS).unwrap();
    assert!(first.iter().any(|&b| b != 0));
    assert_ne!(first[..SS], first[SS..2 * SS], "differs per sector");
    assert_eq!(read(&a, 0, 4 * SS).unwrap(), first, "stable across reads");
    assert_eq!(a.fault_counts().garbage_sector_reads, 8);
    let b = disk_with(18, faults.clone());
    b.set_len(4 * SS as u64).unwrap();
    assert_eq!(b.image(), first, "same seed, same garbage");
    let c = disk_with(19, faults);
    c.set_len(4 * SS as u64).unwrap();
    assert_ne!(c.image(), first, "other seed, other garbage");
    // A written sector reads what was written; a partial write keeps the sector's garbage.
    a.write_at(SS as u64, &[7u8; SS]).unwrap();
    a.write_at(2 * SS as u64, &[9u8; 4]).unwrap();
    let now = a.image();
    assert!(now[SS..2 * SS].iter().all(|&b| b == 7));
    assert_eq!(now[2 * SS..2 * SS + 4], [9u8; 4]);
    assert_eq!(now[2 * SS + 4..3 * SS], first[2 * SS + 4..3 * SS]);
    assert_eq!(now[3 * SS..], first[3 * SS..]);
}

/// The sector `s` of `disk_with_16_pending` after a crash: its old byte (`1 + s`) and new byte
/// (`100 + s`) per 8-byte unit.
fn units_of(image: &[u8], s: usize) -> Vec<bool> {
    let sector = &image[s * SS..(s + 1) * SS];
    sector
        .chunks(TEAR_GRAIN as usize)
        .map(|unit| {
            let new = unit.iter().all(|&b| b == 100 + s as u8);
            assert!(
                new || unit.iter().all(|&b| b == 1 + s as u8),
                "sector {s}: a unit is whole"
            );
            new
        })
        .collect()
}

#[test]
fn sub_sector_tears_keep_a_prefix_or_a_prefix_and_a_suffix_of_new_bytes() {
    let (mut prefixes, mut middles, mut tears) = (0, 0, 0);
    for seed in 0..20 {
        let d = disk_with_16_pending(seed);
        d.set_faults(FaultConfig {
            sub_sector_tear: 1.0,
            ..FaultConfig::none()
        });
        let outcome = d.crash();
        let image = d.image();
        for s in 0..16 {
            let units = units_of(&image, s);
            let runs = units.windows(2).filter(|w| w[0] != w[1]).count();
            match (units.iter().all(|&n| n), units.iter().any(|&n| n), runs) {
                (_, false, _) => {} // lost
                (true, _, _) => panic!("seed {seed} sector {s}: kept whole at rate 1"),
                (false, true, 1) => {
                    assert!(units[0], "a prefix of new bytes");
                    prefixes += 1;
                }
                (false, true, 2) => {
                    assert!(units[0] && units[units.len() - 1], "a prefix and a suffix");
                    middles += 1;
                }
                _ => panic!("seed {seed} sector {s}: {units:?}"),
            }
        }
        assert_eq!(
            outcome.sub_sector_tears, outcome.kept,
            "seed {seed}: {outcome:?}"
        );
        assert_eq!(d.fault_counts().sub_sector_tears, outcome.kept);
        tears += outcome.kept;
        // Same seed, same calls: the same tears.
        let again = disk_with_16_pending(seed);
        again.set_faults(d.config().faults);
        assert_eq!(again.crash(), outcome);
        assert_eq!(again.image(), image);
    }
    assert_eq!(prefixes + middles, tears);
    assert!(
        prefixes > 30 && middles > 30,
        "{prefixes} prefixes, {middles} middles"
    );
}

#[test]
fn tears_are_drawn_after_the_keep_or_lose_choice_and_never_by_crash_with() {
    // The same seed keeps the same sectors with tears on or off: tears draw after every coin.
    for seed in 0..20 {
        let whole = disk_with_16_pending(seed);
        let torn = disk_with_16_pending(seed);
        torn.set_faults(FaultConfig {
            sub_sector_tear: 0.5,
            ..FaultConfig::none()
        });
        let (a, b) = (whole.crash(), torn.crash());
        assert_eq!((a.kept, a.lost, a.sub_sector_tears), (b.kept, b.lost, 0));
        let touched = |d: &SimDisk| -> Vec<bool> {
            let image = d.image();
            (0..16).map(|s| units_of(&image, s)[0]).collect()
        };
        assert_eq!(touched(&whole), touched(&torn), "seed {seed}");
    }
    let d = disk_with_16_pending(3);
    d.set_faults(FaultConfig {
        sub_sector_tear: 1.0,
        ..FaultConfig::none()
    });
    let outcome = d.crash_with(&mut |_| true);
    assert_eq!(outcome.sub_sector_tears, 0);
    assert_eq!(d.image(), expected_after_keeping(&(0..16).collect()));
}

#[test]
fn a_tear_that_changes_nothing_is_not_counted() {
    // The new bytes differ from the old only in the first unit, which every tear keeps new: the
    // sector ends up old (lost) or new (kept), never a third thing.
    let mut new = vec![0u8; SS];
    new[0] = 7;
    let mut kept = 0;
    for seed in 0..8 {
        let d = disk(seed);
        d.write_at(0, &[0u8; SS]).unwrap();
        d.sync().unwrap();
        d.write_at(0, &new).unwrap();
        d.set_faults(FaultConfig {
            sub_sector_tear: 1.0,
            ..FaultConfig::none()
        });
        let c = d.crash();
        assert_eq!(c.sub_sector_tears, 0, "seed {seed}: {c:?}");
        assert_eq!(d.fault_counts().sub_sector_tears, 0);
        let image = d.image();
        assert!(image == new || image == [0u8; SS], "seed {seed}");
        kept += c.kept;
    }
    assert!(kept > 0, "some seed keeps the sector");
}
