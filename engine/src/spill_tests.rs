//! Unit tests of `spill.rs`: which nodes spill compares pair by pair, and that a break in
//! order is a `CrossPageOrder` error wherever it is.

use super::*;

/// Pages from 100 up, images kept, nodes recorded. `last` holds the images of an earlier
/// round, handed back as a page's prior image when asked for.
#[derive(Default)]
struct Sink {
    next: u64,
    images: Vec<Vec<u8>>,
    /// Each image's page and length.
    ids: Vec<(PageId, usize)>,
    emitted: Vec<Node>,
    last: Vec<(PageId, usize, Vec<u8>)>,
    patched: usize,
    /// Allocations for pieces behind the right edge.
    behind: usize,
    /// `fill_percent`, when not 0.5.
    fill: Option<f64>,
}

impl SpillSink for Sink {
    fn page_size(&self) -> u32 {
        512
    }
    fn fill_percent(&self) -> f64 {
        self.fill.unwrap_or(0.5)
    }
    fn allocate(&mut self, count: u64) -> Result<PageId> {
        let id = PageId(100 + self.next);
        self.next += count;
        Ok(id)
    }
    fn allocate_behind_edge(&mut self, count: u64) -> Result<PageId> {
        self.behind += 1;
        self.allocate(count)
    }
    fn free(&mut self, _: PageSpan) -> Result<()> {
        Ok(())
    }
    fn image(
        &mut self,
        id: PageId,
        pages: u64,
        len: usize,
        prior: Option<PageId>,
    ) -> (&mut [u8], Option<usize>) {
        let old = prior.and_then(|p| self.last.iter().find(|(id, ..)| *id == p));
        let (image, old_len) = match old {
            Some((_, old_len, image)) => (image.clone(), Some(*old_len)),
            None => (vec![0; pages as usize * 512], None),
        };
        self.patched += usize::from(old_len.is_some());
        self.images.push(image);
        self.ids.push((id, len));
        (self.images.last_mut().expect("just pushed"), old_len)
    }
    fn emit(&mut self, _: PageId, node: Node, _: PageId) {
        self.emitted.push(node);
    }
    fn count_split(&mut self) {}
    fn count_merge(&mut self) {}
}

fn leaf(keys: &[&str], read_from: Option<u64>, unbalanced: bool) -> Node {
    let items = keys
        .iter()
        .map(|k| crashlab_format::node::LeafItem::new(0, k.as_bytes(), b"v"))
        .collect();
    Node {
        read_from: read_from.map(PageId),
        unbalanced,
        ..Node::built(Body::Leaf(items))
    }
}

fn branch(items: Vec<(&str, Child)>, read_from: Option<u64>) -> Node {
    let items = items
        .into_iter()
        .map(|(k, child)| BranchItem {
            key: k.as_bytes().to_vec(),
            child,
        })
        .collect();
    Node {
        read_from: read_from.map(PageId),
        ..Node::built(Body::Branch(items))
    }
}

fn spilled(root: Node) -> Result<(PageId, Sink)> {
    let mut sink = Sink::default();
    let id = spill_root(Child::Node(Box::new(root)), &mut sink, PageId(3))?;
    Ok((id, sink))
}

fn is_cross_page_order(r: Result<(PageId, Sink)>) -> bool {
    matches!(
        r,
        Err(Error::Format(crate::error::FormatError::Corrupted {
            reason: Corruption::CrossPageOrder,
            ..
        }))
    )
}

#[test]
fn a_tree_in_order_spills_every_node_in_order() {
    let child = leaf(&["d", "e", "f"], Some(7), false);
    let root = branch(
        vec![
            ("a", Child::Page(PageId(5))),
            ("d", Child::Node(Box::new(child))),
            ("m", Child::Page(PageId(6))),
        ],
        Some(4),
    );
    let (id, sink) = spilled(root).unwrap();
    assert_eq!(id, PageId(101), "the leaf first, then its parent");
    assert_eq!(sink.emitted.len(), 2);
    for n in &sink.emitted {
        let keys: Vec<&[u8]> = (0..n.len())
            .map(|i| match &n.body {
                Body::Leaf(items) => items[i].key(),
                Body::Branch(items) => &items[i].key[..],
            })
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    }
}

