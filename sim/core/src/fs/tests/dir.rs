//! The directory an engine of several files is opened on: every change, metadata included, is
//! a call of the power switch, and nothing gets through once the power is off.

use super::*;
use crate::power::PowerSwitch;

fn dir() -> (SimDir, PowerSwitch) {
    let power = PowerSwitch::new();
    let fs = fs_with(7, MetaModel::Ordered);
    (SimDir::new(fs, power.clone()), power)
}

#[test]
fn a_power_cut_can_land_on_a_rename() {
    let (dir, power) = dir();
    let f = dir.create("db-journal").unwrap();
    f.write_at(0, b"journal").unwrap();
    // Two calls left: the write below and the rename, which is where the power goes.
    power.arm(2);
    f.write_at(7, b"!").unwrap();
    let err = dir.rename("db-journal", "db").unwrap_err();
    assert_eq!(err.to_string(), "power lost");
    assert!(power.is_off());
    assert!(
        dir.fs().exists("db-journal"),
        "the refused rename did nothing"
    );
    assert!(!dir.fs().exists("db"));
}

#[test]
fn nothing_gets_through_once_the_power_is_off() {
    let (dir, power) = dir();
    let f = dir.create("db").unwrap();
    power.cut();
    assert!(f.write_at(0, b"x").is_err());
    assert!(f.sync().is_err());
    assert!(f.len().is_err());
    assert!(dir.create("wal").is_err());
    assert!(dir.open("db").is_err());
    assert!(dir.delete("db").is_err());
    assert!(dir.sync_dir().is_err());
    assert!(dir.list().is_err());
    assert!(dir.exists("db").is_err());
    assert_eq!(
        dir.fs().list(),
        vec!["db".to_string()],
        "nothing changed after the cut"
    );
    power.reset();
    assert_eq!(dir.list().unwrap(), vec!["db".to_string()]);
}

#[test]
fn every_change_counts_as_a_call() {
    let (dir, power) = dir();
    let f = dir.create("a").unwrap();
    // create, write, sync, set_len, rename, delete, sync_dir: seven calls; reads of the
    // directory and of a length are not calls.
    power.arm(7);
    let a = dir.create("b").unwrap();
    a.write_at(0, b"x").unwrap();
    a.sync().unwrap();
    f.set_len(10).unwrap();
    dir.list().unwrap();
    f.len().unwrap();
    dir.rename("b", "c").unwrap();
    dir.delete("a").unwrap();
    assert!(
        dir.sync_dir().is_err(),
        "the seventh call is where the power goes"
    );
}
