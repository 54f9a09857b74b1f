//! An IAVL-shaped application: a versioned AVL tree whose every save writes the nodes created
//! since the previous save, one record per node, in one `WriteBatch`.
//!
//! As in IAVL (leaf-based: values live in leaves, an inner node's key is the least key of its
//! right subtree), an insert creates a new leaf and copies every node on its path; rebalancing
//! rotations create more; subtrees untouched since an earlier save are already persisted and are
//! referenced by their node key, never walked again. How many nodes a save writes, and how many
//! bytes, is therefore not known until the new part of the tree has been walked.
//!
//! Record layout (IAVL v1-like; a node is keyed by the version that created it and its position
//! in that version's post-order save walk):
//!
//! ```text
//! node key   = 'n'  version:u64be  nonce:u32be                       (13 bytes)
//! node value = varint height, varint size, varint version, varint key len, key,
//!              leaf:  varint value len, value
//!              inner: hash[32], left (varint version, varint nonce), right (same)
//! root key   = 'r'  version:u64be   →  the root's node key (absent for an empty tree)
//! ```
//!
//! The hash is a cheap stand-in for IAVL's SHA-256 (an FNV-1a digest spread over 32 bytes): it
//! costs the same under every policy, which is all the comparison needs.
//!
//! Sizing under each policy ([`IavlTree::save`]):
//! - `Exact`: walk the new nodes once to sum their encoded sizes — replaying the nonce numbering,
//!   because a parent's size depends on its children's node keys — then walk them again to hash
//!   and encode. One size-computation step per node visited.
//! - `Estimate`: the guess known for free — the key and value bytes inserted since the last save,
//!   plus `inserts × (height + 1)` nodes of [`ESTIMATED_NODE_VALUE`] bytes. Short when rotations
//!   or long keys add more; then the batch grows.
//! - `Grow`: start small and double.
//!
//! Invariants, checked by [`IavlTree::check`]: keys in order, every inner node's key is the least
//! key of its right subtree, heights and sizes are exact, every node's balance is within ±1, and
//! every persisted node's subtree is persisted.

use super::BUCKET;
use crashlab_engine::batch::{WriteBatch, HEADER_SIZE};
use crashlab_engine::PresizePolicy;
use std::cmp::Ordering;

/// Bytes of a node key: a prefix byte, the version and the nonce.
pub const NODE_KEY_SIZE: usize = 13;
/// Bytes of a root record's key: a prefix byte and the version.
const ROOT_KEY_SIZE: usize = 9;
const HASH_SIZE: usize = 32;
/// The node value size `Estimate` assumes for every node on an insert's path.
pub const ESTIMATED_NODE_VALUE: usize = 64;

/// Where a node lives once saved: the version that created it and its nonce in that save.
type NodeKey = (u64, u32);

#[derive(Debug)]
struct Node {
    key: Vec<u8>,
    /// Leaves only.
    value: Vec<u8>,
    /// 0 for a leaf.
    height: u8,
    /// Leaves in this subtree.
    size: u64,
    /// The version that created this node: the next save's version until it is saved.
    version: u64,
    /// Position in its version's post-order save walk, from 1; 0 until saved.
    nonce: u32,
    /// Already written by an earlier save; its whole subtree is too.
    persisted: bool,
    hash: [u8; HASH_SIZE],
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

/// A versioned AVL tree whose saves are IAVL-shaped write batches.
#[derive(Debug)]
pub struct IavlTree {
    root: Option<Box<Node>>,
    /// The version the next save writes.
    version: u64,
    /// Inserts since the last save (known for free).
    inserts: u64,
    /// Key and value bytes inserted since the last save (known for free).
    bytes_inserted: u64,
}

impl Default for IavlTree {
    fn default() -> IavlTree {
        IavlTree::new()
    }
}

impl IavlTree {
    /// An empty tree; its first save writes version 1.
    pub fn new() -> IavlTree {
        IavlTree {
            root: None,
            version: 1,
            inserts: 0,
            bytes_inserted: 0,
        }
    }

