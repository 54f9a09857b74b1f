//! The simulator core's integration tests, one module per file beside this one, in one test
//! binary. Run one file's tests with `cargo test -p crashlab-sim --test suite FILE::`.

mod after_failure;
mod bucket_lifecycle;
mod checksum_probe;
mod collisions;
mod deep_churn;
mod delete_answers;
mod disk_dimensions;
mod empty_leaf_scan;
mod engine_failures;
mod event_log;
mod groups;
mod inline_buckets;
mod key_limit;
mod key_shapes;
mod large_pages;
mod live_checks;
mod readers_at_end;
mod refusal_latch;
mod reopen_options;
mod scale_thresholds;
mod seeded_control;
mod shrink_crash;
mod snapshot_equals;
mod surface;
mod workload_props;
