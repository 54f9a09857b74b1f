//! Tests of SimFs: names, handles, locks and the `Storage` contract here; power cuts per model
//! in `crash.rs`, the enumeration of metadata crash states in `states.rs`, the negative control
//! in `control.rs`, the power switch over a directory in `dir.rs`, pinned cuts, copies and the image hash in `pin.rs`, single-file engines on one file in `run.rs`.

mod control;
mod crash;
mod dir;
mod pin;
mod run;
mod states;

use super::*;
use crashlab_engine::Storage;

fn fs_with(seed: u64, model: MetaModel) -> SimFs {
    SimFs::new(
        seed,
        DiskConfig::default(),
        FsConfig {
            model,
            ..FsConfig::default()
        },
    )
}

/// What reads of `name` see, or `None` when there is no such name.
fn content(fs: &SimFs, name: &str) -> Option<Vec<u8>> {
    fs.images().remove(name)
}

/// A file `name` holding `bytes`, its data and its name durable.
fn durable_file(fs: &SimFs, name: &str, bytes: &[u8]) {
    let f = fs.create(name).unwrap();
    f.write_at(0, bytes).unwrap();
    f.sync().unwrap();
    fs.sync_dir().unwrap();
}

#[test]
fn names_are_checked_with_the_limit_in_the_message() {
    let fs = fs_with(1, MetaModel::Ordered);
    let long = "x".repeat(NAME_LEN_MAX + 1);
    for bad in ["", ".", "..", "a/b", "a\0b", long.as_str()] {
        for e in [
            fs.create(bad).unwrap_err(),
            fs.open(bad).unwrap_err(),
            fs.delete(bad).unwrap_err(),
            fs.rename(bad, "ok").unwrap_err(),
        ] {
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}: {e}");
        }
    }
    let e = fs.create(&long).unwrap_err().to_string();
    assert!(e.contains("256 bytes long, above the limit of 255"), "{e}");
    assert!(e.len() < 200, "a long name is clipped in the message: {e}");
    fs.create(&"y".repeat(NAME_LEN_MAX)).unwrap();
    assert_eq!(fs.list(), vec!["y".repeat(NAME_LEN_MAX)]);
}

#[test]
fn missing_and_existing_files_give_their_error_kinds() {
    let fs = fs_with(1, MetaModel::Strict);
    assert_eq!(fs.open("nope").unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(
        fs.delete("nope").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    let e = fs.rename("nope", "b").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    fs.create("a").unwrap();
    assert_eq!(
        fs.create("a").unwrap_err().kind(),
        io::ErrorKind::AlreadyExists
    );
    fs.open_or_create("a").unwrap();
    fs.open_or_create("b").unwrap();
    assert_eq!(fs.list(), ["a", "b"]);
    fs.delete("a").unwrap();
    assert_eq!(fs.open("a").unwrap_err().kind(), io::ErrorKind::NotFound);
    assert!(!fs.exists("a"));
    assert_eq!(fs.pending_meta().len(), 3, "create a, create b, delete a");
}

#[test]
fn a_file_keeps_the_storage_contract() {
    let fs = fs_with(2, MetaModel::Ordered);
    crashlab_engine::storage::contract::check(&fs.create("f").unwrap());
    let boxed: Box<dyn Storage> = Box::new(fs.open("f").unwrap());
    assert_eq!(boxed.len().unwrap(), 12);
}

#[test]
fn handles_follow_their_file_through_renames_and_deletes() {
    let fs = fs_with(3, MetaModel::Ordered);
    let f = fs.create("a").unwrap();
    f.write_at(0, b"one").unwrap();
    fs.rename("a", "b").unwrap();
    f.write_at(3, b"two").unwrap();
    assert_eq!(content(&fs, "b").unwrap(), b"onetwo");
    assert_eq!(content(&fs, "a"), None);
    fs.delete("b").unwrap();
    assert!(fs.list().is_empty());
    f.write_at(6, b"!").unwrap();
    let mut buf = [0u8; 7];
    f.read_at(0, &mut buf).unwrap();
    assert_eq!(
        &buf, b"onetwo!",
        "an unlinked file stays usable through its handle"
    );
    fs.sync_dir().unwrap();
    f.read_at(0, &mut buf).unwrap();
    assert_eq!(&buf, b"onetwo!", "even once the delete is durable");
}

#[test]
fn a_second_lock_is_refused_with_a_typed_error() {
    let fs = fs_with(4, MetaModel::Ordered);
    let a = fs.create("lock").unwrap();
    let b = fs.open("lock").unwrap();
    a.try_lock(LockKind::Exclusive).unwrap();
    assert_eq!(a.lock_held(), Some(LockKind::Exclusive));
    for wanted in [LockKind::Exclusive, LockKind::Shared] {
        let e = b.try_lock(wanted).unwrap_err();
        assert_eq!(
            e,
            LockError::Held {
                name: "lock".into(),
                wanted,
                held: LockKind::Exclusive
            }
        );
        assert_eq!(io::Error::from(e).kind(), io::ErrorKind::WouldBlock);
    }
    a.try_lock(LockKind::Shared).unwrap();
    b.try_lock(LockKind::Shared).unwrap();
    let e = a.try_lock(LockKind::Exclusive).unwrap_err();
    assert!(
        matches!(
            e,
            LockError::Held {
                held: LockKind::Shared,
                ..
            }
        ),
        "{e}"
    );
    drop(b);
    a.try_lock(LockKind::Exclusive).unwrap();
    a.unlock();
    let c = fs.open("lock").unwrap();
    c.try_lock(LockKind::Exclusive).unwrap();
    fs.make_all_durable();
    fs.crash();
    let e = c.try_lock(LockKind::Shared).unwrap_err();
    assert!(matches!(e, LockError::Stale { .. }), "{e}");
    assert_eq!(c.lock_held(), None, "a power cut drops every lock");
    fs.open("lock")
        .unwrap()
        .try_lock(LockKind::Exclusive)
        .unwrap();
}

#[test]
fn handles_opened_before_a_power_cut_are_stale() {
    let fs = fs_with(5, MetaModel::Ordered);
    durable_file(&fs, "f", b"kept");
    let old = fs.open("f").unwrap();
    fs.crash();
    let mut buf = [0u8; 4];
    let e = old.read_at(0, &mut buf).unwrap_err();
    assert!(e.to_string().contains("stale handle"), "{e}");
    assert!(old.write_at(0, b"x").is_err() && old.sync().is_err() && old.len().is_err());
    fs.open("f").unwrap().read_at(0, &mut buf).unwrap();
    assert_eq!(&buf, b"kept");
}

#[test]
fn the_file_count_is_bounded() {
    let fs = fs_with(6, MetaModel::Ordered);
    for i in 0..FILE_COUNT_MAX {
        fs.create(&i.to_string()).unwrap();
    }
    let e = fs.create("one more").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    assert!(e.to_string().contains("65536 files"), "{e}");
}
