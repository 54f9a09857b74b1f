//! How a seed spells its keys. The workload picks key numbers from a small universe (so
//! operations collide); the seed's key shape turns each number into bytes. Short keys alone
//! (`k0` to `k47`, two or three bytes) never reach what an engine does with longer ones: keys
//! that share a long prefix (prefix compression, a search that skips the shared bytes), keys
//! that tie in their first eight bytes after it and differ later (a word-sized key index),
//! keys of one more byte than a boundary, binary keys with 0x00 and 0xFF bytes, one the
//! proper prefix of another (`x` and `x\0`), and keys of hundreds to thousands of bytes, whose
//! separators alone outgrow a page (a branch of several pages, a leaf item larger than a page).
//! The shape is drawn from a stream of its own, so a seed's operations are the same under every
//! shape; only their keys' bytes differ.

use crate::op::Name;
use crate::rng::SimRng;

/// Key numbers the workload draws from: `0..KEYS`.
pub const KEYS: u64 = 48;

/// Most bytes of a drawn prefix or middle: the longest key is `1 + PART_MAX + 3` bytes.
const PART_MAX: u64 = 40;

/// Most bytes of a short drawn prefix or middle.
const PART_SHORT: u64 = 12;

/// Bytes of a long key's drawn prefix: from under the smallest page the sweeps draw (512) to
/// three quarters of the largest (4096), so two separators outgrow a page at every page size.
const LONG_MIN: u64 = 200;
const LONG_MAX: u64 = 3_000;

/// Most operations of a run whose keys may be long: a run's case file spells every key, and
/// `LONG_OPS_MAX` operations of `LONG_MAX`-byte keys stay well under
/// [`CASE_FILE_BYTES_MAX`](crate::limits::CASE_FILE_BYTES_MAX).
pub const LONG_OPS_MAX: usize = 2_000;

/// The bytes a drawn prefix or middle is made of: printable, so a case file shows the keys as
/// text, and ordered against the digits and `k` both ways.
const PART_BYTES: &[u8] = b"0123456789_-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyShape {
    /// `k7`: two or three bytes.
    Short,
    /// One prefix every key shares, then `k7`.
    Prefixed { prefix: Vec<u8> },
    /// One of a few one-byte tags, a middle every key shares, then `k7`: keys of different tags
    /// differ in their first byte, keys of one tag tie for `1 + middle` bytes.
    Composite { tags: u8, middle: Vec<u8> },
    /// Up to two 0xFF bytes, one small byte, and for odd numbers a trailing 0x00: binary keys,
    /// each even one the proper prefix of the next.
    Binary,
    /// One prefix of `LONG_MIN..=LONG_MAX` bytes every key shares, then `k7`.
    Long { prefix: Vec<u8> },
}

impl KeyShape {
    /// The shape `seed` draws: short for two seeds in five, composite and binary for one in
    /// five each, prefixed and long for one in ten each. Long keys come from a stream of their
    /// own, so every other seed draws what it drew before they existed.
    pub fn of_seed(seed: u64) -> KeyShape {
        let mut r = SimRng::derive(seed, "key shape");
        match r.below(5) {
            0 | 1 => KeyShape::Short,
            2 if SimRng::derive(seed, "long keys").chance(0.5) => {
                let len = r.range(LONG_MIN, LONG_MAX);
                KeyShape::Long {
                    prefix: printable(&mut r, len),
                }
            }
            2 => KeyShape::Prefixed {
                prefix: part(&mut r, 1),
            },
            3 => KeyShape::Composite {
                tags: r.range(2, 4) as u8,
                middle: part(&mut r, 0),
            },
            _ => KeyShape::Binary,
        }
    }

    /// The shape a run of `ops` operations uses: long keys only up to [`LONG_OPS_MAX`]
    /// operations (a longer run keeps the first `PART_MAX` bytes of the prefix).
    pub fn for_run(self, ops: usize) -> KeyShape {
        match self {
            KeyShape::Long { mut prefix } if ops > LONG_OPS_MAX => {
                prefix.truncate(PART_MAX as usize);
                KeyShape::Prefixed { prefix }
            }
            shape => shape,
        }
    }

