//! A set of page ids that is a sorted vector while small and a B-tree once large: the
//! freelist's index of pending pages.
//!
//! Without readers holding old snapshots, a write transaction releases every page the commit
//! before it freed, so the pending set goes from empty to a handful of ids and back at every
//! commit. As a `BTreeSet`, that allocated a node for the first id and freed it with the last,
//! and each insert, removal and range probe walked the tree: 2,000 of a one-key Set's
//! instructions (callgrind, `docs/performance.md`, "Write commits"). A sorted vector keeps its
//! allocation and answers with one binary search. A reader held across many commits can leave
//! the set large, where inserting into a vector moves everything after the new id; past
//! [`SMALL_MAX`] ids the set is a B-tree again, and it comes back to a vector only at
//! [`SMALL_MIN`], so a set near the threshold does not switch at every call.
//!
//! Invariant: `Small` is strictly ascending and holds at most `SMALL_MAX` ids; `Large` holds
//! more than `SMALL_MIN`.

use crashlab_format::types::PageId;
use std::collections::BTreeSet;

/// Most ids kept as a vector: an insert moves at most this many.
const SMALL_MAX: usize = 256;
/// A B-tree that shrinks to this many ids goes back to a vector.
const SMALL_MIN: usize = SMALL_MAX / 4;

#[derive(Clone, Debug)]
pub(super) enum IdSet {
    Small(Vec<PageId>),
    Large(BTreeSet<PageId>),
}

impl Default for IdSet {
    fn default() -> IdSet {
        IdSet::Small(Vec::new())
    }
}

impl IdSet {
    /// Add `id`; `false` if it was there already.
    pub fn insert(&mut self, id: PageId) -> bool {
        match self {
            IdSet::Small(ids) => match ids.binary_search(&id) {
                Ok(_) => false,
                Err(_) if ids.len() == SMALL_MAX => {
                    let mut set: BTreeSet<PageId> = ids.iter().copied().collect();
                    set.insert(id);
                    *self = IdSet::Large(set);
                    true
                }
                Err(at) => {
                    ids.insert(at, id);
                    true
                }
            },
            IdSet::Large(set) => set.insert(id),
        }
    }

    /// Remove `id`; `false` if it was not there.
    pub fn remove(&mut self, id: PageId) -> bool {
        match self {
            IdSet::Small(ids) => match ids.binary_search(&id) {
                Ok(at) => {
                    ids.remove(at);
                    true
                }
                Err(_) => false,
            },
            IdSet::Large(set) => {
                let removed = set.remove(&id);
                if set.len() <= SMALL_MIN {
                    *self = IdSet::Small(set.iter().copied().collect());
                }
                removed
            }
        }
    }

    pub fn contains(&self, id: PageId) -> bool {
        match self {
            IdSet::Small(ids) => ids.binary_search(&id).is_ok(),
            IdSet::Large(set) => set.contains(&id),
        }
    }

    /// The lowest id in `lo..hi`.
    pub fn first_within(&self, lo: PageId, hi: PageId) -> Option<PageId> {
        match self {
            IdSet::Small(ids) => {
                let at = ids.partition_point(|&id| id < lo);
                ids.get(at).copied().filter(|&id| id < hi)
            }
            IdSet::Large(set) => set.range(lo..hi).next().copied(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            IdSet::Small(ids) => ids.len(),
            IdSet::Large(set) => set.len(),
        }
    }

    /// The ids, ascending.
    pub fn iter(&self) -> Ids<'_> {
        match self {
            IdSet::Small(ids) => Ids::Small(ids.iter()),
            IdSet::Large(set) => Ids::Large(set.iter()),
        }
    }
}

/// The ids of an [`IdSet`], ascending: one branch per step (a chain of two flattened options
/// cost a commit's freelist page a few hundred instructions more).
pub(super) enum Ids<'a> {
    Small(std::slice::Iter<'a, PageId>),
    Large(std::collections::btree_set::Iter<'a, PageId>),
}

impl Iterator for Ids<'_> {
    type Item = PageId;

    fn next(&mut self) -> Option<PageId> {
        match self {
            Ids::Small(ids) => ids.next().copied(),
            Ids::Large(ids) => ids.next().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64),
        Remove(u64),
        Probe(u64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Ids from a range wide enough to cross the thresholds both ways.
        prop_oneof![
            3 => (0u64..1_000).prop_map(Op::Insert),
            2 => (0u64..1_000).prop_map(Op::Remove),
            1 => (0u64..1_000, 0u64..40).prop_map(|(lo, n)| Op::Probe(lo, n)),
        ]
    }

    proptest! {
        /// Every answer is a `BTreeSet`'s, across switches between the two forms.
        #[test]
        fn answers_as_a_btreeset_does(ops in proptest::collection::vec(op(), 0..1_500)) {
            let mut set = IdSet::default();
            let mut model = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Insert(id) => {
                        prop_assert_eq!(set.insert(PageId(id)), model.insert(PageId(id)));
                    }
                    Op::Remove(id) => {
                        prop_assert_eq!(set.remove(PageId(id)), model.remove(&PageId(id)));
                    }
                    Op::Probe(lo, n) => {
                        let (lo, hi) = (PageId(lo), PageId(lo + n));
                        let want = model.range(lo..hi).next().copied();
                        prop_assert_eq!(set.first_within(lo, hi), want);
                        prop_assert_eq!(set.contains(lo), model.contains(&lo));
                    }
                }
                prop_assert_eq!(set.len(), model.len());
                match &set {
                    IdSet::Small(ids) => prop_assert!(ids.len() <= SMALL_MAX),
                    IdSet::Large(ids) => prop_assert!(ids.len() > SMALL_MIN),
                }
            }
            prop_assert!(set.iter().eq(model.iter().copied()));
        }
    }

    #[test]
    fn switches_to_a_btree_past_the_limit_and_back_at_a_quarter() {
        let mut set = IdSet::default();
        for id in 0..=SMALL_MAX as u64 {
            set.insert(PageId(id));
        }
        assert!(matches!(set, IdSet::Large(_)));
        let mut next = 0;
        while matches!(set, IdSet::Large(_)) {
            assert!(set.remove(PageId(next)));
            next += 1;
        }
        assert_eq!(set.len(), SMALL_MIN);
        assert_eq!(next as usize, SMALL_MAX + 1 - SMALL_MIN);
        assert!(set.iter().eq((next..=SMALL_MAX as u64).map(PageId)));
    }
}
