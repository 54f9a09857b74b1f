//! A node as the page cache holds it: the decoded [`Node`] and a key index that lets a reader
//! find a key while touching a few cache lines instead of one item and one key allocation per
//! probe of a binary search.
//!
//! Profiling a Get (cachegrind's cache simulation, `docs/performance.md` "Reads") showed
//! that most of its time went to data-cache misses in the binary searches: each probe loaded an
//! item (its key's pointer and length) and then the key's own heap allocation, two misses per
//! probe. The index keeps, for every key, the 8 bytes after the prefix all of the node's keys
//! share, as one big-endian `u64`, in one contiguous array: a probe is one load from an array
//! of `8 × count` bytes, and a full key is compared only among keys whose 8 bytes tie.
//!
//! Why the comparison is sound: keys are compared as byte strings, a shorter key padded with
//! zero bytes. Let `w(k)` be bytes `L..L + 8` of `k` (zero-padded) for the shared prefix length
//! `L`. If `w(a) < w(b)` then `a < b`: at the first byte where the padded words differ, `a`'s
//! is smaller, so either `a` has the smaller real byte there or `a` has ended there (and is then
//! a proper prefix of `b`, hence smaller); `b` cannot have ended there, since its padding byte
//! (0) would not be larger. So words order keys except where they tie, and ties are settled by
//! comparing the keys themselves.
//!
//! The index is built on the node's first search, not when the node enters the cache: a
//! writer publishes every node it commits, and on a write-heavy load most of them are taken
//! back out by the next writer (which searches its own copy) without a reader ever searching
//! them. Building it at publication cost a one-key Set about 13,500 instructions, a sixth of it
//! (`docs/performance.md`, "Write commits").
//!
//! Invariants: `words.len()` is the node's item count, `words` ascends (non-strictly), and every
//! key of the node starts with `prefix[..prefix_len]`. The node is immutable while cached (a
//! writer takes it out of the cache before it edits it), so the index never goes stale.

use crashlab_format::node::{Body, Node};
use std::cmp::Ordering;
use std::ops::{Deref, Range};
use std::sync::OnceLock;

/// Longest shared prefix the index keeps: beyond it, keys still share bytes, which only makes
/// more words tie (a correct, slower search).
const PREFIX_MAX: usize = 16;

/// A cached node and its key index, built on the first search. The index comes first
/// (`repr(C)` keeps the order) and fills 48 bytes with its `OnceLock` state, so that with the
/// `Arc`'s two counts, which every reader touches anyway, it fits in one 64-byte cache line
/// when the allocation starts on one.
#[derive(Debug)]
#[repr(C)]
pub struct CachedNode {
    index: OnceLock<Index>,
    node: Node,
}

#[derive(Debug)]
struct Index {
    /// Bytes `prefix_len..prefix_len + 8` of each key, zero-padded, big-endian.
    words: Box<[u64]>,
    prefix_len: u32,
    /// Every key is at most `prefix_len + 8` bytes long, so a key equals a probe exactly when
    /// its word and length do (and the probe has the prefix).
    exact: bool,
    /// The bytes every key of the node starts with (only the first `prefix_len` count).
    prefix: [u8; PREFIX_MAX],
}

impl Deref for CachedNode {
    type Target = Node;
    fn deref(&self) -> &Node {
        &self.node
    }
}

impl CachedNode {
    /// Cache `node`, whose keys ascend strictly (decoding and encoding check that). Its index
    /// is built by the first search.
    pub fn new(node: Node) -> CachedNode {
        CachedNode {
            index: OnceLock::new(),
            node,
        }
    }

    /// The node, for a writer that takes it out of the cache.
    pub fn into_node(self) -> Node {
        self.node
    }

    /// Move the node out, leaving an empty shell (no index) whose allocation the page cache
    /// keeps for the next node a commit publishes (`pager.rs`, `Spares`).
    pub fn take_node(&mut self) -> Node {
        self.index = OnceLock::new();
        std::mem::take(&mut self.node)
    }

    /// Put `node` into this shell, as [`CachedNode::new`] would make it.
    pub fn refill(&mut self, node: Node) {
        debug_assert!(self.index.get().is_none() && self.node.is_empty());
        self.node = node;
    }

    /// How many keys are below `key` (`inclusive`: at or below it): the index of the first key
    /// above it, as `partition_point` on the keys would give.
    pub fn rank(&self, key: &[u8], inclusive: bool) -> usize {
        let found = self.index().rank(&self.node, key, inclusive).0;
        debug_assert_eq!(found, rank_by_search(&self.node, key, inclusive));
        found
    }

    /// The index of `key` among the node's keys, if it is one of them.
    pub fn position(&self, key: &[u8]) -> Option<usize> {
        let index = self.index();
        let (i, has_prefix) = index.rank(&self.node, key, false);
        debug_assert_eq!(i, rank_by_search(&self.node, key, false));
        let stored = key_at(&self.node, i)?;
        // With every key inside its word, the rank's prefix and word comparisons decided all
        // but the length (`a` and `a\0` share a word); otherwise compare the bytes.
        let equal = if index.exact {
            has_prefix && index.words[i] == word(key, index.prefix()) && stored.len() == key.len()
        } else {
            stored == key
        };
        debug_assert_eq!(equal, stored == key);
        equal.then_some(i)
    }

    /// Whether a search has built the key index yet.
    pub fn is_indexed(&self) -> bool {
        self.index.get().is_some()
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| Index::of(&self.node))
    }
}

