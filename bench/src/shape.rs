//! The seed shapes' sizes and key schedule, shared by every engine (and mirrored by
//! `tools/bbolt/bench/main.go`).

/// Bucket, table or named database every engine stores its keys in.
pub const BUCKET: &str = "bench";
pub const KEY_SIZE: usize = 16;
pub const VALUE_SIZE: usize = 100;
pub const VALUE: [u8; VALUE_SIZE] = [0x5a; VALUE_SIZE];
/// Keys in every database before a shape starts.
pub const PREFILL: u64 = 10_000;
/// Keys per transaction while pre-filling (and refilling, for `delete`).
pub const FILL_BATCH: u64 = 1_000;
/// Keys per transaction in `get100` and `set100`.
pub const BATCH: u64 = 100;
/// A prime coprime with `PREFILL`: read `i` visits key `i * STRIDE % PREFILL`, so every
/// 10,000 reads touch each key once, in an order that jumps around the tree.
pub const STRIDE: u64 = 7_919;

/// The large database: this many values of `LARGE_VALUE_SIZE` bytes, `LARGE_FILL_BATCH` per
/// transaction, then all deleted, `LARGE_DELETE_BATCH` per transaction.
pub const LARGE_VALUES: u64 = 2_000;
pub const LARGE_VALUE_SIZE: usize = 1 << 20;
pub const LARGE_FILL_BATCH: u64 = 20;
pub const LARGE_DELETE_BATCH: u64 = 500;
/// Small Sets on the large database use keys from here up, far above every template key; each
/// durability mode gets its own range so that every Set inserts a fresh key.
pub const LARGE_SET_BASE: u64 = 1 << 40;
pub const LARGE_SET_MODE_STRIDE: u64 = 1 << 32;

/// Key `n`: the counter as 16 big-endian bytes, so key order is counter order and new keys
/// append at the right edge of the tree.
pub fn key(n: u64) -> [u8; KEY_SIZE] {
    u128::from(n).to_be_bytes()
}

/// The pre-filled key read by read number `i`.
pub fn scattered(i: u64) -> u64 {
    (i % PREFILL) * STRIDE % PREFILL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_like_counters() {
        assert!(key(255) < key(256));
        assert_eq!(key(1)[KEY_SIZE - 1], 1);
    }

    #[test]
    fn scattered_reads_visit_every_key_once() {
        let mut seen = vec![false; PREFILL as usize];
        for i in 0..PREFILL {
            seen[scattered(i) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
