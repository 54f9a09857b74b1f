use super::*;
use proptest::prelude::*;

fn ids(v: &[u64]) -> Vec<PageId> {
    v.iter().copied().map(PageId).collect()
}

fn set(v: &[u64]) -> HashmapFreeSet {
    let mut s = HashmapFreeSet::default();
    s.init(&ids(v));
    s
}

fn is_few(s: &HashmapFreeSet) -> bool {
    matches!(s.spans, Spans::Few(_))
}

#[test]
fn bbolt_allocate_vector_with_our_rule() {
    // bbolt's TestFreelistHashmap_allocate checks only the counts 6, 4, 3, 3. Our rule also
    // fixes the ids. Init [3,4,5,6,7,9,12,13,18] gives spans 3+5, 9+1, 12+2, 18+1.
    let mut s = set(&[3, 4, 5, 6, 7, 9, 12, 13, 18]);
    let mut steps = 0;
    // alloc(3): no span of 3; smallest larger size is 5 (at 3): take 3..6, keep 6+2.
    assert_eq!(s.allocate(3, &mut steps, &mut 0), Some(PageId(3)));
    assert_eq!(s.count(), 6);
    // alloc(2): spans of 2 are at 6 and 12; lowest start is 6.
    assert_eq!(s.allocate(2, &mut steps, &mut 0), Some(PageId(6)));
    assert_eq!(s.count(), 4);
    // alloc(1): spans of 1 are at 9 and 18; lowest start is 9.
    assert_eq!(s.allocate(1, &mut steps, &mut 0), Some(PageId(9)));
    assert_eq!(s.count(), 3);
    assert_eq!(s.ids(), ids(&[12, 13, 18]));
    // 1 + 2 probes for alloc(3), 1 each for the exact fits.
    assert_eq!(steps, 4);
}

#[test]
fn best_fit_prefers_smallest_larger_span_over_lower_start() {
    // Spans: 2+6 (lowest start, biggest), 20+3, 30+3, 40+4. alloc(2) has no exact fit; the
    // smallest larger size is 3, lowest start among those is 20.
    let mut s = set(&[2, 3, 4, 5, 6, 7, 20, 21, 22, 30, 31, 32, 40, 41, 42, 43]);
    let mut steps = 0;
    assert_eq!(s.allocate(2, &mut steps, &mut 0), Some(PageId(20)));
    assert_eq!(
        s.allocate(1, &mut steps, &mut 0),
        Some(PageId(22)),
        "remainder 22+1 is an exact fit"
    );
    assert_eq!(s.allocate(7, &mut steps, &mut 0), None);
    assert_eq!(s.count(), 13);
}

#[test]
fn merge_joins_both_neighbours() {
    let mut s = set(&[3, 4, 8, 9]);
    let mut moved = 0;
    s.merge(&ids(&[5, 6, 7]), &mut moved);
    assert_eq!(
        s.runs(),
        vec![PageSpan::new(PageId(3), 7)],
        "3..10 is one span"
    );
    assert_eq!(moved, 3, "one new span, two neighbours absorbed");
    s.merge(&ids(&[2, 11]), &mut moved);
    assert_eq!(moved, 3 + 2 + 1, "2 joins 3..10; 11 touches nothing");
    assert_eq!(s.ids(), ids(&[2, 3, 4, 5, 6, 7, 8, 9, 11]));
    assert!(s.contains(PageId(11)));
    assert!(!s.contains(PageId(10)));
    assert!(!s.contains(PageId(1)));
}

#[test]
fn init_resets_previous_state() {
    let mut s = set(&[3, 4, 5]);
    s.init(&ids(&[10]));
    assert_eq!(s.ids(), ids(&[10]));
    assert_eq!(s.count(), 1);
    assert_eq!(s.run_count(), 1);
}

#[test]
#[should_panic(expected = "not strictly ascending")]
fn unsorted_init_panics() {
    // bbolt: Init([25, 5]) panics.
    set(&[25, 5]);
}

/// `n` single-page spans: 2, 4, 6, ...
fn singles(n: u64) -> Vec<u64> {
    (0..n).map(|i| 2 + 2 * i).collect()
}

