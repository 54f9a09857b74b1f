//! Regression 016, found by a `corruption`-profile sweep (seeds 1167 and 1622 of 2,000) of the
//! engine whose commits patch a node's last image instead of encoding it again.
//!
//! Postmortem: to save re-encoding every item on a one-key write's path, a commit keeps the
//! images it wrote, and the next commit patches a node's image (a child pointer, one inserted
//! item) when the node was read from the page that image went to. It took "read from that
//! page" to mean "holds what that image holds". With no page cache the node is decoded from the
//! page's bytes as read back, and a misdirected write had replaced them: the node held six
//! items, the image seven, and the patch's own check panicked ("one item more") in the commit.
//! In a build whose checks did not stop it, the page written would have been neither the
//! node's encoding nor anything the tree in memory held. The fix: a node records whether it
//! is a commit's own output, handed on through the page cache (`Node::as_written`), and only
//! such a node is patched; a node decoded from the disk is encoded anew, as before image
//! patching. The shrunk cases (with the fix reverted they panic at their last commit) are
//! replayed from `corpus/regressions/` here and by the corpus test.

use crashlab_engine::{Db, MemStorage, Options, Storage};
use crashlab_format::page::{PageHeader, FLAG_LEAF};
use crashlab_format::types::PageId;
use crashlab_sim::case::Case;
use crashlab_sim::crashlab::CrashlabDb;
use crashlab_sim::runner::run;
use crashlab_sim::verdict::Outcome;
use std::path::Path;

const PAGE: usize = 4096;

fn key(i: u32) -> Vec<u8> {
    format!("k{i:02}").into_bytes()
}

/// The leaf page of the file holding exactly `count` items, the first of them `k00`.
fn leaf_with(image: &[u8], count: u16) -> usize {
    (2..image.len() / PAGE)
        .find(|&p| {
            let page = &image[p * PAGE..(p + 1) * PAGE];
            let header = PageHeader::decode(page, PageId(p as u64)).expect("a whole page");
            header.flags == FLAG_LEAF
                && header.count == count
                && page.windows(3).any(|w| w == key(0).as_slice())
        })
        .unwrap_or_else(|| panic!("no leaf of {count} items"))
}

#[test]
fn a_node_read_back_from_a_page_is_encoded_not_patched_over_what_was_written() {
    let storage = MemStorage::new();
    let options = Options {
        page_cache_pages: 0,
        ..Options::default()
    };
    let db = Db::open(storage.clone(), options).unwrap();
    let put = |keys: std::ops::Range<u32>| {
        db.update(|tx| {
            let mut b = tx.create_bucket_if_missing(b"b")?;
            for i in keys.clone() {
                b.put(&key(i), &[0x5a; 100])?;
            }
            Ok(())
        })
        .unwrap()
    };
    // Twelve values of 100 bytes: a bucket of its own pages, not one inline in its parent.
    put(0..12);
    put(12..13);
    // A misdirected write: the page the last commit wrote the 13-item leaf to now holds the
    // 12-item leaf of the commit before (with this page's id, so it reads as a valid leaf).
    let image = storage.snapshot();
    let (old, new) = (leaf_with(&image, 12), leaf_with(&image, 13));
    let mut stale = image[old * PAGE..(old + 1) * PAGE].to_vec();
    stale[..8].copy_from_slice(&(new as u64).to_le_bytes());
    storage.write_at((new * PAGE) as u64, &stale).unwrap();
    // The next one-key commit edits the leaf as read back: twelve items and the new one.
    put(13..14);
    let keys: Vec<Vec<u8>> = db
        .view(|tx| {
            let b = tx.bucket(b"b")?.expect("the bucket");
            b.iter().map(|it| Ok(it?.key().to_vec())).collect()
        })
        .unwrap();
    let want: Vec<Vec<u8>> = (0..12).chain(13..14).map(key).collect();
    assert_eq!(keys, want, "what was read, and the new key");
    assert!(db.check().unwrap().is_empty(), "{:?}", db.check());
}

#[test]
fn the_shrunk_sweep_cases_end_in_a_disk_failure_not_a_panic() {
    for name in [
        "016-a-patch-builds-on-an-image-the-disk-no-longer-holds.case",
        "016-a-patch-builds-on-an-image-the-disk-no-longer-holds-2.case",
    ] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus/regressions")
            .join(name);
        let case = Case::<Options>::load(&file).unwrap();
        assert!(case.explicit_ops, "the shrunk operations are pinned");
        let report = run::<CrashlabDb>(&case.run);
        assert!(
            matches!(report.outcome, Outcome::DiskFailure(_)),
            "{name}: {:?}\ntrace tail: {:#?}",
            report.outcome,
            report.trace_tail
        );
    }
}
