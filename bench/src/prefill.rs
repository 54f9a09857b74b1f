//! Pre-filling a database the way every shape starts: keys `0..PREFILL` (or any range),
//! `FILL_BATCH` per transaction. Shared by the criterion groups, the interleaved blocks and the
//! instruction-count example, so that each measures the same starting tree.

use crate::engines::Engine;
use crate::kv::{Kv, Mode};
use crate::shape::{FILL_BATCH, VALUE};
use std::ops::Range;
use std::path::Path;

/// Put keys `range`, `FILL_BATCH` per transaction.
pub fn fill(kv: &mut dyn Kv, range: Range<u64>) {
    for start in range.clone().step_by(FILL_BATCH as usize) {
        kv.put(start..(start + FILL_BATCH).min(range.end), &VALUE);
    }
}

/// A fresh database of `engine` in `mode`, in directory `dir`, holding keys `0..keys`.
pub fn open_filled(engine: &Engine, mode: Mode, dir: &Path, keys: u64) -> Box<dyn Kv> {
    let mut kv = engine.open(dir, mode);
    fill(&mut *kv, 0..keys);
    kv
}
