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
//! ```
//! use crashlab_sim::config::RunConfig;
//! use crashlab_sim::crashlab::CrashlabDb;
//! use crashlab_sim::profile::Profile;
//! use crashlab_sim::runner::run;
//!
//! let cfg = RunConfig::from_seed(42, 100, Profile::Default);
//! let report = run::<CrashlabDb>(&cfg);
//! assert!(!report.outcome.is_violation(), "{:?}", report.outcome);
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
