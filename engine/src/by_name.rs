//! A map from names (byte strings) to values, kept as a vector sorted by name: the sub-buckets
//! a write transaction opened (`bucket.rs`).
//!
//! A one-key write opens one bucket. As a `BTreeMap`, its single entry allocated a tree node
//! that the commit freed again by walking the map apart: 500 of a one-key Set's instructions
//! (callgrind, `docs/performance.md`, "Write commits"). A sorted vector answers a lookup with
//! one binary search and iterates in the same order, by name, so commits write buckets in the
//! order they did.
//!
//! Invariant: names are strictly ascending.

#[derive(Debug)]
pub(crate) struct ByName<T> {
    entries: Vec<(Vec<u8>, T)>,
}

impl<T> Default for ByName<T> {
    fn default() -> ByName<T> {
        ByName {
            entries: Vec::new(),
        }
    }
}

impl<T> ByName<T> {
    fn find(&self, name: &[u8]) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|(n, _)| n.as_slice().cmp(name))
    }

    pub fn contains_key(&self, name: &[u8]) -> bool {
        self.find(name).is_ok()
    }

    pub fn get(&self, name: &[u8]) -> Option<&T> {
        self.find(name).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, name: &[u8]) -> Option<&mut T> {
        self.find(name).ok().map(|i| &mut self.entries[i].1)
    }

    /// Put `value` under `name`, replacing what was there.
    pub fn insert(&mut self, name: Vec<u8>, value: T) {
        match self.find(&name) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (name, value)),
        }
    }

    /// The value under `name`, `make` put there first if there was none.
    pub fn get_or_insert_with(&mut self, name: &[u8], make: impl FnOnce() -> T) -> &mut T {
        let i = match self.find(name) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (name.to_vec(), make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub fn remove(&mut self, name: &[u8]) -> Option<T> {
        self.find(name).ok().map(|i| self.entries.remove(i).1)
    }

    /// The values, by name.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(_, v)| v)
    }
}

impl<T> IntoIterator for ByName<T> {
    type Item = (Vec<u8>, T);
    type IntoIter = std::vec::IntoIter<(Vec<u8>, T)>;

    /// The entries, by name.
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<u8>, u32),
        GetOrInsert(Vec<u8>, u32),
        Remove(Vec<u8>),
        Bump(Vec<u8>),
    }

    fn name() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..4, 0..4)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (name(), any::<u32>()).prop_map(|(n, v)| Op::Insert(n, v)),
            (name(), any::<u32>()).prop_map(|(n, v)| Op::GetOrInsert(n, v)),
            name().prop_map(Op::Remove),
            name().prop_map(Op::Bump),
        ]
    }

    proptest! {
        /// Every answer, and the order it iterates in, is a `BTreeMap`'s.
        #[test]
        fn answers_as_a_btreemap_does(ops in proptest::collection::vec(op(), 0..200)) {
            let mut map = ByName::default();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(n, v) => {
                        map.insert(n.clone(), v);
                        model.insert(n, v);
                    }
                    Op::GetOrInsert(n, v) => {
                        let got = *map.get_or_insert_with(&n, || v);
                        prop_assert_eq!(got, *model.entry(n).or_insert(v));
                    }
                    Op::Remove(n) => prop_assert_eq!(map.remove(&n), model.remove(&n)),
                    Op::Bump(n) => {
                        if let Some(v) = map.get_mut(&n) {
                            *v = v.wrapping_add(1);
                        }
                        if let Some(v) = model.get_mut(&n) {
                            *v = v.wrapping_add(1);
                        }
                        prop_assert_eq!(map.get(&n), model.get(&n));
                        prop_assert_eq!(map.contains_key(&n), model.contains_key(&n));
                    }
                }
            }
            prop_assert!(map.values().eq(model.values()));
            prop_assert!(map.into_iter().eq(model));
        }
    }
}
