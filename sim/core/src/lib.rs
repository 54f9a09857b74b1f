//! crashlab-sim: the simulator core — the simulated disk and its faults, the seeded runner, the
//! one session driver, workloads, case files, shrinking and sweeps — and the adapter trait
//! through which every engine is driven.
//!
//! A run, from the outside in: a [`config::RunConfig`] (seed, fault profile, disk, operations
//! and the engine's own options) goes to [`runner::run`], which drives the engine through the
//! [`adapter::Engine`] trait with the session [`driver::Driver`] on a [`disk::SimDisk`], and
//! returns a [`runner::Report`] whose outcome is a typed [`verdict::Outcome`]. [`sweep::sweep`]
//! does that for many seeds. The crash-state checker (`crashlab-check`) drives the same loop
//! with recording hooks.
//!
//! # Crash-testing your own engine
//!
//! Nothing in this crate or in `crashlab-check` knows which engines exist: each entry point is
//! generic over [`adapter::Engine`] (only the `crashlab` binary keeps a list of the engines it
//! can name on its command line). To put an engine of yours under the same disk, faults and
//! oracle, add `crashlab-sim` (and `crashlab-check` for the crash-state checker) as
//! dev-dependencies, build with `--cfg madsim` (a `.cargo/config.toml` line: the runner runs
//! in madsim's simulation mode), and in your tests:
//!
//! 1. implement [`adapter::EngineConfig`] for your options: the engine's name, the options a
//!    seed draws, its [`adapter::Capabilities`], and the `options =` line of a case file;
//! 2. implement [`adapter::Engine`] for an open database on an [`adapter::Storage`] (the
//!    simulated disk): open and recover, readers, a writer that applies the workload's
//!    operations, commit with its [`adapter::Ack`], and your integrity check; map your errors
//!    to an [`adapter::ErrorKind`];
//! 3. call the entry points from a `#[test]`:
//!
//! | entry point | what it does |
//! |---|---|
//! | [`runner::run`] | one seed (or one case) to its end or its first violation |
//! | [`sweep::sweep`], [`sweep::sweep_with`] | many seeds, each judged (`_with`: a debug switch on) |
//! | [`shrink::shrink`] | fewer operations and faults while the violation persists |
//! | [`case::Case`] | a run as text ([`case::Case::to_text`]) and back ([`case::Case::parse`]) |
//! | `crashlab_check::check` | every crash state of a small workload |
//!
//! The guide `docs/crash-test-your-engine.md` walks through a complete example, the `tinykv`
//! crate under `examples/`. The same calls on crashlab's own engine:
//!
//! ```
//! use crashlab_sim::case::{Case, Expect};
//! use crashlab_sim::crashlab::CrashlabDb;
//! use crashlab_sim::profile::Profile;
//! use crashlab_sim::runner::run;
//! use crashlab_sim::shrink::shrink;
//! use crashlab_sim::sweep::{sweep, SweepConfig};
//!
//! // Three seeds of 100 operations under the faults an engine must survive.
//! let seeds = SweepConfig::new(0..3, 100, Profile::Default);
//! let clean = sweep::<CrashlabDb>(&seeds, &mut |_, _| {});
//! assert_eq!((clean.seeds, clean.violations), (3, 0));
//!
//! // A disk whose sync lies: a violation, shrunk, written down and replayed.
//! let lying = SweepConfig::new(0..200, 120, Profile::LyingSync);
//! let mut found = None;
//! sweep::<CrashlabDb>(&lying, &mut |cfg, report| {
//!     if report.outcome.is_violation() && found.is_none() {
//!         found = Some(cfg.clone());
//!     }
//! });
//! let small = shrink::<CrashlabDb>(&found.expect("caught"), 200).run;
//! let case = Case {
//!     run: small,
//!     expect: Expect::Violation,
//!     explicit_ops: true,
//!     check: None,
//!     crash_state: None,
//! };
//! let replayed = Case::<crashlab_engine::Options>::parse(&case.to_text(), "found.case").unwrap();
//! assert!(run::<CrashlabDb>(&replayed.run).outcome.is_violation());
//! ```
#![forbid(unsafe_code)]

pub mod adapter;
pub mod apply;
pub mod calls;
pub mod case;
pub mod config;
pub mod control;
pub mod crashlab;
pub mod disk;
pub mod driver;
pub mod events;
pub mod fs;
pub mod guard;
pub mod input;
pub mod limits;
pub mod medium;
pub mod negative;
pub mod op;
pub mod power;
pub mod profile;
pub mod report;
pub mod rng;
pub mod runner;
pub mod saturation;
pub mod schedule;
pub mod shrink;
pub mod signature;
pub mod spec;
#[cfg(feature = "strategies")]
pub mod strategy;
pub mod sweep;
pub mod thresholds;
pub mod trace;
pub mod verdict;
pub mod words;
pub mod workload;
