//! Files written by real bbolt (corpus/bbolt/, made by tools/bbolt/mkfixtures) must read back
//! exactly as the expected contents recorded by the program that wrote them.

use crate::common;

use crashlab_engine::{Db, FileStorage, FreelistKind, MemStorage, Options};
use crashlab_format::inspect::{self, Image};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/bbolt")
        .join(name)
}

fn read_only() -> Options {
    Options {
        read_only: true,
        ..Options::default()
    }
}

fn assert_fixture(name: &str, options: Options) {
    let db = Db::open_path(fixture(&format!("{name}.db")), options).expect("open fixture");
    let want =
        common::parse_dump(&std::fs::read_to_string(fixture(&format!("{name}.json"))).unwrap());
    let got = common::dump(&db).expect("dump");
    assert_eq!(got.page_size, want.page_size, "{name}: page size");
    assert_eq!(
        got.buckets.len(),
        want.buckets.len(),
        "{name}: bucket count"
    );
    for (path, keys) in &want.buckets {
        assert_eq!(got.buckets.get(path), Some(keys), "{name}: bucket {path}");
    }
    assert_eq!(got.sequences, want.sequences, "{name}: sequences");
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{name}: {problems:?}");
    // The inspection walk (`crashlab db dump`) reads the same contents without the engine's
    // transactions and cursors.
    let storage = FileStorage::open_read_only(fixture(&format!("{name}.db"))).unwrap();
    let image = Image::open(storage).expect("inspect fixture");
    let (walked, problems) = inspect::dump(&image).expect("inspect dump");
    assert!(problems.is_empty(), "{name}: {problems:?}");
    assert_eq!(walked, want, "{name}: inspect::dump");
    assert!(
        crashlab_engine::Db::check_image(&image).unwrap().is_empty(),
        "{name}"
    );
}

#[test]
fn nested_buckets() {
    assert_fixture("nested", read_only());
}

#[test]
fn inline_buckets() {
    assert_fixture("inline", read_only());
}

#[test]
fn overflow_values_and_max_size_keys() {
    assert_fixture("overflow", read_only());
}

#[test]
fn large_freelist_both_kinds() {
    assert_fixture("freelist", read_only());
    assert_fixture(
        "freelist",
        Options {
            freelist: FreelistKind::Hashmap,
            ..read_only()
        },
    );
    // A reader loads no freelist; a writer (in memory, so the fixture stays as it is) loads it
    // into either kind.
    for freelist in [FreelistKind::Array, FreelistKind::Hashmap] {
        let bytes = std::fs::read(fixture("freelist.db")).unwrap();
        let options = Options {
            freelist,
            ..Options::default()
        };
        let db = Db::open(MemStorage::from_bytes(bytes), options).unwrap();
        let (free, pending) = db.freelist_counts();
        assert!(free > 1000, "the fixture's freelist holds {free} free ids");
        assert_eq!(pending, 0);
    }
}

#[test]
fn no_freelist_sync_file_is_rebuilt_on_open() {
    assert_fixture("nofreelist", read_only());
    assert_fixture(
        "nofreelist",
        Options {
            no_freelist_sync: true,
            ..read_only()
        },
    );
}

#[test]
fn page_sizes_1k_and_64k() {
    assert_fixture("pagesize1k", read_only());
    assert_fixture("pagesize64k", read_only());
}

#[test]
fn writable_open_keeps_contents_and_check_passes() {
    // Copy each fixture, open it writable, commit a change, and re-read everything.
    for name in ["nested", "inline", "overflow", "freelist", "nofreelist"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        std::fs::copy(fixture(&format!("{name}.db")), &path).unwrap();
        let db = Db::open_path(&path, Options::default()).unwrap();
        db.update(|tx| {
            let mut b = tx.create_bucket(b"crashlab-added")?;
            b.put(b"k", b"v")?;
            Ok(())
        })
        .unwrap();
        let mut got = common::dump(&db).unwrap();
        assert!(db.check().unwrap().is_empty(), "{name}");
        let added = got.buckets.remove(&common::hex(b"crashlab-added")).unwrap();
        assert_eq!(
            added.get(&common::hex(b"k")).map(String::as_str),
            Some("76")
        );
        let want =
            common::parse_dump(&std::fs::read_to_string(fixture(&format!("{name}.json"))).unwrap());
        assert_eq!(got.buckets, want.buckets, "{name}");
    }
}
