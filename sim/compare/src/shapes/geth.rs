//! A go-ethereum-shaped application: trie nodes buffered in memory (keyed by their 32-byte hash)
//! and flushed as one large `WriteBatch`. The buffer keeps its encoded size up to date as nodes
//! arrive — geth's node buffer does the same to decide when to flush — so the exact batch size
//! is known for free when the flush begins.
//!
//! Sizing under each policy ([`NodeBuffer::flush`]): `Estimate` uses the running size (exact,
//! no pass); `Exact` walks the buffer summing record sizes (one step per node), as a caller that
//! does not keep a running size must; `Grow` starts small and doubles.
//!
//! Invariant: `size` is always the encoded size of a batch of the buffered nodes, header
//! included (checked in debug builds at every flush).

use super::BUCKET;
use crashlab_engine::batch::{WriteBatch, HEADER_SIZE};
use crashlab_engine::PresizePolicy;
use std::collections::BTreeMap;

/// Bytes of a node's key: its hash.
pub const NODE_KEY_SIZE: usize = 32;

/// Nodes waiting to be flushed, in key order (so a flush is deterministic).
#[derive(Debug)]
pub struct NodeBuffer {
    nodes: BTreeMap<[u8; NODE_KEY_SIZE], Vec<u8>>,
    /// Encoded size of the batch a flush would build, header included.
    size: usize,
}

impl Default for NodeBuffer {
    fn default() -> NodeBuffer {
        NodeBuffer::new()
    }
}

impl NodeBuffer {
    pub fn new() -> NodeBuffer {
        NodeBuffer {
            nodes: BTreeMap::new(),
            size: HEADER_SIZE,
        }
    }

    /// Buffer `value` under `key`, replacing an earlier node with the same key.
    pub fn insert(&mut self, key: [u8; NODE_KEY_SIZE], value: Vec<u8>) {
        self.size += record_size(value.len());
        if let Some(old) = self.nodes.insert(key, value) {
            self.size -= record_size(old.len());
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The encoded size of the next flush's batch, known without a pass.
    pub fn size(&self) -> usize {
        self.size
    }

    /// `Exact`'s sizing pass, for a caller that keeps no running size: the next flush's encoded
    /// size and the nodes examined to find it.
    pub fn exact_size(&self) -> (usize, u64) {
        let records: usize = self.nodes.values().map(|v| record_size(v.len())).sum();
        (HEADER_SIZE + records, self.nodes.len() as u64)
    }

    /// Every buffered node in one batch sized by `policy`; the buffer is left empty.
    pub fn flush(&mut self, policy: PresizePolicy) -> WriteBatch {
        debug_assert_eq!(self.exact_size().0, self.size);
        let mut batch = WriteBatch::sized_by(policy, self.size, || self.exact_size());
        for (key, value) in std::mem::take(&mut self.nodes) {
            batch.put(&[BUCKET], &key, &value);
        }
        debug_assert_eq!(batch.encoded_len(), self.size);
        self.size = HEADER_SIZE;
        batch
    }
}

fn record_size(value_len: usize) -> usize {
    WriteBatch::put_size(&[BUCKET], NODE_KEY_SIZE, value_len)
}
