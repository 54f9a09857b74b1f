//! The package that owns crashlab's workspace-level tests (`tests/`). It has no code of its own.
#![forbid(unsafe_code)]
