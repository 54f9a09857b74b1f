//! snapkv's crash tests, one module per file beside this one, in one test binary.

mod adapter;

mod check;
mod crash;
