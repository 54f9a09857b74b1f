//! Pre-filling a database the way every shape starts: keys `0..PREFILL` (or any range),
//! `FILL_BATCH` per transaction. Shared by the criterion groups, the interleaved blocks and the
//! instruction-count example, so that each measures the same starting tree.

use crate::engines::Engine;
use crate::kv::{Kv, Mode};
use crate::shape::{FILL_BATCH, PREFILL, VALUE};
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

/// Before `ops` deletes from the left edge, key `next` on, where keys `next..*filled` are
/// present: append keys up to `next + ops + PREFILL` (untimed, by the caller), so that `PREFILL`
/// keys remain after the deletes, as every delete shape does.
pub fn refill_for_deletes(kv: &mut dyn Kv, next: u64, ops: u64, filled: &mut u64) {
    let want = next + ops + PREFILL;
    fill(kv, *filled..want);
    *filled = want;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::Read;

    /// Records the key ranges put; reads and deletes are not used here.
    #[derive(Default)]
    struct Puts(Vec<Range<u64>>);

    impl Kv for Puts {
        fn put(&mut self, keys: Range<u64>, _value: &[u8]) {
            self.0.push(keys);
        }
        fn get(&mut self, _reads: Range<u64>, _read: Read) {
            unimplemented!("not used by a refill")
        }
        fn delete(&mut self, _keys: Range<u64>) {
            unimplemented!("not used by a refill")
        }
    }

    #[test]
    fn a_refill_leaves_prefill_keys_after_the_deletes() {
        let mut kv = Puts::default();
        let mut filled = PREFILL;
        // 1,500 deletes from key 0: keys up to 11,500 must exist, in transactions of 1,000.
        refill_for_deletes(&mut kv, 0, 1_500, &mut filled);
        assert_eq!(
            kv.0,
            [PREFILL..PREFILL + 1_000, PREFILL + 1_000..PREFILL + 1_500]
        );
        assert_eq!(filled, 1_500 + PREFILL);
        // The next 10 deletes start at 1,500 and need only 10 more keys.
        refill_for_deletes(&mut kv, 1_500, 10, &mut filled);
        assert_eq!(kv.0.get(2), Some(&(1_500 + PREFILL..1_510 + PREFILL)));
        assert_eq!(kv.0.len(), 3);
        assert_eq!(filled, 1_510 + PREFILL);
    }
}
