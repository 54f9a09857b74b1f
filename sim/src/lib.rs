//! crashlab-sim: the simulated disk, the runner and the `crashlab` command-line tool.
#![forbid(unsafe_code)]

mod apply;
pub mod batching;
pub mod case;
pub mod check;
pub mod compare;
pub mod db_cli;
pub mod disk;
pub mod engines;
pub mod guard;
pub mod input;
pub mod limits;
pub mod negative;
pub mod op;
pub mod profile;
pub mod report;
pub mod rng;
pub mod runner;
pub mod shapes;
pub mod shrink;
pub mod strategy;
pub mod trace;
pub mod workload;
