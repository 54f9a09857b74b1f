//! crashlab-fuzz: a structure-aware, seeded fuzzer for the engine's database files, on stable
//! Rust.
//!
//! An input is a base file ([`bases`]: the bbolt fixtures, or a file the engine writes from a
//! seed) with a few [`mutate`]-ions stacked on it — bit flips, header and element fields, child
//! pointers that make cycles or share children, bucket headers, meta fields with the checksum
//! recomputed, truncation, zeroed and misdirected pages, freelist edits, sparse huge lengths —
//! recorded as concrete byte edits ([`edit`]). The [`pipeline`] runs it through every read and
//! write path and its oracles; a worker process ([`worker`]) runs inputs under a memory cap
//! while the parent (the `crashlab-fuzz` binary) keeps a deadline per input, so an abort, an
//! out-of-memory or a hang is a recorded failure with its input, not the end of a campaign.
//!
//! Every input is a pure function of `(seed, index)` ([`spec::Draw::input`]), so a bounded run
//! gives the same summary however many workers ran it, and a failure replays from its saved
//! [`spec::Spec`].
#![forbid(unsafe_code)]

pub mod bases;
pub mod edit;
pub mod image;
pub mod layout;
pub mod model;
pub mod mutate;
pub mod outcome;
pub mod panics;
pub mod pipeline;
pub mod plan;
pub mod rng;
pub mod spec;
pub mod storage;
pub mod summary;
pub mod worker;