    /// The version the next save writes.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Leaves (keys) in the tree.
    pub fn len(&self) -> u64 {
        self.root.as_ref().map_or(0, |r| r.size)
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Height of the tree: 0 for one leaf (or none).
    pub fn height(&self) -> u8 {
        self.root.as_ref().map_or(0, |r| r.height)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        let mut node = self.root.as_deref()?;
        while node.height > 0 {
            node = if key < node.key.as_slice() {
                node.left.as_deref()?
            } else {
                node.right.as_deref()?
            };
        }
        (node.key == key).then_some(node.value.as_slice())
    }

    /// Set `key` to `value`, copying the path and rebalancing.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) {
        let root = self.root.take();
        self.root = Some(insert_at(root, key, value, self.version));
        self.inserts += 1;
        self.bytes_inserted += (key.len() + value.len()) as u64;
    }

    /// Write every node created since the last save, and this version's root record, into one
    /// batch whose buffer is sized by `policy`; the nodes become persisted and the version
    /// advances. The batch is the same under every policy.
    pub fn save(&mut self, policy: PresizePolicy) -> WriteBatch {
        let version = self.version;
        let estimate = self.estimated_size();
        let mut batch = WriteBatch::sized_by(policy, estimate, || self.exact_size());
        let mut scratch = Vec::new();
        let mut nonce = 0;
        if let Some(root) = self.root.as_deref_mut() {
            let (root_key, _) = save_node(root, version, &mut nonce, &mut batch, &mut scratch);
            batch.put(&[BUCKET], &root_record_key(version), &node_key(root_key));
        }
        self.version += 1;
        self.inserts = 0;
        self.bytes_inserted = 0;
        batch
    }

    /// The size `Estimate` starts from: a guess made without walking the tree.
    fn estimated_size(&self) -> usize {
        let nodes = self.inserts as usize * (usize::from(self.height()) + 1);
        let per_node = WriteBatch::put_size(&[BUCKET], NODE_KEY_SIZE, ESTIMATED_NODE_VALUE);
        HEADER_SIZE + nodes * per_node + self.bytes_inserted as usize + self.root_record_size()
    }

    /// The exact size of the next save's batch and the nodes examined to find it: `Exact`'s
    /// sizing pass, a walk of every node created since the last save.
    pub fn exact_size(&self) -> (usize, u64) {
        let mut walk = SizeWalk {
            version: self.version,
            nonce: 0,
            size: HEADER_SIZE,
            steps: 0,
        };
        if let Some(root) = self.root.as_deref() {
            walk.node(root);
            walk.size += self.root_record_size();
        }
        (walk.size, walk.steps)
    }

    fn root_record_size(&self) -> usize {
        if self.root.is_some() {
            WriteBatch::put_size(&[BUCKET], ROOT_KEY_SIZE, NODE_KEY_SIZE)
        } else {
            0
        }
    }

