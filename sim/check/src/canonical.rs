//! The canonical form of an enumerated workload: two workloads are the same test when one is the
//! other with names renamed *in order*, and only the canonical one of each class is checked.
//!
//! What is truly equivalent. A B+tree engine compares names; it never branches on their bytes
//! otherwise. Renaming names so that every comparison the engine makes between two names gives
//! the same answer leaves the trees the same shape, the pages the same in number, size and
//! place, the storage calls the same in number, offset and length: the crash states correspond
//! one to one, and a state of one recovers as allowed exactly when its counterpart does. Only
//! the bytes of names and values differ (values are derived from the key, `op::value_bytes`),
//! which no engine's control flow reads. Names are compared only within one namespace (the keys
//! and sub-buckets of one bucket, the top-level buckets), so a renaming keeps every comparison
//! when, within each namespace, it keeps the order of the names the workload uses. With two
//! names per kind, that allows exactly one renaming: a workload that uses only the second name
//! of a kind in a namespace (only `k1` in bucket `a`; only bucket `b` of `a`, `b`) is the one
//! that uses only the first.
//!
//! What is not. Swapping two names that are both used reverses their order in the leaf, so the
//! engine's tree differs (which key sits first, which one a delete shifts, which one a separator
//! names), and "rename in order of first use" is not sound. Reordering the
//! operations of one transaction is not either: the engine's work depends on their order (the
//! negative control `emptied-bucket-leak` needs a delete before the bucket's deletion). The
//! content of a rolled-back transaction changes nothing durable but still runs in the engine.
//! Those stay distinct workloads; the checker's shared caches make their identical crash points
//! cheap instead (`bounded.rs`).
//!
//! Invariants: [`canonical`] is idempotent, maps a workload the model accepts to one it accepts
//! (a renaming within a namespace is a symmetry of the model), and every workload's class holds
//! exactly one canonical workload.

use crate::alphabet::{Act, Alphabet, BucketIx, KeyIx, Tx, Workload};

/// The canonical workload of `w`'s class.
pub fn canonical(alphabet: &Alphabet, w: &[Tx]) -> Workload {
    let buckets = bucket_renaming(alphabet, w);
    let keys: Vec<Vec<KeyIx>> = (0..alphabet.buckets.len() as u8)
        .map(|b| key_renaming(alphabet, w, b))
        .collect();
    let rename = |act: Act| match act {
        Act::Create(b) => Act::Create(buckets[b as usize]),
        Act::DeleteBucket(b) => Act::DeleteBucket(buckets[b as usize]),
        Act::Put { bucket, key, len } => Act::Put {
            bucket: buckets[bucket as usize],
            key: keys[bucket as usize][key as usize],
            len,
        },
        Act::Delete { bucket, key } => Act::Delete {
            bucket: buckets[bucket as usize],
            key: keys[bucket as usize][key as usize],
        },
    };
    w.iter()
        .map(|tx| Tx {
            reader: tx.reader,
            acts: tx.acts.iter().map(|&a| rename(a)).collect(),
            commit: tx.commit,
        })
        .collect()
}

/// Whether `w` is the canonical workload of its class.
pub fn is_canonical(alphabet: &Alphabet, w: &[Tx]) -> bool {
    canonical(alphabet, w) == w
}

/// Where each bucket goes: siblings (buckets with the same parent) the workload uses keep their
/// order and take the first names of their group.
fn bucket_renaming(alphabet: &Alphabet, w: &[Tx]) -> Vec<BucketIx> {
    let used = |b: usize| acts(w).any(|a| a.bucket() as usize == b);
    let parent = |b: usize| &alphabet.buckets[b][..alphabet.buckets[b].len() - 1];
    let mut map: Vec<BucketIx> = (0..alphabet.buckets.len() as u8).collect();
    let mut done = vec![false; map.len()];
    for first in 0..map.len() {
        if done[first] {
            continue;
        }
        let group: Vec<usize> = (first..map.len())
            .filter(|&b| parent(b) == parent(first))
            .collect();
        let flags: Vec<bool> = group.iter().map(|&b| used(b)).collect();
        for (i, to) in compact(&flags).into_iter().enumerate() {
            map[group[i]] = group[to] as u8;
            done[group[i]] = true;
        }
    }
    map
}

/// Where each key of bucket `b` goes: the keys the workload uses in `b` keep their order and
/// take the first names.
fn key_renaming(alphabet: &Alphabet, w: &[Tx], b: BucketIx) -> Vec<KeyIx> {
    let flags: Vec<bool> = (0..alphabet.keys.len() as u8)
        .map(|k| acts(w).any(|a| a.bucket() == b && a.key() == Some(k)))
        .collect();
    compact(&flags).into_iter().map(|k| k as u8).collect()
}

/// The order-keeping bijection that sends the used names (in order) to the first places and the
/// unused ones (in order) after them.
fn compact(used: &[bool]) -> Vec<usize> {
    let mut map = vec![0; used.len()];
    let mut next = 0;
    for want in [true, false] {
        for (i, &u) in used.iter().enumerate() {
            if u == want {
                map[i] = next;
                next += 1;
            }
        }
    }
    map
}

fn acts(w: &[Tx]) -> impl Iterator<Item = Act> + '_ {
    w.iter().flat_map(|tx| tx.acts.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crashlab_sim::adapter::Capabilities;

    fn tx(acts: Vec<Act>) -> Tx {
        Tx {
            reader: false,
            acts,
            commit: true,
        }
    }

    fn put(bucket: u8, key: u8) -> Act {
        Act::Put {
            bucket,
            key,
            len: 0,
        }
    }

    #[test]
    fn a_name_used_alone_becomes_the_first_of_its_kind() {
        let flat = Alphabet::standard(&Capabilities::default());
        // Only bucket b, only its key k1: `create a; put a k0`.
        let w = vec![tx(vec![Act::Create(1), put(1, 1)])];
        assert_eq!(
            canonical(&flat, &w),
            vec![tx(vec![Act::Create(0), put(0, 0)])]
        );
        assert!(!is_canonical(&flat, &w));
        // Both buckets used: no renaming keeps their order but the identity.
        let both = vec![tx(vec![Act::Create(1), Act::Create(0)])];
        assert!(is_canonical(&flat, &both));
        // Keys are renamed per bucket: k1 alone in b, k0 and k1 in a.
        let w = vec![tx(vec![put(0, 1), put(0, 0)]), tx(vec![put(1, 1)])];
        let c = canonical(&flat, &w);
        assert_eq!(c, vec![tx(vec![put(0, 1), put(0, 0)]), tx(vec![put(1, 0)])]);
        assert_eq!(canonical(&flat, &c), c, "idempotent");
    }

    #[test]
    fn a_nested_bucket_is_no_sibling_of_its_parent() {
        let nested = Alphabet::standard(&Capabilities {
            nested_buckets: true,
            ..Capabilities::default()
        });
        // a/x alone stays a/x: it has no sibling to take the place of.
        let w = vec![tx(vec![Act::Create(1), put(1, 1)])];
        assert_eq!(
            canonical(&nested, &w),
            vec![tx(vec![Act::Create(1), put(1, 0)])]
        );
    }

    #[test]
    fn compact_keeps_the_order_of_used_and_of_unused_names() {
        assert_eq!(compact(&[false, true]), vec![1, 0]);
        assert_eq!(compact(&[true, false]), vec![0, 1]);
        assert_eq!(compact(&[true, true]), vec![0, 1]);
        assert_eq!(compact(&[false, false]), vec![0, 1]);
    }
}
