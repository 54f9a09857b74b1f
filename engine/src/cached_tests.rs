//! The key index against a plain binary search over the keys, on key sets built to share long
//! prefixes (past `PREFIX_MAX`), to tie in their words (keys longer than prefix + 8 bytes), and
//! to be prefixes of one another, searched with keys shorter than, inside and past the prefix.

use super::*;
use crashlab_format::node::{BranchItem, Child, LeafItem};
use crashlab_format::types::PageId;
use proptest::collection::{btree_set, vec};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn node(keys: &[Vec<u8>], leaf: bool) -> Node {
    let body = if leaf {
        let items = keys.iter().map(|k| LeafItem::new(0, k, b""));
        Body::Leaf(items.collect())
    } else {
        let items = keys.iter().enumerate().map(|(i, k)| BranchItem {
            key: k.clone(),
            child: Child::Page(PageId(2 + i as u64)),
        });
        Body::Branch(items.collect())
    };
    Node::built(body)
}

/// A shared head of 0 to 40 bytes (the index keeps at most 24), then short tails over a
/// three-letter alphabet, so that keys tie, nest and differ late.
fn key_set() -> impl Strategy<Value = (Vec<u8>, BTreeSet<Vec<u8>>)> {
    (vec(0u8..3, 0..40), btree_set(vec(0u8..3, 0..14), 0..40))
}

fn with_head(head: &[u8], tail: &[u8]) -> Vec<u8> {
    [head, tail].concat()
}

proptest! {
    #[test]
    fn the_index_ranks_every_key_as_a_binary_search_does(
        (head, tails) in key_set(),
        leaf in any::<bool>(),
        probes in vec((0usize..50, vec(0u8..4, 0..16)), 1..20),
    ) {
        let keys: Vec<Vec<u8>> = tails
            .iter()
            .map(|t| with_head(&head, t))
            .filter(|k| !k.is_empty())
            .collect();
        let n = node(&keys, leaf);
        let cached = CachedNode::new(n.clone());
        // Every stored key, and probes that keep part of the head and add a tail.
        let stored = keys.iter().cloned();
        let made = probes.iter().map(|(cut, tail)| with_head(&head[..(*cut).min(head.len())], tail));
        for probe in stored.chain(made) {
            let found = keys.binary_search(&probe).ok();
            prop_assert_eq!(cached.position(&probe), found, "position of {:?}", probe);
            for inclusive in [false, true] {
                prop_assert_eq!(
                    cached.index().rank(&cached, &probe, inclusive).0,
                    rank_by_search(&n, &probe, inclusive),
                    "probe {:?} inclusive {}", probe, inclusive
                );
            }
        }
    }
}

#[test]
fn keys_that_tie_in_their_word_are_told_apart() {
    // (`rank` also checks itself against a plain search in debug builds.)
    // Shared prefix "k", then words "aaaaaaaa" for the first two (which differ after them).
    let keys = [
        b"kaaaaaaaab".to_vec(),
        b"kaaaaaaaac".to_vec(),
        b"kb".to_vec(),
    ];
    let cached = CachedNode::new(node(&keys, true));
    assert_eq!(cached.index().prefix_len, 1);
    assert_eq!(cached.index().words[0], cached.index().words[1]);
    assert_eq!(cached.rank(b"kaaaaaaaac", false), 1);
    assert_eq!(cached.rank(b"kaaaaaaaac", true), 2);
    assert_eq!(cached.rank(b"kaaaaaaaa", false), 0);
    assert_eq!(cached.rank(b"kaaaaaaaaz", false), 2);
    assert_eq!(cached.rank(b"j", true), 0);
    assert_eq!(cached.rank(b"l", false), 3);
}

