//! Which subsets of a crash point's effective pending sectors become crash states.
//!
//! Sector writes are atomic, so every image a power cut can leave at a crash point is the durable
//! image plus one subset of the pending sectors. A crash *inside* a write call is a subset holding
//! part of that call's sectors; it is among the subsets of the crash point that follows the call.
//! With `n` effective pending sectors and a bound `max` on states per crash point:
//!
//! - **exhaustive** when `2^n <= max`: every subset, in Gray-code order (each differs from the
//!   previous by one sector, so an image's identity costs one XOR);
//! - **pages and tears** when the page-level space fits: every subset of whole pages (each page
//!   kept entirely or not at all), plus every strict sector subset of one page at a time while
//!   the other pages are all absent or all present (docs/DESIGN.md, "Sizing the crash-state
//!   space": a commit of k pages has 2^k page-level subsets but 2^(k·sectors per page)
//!   sector-level ones);
//! - **sampled** otherwise: nothing kept, everything kept, and `max − 2` subsets drawn from the
//!   run's seed (each sector kept with probability 1/2).
//!
//! Recovery re-crashes use the same plan with a smaller bound.

use crate::image::{ImageId, Sector};
use crashlab_sim::rng::SimRng;

/// How a crash point's subsets were chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    Exhaustive,
    PagesAndTears,
    Sampled,
}

/// One subset: a bit mask over the pending sectors (when there are at most 64), or a list of
/// their positions.
pub(crate) enum Subset<'a> {
    Mask(u64),
    List(&'a [u32]),
}

impl Subset<'_> {
    /// Positions in the crash point's pending list, ascending.
    pub fn positions(&self) -> Vec<u32> {
        match self {
            Subset::Mask(m) => (0..64u32).filter(|i| m >> i & 1 == 1).collect(),
            Subset::List(l) => l.to_vec(),
        }
    }
}

/// The identity change of keeping `positions` of `pending`.
pub(crate) fn delta(pending: &[Sector], positions: &[u32]) -> ImageId {
    positions
        .iter()
        .fold(ImageId::default(), |id, &i| id ^ pending[i as usize].delta)
}