    /// Check the invariants in the module header; `Err` names the first one broken.
    pub fn check(&self) -> Result<(), String> {
        match self.root.as_deref() {
            None => Ok(()),
            Some(root) => check_node(root).map(drop),
        }
    }
}

/// The sizing pass: the save walk without hashing or encoding.
struct SizeWalk {
    version: u64,
    nonce: u32,
    size: usize,
    steps: u64,
}

impl SizeWalk {
    /// Add `node`'s record (and its new descendants') to the size; its node key.
    fn node(&mut self, node: &Node) -> NodeKey {
        if node.persisted {
            return (node.version, node.nonce);
        }
        self.steps += 1;
        let children = match (node.left.as_deref(), node.right.as_deref()) {
            (Some(l), Some(r)) => Some((self.node(l), self.node(r))),
            _ => None,
        };
        self.nonce += 1;
        let value_len = encoded_len(node, self.version, children);
        self.size += WriteBatch::put_size(&[BUCKET], NODE_KEY_SIZE, value_len);
        (self.version, self.nonce)
    }
}

fn insert_at(slot: Option<Box<Node>>, key: &[u8], value: &[u8], version: u64) -> Box<Node> {
    let Some(mut node) = slot else {
        return Node::leaf(key, value, version);
    };
    if node.height == 0 {
        return match key.cmp(&node.key) {
            Ordering::Equal => Node::leaf(key, value, version),
            Ordering::Less => {
                let right_min = node.key.clone();
                Node::inner(right_min, Node::leaf(key, value, version), node, version)
            }
            Ordering::Greater => {
                Node::inner(key.to_vec(), node, Node::leaf(key, value, version), version)
            }
        };
    }
    if key < node.key.as_slice() {
        node.left = Some(insert_at(node.left.take(), key, value, version));
    } else {
        node.right = Some(insert_at(node.right.take(), key, value, version));
    }
    node.touch(version);
    rebalance(node, version)
}

fn rebalance(mut node: Box<Node>, version: u64) -> Box<Node> {
    let balance = node.balance();
    if balance > 1 {
        let left = node
            .left
            .take()
            .expect("a left-heavy node has a left child");
        node.left = Some(if left.balance() < 0 {
            rotate_left(left, version)
        } else {
            left
        });
        rotate_right(node, version)
    } else if balance < -1 {
        let right = node
            .right
            .take()
            .expect("a right-heavy node has a right child");
        node.right = Some(if right.balance() > 0 {
            rotate_right(right, version)
        } else {
            right
        });
        rotate_left(node, version)
    } else {
        node
    }
}

/// Rotations keep every inner key the least key of its right subtree: the subtree moved
/// between the two nodes stays on the same side of each.
fn rotate_right(mut node: Box<Node>, version: u64) -> Box<Node> {
    let mut pivot = node.left.take().expect("rotate_right needs a left child");
    node.left = pivot.right.take();
    node.touch(version);
    pivot.right = Some(node);
    pivot.touch(version);
    pivot
}

fn rotate_left(mut node: Box<Node>, version: u64) -> Box<Node> {
    let mut pivot = node.right.take().expect("rotate_left needs a right child");
    node.right = pivot.left.take();
    node.touch(version);
    pivot.left = Some(node);
    pivot.touch(version);
    pivot
}

impl Node {
    fn leaf(key: &[u8], value: &[u8], version: u64) -> Box<Node> {
        Box::new(Node {
            key: key.to_vec(),
            value: value.to_vec(),
            height: 0,
            size: 1,
            version,
            nonce: 0,
            persisted: false,
            hash: [0; HASH_SIZE],
            left: None,
            right: None,
        })
    }

    fn inner(key: Vec<u8>, left: Box<Node>, right: Box<Node>, version: u64) -> Box<Node> {
        let mut node = Node::leaf(&[], &[], version);
        node.key = key;
        node.left = Some(left);
        node.right = Some(right);
        node.touch(version);
        node
    }

    /// This node was copied by `version`: recompute its height and size, and mark it unsaved.
    fn touch(&mut self, version: u64) {
        let (l, r) = (self.left.as_deref(), self.right.as_deref());
        if let (Some(l), Some(r)) = (l, r) {
            self.height = 1 + l.height.max(r.height);
            self.size = l.size + r.size;
        }
        self.version = version;
        self.nonce = 0;
        self.persisted = false;
    }