/// A branch taken from a page is not compared pair by pair, but the pairs around a child
/// replaced by its pieces are: here the separators themselves disagree (only a damaged tree
/// reaches spill so), and the child's piece lands below its left neighbour.
#[test]
fn a_replaced_child_out_of_order_with_its_neighbour_is_refused() {
    let child = leaf(&["b"], Some(7), false);
    let root = branch(
        vec![
            ("d", Child::Page(PageId(5))),
            ("b", Child::Node(Box::new(child))),
        ],
        Some(4),
    );
    assert!(is_cross_page_order(spilled(root)));
}

/// A merge or a delete marks a node unbalanced; such a node is compared pair by pair (a merge
/// of a damaged tree's siblings can break its order).
#[test]
fn an_unbalanced_node_out_of_order_is_refused() {
    assert!(is_cross_page_order(spilled(leaf(
        &["b", "a"],
        Some(7),
        true
    ))));
    // So is a node built in memory, with no page.
    assert!(is_cross_page_order(spilled(leaf(&["b", "a"], None, false))));
    assert!(spilled(leaf(&["a", "b"], Some(7), true)).is_ok());
}

/// Round two rewrites the branch of round one: spill hands the sink the page it was read from,
/// gets its last image back, and rewrites the page ids (and a separator of the same length)
/// in it; the result decodes to the node spill emitted. (The debug assertion in `write_piece`
/// compares it with a fresh encoding too.)
#[test]
fn a_branch_with_its_keys_kept_is_patched_over_its_last_image() {
    let child = leaf(&["a", "b"], Some(7), false);
    let root = branch(
        vec![
            ("a", Child::Node(Box::new(child))),
            ("d", Child::Page(PageId(5))),
            ("m", Child::Page(PageId(6))),
        ],
        Some(4),
    );
    let (_, first) = spilled(root).unwrap();
    assert_eq!(first.patched, 0, "no image of page 4 to patch");
    let last: Vec<(PageId, usize, Vec<u8>)> = (first.ids.iter().copied().zip(first.images))
        .map(|((id, len), image)| (id, len, image))
        .collect();
    // Round two: the branch as round one wrote it (page 101), its first child rewritten with
    // its first key deleted: the separator "a" becomes "b", of the same length.
    for (keys, patched) in [
        (&["a", "b", "c"][..], 1),
        (&["b", "c"][..], 1),
        (&["bb"][..], 0),
    ] {
        let mut again = first.emitted[1].clone();
        assert_eq!(again.read_from, Some(PageId(101)));
        if let Body::Branch(items) = &mut again.body {
            items[0].child = Child::Node(Box::new(leaf(keys, Some(100), false)));
        }
        let mut sink = Sink {
            last: last.clone(),
            ..Sink::default()
        };
        let id = spill_root(Child::Node(Box::new(again)), &mut sink, PageId(3)).unwrap();
        assert_eq!(sink.patched, patched, "{keys:?}");
        let image = sink.images.last().unwrap();
        let decoded = Node::decode(image, id, id).unwrap();
        assert_eq!(decoded.body, sink.emitted.last().unwrap().body, "{keys:?}");
        let Body::Branch(items) = &decoded.body else {
            panic!("a branch");
        };
        assert_eq!(items[0].key, keys[0].as_bytes());
        assert_eq!(items[0].child, Child::Page(PageId(100)));
    }
}

