//! The [`Storage`] contract as an executable check, for the tests of any implementation (the
//! engine's own, the simulator's disk, adapters). It panics with the broken rule.

use super::Storage;
use std::io;

/// Exercise a fresh, empty storage through every rule of the contract.
pub fn check(s: &dyn Storage) {
    assert_eq!(s.len().unwrap(), 0, "a fresh storage is empty");
    s.write_at(10, b"hello").unwrap();
    assert_eq!(s.len().unwrap(), 15, "writing past the end extends");
    let mut buf = [0xAAu8; 15];
    s.read_at(0, &mut buf).unwrap();
    assert_eq!(&buf[..10], &[0u8; 10], "a gap reads as zeros");
    assert_eq!(&buf[10..], b"hello");
    let mut past = [0u8; 4];
    let err = s.read_at(13, &mut past).unwrap_err();
    assert_eq!(
        err.kind(),
        io::ErrorKind::UnexpectedEof,
        "a read past the end fails"
    );
    s.set_len(100).unwrap();
    let mut tail = [0xAAu8; 85];
    s.read_at(15, &mut tail).unwrap();
    assert!(tail.iter().all(|&b| b == 0), "new space reads as zeros");
    s.set_len(12).unwrap();
    assert_eq!(s.len().unwrap(), 12, "set_len truncates");
    let mut two = [0u8; 2];
    s.read_at(10, &mut two).unwrap();
    assert_eq!(&two, b"he");
    s.sync().unwrap();
}