#[test]
fn keys_that_fit_their_word_and_tie_are_ordered_by_length() {
    // Prefix "k"; the first three keys share the word 0 and differ only in trailing zero bytes.
    let keys = [
        b"k".to_vec(),
        b"k\0".to_vec(),
        b"k\0\0".to_vec(),
        b"ka".to_vec(),
    ];
    let cached = CachedNode::new(node(&keys, true));
    let index = cached.index();
    assert!(index.exact);
    assert_eq!(
        (index.prefix_len, index.words[0], index.words[2]),
        (1, 0, 0)
    );
    assert_eq!(cached.position(b"k\0"), Some(1));
    assert_eq!(cached.rank(b"k\0", false), 1);
    assert_eq!(cached.rank(b"k\0", true), 2);
    assert_eq!(cached.rank(b"k\0\0\0", false), 3);
    assert_eq!(cached.position(b"k\0\0\0"), None);
    // A probe longer than prefix and word, with the same word: every tied key is its prefix.
    let long = [b"k".as_slice(), &[0; 9]].concat();
    assert_eq!(cached.rank(&long, true), 3);
    assert_eq!(cached.position(&long), None);
    let branch = CachedNode::new(node(&keys, false));
    assert_eq!(branch.rank(b"k\0", true), 2);
    assert_eq!(branch.rank(&long, false), 3);
}

#[test]
fn an_empty_node_ranks_everything_zero() {
    let cached = CachedNode::new(node(&[], true));
    assert_eq!(cached.rank(b"a", true), 0);
    assert_eq!(cached.rank(b"", false), 0);
}

#[test]
fn a_probe_without_the_prefix_is_not_found_by_its_word() {
    // Prefix "ab"; "aa" ranks first with the same (empty) word and length as "ab".
    let keys = [b"ab".to_vec(), b"abc".to_vec()];
    let cached = CachedNode::new(node(&keys, true));
    assert!(cached.index().exact);
    assert_eq!(cached.position(b"aa"), None);
    assert_eq!(cached.position(b"ab"), Some(0));
    assert_eq!(cached.position(b"abc"), Some(1));
    assert_eq!(cached.position(b"abd"), None);
}

#[test]
fn the_index_is_built_by_the_first_search_only() {
    let keys = [b"a".to_vec(), b"b".to_vec()];
    let cached = CachedNode::new(node(&keys, true));
    // Publishing a node to the cache costs no index (a writer may take it back unsearched).
    assert!(cached.index.get().is_none());
    assert_eq!(cached.position(b"b"), Some(1));
    assert!(cached.index.get().is_some());
    assert_eq!(cached.into_node().len(), 2);
}

#[test]
fn the_index_and_the_arc_counts_fit_one_cache_line() {
    // `CachedNode`'s layout comment: two `Arc` counts (16 bytes) plus the index's 48.
    assert!(std::mem::size_of::<OnceLock<Index>>() <= 48);
}

#[test]
fn a_search_that_does_not_build_finds_the_same_and_leaves_no_index() {
    use crate::tree::NodeRef;
    let keys: Vec<Vec<u8>> = (0..40u8).map(|i| vec![b'k', i, i]).collect();
    let shared = NodeRef::Shared(std::sync::Arc::new(CachedNode::new(node(&keys, true))));
    let NodeRef::Shared(cached) = &shared else {
        unreachable!()
    };
    // A write transaction's search (build = false): plain binary search, no index built.
    for k in &keys {
        assert_eq!(
            shared.position(k, false),
            keys.binary_search(k).ok(),
            "{k:?}"
        );
        assert_eq!(shared.rank(k, true, false), rank_by_search(cached, k, true));
    }
    assert_eq!(shared.position(b"k\x05", false), None);
    assert!(!cached.is_indexed());
    // A reader's builds it, and then both kinds of search go through it, with the same answers.
    assert_eq!(shared.position(&keys[7], true), Some(7));
    assert!(cached.is_indexed());
    assert_eq!(shared.position(&keys[9], false), Some(9));
    assert_eq!(shared.child_index(&keys[3], false), 3);
}
