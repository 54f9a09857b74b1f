//! The spare shells: a node the writer takes out of the cache leaves its `Arc` for the next
//! commit to publish a node in, and the box the writer's tree held it in comes back for the
//! next node taken; a node a reader still holds is copied and leaves nothing; spares are bounded.

use super::*;
use crate::storage::MemStorage;
use crashlab_format::node::{Body, LeafItem};

const PAGE: u32 = 4096;
const HIGH: PageId = PageId(8);
const FROM: PageId = PageId(0);

/// A pager over a file of 8 pages whose pages 3 and 4 are one-item leaves.
fn pager() -> Pager {
    let mut bytes = vec![0u8; 8 * PAGE as usize];
    for id in [3u64, 4] {
        let node = Node::built(Body::Leaf(vec![LeafItem::new(0, &[b'k', id as u8], b"v")]));
        let at = id as usize * PAGE as usize;
        let page = &mut bytes[at..at + PAGE as usize];
        node.encode_in_order(page, PageId(id), PAGE, node.size())
            .expect("a one-item leaf encodes");
    }
    Pager::new(Box::new(MemStorage::from_bytes(bytes)), PAGE, 16)
}

fn cached_ptr(pager: &Pager, id: PageId) -> *const CachedNode {
    Arc::as_ptr(&pager.node(id, HIGH, FROM).expect("page reads"))
}

#[test]
fn a_taken_node_leaves_its_allocations_for_the_next_commit() {
    let pager = pager();
    let shell_ptr = cached_ptr(&pager, PageId(3));
    let mut taken = pager.node_for_update(PageId(3), HIGH, FROM).unwrap();
    assert_eq!(taken.first_key(), Some(&b"k\x03"[..]));
    let box_ptr: *const Node = &*taken;

    // The cache's Arc is lent to the commit, emptied.
    let mut lent = Vec::new();
    pager.lend_spares(&mut lent);
    assert_eq!(lent.len(), 1);
    assert_eq!(Arc::as_ptr(&lent[0]), shell_ptr);
    assert!(lent[0].is_empty() && !lent[0].is_indexed());

    // The commit publishes the node in that shell and gives the emptied box back ...
    let mut shell = lent.pop().unwrap();
    let node = std::mem::take(&mut *taken);
    Arc::get_mut(&mut shell).unwrap().refill(node);
    let mut boxes = vec![taken];
    pager.publish([(PageId(3), shell)].into_iter(), &mut boxes);
    assert!(boxes.is_empty());
    assert_eq!(cached_ptr(&pager, PageId(3)), shell_ptr);

    // ... which holds the next node taken from the cache.
    let again = pager.node_for_update(PageId(3), HIGH, FROM).unwrap();
    assert_eq!(&*again as *const Node, box_ptr);
    assert_eq!(again.first_key(), Some(&b"k\x03"[..]));
}

#[test]
fn a_node_a_reader_holds_is_copied_and_leaves_no_spare() {
    let pager = pager();
    let held = pager.node(PageId(4), HIGH, FROM).unwrap();
    let taken = pager.node_for_update(PageId(4), HIGH, FROM).unwrap();
    assert_eq!(taken.first_key(), held.first_key());
    let mut lent = Vec::new();
    pager.lend_spares(&mut lent);
    assert!(lent.is_empty(), "the reader's node is still whole");
    assert_eq!(held.first_key(), Some(&b"k\x04"[..]));
}

#[test]
fn spares_are_bounded() {
    let pager = pager();
    let mut boxes: Vec<Box<Node>> = (0..3 * SPARES_MAX).map(|_| Box::default()).collect();
    pager.publish(std::iter::empty(), &mut boxes);
    assert!(boxes.is_empty());
    assert_eq!(pager.lock().spares.boxes.len(), SPARES_MAX);
    let mut lent: Vec<Arc<CachedNode>> = (0..SPARES_MAX - 1)
        .map(|_| Arc::new(CachedNode::new(Node::empty_leaf())))
        .collect();
    let _ = pager.node(PageId(3), HIGH, FROM).unwrap();
    let _ = pager.node(PageId(4), HIGH, FROM).unwrap();
    drop(pager.node_for_update(PageId(3), HIGH, FROM).unwrap());
    drop(pager.node_for_update(PageId(4), HIGH, FROM).unwrap());
    pager.lend_spares(&mut lent);
    assert_eq!(lent.len(), SPARES_MAX, "a lender tops up to the bound");
    assert_eq!(pager.lock().spares.cached.len(), 1, "the rest stays");
}
