//! The workspace's integration tests, one module per file beside this one, in one test binary
//! (a test binary per file linked the simulator 33 times). Run one file's tests with
//! `cargo test --test suite FILE::`. The two files that count allocations with a global allocator
//! keep binaries of their own: a counting allocator sees every thread of its process.

mod common;

mod bbolt_fixtures;
mod bbolt_interop;
mod check_all_workloads;
mod check_controls;
mod check_interleavings;
mod check_live;
mod check_variants;
mod commit_reference_check;
mod compare;
mod corpus_replay;
mod corruption;
mod engine_model;
mod freelist_model;
mod inline_bucket_conformance;
mod large_and_concurrent;
mod layers;
mod presize_files;
mod redb_sweep;
mod regression_001_corrupt_separator;
mod regression_002_page_referenced_twice;
mod regression_003_open_trusts_unsynced_meta;
mod regression_004_delete_bucket_with_open_child;
mod regression_005_check_revisits_shared_pages;
mod regression_006_commit_writes_a_node_it_cannot_read;
mod regression_007_txid_wraps_and_overwrites_the_meta_in_use;
mod regression_009_errors_name_the_page_they_read;
mod regression_010_commit_spreads_damage_it_did_not_read;
mod regression_011_no_freelist_sync_commit_leaves_a_file_that_does_not_reopen;
mod regression_012_a_reader_loads_a_freelist_it_has_no_use_for;
mod regression_014_a_commit_frees_a_page_it_took_from_the_freelist;
mod regression_015_a_commit_steps_around_damage_it_does_not_read;
mod regression_016_a_patch_builds_on_an_image_the_disk_no_longer_holds;
mod regression_017_an_op_line_without_its_operands_panics_the_case_parser;
mod regression_018_a_valid_commit_refused_for_cross_page_order;
mod regression_019_a_scale_case_saved_by_a_sweep_replays_another_workload;
mod sim_sweep;
mod test_binaries;
mod tidy;
