//! Power cuts of a SimFs, per metadata model: what survives of creates, renames and deletes
//! without a directory sync, file data under the disk's faults, and determinism.

use super::*;
use std::collections::BTreeSet;

/// Every directory (each name with its contents) the power cuts of `seeds` leave after
/// `script` ran on a fresh file system of `model`.
fn outcomes(
    model: MetaModel,
    seeds: std::ops::Range<u64>,
    script: impl Fn(&SimFs),
) -> BTreeSet<Vec<(String, Vec<u8>)>> {
    seeds
        .map(|seed| {
            let fs = fs_with(seed, model);
            script(&fs);
            fs.crash();
            fs.images().into_iter().collect()
        })
        .collect()
}

fn state(files: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    files
        .iter()
        .map(|(n, b)| (n.to_string(), b.to_vec()))
        .collect()
}

#[test]
fn a_create_without_a_directory_sync_can_vanish() {
    let create = |fs: &SimFs| {
        let f = fs.create("f").unwrap();
        f.write_at(0, b"data").unwrap();
        f.sync().unwrap(); // the data is durable; its name is not
    };
    for model in MetaModel::ALL {
        let seen = outcomes(model, 0..64, create);
        let want = BTreeSet::from([state(&[]), state(&[("f", b"data")])]);
        assert_eq!(seen, want, "{model}");
        let synced = outcomes(model, 0..64, |fs| {
            create(fs);
            fs.sync_dir().unwrap();
        });
        assert_eq!(
            synced,
            BTreeSet::from([state(&[("f", b"data")])]),
            "{model}"
        );
    }
}

/// `db` durable with `old`; `tmp` written with `new` and synced, renamed over `db`.
fn replace(fs: &SimFs) {
    durable_file(fs, "db", b"old");
    let t = fs.create("tmp").unwrap();
    t.write_at(0, b"new").unwrap();
    t.sync().unwrap();
    fs.rename("tmp", "db").unwrap();
}

#[test]
fn a_rename_over_a_file_is_atomic_and_pending_until_the_directory_sync() {
    for model in MetaModel::ALL {
        let seen = outcomes(model, 0..64, replace);
        // Never both names on one file, never `db` missing: the old file, the new, or the old
        // with the temporary one beside it (its create kept, the rename lost).
        let want = BTreeSet::from([
            state(&[("db", b"old")]),
            state(&[("db", b"old"), ("tmp", b"new")]),
            state(&[("db", b"new")]),
        ]);
        assert_eq!(seen, want, "{model}");
        let synced = outcomes(model, 0..64, |fs| {
            replace(fs);
            fs.sync_dir().unwrap();
        });
        assert_eq!(
            synced,
            BTreeSet::from([state(&[("db", b"new")])]),
            "{model}"
        );
    }
}

#[test]
fn strict_loses_operations_independently_ordered_keeps_prefixes() {
    let two = |fs: &SimFs| {
        fs.create("a").unwrap();
        fs.create("b").unwrap();
    };
    let ordered = outcomes(MetaModel::Ordered, 0..64, two);
    let strict = outcomes(MetaModel::Strict, 0..64, two);
    let b_alone = state(&[("b", b"")]);
    assert!(
        !ordered.contains(&b_alone),
        "ordered keeps a prefix: {ordered:?}"
    );
    assert!(
        strict.contains(&b_alone),
        "strict loses the first, keeps the second: {strict:?}"
    );
    assert_eq!(ordered.len(), 3);
    assert_eq!(strict.len(), 4);
}

#[test]
fn a_renamed_file_can_lose_its_unsynced_data_while_the_rename_survives() {
    let unsynced = |fs: &SimFs| {
        durable_file(fs, "db", b"old");
        let t = fs.create("tmp").unwrap();
        t.write_at(0, b"new").unwrap(); // no sync of the data
        fs.rename("tmp", "db").unwrap();
    };
    let seen = outcomes(MetaModel::Ordered, 0..64, unsynced);
    assert!(
        seen.contains(&state(&[("db", b"")])),
        "the rename survived, the data did not: {seen:?}"
    );
    assert!(
        !seen.iter().any(|s| s == &state(&[("db", b"new")])),
        "{seen:?}"
    );
    let dir_synced = outcomes(MetaModel::Ordered, 0..64, |fs| {
        unsynced(fs);
        fs.sync_dir().unwrap();
    });
    assert_eq!(dir_synced, BTreeSet::from([state(&[("db", b"")])]));
}

#[test]
fn a_delete_is_pending_until_the_directory_sync() {
    for model in MetaModel::ALL {
        let delete = |fs: &SimFs| {
            durable_file(fs, "db", b"kept");
            fs.delete("db").unwrap();
            assert!(fs.list().is_empty());
            assert_eq!(fs.open("db").unwrap_err().kind(), io::ErrorKind::NotFound);
        };
        let seen = outcomes(model, 0..64, delete);
        assert_eq!(
            seen,
            BTreeSet::from([state(&[]), state(&[("db", b"kept")])]),
            "{model}: the deleted file may come back, with its data"
        );
        let synced = outcomes(model, 0..64, |fs| {
            delete(fs);
            fs.sync_dir().unwrap();
        });
        assert_eq!(synced, BTreeSet::from([state(&[])]), "{model}");
    }
}