#[test]
fn the_form_follows_the_span_count_with_a_gap_between_thresholds() {
    let few = FEW_MAX as u64;
    assert!(is_few(&set(&singles(few))));
    assert!(
        !is_few(&set(&singles(few + 1))),
        "init past FEW_MAX indexes"
    );

    // Grow past FEW_MAX by merging: the last merge switches.
    let mut s = set(&singles(few));
    s.merge(&ids(&[2 + 2 * few]), &mut 0);
    assert!(!is_few(&s));
    // Shrink by allocating single spans: still indexed until FEW_MIN.
    let mut steps = 0;
    while s.run_count() > FEW_MIN + 1 {
        s.allocate(1, &mut steps, &mut 0)
            .expect("a single page is free");
        assert!(!is_few(&s), "indexed at {} spans", s.run_count());
    }
    s.allocate(1, &mut steps, &mut 0)
        .expect("a single page is free");
    assert_eq!(s.run_count(), FEW_MIN);
    assert!(is_few(&s), "a vector again at FEW_MIN");
    // Allocated lowest first, exact fits: one probe each.
    assert_eq!(steps, few + 1 - FEW_MIN as u64);
    let left: Vec<u64> = (few + 1 - FEW_MIN as u64..=few)
        .map(|i| 2 + 2 * i)
        .collect();
    assert_eq!(s.ids(), ids(&left));
}

/// The rule the module documents, recomputed from a plain set of ids.
fn model_pick(free: &std::collections::BTreeSet<u64>, n: u64) -> Option<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &id in free {
        match runs.last_mut() {
            Some((start, count)) if *start + *count == id => *count += 1,
            _ => runs.push((id, 1)),
        }
    }
    let exact = runs.iter().find(|r| r.1 == n);
    exact
        .or_else(|| runs.iter().filter(|r| r.1 > n).min_by_key(|r| (r.1, r.0)))
        .copied()
}

#[derive(Clone, Debug)]
enum Op {
    Allocate(u64),
    /// Release the non-free ids at these positions (taken modulo how many there are).
    Release(Vec<usize>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..5).prop_map(Op::Allocate),
        prop::collection::vec(0usize..400, 1..40).prop_map(Op::Release),
    ]
}

proptest! {
    /// Both forms, and every switch between them, give the rule's pick and the rule's counts.
    #[test]
    fn answers_as_the_rule_does(
        init in prop::collection::btree_set(2u64..400, 0..200),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut model = init.clone();
        let mut s = set(&model.iter().copied().collect::<Vec<_>>());
        for op in ops {
            let (mut steps, mut moved) = (0, 0);
            match op {
                Op::Allocate(n) => {
                    let pick = model_pick(&model, n);
                    let got = s.allocate(n, &mut steps, &mut moved);
                    prop_assert_eq!(got.map(|p| p.0), pick.map(|p| p.0));
                    let exact = pick.is_some_and(|p| p.1 == n);
                    prop_assert_eq!(steps, if exact { 1 } else { 2 });
                    if let Some((start, count)) = pick {
                        prop_assert_eq!(moved, if count > n { 2 } else { 1 });
                        (start..start + n).for_each(|id| { model.remove(&id); });
                    }
                }
                Op::Release(at) => {
                    let held: Vec<u64> = (2..400).filter(|id| !model.contains(id)).collect();
                    if held.is_empty() {
                        continue;
                    }
                    let picked: std::collections::BTreeSet<u64> =
                        at.iter().map(|i| held[i % held.len()]).collect();
                    let list: Vec<u64> = picked.iter().copied().collect();
                    // Each released run is one entry, and each free neighbour it absorbs one
                    // more. The runs are maximal, so a neighbour is never another released id.
                    let starts = list.iter().filter(|&&id| !picked.contains(&(id - 1)));
                    let ends = list.iter().filter(|&&id| !picked.contains(&(id + 1)));
                    let expected = starts.map(|&id| 1 + usize::from(model.contains(&(id - 1))))
                        .sum::<usize>()
                        + ends.filter(|&&id| model.contains(&(id + 1))).count();
                    s.merge(&ids(&list), &mut moved);
                    model.extend(picked);
                    prop_assert_eq!(moved as usize, expected);
                }
            }
            prop_assert_eq!(s.ids(), ids(&model.iter().copied().collect::<Vec<_>>()));
            prop_assert_eq!(s.count(), model.len() as u64);
            let few = is_few(&s);
            prop_assert!(!few || s.run_count() <= FEW_MAX);
            prop_assert!(few || s.run_count() > FEW_MIN);
        }
    }
}