impl Index {
    fn of(node: &Node) -> Index {
        let prefix_len = shared_prefix(node).min(PREFIX_MAX);
        let mut prefix = [0u8; PREFIX_MAX];
        if let Some(first) = node.first_key() {
            prefix[..prefix_len].copy_from_slice(&first[..prefix_len]);
        }
        let words: Box<[u64]> = keys(node).map(|k| word(k, prefix_len)).collect();
        debug_assert_eq!(words.len(), node.len());
        debug_assert!(words.windows(2).all(|w| w[0] <= w[1]));
        Index {
            words,
            // At most PREFIX_MAX.
            prefix_len: prefix_len as u32,
            exact: keys(node).all(|k| k.len() <= prefix_len + 8),
            prefix,
        }
    }

    fn prefix(&self) -> usize {
        self.prefix_len as usize
    }

    /// The rank of `key` in `node` (this index's node), and whether `key` starts with the
    /// shared prefix.
    fn rank(&self, node: &Node, key: &[u8], inclusive: bool) -> (usize, bool) {
        let n = self.words.len();
        let len = self.prefix();
        let head = &key[..key.len().min(len)];
        match head.cmp(&self.prefix[..head.len()]) {
            Ordering::Less => return (0, false),
            Ordering::Greater => return (n, false),
            // A key shorter than the shared prefix is a proper prefix of every key.
            Ordering::Equal if key.len() < len => return (0, false),
            Ordering::Equal => {}
        }
        let w = word(key, len);
        let lo = self.words.partition_point(|&x| x < w);
        let hi = lo + self.words[lo..].partition_point(|&x| x == w);
        let tied = if self.exact {
            ties_by_length(node, lo..hi, key.len(), inclusive)
        } else {
            // Keys whose words tie with the key's are settled by comparing the keys.
            match &node.body {
                Body::Leaf(items) => {
                    items[lo..hi].partition_point(|it| below(it.key(), key, inclusive))
                }
                Body::Branch(items) => {
                    items[lo..hi].partition_point(|it| below(&it.key, key, inclusive))
                }
            }
        };
        (lo + tied, true)
    }
}

/// How many of the keys `tied` (whose words equal the probe's, in a node whose every key fits
/// its prefix and word) are below a probe of `len` bytes that has the prefix. Such a key is
/// the prefix and the word cut to its length, the word's bytes past it zero; so of a tied key
/// and the probe, the shorter is a prefix of the longer (a probe longer than prefix + 8 bytes
/// too), and lengths order them. Only the items' lengths are read, never a key's bytes: a
/// search of a leaf no longer touches the buffer of the item it finds (a cold line per Get of
/// a large tree, where LMDB's compare reads bytes its search already brought in).
fn ties_by_length(node: &Node, tied: Range<usize>, len: usize, inclusive: bool) -> usize {
    let below = |n: usize| n < len || (inclusive && n == len);
    match &node.body {
        Body::Leaf(items) => items[tied].partition_point(|it| below(it.key().len())),
        Body::Branch(items) => items[tied].partition_point(|it| below(it.key.len())),
    }
}

/// Whether `k` is below `key` (or equal to it, when `inclusive`).
fn below(k: &[u8], key: &[u8], inclusive: bool) -> bool {
    if inclusive {
        k <= key
    } else {
        k < key
    }
}

/// The rank by a plain binary search over the keys (the index's reference).
pub fn rank_by_search(node: &Node, key: &[u8], inclusive: bool) -> usize {
    match &node.body {
        Body::Leaf(items) => items.partition_point(|it| below(it.key(), key, inclusive)),
        Body::Branch(items) => items.partition_point(|it| below(&it.key, key, inclusive)),
    }
}

/// Key `i` of `node`, if it has that many.
fn key_at(node: &Node, i: usize) -> Option<&[u8]> {
    match &node.body {
        Body::Leaf(items) => items.get(i).map(|it| it.key()),
        Body::Branch(items) => items.get(i).map(|it| it.key.as_slice()),
    }
}

fn keys(node: &Node) -> impl Iterator<Item = &[u8]> {
    let (leaf, branch) = match &node.body {
        Body::Leaf(items) => (Some(items.iter().map(|i| i.key())), None),
        Body::Branch(items) => (None, Some(items.iter().map(|i| i.key.as_slice()))),
    };
    leaf.into_iter()
        .flatten()
        .chain(branch.into_iter().flatten())
}

/// The length of the prefix every key shares: that of the first and last key, since keys
/// ascend.
fn shared_prefix(node: &Node) -> usize {
    let mut all = keys(node);
    let (Some(first), Some(last)) = (all.next(), all.last()) else {
        return 0;
    };
    first.iter().zip(last).take_while(|(a, b)| a == b).count()
}

/// Bytes `at..at + 8` of `key`, zero-padded, as a big-endian number.
fn word(key: &[u8], at: usize) -> u64 {
    let tail = key.get(at..).unwrap_or_default();
    if let Some(full) = tail.first_chunk::<8>() {
        return u64::from_be_bytes(*full);
    }
    // Fewer than 8 bytes: shift them in, so that no call to `memcpy` is made for a few bytes.
    let padded = tail.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
    padded.checked_shl(8 * (8 - tail.len() as u32)).unwrap_or(0)
}

#[cfg(test)]
#[path = "cached_tests.rs"]
mod tests;
