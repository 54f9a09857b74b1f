//! The shapes as seeded workloads: each operation prepares `n` items (inserts into the tree, or
//! nodes into the buffer) and builds the batch a commit writes. The benchmark and
//! `crashlab compare` drive both shapes through [`BatchBuilder`].

use super::geth::NodeBuffer;
use super::iavl::IavlTree;
use crashlab_engine::batch::WriteBatch;
use crashlab_engine::PresizePolicy;
use crashlab_sim::rng::SimRng;

/// An application that builds one batch per commit.
pub trait BatchBuilder {
    /// The application's work for one operation, with `n` items.
    fn prepare(&mut self, n: u64);
    /// Build the batch the operation commits, sized by `policy`.
    fn build(&mut self, policy: PresizePolicy) -> WriteBatch;
    /// `Exact`'s sizing pass alone (for timing it on its own).
    fn size_pass(&self) -> (usize, u64);
}

/// IAVL-shaped: inserts of 16-byte random keys with 8–71-byte values into a versioned tree.
pub struct IavlWorkload {
    pub tree: IavlTree,
    rng: SimRng,
}

impl IavlWorkload {
    /// A tree holding `preload` keys, saved in versions of 1,000 inserts (the preload's batches
    /// are built and dropped: only the tree's persisted state matters).
    pub fn preloaded(seed: u64, preload: u64) -> IavlWorkload {
        let mut w = IavlWorkload {
            tree: IavlTree::new(),
            rng: SimRng::derive(seed, "shape-iavl"),
        };
        let mut left = preload;
        while left > 0 {
            let n = left.min(1_000);
            w.prepare(n);
            w.tree.save(PresizePolicy::Grow);
            left -= n;
        }
        w
    }
}

impl BatchBuilder for IavlWorkload {
    fn prepare(&mut self, n: u64) {
        let value = [0x5a; 71];
        for _ in 0..n {
            let key = u128::from(self.rng.next_u64()).to_be_bytes();
            let len = 8 + self.rng.below(64) as usize;
            self.tree.insert(&key, &value[..len]);
        }
    }

    fn build(&mut self, policy: PresizePolicy) -> WriteBatch {
        self.tree.save(policy)
    }

    fn size_pass(&self) -> (usize, u64) {
        self.tree.exact_size()
    }
}

/// geth-shaped: trie nodes with random 32-byte hashes and 100–499-byte values.
pub struct GethWorkload {
    pub buffer: NodeBuffer,
    rng: SimRng,
}

impl GethWorkload {
    pub fn new(seed: u64) -> GethWorkload {
        GethWorkload {
            buffer: NodeBuffer::new(),
            rng: SimRng::derive(seed, "shape-geth"),
        }
    }
}

impl BatchBuilder for GethWorkload {
    fn prepare(&mut self, n: u64) {
        let value = [0xa5; 500];
        for _ in 0..n {
            let mut hash = [0u8; 32];
            for chunk in hash.chunks_exact_mut(8) {
                chunk.copy_from_slice(&self.rng.next_u64().to_le_bytes());
            }
            let len = 100 + self.rng.below(400) as usize;
            self.buffer.insert(hash, value[..len].to_vec());
        }
    }

    fn build(&mut self, policy: PresizePolicy) -> WriteBatch {
        self.buffer.flush(policy)
    }

    fn size_pass(&self) -> (usize, u64) {
        self.buffer.exact_size()
    }
}
