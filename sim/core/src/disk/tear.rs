//! Sub-sector tears: where a power cut splits one sector's new bytes from its old ones.
//!
//! The device is taken to write a sector in aligned [`TEAR_GRAIN`]-byte units, each atomic, in
//! an order it does not promise; a power cut during the write leaves some units new and the rest
//! old. Two shapes are drawn, each with probability 1/2: a *prefix* (units `0..a` new, the rest
//! old: the write stopped part way) and a *prefix and a suffix* (units `0..a` and `b..` new, the
//! middle `a..b` old: the device wrote both ends first). Neither part is ever empty: a tear
//! leaves at least one unit new and one old.
//!
//! The first split `a` is drawn log-uniformly (each octave of units — 1, 2–3, 4–7, ... — as
//! likely as the next), not uniformly: the first bytes of a sector are where a page keeps its
//! header and crashlab its 80-byte meta, and a uniform split would land there once in 6 tears
//! at 512 B and once in 50 at 4 KiB. The end `b` of a middle is uniform.

use super::faults::FaultRng;
use std::ops::Range;

/// Bytes per atomic unit inside a sector: the width of an aligned machine word, the smallest
/// write unit a device without atomic-write guarantees is commonly assumed to keep whole.
pub const TEAR_GRAIN: u64 = 8;

/// The bytes of a sector of `sector_size` bytes that keep their old content under a tear drawn
/// from `rng`; `None` when the sector is too small to split (fewer than two units).
pub(crate) fn draw(rng: &mut FaultRng, sector_size: u64) -> Option<Range<usize>> {
    let units = sector_size / TEAR_GRAIN;
    if units < 2 {
        return None;
    }
    let (a, b) = if rng.coin() || units < 4 {
        (log_uniform(rng, units), units)
    } else {
        let a = log_uniform(rng, units / 2);
        (a, a + 1 + rng.below(units - 1 - a))
    };
    assert!(
        0 < a && a < b && b <= units,
        "tear {a}..{b} of {units} units: the first unit is new, one is old"
    );
    let byte = |u: u64| usize::try_from(u * TEAR_GRAIN).expect("a position inside a sector");
    Some(byte(a)..byte(b))
}

/// A value in `1..n` (`n` a power of two, at least 2): an octave `2^k..2^(k+1)` drawn uniformly,
/// then a value in it.
fn log_uniform(rng: &mut FaultRng, n: u64) -> u64 {
    assert!(n.is_power_of_two() && n >= 2, "log_uniform over 1..{n}");
    let k = rng.below(u64::from(n.trailing_zeros()));
    (1 << k) + rng.below(1 << k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tears_split_on_grain_boundaries_and_keep_both_parts() {
        let mut rng = FaultRng::new(3);
        let (mut prefixes, mut middles, mut in_a_meta) = (0, 0, 0);
        for _ in 0..2000 {
            let old = draw(&mut rng, 512).expect("512 bytes split");
            assert!(
                old.start > 0 && old.start < old.end && old.end <= 512,
                "{old:?}"
            );
            assert_eq!(old.start % 8, 0);
            assert_eq!(old.end % 8, 0);
            if old.end == 512 {
                prefixes += 1;
            } else {
                middles += 1;
            }
            in_a_meta += u32::from(old.start < 80);
        }
        assert!(prefixes > 800 && middles > 800, "{prefixes} {middles}");
        // Log-uniform: about half the splits land in the first 80 bytes (uniform: 1 in 7).
        assert!((800..1300).contains(&in_a_meta), "{in_a_meta}");
        for units in [2u64, 4, 64, 512] {
            for _ in 0..200 {
                let old = draw(&mut rng, units * 8).unwrap();
                assert!(
                    old.start >= 8 && (old.end as u64) <= units * 8,
                    "{units}: {old:?}"
                );
            }
        }
        assert_eq!(draw(&mut rng, 8), None, "one unit cannot tear");
        let two = draw(&mut rng, 16).unwrap();
        assert_eq!(two, 8..16, "two units tear one way only");
    }
}
