//! The engine's integration tests, one module per file beside this one, in one test binary.
//! Run one file's tests with `cargo test -p crashlab-engine --test suite FILE::`. `alloc` (a
//! counting global allocator sees every thread of its process) and `loom_group` (built with its
//! own cfg) keep binaries of their own.

mod common;

mod batch;
mod behaviour;
mod branch_merge;
mod inspect;
mod iter;
mod rebalance;
mod regression_delete_bucket_with_open_child;
mod reserve;
mod right_edge;
mod smoke;
mod write_batch_props;