/// Enumerate the subsets of `pending` chosen under `max` states, calling `visit` with each and its
/// identity delta until `visit` returns false. `sectors_per_page` groups sectors into pages.
pub(crate) fn enumerate(
    pending: &[Sector],
    sectors_per_page: u64,
    max: u64,
    rng: &mut SimRng,
    visit: &mut dyn FnMut(&Subset<'_>, ImageId) -> bool,
) -> Coverage {
    let coverage = coverage(pending, sectors_per_page, max);
    match coverage {
        Coverage::Exhaustive => gray(pending.len(), pending, visit),
        Coverage::PagesAndTears => {
            pages_and_tears(&group_by_page(pending, sectors_per_page), pending, visit)
        }
        Coverage::Sampled => sampled(pending.len(), max, pending, rng, visit),
    }
    coverage
}

/// How the subsets of `pending` are chosen under `max` states.
pub(crate) fn coverage(pending: &[Sector], sectors_per_page: u64, max: u64) -> Coverage {
    let n = pending.len();
    if n < 63 && 1u64 << n <= max {
        return Coverage::Exhaustive;
    }
    let pages = group_by_page(pending, sectors_per_page);
    if page_plan_size(&pages).is_some_and(|size| size <= max) {
        return Coverage::PagesAndTears;
    }
    Coverage::Sampled
}

fn gray(n: usize, pending: &[Sector], visit: &mut dyn FnMut(&Subset<'_>, ImageId) -> bool) {
    let (mut mask, mut id) = (0u64, ImageId::default());
    if !visit(&Subset::Mask(mask), id) {
        return;
    }
    for i in 1..1u64 << n {
        let bit = i.trailing_zeros();
        mask ^= 1 << bit;
        id ^= pending[bit as usize].delta;
        if !visit(&Subset::Mask(mask), id) {
            return;
        }
    }
}

/// Positions of `pending`, grouped by the page their sector lies in.
fn group_by_page(pending: &[Sector], sectors_per_page: u64) -> Vec<Vec<u32>> {
    let mut pages: Vec<(u64, Vec<u32>)> = Vec::new();
    for (i, s) in pending.iter().enumerate() {
        let page = s.index / sectors_per_page;
        match pages.last_mut() {
            Some((p, list)) if *p == page => list.push(i as u32),
            _ => pages.push((page, vec![i as u32])),
        }
    }
    pages.into_iter().map(|(_, list)| list).collect()
}

/// States the pages-and-tears plan makes, or `None` when that overflows.
fn page_plan_size(pages: &[Vec<u32>]) -> Option<u64> {
    let whole = 1u64.checked_shl(u32::try_from(pages.len()).ok()?)?;
    pages.iter().try_fold(whole, |total, p| {
        let subsets = 1u64.checked_shl(u32::try_from(p.len()).ok().filter(|&k| k < 63)?)?;
        total.checked_add(2 * subsets.saturating_sub(2))
    })
}

fn pages_and_tears(
    pages: &[Vec<u32>],
    pending: &[Sector],
    visit: &mut dyn FnMut(&Subset<'_>, ImageId) -> bool,
) {
    let mut kept: Vec<u32> = Vec::new();
    for m in 0..1u64 << pages.len() {
        kept.clear();
        for (p, list) in pages.iter().enumerate() {
            if m >> p & 1 == 1 {
                kept.extend_from_slice(list);
            }
        }
        if !visit(&Subset::List(&kept), delta(pending, &kept)) {
            return;
        }
    }
    for (p, list) in pages.iter().enumerate() {
        for t in 1..(1u64 << list.len()) - 1 {
            let torn: Vec<u32> = (0..list.len())
                .filter(|&i| t >> i & 1 == 1)
                .map(|i| list[i])
                .collect();
            let mut with_others: Vec<u32> = pages
                .iter()
                .enumerate()
                .filter(|&(q, _)| q != p)
                .flat_map(|(_, l)| l.iter().copied())
                .chain(torn.iter().copied())
                .collect();
            with_others.sort_unstable();
            for kept in [&torn, &with_others] {
                if !visit(&Subset::List(kept), delta(pending, kept)) {
                    return;
                }
            }
        }
    }
}

fn sampled(
    n: usize,
    max: u64,
    pending: &[Sector],
    rng: &mut SimRng,
    visit: &mut dyn FnMut(&Subset<'_>, ImageId) -> bool,
) {
    let all: Vec<u32> = (0..n as u32).collect();
    if !visit(&Subset::List(&[]), ImageId::default()) {
        return;
    }
    if !visit(&Subset::List(&all), delta(pending, &all)) {
        return;
    }
    let mut kept = Vec::with_capacity(n);
    for _ in 2..max {
        kept.clear();
        let mut bits = 0u64;
        for i in 0..n {
            if i % 64 == 0 {
                bits = rng.next_u64();
            }
            if bits >> (i % 64) & 1 == 1 {
                kept.push(i as u32);
            }
        }
        if !visit(&Subset::List(&kept), delta(pending, &kept)) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(indexes: &[u64]) -> Vec<Sector> {
        indexes
            .iter()
            .map(|&i| Sector::new(i, &[0], &[i as u8 + 1]).unwrap())
            .collect()
    }

    fn run(p: &[Sector], spp: u64, max: u64) -> (Coverage, Vec<Vec<u32>>) {
        let mut seen = Vec::new();
        let mut rng = SimRng::new(1);
        let c = enumerate(p, spp, max, &mut rng, &mut |s, id| {
            assert_eq!(
                id,
                delta(p, &s.positions()),
                "the identity follows the subset"
            );
            seen.push(s.positions());
            true
        });
        (c, seen)
    }

    #[test]
    fn small_points_are_exhaustive_and_visit_every_subset_once() {
        let p = pending(&[1, 2, 5]);
        let (c, mut seen) = run(&p, 1, 8);
        assert_eq!(c, Coverage::Exhaustive);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 8);
    }

    #[test]
    fn larger_points_keep_pages_whole_and_tear_one_page_at_a_time() {
        // Two pages of three sectors: 4 page subsets + 2 pages × 6 strict tears × 2 = 28.
        let p = pending(&[8, 9, 10, 16, 17, 18]);
        let (c, seen) = run(&p, 8, 28);
        assert_eq!(c, Coverage::PagesAndTears);
        assert_eq!(seen.len(), 28);
        assert!(seen.contains(&vec![0, 1, 2]), "page 1 whole, page 2 absent");
        assert!(seen.contains(&vec![1]), "a tear of page 1 alone");
        assert!(
            seen.contains(&vec![1, 3, 4, 5]),
            "a tear of page 1, page 2 whole"
        );
    }

    #[test]
    fn beyond_the_bound_a_seeded_sample_with_both_extremes() {
        let p = pending(&(0..40).collect::<Vec<_>>());
        let (c, seen) = run(&p, 1, 100);
        assert_eq!(c, Coverage::Sampled);
        assert_eq!(seen.len(), 100);
        assert!(seen[0].is_empty() && seen[1].len() == 40);
        assert_eq!(run(&p, 1, 100).1, seen, "the sample is deterministic");
    }
}
