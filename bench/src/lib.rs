//! Side-by-side benchmarks of crashlab's engine and the engines users would pick instead.
//!
//! Every engine is driven through one small adapter, [`Kv`], so the shapes in [`shape`] run
//! the same operations with the same keys and values everywhere: 16-byte keys (a `u128`
//! counter, big-endian), 100-byte values, 10,000 keys pre-filled in transactions of 1,000, one
//! key per write transaction unless the shape says otherwise. bbolt runs the same shapes from
//! a Go program (`tools/bbolt/bench`), and `tools/bench/run-all.sh` joins both into one table.
//!
//! The engines and the setting each uses for "durable" and "no sync" are listed in
//! [`engines::ENGINES`]; `BENCHMARKS.md` at the repository root has the figures.
#![forbid(unsafe_code)]

pub mod concurrent;
pub mod engines;
pub mod interleave;
pub mod kv;
pub mod large;
pub mod prefill;
pub mod select;
pub mod served;
pub mod shape;

pub use concurrent::Concurrent;
pub use kv::{Kv, Mode, Read};