/// One fault on at rate 1 (or switched on), the calls that meet it, and the count that shows
/// the file's disk injected it.
#[test]
fn every_fault_kind_hits_file_data() {
    type Count = fn(&FaultCounts) -> u64;
    let kinds: [(&str, FaultConfig, Count); 10] = [
        (
            "read_eio",
            FaultConfig {
                read_eio: 1.0,
                ..FaultConfig::none()
            },
            |c| c.read_eio,
        ),
        (
            "write_eio",
            FaultConfig {
                write_eio: 1.0,
                ..FaultConfig::none()
            },
            |c| c.write_eio,
        ),
        (
            "sync_eio",
            FaultConfig {
                sync_eio: 1.0,
                ..FaultConfig::none()
            },
            |c| c.sync_eio,
        ),
        (
            "latent",
            FaultConfig {
                latent: 1.0,
                ..FaultConfig::none()
            },
            |c| c.latent_read_errors,
        ),
        (
            "bit_flip",
            FaultConfig {
                bit_flip: 1.0,
                ..FaultConfig::none()
            },
            |c| c.bit_flips,
        ),
        (
            "misdirect",
            FaultConfig {
                misdirect: 1.0,
                ..FaultConfig::none()
            },
            |c| c.misdirected_writes,
        ),
        (
            "enospc",
            FaultConfig {
                enospc_capacity: Some(1024),
                ..FaultConfig::none()
            },
            |c| c.enospc,
        ),
        (
            "lying_sync",
            FaultConfig {
                lying_sync: true,
                ..FaultConfig::none()
            },
            |c| c.lying_syncs,
        ),
        (
            "garbage",
            FaultConfig {
                garbage_unwritten: true,
                ..FaultConfig::none()
            },
            |c| c.garbage_sector_reads,
        ),
        (
            "sub_sector_tear",
            FaultConfig {
                sub_sector_tear: 1.0,
                ..FaultConfig::none()
            },
            |c| c.sub_sector_tears,
        ),
    ];
    for (kind, faults, count) in kinds {
        let fs = fs_with(9, MetaModel::Ordered);
        let f = fs.create("f").unwrap();
        f.write_at(0, &[1u8; 2048]).unwrap();
        f.sync().unwrap();
        fs.sync_dir().unwrap();
        fs.set_faults(faults);
        let _ = f.set_len(4096); // grows past any capacity; never-written sectors after it
        let _ = f.write_at(512, &[2u8; 8]);
        let _ = f.write_at(0, &[3u8; 1024]);
        let _ = f.read_at(0, &mut [0u8; 4096]);
        let _ = f.sync();
        let _ = f.write_at(0, &[4u8; 4096]);
        fs.crash();
        let counts = fs.fault_counts();
        assert!(count(&counts) > 0, "{kind}: {counts:?}");
        assert_eq!(counts.crashes, 1, "{kind}");
    }
}

#[test]
fn a_lying_disk_lies_about_directory_syncs_too() {
    let fs = SimFs::new(
        1,
        DiskConfig {
            faults: FaultConfig {
                lying_sync: true,
                ..FaultConfig::none()
            },
            ..DiskConfig::default()
        },
        FsConfig::default(),
    );
    durable_file(&fs, "f", b"x");
    assert_eq!(fs.counts().lying_dir_syncs, 1);
    assert!(fs.durable_directory().is_empty());
    assert_eq!(fs.pending_meta().len(), 1);
}

/// A history over three files with every fault of the default profile on.
fn busy(seed: u64, model: MetaModel) -> (SimFs, Vec<FsCrashOutcome>) {
    let faults = FaultConfig {
        read_eio: 0.05,
        write_eio: 0.05,
        sync_eio: 0.1,
        latent: 0.05,
        sub_sector_tear: 0.3,
        ..FaultConfig::none()
    };
    let fs = SimFs::new(
        seed,
        DiskConfig {
            faults,
            ..DiskConfig::default()
        },
        FsConfig {
            model,
            ..FsConfig::default()
        },
    );
    let mut cuts = Vec::new();
    for round in 0..3u8 {
        for (i, name) in ["wal", "db", "tmp"].into_iter().enumerate() {
            let f = fs.open_or_create(name).unwrap();
            for k in 0..4u64 {
                let _ = f.write_at(k * 700 + i as u64, &[round * 16 + k as u8; 900]);
            }
            if (round as usize + i).is_multiple_of(2) {
                let _ = f.sync();
            }
        }
        fs.rename("tmp", "db").unwrap();
        if round == 1 {
            fs.sync_dir().unwrap();
        }
        fs.delete("wal").unwrap();
        cuts.push(fs.crash());
    }
    (fs, cuts)
}

#[test]
fn the_same_seed_leaves_the_same_directory_byte_for_byte() {
    for model in MetaModel::ALL {
        let mut differ = false;
        for seed in 0..8 {
            let (a, cuts_a) = busy(seed, model);
            let (b, cuts_b) = busy(seed, model);
            assert_eq!(cuts_a, cuts_b, "{model} seed {seed}");
            assert_eq!(a.images(), b.images(), "{model} seed {seed}");
            assert_eq!(a.fault_counts(), b.fault_counts());
            assert_eq!(a.io_stats(), b.io_stats());
            let (c, _) = busy(seed + 100, model);
            differ |= c.images() != a.images();
        }
        assert!(differ, "{model}: other seeds leave other directories");
    }
}

#[test]
fn a_file_length_is_durable_as_its_disk_length_model_says() {
    let grow_by_writing = |length| {
        let fs = SimFs::new(
            3,
            DiskConfig {
                length,
                ..DiskConfig::default()
            },
            FsConfig::default(),
        );
        let f = fs.create("f").unwrap();
        fs.sync_dir().unwrap();
        f.write_at(0, &[7u8; 4096]).unwrap();
        f.sync().unwrap(); // a data sync: growth needs its own barrier under own-barrier
        fs.crash();
        content(&fs, "f").unwrap().len()
    };
    assert_eq!(grow_by_writing(crate::disk::LengthModel::WithData), 4096);
    assert_eq!(grow_by_writing(crate::disk::LengthModel::OwnBarrier), 0);
}
