//! Batch-building shapes for the pre-sized buffers question (docs/DESIGN.md, "The three findings",
//! item 3): two applications that build a `WriteBatch` per commit, each able to size the batch's
//! buffer under any [`PresizePolicy`](crashlab_engine::PresizePolicy).
//!
//! | shape | what a commit writes | what the exact size costs | what is known for free |
//! |---|---|---|---|
//! | [`iavl::IavlTree`] | the nodes an AVL tree created since the last save (paths copied by inserts, nodes touched by rotations), skipping already-persisted subtrees | a second walk of the new nodes, replaying the node-key numbering, before the walk that hashes and encodes them | bytes inserted and inserts × tree height: a guess |
//! | [`geth::NodeBuffer`] | every node buffered since the last flush | a pass over the buffer | the buffer's running size, kept as nodes are added: exact |
//!
//! The same shape, keys and seed give the same batches under every policy (tested); only the
//! buffer work differs, which the engine counts in `Counters::buffer_*` and
//! `size_computation_steps`.

pub mod geth;
pub mod iavl;
pub mod workload;

/// The bucket every shape writes into.
pub const BUCKET: &[u8] = b"shape";
