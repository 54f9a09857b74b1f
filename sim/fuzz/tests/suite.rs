//! The fuzzer's tests, one module per file beside this one, in one test binary. Run one file's
//! tests with `cargo test -p crashlab-fuzz --test suite FILE::`.

mod common;

mod bounded;
mod controls;
mod corpus;
