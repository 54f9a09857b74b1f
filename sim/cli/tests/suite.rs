//! The command line's tests, one module per file beside this one, in one test binary. Run one
//! file's tests with `cargo test -p crashlab-cli --test suite FILE::`.

mod common;

mod all_workloads;
mod bench;
mod cli;
mod db_cli;
mod deploy;
mod directory;
mod from_image;
mod html_browser;
mod html_report;
mod inputs;
mod interleavings;
mod jobs;
mod merge;
mod readme_example;
mod saturation;
mod shards;