    /// Key number `n` (below [`KEYS`]) in this shape. Distinct numbers give distinct keys, and
    /// no key is empty.
    pub fn key(&self, n: u64) -> Name {
        debug_assert!(n < KEYS);
        let short = format!("k{n}");
        let bytes = match self {
            KeyShape::Short => short.into_bytes(),
            KeyShape::Prefixed { prefix } | KeyShape::Long { prefix } => {
                [prefix.as_slice(), short.as_bytes()].concat()
            }
            KeyShape::Composite { tags, middle } => {
                let tag = b'a' + (n % u64::from(*tags)) as u8;
                [&[tag][..], middle, short.as_bytes()].concat()
            }
            KeyShape::Binary => {
                // n = 6a + 2b + c (b < 3, c < 2): b bytes of 0xFF, then a, then 0x00 when c is 1.
                let (a, b, c) = (n / 6, (n / 2) % 3, n % 2);
                let mut key = vec![0xFF; b as usize];
                key.push(a as u8);
                key.extend(std::iter::repeat_n(0u8, c as usize));
                key
            }
        };
        Name::new(bytes)
    }
}

/// A drawn run of `min..=PART_MAX` printable bytes, half the time at most `PART_SHORT`: a
/// key's length past a word boundary (8 bytes, 16) matters more than its length in general.
fn part(r: &mut SimRng, min: u64) -> Vec<u8> {
    let max = if r.chance(0.5) { PART_SHORT } else { PART_MAX };
    let len = r.range(min, max);
    printable(r, len)
}

/// `len` drawn bytes of [`PART_BYTES`].
fn printable(r: &mut SimRng, len: u64) -> Vec<u8> {
    (0..len).map(|_| *r.pick(PART_BYTES)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_shape_gives_distinct_non_empty_keys() {
        let mut kinds = Vec::new();
        for seed in 0..200 {
            let shape = KeyShape::of_seed(seed);
            let kind = std::mem::discriminant(&shape);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            let keys: BTreeSet<Vec<u8>> = (0..KEYS).map(|n| shape.key(n).0).collect();
            assert_eq!(keys.len() as u64, KEYS, "{shape:?}");
            assert!(keys.iter().all(|k| !k.is_empty()), "{shape:?}");
        }
        assert_eq!(kinds.len(), 5, "every shape is drawn");
    }

    #[test]
    fn binary_keys_hold_ff_and_zero_bytes_and_prefix_pairs() {
        let keys: Vec<Vec<u8>> = (0..KEYS).map(|n| KeyShape::Binary.key(n).0).collect();
        assert_eq!(keys[0], [0x00]);
        assert_eq!(keys[1], [0x00, 0x00]);
        assert_eq!(keys[47], [0xFF, 0xFF, 7, 0x00]);
        assert!(keys.iter().any(|k| k.starts_with(&[0xFF, 0xFF])));
    }

    #[test]
    fn composite_keys_of_one_tag_tie_past_their_first_eight_bytes() {
        let shape = KeyShape::Composite {
            tags: 2,
            middle: b"0123456789".to_vec(),
        };
        let (a, b) = (shape.key(2).0, shape.key(4).0);
        assert_eq!((a[0], b[0]), (b'a', b'a'));
        assert_eq!(a[..12], b[..12]);
        assert_ne!(shape.key(3).0[0], b'a');
    }

    #[test]
    fn long_keys_outgrow_a_page_and_only_short_runs_keep_them() {
        let long = (0..400)
            .map(KeyShape::of_seed)
            .find(|s| matches!(s, KeyShape::Long { .. }))
            .expect("a seed of 400 draws long keys");
        let key = long.key(7).0;
        assert!((LONG_MIN as usize + 2..=LONG_MAX as usize + 3).contains(&key.len()));
        assert_eq!(long.clone().for_run(LONG_OPS_MAX), long);
        let KeyShape::Prefixed { prefix } = long.clone().for_run(LONG_OPS_MAX + 1) else {
            panic!("a run past LONG_OPS_MAX keeps long keys");
        };
        assert_eq!(prefix.len(), PART_MAX as usize);
        assert!(key.starts_with(&prefix));
    }
}
