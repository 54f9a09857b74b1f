//! SQLite (the bundled build, through rusqlite) behind crashlab's engine adapter, its files on
//! the simulated file system. docs/sqlite.md is the guide: the VFS, the modes, what each
//! promises by SQLite's own documentation, and the known-truth table the tests hold.
//!
//! - Files: a VFS ([`vfs`], through the `sqlite-vfs` crate, which holds the FFI) makes every
//!   file SQLite opens — the database, its rollback journal or its WAL — a file of the run's
//!   [`SimDir`](crashlab_sim::fs::SimDir): every read, write, sync, create and delete is a
//!   simulated, faultable call, and a power cut loses what the file system's model says.
//! - Buckets are `WITHOUT ROWID` tables of `(k BLOB PRIMARY KEY, v BLOB)`, named `b_` and the
//!   bucket name in hex (no nesting, no sequences); transactions are `BEGIN IMMEDIATE` …
//!   `COMMIT`; the engine's check is `PRAGMA integrity_check`.
//! - Modes ([`mode`]): journal DELETE / TRUNCATE / PERSIST / WAL × synchronous NORMAL / FULL /
//!   EXTRA drawn per seed; `synchronous=off` and `journal_mode=off` are positive controls.
//! - Determinism: SQLite's PRNG (journal nonces, WAL salts) is process-global and seeded once
//!   per process, so file *contents* are not a function of the seed; nothing that reaches the
//!   trace depends on them (see docs/sqlite.md, "Determinism"), and [`image_hash`] hashes only
//!   what is a function of the seed.
#![forbid(unsafe_code)]

pub mod db;
pub mod image;
pub mod mode;
pub mod sql;
pub mod vfs;

pub use db::{SqliteDb, SqliteWriter};
pub use image::image_hash;
pub use mode::{promise, Journal, SqliteChoices, Synchronous, SQLITE_PAGE_SIZE};