/// A leaf the last round wrote, changed by one edit (through `LeafItems`, which records it),
/// is patched over its last image as its parent is; both decode to the nodes spill emitted.
#[test]
fn a_leaf_with_one_edit_is_patched_over_its_last_image() {
    let child = leaf(&["a", "b", "d"], Some(7), false);
    let root = branch(vec![("a", Child::Node(Box::new(child)))], Some(4));
    let (_, first) = spilled(root).unwrap();
    let last: Vec<(PageId, usize, Vec<u8>)> = (first.ids.iter().copied().zip(first.images))
        .map(|((id, len), image)| (id, len, image))
        .collect();
    let edits: [fn(&mut crate::leaf_edit::LeafItems<'_>); 3] = [
        |items| {
            let at = items.search(b"c").unwrap_err();
            items.insert(at, first_item(b"c"));
        },
        |items| items.set_value(1, b"a longer value"),
        |items| items.remove(2),
    ];
    for edit in edits {
        let mut written = first.emitted[0].clone();
        assert_eq!(written.origin.map(|s| s.start), Some(PageId(100)));
        edit(&mut crate::leaf_edit::LeafItems::of(&mut written));
        let mut parent = first.emitted[1].clone();
        if let Body::Branch(items) = &mut parent.body {
            items[0].child = Child::Node(Box::new(written));
        }
        let mut sink = Sink {
            last: last.clone(),
            ..Sink::default()
        };
        spill_root(Child::Node(Box::new(parent)), &mut sink, PageId(3)).unwrap();
        assert_eq!(sink.patched, 2, "the leaf and its parent");
        for ((id, _), (image, node)) in sink.ids.iter().zip(sink.images.iter().zip(&sink.emitted)) {
            assert_eq!(Node::decode(image, *id, *id).unwrap().body, node.body);
        }
    }
}

fn first_item(key: &[u8]) -> crashlab_format::node::LeafItem {
    crashlab_format::node::LeafItem::new(0, key, b"v")
}

/// A leaf read from page 9 holding keys `k000`, `k001`, … (21 bytes an item), its record of
/// appends as given.
fn grown_leaf(n: usize, appended_only: bool) -> Node {
    let keys: Vec<String> = (0..n).map(|i| format!("k{i:03}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    Node {
        appended_only,
        ..leaf(&keys, Some(9), false)
    }
}

/// The item counts of the leaves `sink` was handed, in order.
fn leaf_pieces(sink: &Sink) -> Vec<usize> {
    let count = |n: &Node| match &n.body {
        Body::Leaf(items) => Some(items.len()),
        Body::Branch(_) => None,
    };
    sink.emitted.iter().filter_map(count).collect()
}

/// 40 items of 21 bytes on 512-byte pages (16-byte header), split while the rest does not fit a
/// page: at `fill_percent` 0.5 a piece takes items up to 256 bytes, 11 of them, so 11, 11 and
/// the 18 left; at the right edge's 0.9, up to 460 bytes, so 21 and the 19 left.
#[test]
fn a_leaf_at_the_right_edge_grown_only_at_its_end_splits_full_behind_the_edge() {
    let (_, sink) = spilled(grown_leaf(40, true)).unwrap();
    assert_eq!(leaf_pieces(&sink), [21, 19], "the rest fits a page");
    assert_eq!(sink.behind, 1, "the full piece is placed behind the edge");
    assert!(
        sink.emitted.iter().all(|n| n.appended_only),
        "each piece starts a record"
    );
}

#[test]
fn a_fill_percent_above_the_right_edges_is_kept_there() {
    let mut sink = Sink {
        fill: Some(1.0),
        ..Sink::default()
    };
    spill_root(
        Child::Node(Box::new(grown_leaf(40, true))),
        &mut sink,
        PageId(3),
    )
    .unwrap();
    // 23 items take 499 bytes of 512.
    assert_eq!(leaf_pieces(&sink), [23, 17]);
}

#[test]
fn any_other_leaf_splits_at_fill_percent_with_the_commits_pages() {
    let (_, sink) = spilled(grown_leaf(40, false)).unwrap();
    assert_eq!(
        leaf_pieces(&sink),
        [11, 11, 18],
        "an insert before its last key"
    );
    assert_eq!(sink.behind, 0);
    // Grown only at its end, but a separator bounds it above: not the right edge.
    let left = Child::Node(Box::new(grown_leaf(40, true)));
    let root = branch(vec![("k", left), ("z", Child::Page(PageId(50)))], Some(8));
    let (_, sink) = spilled(root).unwrap();
    assert_eq!(leaf_pieces(&sink), [11, 11, 18]);
    assert_eq!(sink.behind, 0);
}

#[test]
fn a_leaf_written_whole_hands_its_record_of_appends_on() {
    for appended_only in [false, true] {
        let (_, sink) = spilled(grown_leaf(5, appended_only)).unwrap();
        assert_eq!(sink.emitted[0].appended_only, appended_only);
    }
}
