//! SQLite's tests, one module per file beside this one, in one test binary. Run one file's
//! tests with `cargo test -p crashlab-sqlite --test suite FILE::`.

mod common;

mod determinism;
mod direct;
mod figures;
mod known_truth;
mod runner_sweep;
