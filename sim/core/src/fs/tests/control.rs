//! The negative control of SimFs: a simulator that forgets a rename is pending (the debug switch
//! `renames_durable_at_once`) hides the bug the metadata model exists to catch. The protocol:
//! replace a file by writing a temporary one, syncing it, and renaming it over the old one, then
//! acknowledge the new contents — without the directory sync that makes the rename durable.

use super::*;

/// Seeds, out of `seeds`, whose power cut after an acknowledged replace left `db` without the
/// acknowledged contents.
fn lost_acknowledged(config: FsConfig, dir_sync: bool, seeds: u64) -> u64 {
    (0..seeds)
        .filter(|&seed| {
            let fs = SimFs::new(seed, DiskConfig::default(), config);
            durable_file(&fs, "db", b"version 1");
            let tmp = fs.create("db.tmp").unwrap();
            tmp.write_at(0, b"version 2").unwrap();
            tmp.sync().unwrap();
            fs.rename("db.tmp", "db").unwrap();
            if dir_sync {
                fs.sync_dir().unwrap();
            }
            // Acknowledged: "version 2" is promised from here on.
            fs.crash();
            content(&fs, "db").as_deref() != Some(b"version 2".as_slice())
        })
        .count() as u64
}

#[test]
fn a_missing_directory_sync_loses_data_only_under_the_real_model() {
    for model in MetaModel::ALL {
        let real = FsConfig {
            model,
            renames_durable_at_once: false,
        };
        let forgetful = FsConfig {
            model,
            renames_durable_at_once: true,
        };
        let caught = lost_acknowledged(real, false, 64);
        assert!(
            caught > 0,
            "{model}: the real model finds the missing directory sync"
        );
        assert_eq!(
            lost_acknowledged(forgetful, false, 64),
            0,
            "{model}: a simulator that persists renames at once hides it"
        );
        assert_eq!(
            lost_acknowledged(real, true, 64),
            0,
            "{model}: the clean twin, with the directory sync, loses nothing"
        );
    }
}
