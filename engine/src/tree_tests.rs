use super::*;

fn branch(keys: &[&[u8]]) -> Vec<BranchItem> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| BranchItem {
            key: k.to_vec(),
            child: Child::Page(PageId(10 + i as u64)),
        })
        .collect()
}

/// `routes_to` accepts a child exactly when the search would pick it: for every child of
/// branches of one to four separators and every key below, between, on and above them.
#[test]
fn a_hinted_child_is_accepted_exactly_when_the_search_picks_it() {
    let seps: [&[u8]; 4] = [b"c", b"f", b"i", b"l"];
    let keys: [&[u8]; 14] = [
        b"", b"a", b"c", b"d", b"f", b"g", b"i", b"j", b"l", b"m", b"ca", b"fz", b"z", b"\xff",
    ];
    for n in 1..=seps.len() {
        let items = branch(&seps[..n]);
        for key in keys {
            let want = child_index(&items, key);
            for i in 0..n + 2 {
                assert_eq!(
                    routes_to(&items, i, key),
                    i == want,
                    "n={n} i={i} key={key:?}"
                );
            }
        }
    }
}

/// A hint keeps the levels below the one it is told about (they are tried only under the
/// child it names), forgets what it cannot hold, and says nothing of levels never set.
#[test]
fn a_hint_remembers_each_level_it_can_hold() {
    let mut h = PathHint::default();
    assert_eq!(h.child(0), None);
    h.set_child(0, 3);
    h.set_child(1, 7);
    h.set_child(2, 1);
    h.set_child(0, 4);
    assert_eq!(
        (h.child(0), h.child(1), h.child(2)),
        (Some(4), Some(7), Some(1))
    );
    h.set_child(HINT_LEVELS, 2);
    assert_eq!(h.child(HINT_LEVELS), None);
    h.set_child(1, usize::MAX);
    assert_eq!((h.child(0), h.child(1), h.child(2)), (Some(4), None, None));
}
