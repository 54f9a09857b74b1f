//! The harness's side of a file system: a power cut pinned to what a drawn one kept makes the
//! same state, a pin the model forbids is narrowed, a copy crashes apart from its original,
//! and the image hash covers names as well as bytes.

use super::*;
use crate::disk::{CrashPin, DirPin};

/// An atomic replace without its directory sync, a file created and deleted, and a third
/// file rewritten after a sync: five metadata operations pending, and data in two files.
fn busy(seed: u64, model: MetaModel) -> SimFs {
    let fs = fs_with(seed, model);
    durable_file(&fs, "db", b"version 1");
    let tmp = fs.create("db.tmp").unwrap();
    tmp.write_at(0, &[7u8; 2000]).unwrap();
    tmp.sync().unwrap();
    fs.rename("db.tmp", "db").unwrap();
    let log = fs.create("log").unwrap();
    log.write_at(0, &[9u8; 1500]).unwrap();
    fs.delete("log").unwrap();
    let other = fs.create("other").unwrap();
    other.write_at(0, &[3u8; 1200]).unwrap();
    other.sync().unwrap();
    other.write_at(0, &[4u8; 1200]).unwrap();
    fs
}

#[test]
fn a_cut_pinned_to_what_a_drawn_cut_kept_makes_the_same_state() {
    let (mut distinct, mut pin_mattered) = (BTreeSet::new(), 0);
    for model in MetaModel::ALL {
        for seed in 0..40 {
            let drawn = busy(seed, model);
            let (out, did, lost) = drawn.crash_pinned(None);
            assert_eq!(did.meta, out.kept.kept(), "seed {seed}");
            // Another seed draws other cuts: pinned, it makes this seed's.
            let other = busy(seed + 1000, model);
            other.crash_pinned(None);
            pin_mattered += u64::from(other.images() != drawn.images());
            let pinned = busy(seed + 1000, model);
            let (again, did_again, lost_again) = pinned.crash_pinned(Some(&did));
            assert_eq!((&again, &did_again, &lost_again), (&out, &did, &lost));
            assert_eq!(pinned.images(), drawn.images(), "{model} seed {seed}");
            assert_eq!(pinned.image_hash(), drawn.image_hash());
            distinct.insert((model, drawn.image_hash()));
        }
    }
    assert!(
        distinct.len() > 8,
        "the seeds drew few different cuts: {}",
        distinct.len()
    );
    assert!(
        pin_mattered > 10,
        "other seeds drew the same cuts: {pin_mattered} of 80 differ"
    );
}

#[test]
fn a_pin_the_model_forbids_is_narrowed_to_one_it_allows() {
    // Ordered: keeping operation 1 without 0 is no prefix: nothing is kept.
    let fs = busy(3, MetaModel::Ordered);
    let pending = fs.pending_meta().len();
    assert_eq!(pending, 5, "{:?}", fs.pending_meta());
    let pin = DirPin {
        meta: vec![0, 1, 3],
        files: BTreeMap::new(),
    };
    let (out, did, _) = fs.crash_pinned(Some(&pin));
    assert_eq!(out.kept, MetaSubset::prefix(2));
    assert_eq!(did.meta, vec![0, 1]);
    // Strict: the delete of `log` (operation 3) is moot without its create (2): dropped.
    let fs = busy(3, MetaModel::Strict);
    let (out, _, _) = fs.crash_pinned(Some(&pin));
    assert_eq!(out.kept.kept(), &[0, 1]);
    assert_eq!(fs.list(), vec!["db".to_string()]);
    assert_eq!(content(&fs, "db").unwrap(), vec![7u8; 2000]);
}

#[test]
fn a_pinned_file_keeps_exactly_its_pinned_sectors() {
    let fs = busy(5, MetaModel::Strict);
    let other = fs.directory()["other"];
    let pending = &fs.pending_data()[&other];
    assert_eq!(pending.len(), 3, "1200 bytes over 512-byte sectors");
    let mut files = BTreeMap::new();
    files.insert(
        other.0,
        CrashPin {
            keep: vec![pending[1]],
            torn: Vec::new(),
        },
    );
    let pin = DirPin {
        meta: (0..5).collect(),
        files,
    };
    let (_, did, lost) = fs.crash_pinned(Some(&pin));
    assert_eq!(did.files[&other.0].keep, vec![pending[1]]);
    assert_eq!(lost[&other.0], vec![pending[0], pending[2]]);
    let bytes = content(&fs, "other").unwrap();
    assert_eq!(&bytes[512..1024], &[4u8; 512][..], "sector 1 was kept");
    assert_eq!(
        &bytes[..512],
        &[3u8; 512][..],
        "sector 0 was lost: its synced bytes"
    );
    assert_eq!(&bytes[1024..], &[3u8; 176][..], "sector 2 was lost");
}

#[test]
fn a_copy_crashes_apart_from_its_original_and_the_hash_covers_names() {
    let fs = busy(9, MetaModel::Ordered);
    let copy = fs.clone_state();
    assert_eq!(copy.pending_meta(), fs.pending_meta());
    assert_eq!(copy.pending_data(), fs.pending_data());
    assert_eq!(copy.image_hash(), fs.image_hash());
    copy.crash_with(&MetaSubset::default(), &mut |_, _| false)
        .unwrap();
    assert_eq!(copy.list(), vec!["db".to_string()]);
    assert_eq!(
        fs.pending_meta().len(),
        5,
        "the original keeps its pending operations"
    );
    assert_ne!(copy.image_hash(), fs.image_hash());

    let (a, b) = (
        fs_with(1, MetaModel::Ordered),
        fs_with(1, MetaModel::Ordered),
    );
    durable_file(&a, "x", b"same");
    durable_file(&b, "y", b"same");
    assert_ne!(
        a.image_hash(),
        b.image_hash(),
        "same bytes under another name"
    );
}
