//! The adapter every engine implements: just enough to run the seed shapes.

use std::ops::Range;

/// How an engine commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Durable: the engine's fsync-on-commit setting (a commit survives a power cut).
    Sync,
    /// SQLite's `synchronous=NORMAL` in WAL mode: no fsync at commit, only at checkpoints, so
    /// a commit survives a process crash but not a power cut. Only SQLite has it.
    Normal,
    /// The engine's no-sync setting: commits never wait for the disk.
    NoSync,
}

impl Mode {
    /// The name used in benchmark ids and in the joined table.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Normal => "normal",
            Mode::NoSync => "no_sync",
        }
    }
}

/// What a get does with the value it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Holds it the engine's natural way (a slice, a guard, a copy) without reading its bytes:
    /// the seed shapes' Get and Get100.
    Held,
    /// Also reads its last byte, as a caller that uses the value does: `get_value`, a reported
    /// shape that shows what a lazy value leaves for the caller to fetch.
    LastByte,
}

impl Read {
    /// Consume `value` as this read says: nothing when held (not even the slice of a value
    /// that computes one), its last byte otherwise.
    pub fn consume<V: AsRef<[u8]> + ?Sized>(self, value: &V) {
        if self == Read::LastByte {
            std::hint::black_box(value.as_ref().last().copied());
        }
    }
}

/// One open database. Every method panics, naming the engine's error, if the engine fails:
/// a benchmark has no way to carry on.
pub trait Kv {
    /// Put keys `keys` (see [`crate::shape::key`]), each with `value`, in one write
    /// transaction.
    fn put(&mut self, keys: Range<u64>, value: &[u8]);
    /// In one read transaction, get the pre-filled keys of read numbers `reads` (mapped by
    /// [`crate::shape::scattered`]), each value read as `read` says; panic if one is missing.
    fn get(&mut self, reads: Range<u64>, read: Read);
    /// Delete keys `keys` in one write transaction; panic if one is missing.
    fn delete(&mut self, keys: Range<u64>);
}
