//! The adapter for the group-commit shape: one open database that many threads write at once.
//!
//! [`Kv`](crate::Kv) takes `&mut self` because every other shape has a single caller; here the
//! database is shared (`&dyn Concurrent` across a `std::thread::scope`), so each engine states
//! how concurrent writers reach it: crashlab through its group commit (`Db::batch`), redb and
//! LMDB through their own writer lock (each thread runs its own write transaction), SQLite
//! through one connection behind a mutex (see `engines/sqlite.rs` for why).

/// A database open in durable mode, shared by writer threads. Every method panics, naming the
/// engine's error, if the engine fails.
pub trait Concurrent: Sync {
    /// Put key `n` (see [`crate::shape::key`]) with `value` and return once that put is
    /// committed durably; any number of threads may call it at once.
    fn put_one(&self, n: u64, value: &'static [u8]);
}