    fn balance(&self) -> i32 {
        let h = |n: &Option<Box<Node>>| n.as_ref().map_or(-1, |n| i32::from(n.height));
        h(&self.left) - h(&self.right)
    }
}

/// Hash and encode `node` and its unsaved descendants (post-order) into `batch`; its node key
/// and hash. `scratch` is one encoding buffer reused for every node.
fn save_node(
    node: &mut Node,
    version: u64,
    nonce: &mut u32,
    batch: &mut WriteBatch,
    scratch: &mut Vec<u8>,
) -> (NodeKey, [u8; HASH_SIZE]) {
    if node.persisted {
        return ((node.version, node.nonce), node.hash);
    }
    let children = match (node.left.as_deref_mut(), node.right.as_deref_mut()) {
        (Some(l), Some(r)) => {
            let left = save_node(l, version, nonce, batch, scratch);
            let right = save_node(r, version, nonce, batch, scratch);
            Some((left, right))
        }
        _ => None,
    };
    *nonce += 1;
    node.nonce = *nonce;
    node.hash = node_hash(node, children.map(|(l, r)| (l.1, r.1)));
    scratch.clear();
    encode(node, version, children.map(|(l, r)| (l.0, r.0)), scratch);
    batch.put(&[BUCKET], &node_key((version, node.nonce)), scratch);
    node.persisted = true;
    ((version, node.nonce), node.hash)
}

fn node_key((version, nonce): NodeKey) -> [u8; NODE_KEY_SIZE] {
    let mut key = [0u8; NODE_KEY_SIZE];
    key[0] = b'n';
    key[1..9].copy_from_slice(&version.to_be_bytes());
    key[9..].copy_from_slice(&nonce.to_be_bytes());
    key
}

fn root_record_key(version: u64) -> [u8; ROOT_KEY_SIZE] {
    let mut key = [0u8; ROOT_KEY_SIZE];
    key[0] = b'r';
    key[1..].copy_from_slice(&version.to_be_bytes());
    key
}

/// Bytes of `node`'s encoded value, given its children's node keys (inner nodes).
fn encoded_len(node: &Node, version: u64, children: Option<(NodeKey, NodeKey)>) -> usize {
    let common = varint_len(u64::from(node.height))
        + varint_len(node.size)
        + varint_len(version)
        + varint_len(node.key.len() as u64)
        + node.key.len();
    let key_len = |(v, n): NodeKey| varint_len(v) + varint_len(u64::from(n));
    common
        + match children {
            None => varint_len(node.value.len() as u64) + node.value.len(),
            Some((l, r)) => HASH_SIZE + key_len(l) + key_len(r),
        }
}

fn encode(node: &Node, version: u64, children: Option<(NodeKey, NodeKey)>, out: &mut Vec<u8>) {
    put_varint(out, u64::from(node.height));
    put_varint(out, node.size);
    put_varint(out, version);
    put_varint(out, node.key.len() as u64);
    out.extend_from_slice(&node.key);
    match children {
        None => {
            put_varint(out, node.value.len() as u64);
            out.extend_from_slice(&node.value);
        }
        Some(((lv, ln), (rv, rn))) => {
            out.extend_from_slice(&node.hash);
            for v in [lv, u64::from(ln), rv, u64::from(rn)] {
                put_varint(out, v);
            }
        }
    }
    debug_assert_eq!(out.len(), encoded_len(node, version, children));
}

/// FNV-1a over the node's fields (and its children's hashes), spread over 32 bytes.
fn node_hash(node: &Node, children: Option<([u8; HASH_SIZE], [u8; HASH_SIZE])>) -> [u8; HASH_SIZE] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    feed(&[node.height]);
    feed(&node.size.to_le_bytes());
    feed(&node.version.to_le_bytes());
    feed(&node.key);
    match children {
        None => feed(&node.value),
        Some((l, r)) => {
            feed(&l);
            feed(&r);
        }
    }
    let mut out = [0u8; HASH_SIZE];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        let lane = (h ^ (i as u64)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        chunk.copy_from_slice(&lane.to_le_bytes());
    }
    out
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Check `node`'s subtree; its least key.
fn check_node(node: &Node) -> Result<&[u8], String> {
    let (Some(l), Some(r)) = (node.left.as_deref(), node.right.as_deref()) else {
        if node.height != 0 || node.size != 1 || node.left.is_some() || node.right.is_some() {
            return Err(format!("leaf {:02x?} has children or a height", node.key));
        }
        return Ok(&node.key);
    };
    let least = check_node(l)?;
    let right_least = check_node(r)?;
    if right_least != node.key.as_slice() {
        return Err(format!(
            "inner key {:02x?} is not its right subtree's least",
            node.key
        ));
    }
    if greatest(l) >= right_least {
        return Err(format!("keys out of order under {:02x?}", node.key));
    }
    if node.height != 1 + l.height.max(r.height) || node.size != l.size + r.size {
        return Err(format!("height or size wrong at {:02x?}", node.key));
    }
    if node.balance().abs() > 1 {
        return Err(format!("unbalanced at {:02x?}", node.key));
    }
    if node.persisted && !(l.persisted && r.persisted) {
        return Err(format!("persisted {:02x?} has an unsaved child", node.key));
    }
    Ok(least)
}

fn greatest(mut node: &Node) -> &[u8] {
    while let Some(r) = node.right.as_deref() {
        node = r;
    }
    &node.key
}
