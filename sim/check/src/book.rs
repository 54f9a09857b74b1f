//! The checker's book of states: every database state the durability oracle names, and the sets
//! of states a crash point allows, each stored once and referred to by index.
//!
//! A crash point records the index of its allowed set rather than the oracle itself, so a
//! recovered image is judged against the promise in force when the power was cut, and the same
//! image met again at another crash point costs no second open.
//!
//! Lookups are indexed (a state by a 128-bit fingerprint of its contents, then compared whole;
//! an allowed set by itself), so a book shared by the thousands of workloads of
//! `--all-workloads` stays as fast as a small one.

use crashlab_models::{BucketModel, DurabilityOracle, KvModel};
use std::collections::BTreeMap;
use xxhash_rust::xxh3::Xxh3;

/// Index of a state in the [`Book`].
pub(crate) type ModelId = usize;

/// What may be recovered after a crash at one point.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Allowed {
    /// States a power cut may leave (the last durable commit to the last attempted one).
    pub power: Vec<ModelId>,
    /// States a process crash may leave (the page cache survives: the last acknowledged commit
    /// to the last attempted one).
    pub process: Vec<ModelId>,
    /// Whether the engine promises anything across a power cut (false with `no_sync`: then only
    /// a panic is a violation after a power cut).
    pub promised: bool,
}

#[derive(Default)]
pub(crate) struct Book {
    models: Vec<KvModel>,
    /// Ids of the states with each fingerprint (equal fingerprints are compared whole).
    by_print: BTreeMap<u128, Vec<ModelId>>,
    allowed: Vec<Allowed>,
    allowed_ids: BTreeMap<Allowed, usize>,
}

impl Book {
    /// The id of `m`, if it is a state the book knows.
    pub fn find(&self, m: &KvModel) -> Option<ModelId> {
        self.find_printed(m, fingerprint(m))
    }

    fn find_printed(&self, m: &KvModel, print: u128) -> Option<ModelId> {
        let ids = self.by_print.get(&print)?;
        ids.iter().copied().find(|&i| self.models[i] == *m)
    }

    /// The id of `m`, adding it if new.
    pub fn intern(&mut self, m: &KvModel) -> ModelId {
        let print = fingerprint(m);
        self.find_printed(m, print).unwrap_or_else(|| {
            self.models.push(m.clone());
            let id = self.models.len() - 1;
            self.by_print.entry(print).or_default().push(id);
            id
        })
    }

    pub fn model(&self, id: ModelId) -> &KvModel {
        &self.models[id]
    }

    /// The index of an allowed set, adding it if new.
    pub fn allow(&mut self, a: Allowed) -> usize {
        if let Some(&i) = self.allowed_ids.get(&a) {
            return i;
        }
        self.allowed.push(a.clone());
        let i = self.allowed.len() - 1;
        self.allowed_ids.insert(a, i);
        i
    }

    pub fn allowed(&self, index: usize) -> &Allowed {
        &self.allowed[index]
    }

    /// The allowed set the oracle describes now.
    pub fn allow_oracle(&mut self, o: &DurabilityOracle, promised: bool) -> usize {
        let mut ids = |(lo, hi): (usize, usize)| -> Vec<ModelId> {
            (lo..=hi).map(|i| self.intern(o.state(i))).collect()
        };
        let power = ids(o.allowed_after_power_cut());
        let process = ids(o.allowed_after_reopen());
        self.allow(Allowed {
            power,
            process,
            promised,
        })
    }
}

/// A 128-bit fingerprint of a state's contents: equal states have equal fingerprints (every
/// field goes in, each with its length, in the maps' order).
fn fingerprint(m: &KvModel) -> u128 {
    fn bucket(h: &mut Xxh3, b: &BucketModel) {
        h.update(&b.sequence.to_le_bytes());
        for (k, v) in &b.values {
            h.update(&[0]);
            bytes(h, k);
            bytes(h, v);
        }
        for (name, child) in &b.buckets {
            h.update(&[1]);
            bytes(h, name);
            bucket(h, child);
        }
        h.update(&[2]);
    }
    fn bytes(h: &mut Xxh3, b: &[u8]) {
        h.update(&(b.len() as u64).to_le_bytes());
        h.update(b);
    }
    let mut h = Xxh3::new();
    bucket(&mut h, &m.root);
    h.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_found_by_contents_and_kept_once() {
        let mut book = Book::default();
        let empty = KvModel::new();
        let mut a = KvModel::new();
        a.create_bucket(&[b"a".to_vec()]).unwrap();
        let mut b = a.clone();
        b.put(&[b"a".to_vec()], b"k", b"v").unwrap();
        let ids: Vec<ModelId> = [&empty, &a, &b, &a]
            .iter()
            .map(|m| book.intern(m))
            .collect();
        assert_eq!(ids, [0, 1, 2, 1]);
        assert_eq!(book.find(&b), Some(2));
        // A value and a sub-bucket of the same name are different states.
        let mut c = a.clone();
        c.create_bucket(&[b"a".to_vec(), b"k".to_vec()]).unwrap();
        assert_eq!(book.find(&c), None);
        assert_ne!(fingerprint(&b), fingerprint(&c));
        let set = Allowed {
            power: vec![0, 1],
            process: vec![1],
            promised: true,
        };
        assert_eq!(book.allow(set.clone()), 0);
        assert_eq!(book.allow(set), 0);
    }
}
