//! Tests of `node.rs`: the byte layout, decoding damaged elements, and what encoding refuses.

use super::*;

fn leaf(pairs: &[(&[u8], &[u8])]) -> Node {
    let items = pairs
        .iter()
        .map(|(k, v)| LeafItem {
            flags: 0,
            key: k.to_vec(),
            value: v.to_vec(),
        })
        .collect();
    Node {
        origin: None,
        read_from: None,
        unbalanced: false,
        body: Body::Leaf(items),
    }
}

fn decoded(buf: &[u8], id: u64) -> Node {
    let n = Node::decode(buf, PageId(id), PageId(id)).unwrap();
    assert_eq!(
        n.read_from,
        Some(PageId(id)),
        "a decoded node names its page"
    );
    Node {
        read_from: None,
        ..n
    }
}

#[test]
fn leaf_layout_matches_bbolt_by_hand() {
    // Two elements: header 16 + 2×16 element headers = data starts at 48.
    // elem 0 at 16: pos = 48 - 16 = 32; "ab"+"xyz" at 48..53.
    // elem 1 at 32: pos = 53 - 32 = 21; "c"+"" at 53..54.
    let n = leaf(&[(b"ab", b"xyz"), (b"c", b"")]);
    assert_eq!(n.size(), 54);
    let mut buf = vec![0u8; 4096];
    n.encode(&mut buf, PageId(9), 4096).unwrap();
    assert_eq!(page::read_u64(&buf, 0), 9);
    assert_eq!(page::read_u16(&buf, 8), FLAG_LEAF);
    assert_eq!(page::read_u16(&buf, 10), 2);
    assert_eq!(page::read_u32(&buf, 12), 0);
    assert_eq!(page::read_u32(&buf, 16 + 4), 32);
    assert_eq!(page::read_u32(&buf, 16 + 8), 2);
    assert_eq!(page::read_u32(&buf, 16 + 12), 3);
    assert_eq!(page::read_u32(&buf, 32 + 4), 21);
    assert_eq!(&buf[48..54], b"abxyzc");
    assert_eq!(decoded(&buf, 9), n);
}

#[test]
fn branch_round_trips_and_overflow_is_set() {
    let items = (0..3u8)
        .map(|i| BranchItem {
            key: vec![b'k', i],
            child: Child::Page(PageId(10 + u64::from(i))),
        })
        .collect();
    let n = Node {
        origin: None,
        read_from: None,
        unbalanced: false,
        body: Body::Branch(items),
    };
    let mut buf = vec![0u8; 3 * 512];
    n.encode(&mut buf, PageId(4), 512).unwrap();
    assert_eq!(page::read_u32(&buf, 12), 2, "two overflow pages");
    assert_eq!(decoded(&buf, 4), n);
}

#[test]
fn corrupt_elements_are_errors() {
    let n = leaf(&[(b"a", b"1"), (b"b", b"2")]);
    let mut buf = vec![0u8; 512];
    n.encode(&mut buf, PageId(5), 512).unwrap();
    let mut bad = buf.clone();
    page::write_u32(&mut bad, 16 + 12, u32::MAX); // vsize
    assert!(Node::decode(&bad, PageId(5), PageId(5))
        .unwrap_err()
        .to_string()
        .contains("overruns"));
    let mut bad = buf.clone();
    page::write_u16(&mut bad, 10, 0xFFFE); // count
    assert!(Node::decode(&bad, PageId(5), PageId(5)).is_err());
    let mut bad = buf.clone();
    bad[16 + 32] = b'z'; // first key now after the second
    assert!(Node::decode(&bad, PageId(5), PageId(5))
        .unwrap_err()
        .to_string()
        .contains("order"));
    let mut bad = buf.clone();
    page::write_u32(&mut bad, 16, 0x2); // unknown leaf flag
    assert!(Node::decode(&bad, PageId(5), PageId(5)).is_err());
    let mut bad = buf.clone();
    page::write_u32(&mut bad, 16, LEAF_FLAG_BUCKET); // bucket value shorter than a header
    assert!(Node::decode(&bad, PageId(5), PageId(5)).is_err());
    // Element 1 points back at element 0's bytes: "a" + "1b2" overlaps "b" + "2".
    let mut bad = buf;
    page::write_u32(&mut bad, 16 + 4, 32); // elem 0 at 16: key at 48
    page::write_u32(&mut bad, 16 + 12, 3); // value "1b2"
    page::write_u32(&mut bad, 32 + 4, 18); // elem 1 at 32: key at 50 = "b"
    page::write_u16(&mut bad, 10, 2);
    let n = Node::decode(&bad[..53], PageId(5), PageId(5));
    let reason = n.unwrap_err().corruption().cloned();
    assert_eq!(
        reason,
        Some(Corruption::ElementsOverlap {
            claimed: 54,
            available: 53
        })
    );
}

#[test]
fn encode_refuses_what_decode_would_reject_and_writes_nothing() {
    let mut n = leaf(&[(b"b", b"1"), (b"a", b"2")]);
    let mut buf = vec![0xAAu8; 512];
    let err = n.encode(&mut buf, PageId(5), 512).unwrap_err();
    assert_eq!(err, Corruption::KeysOutOfOrder { element: 1 });
    assert!(buf.iter().all(|&b| b == 0xAA), "nothing written");
    n = leaf(&[(b"a", b"1"), (b"a", b"2")]);
    assert_eq!(
        n.unencodable(),
        Some(Corruption::KeysOutOfOrder { element: 1 })
    );
    n = leaf(&[(b"", b"1")]);
    assert_eq!(n.unencodable(), Some(Corruption::EmptyKey { element: 0 }));
    if let Body::Leaf(items) = &mut n.body {
        items[0] = LeafItem {
            flags: LEAF_FLAG_BUCKET,
            key: b"k".to_vec(),
            value: vec![0; BUCKET_HEADER_SIZE - 1],
        };
    }
    let short = Corruption::BucketValueTooShort { element: 0 };
    assert_eq!(n.unencodable(), Some(short));
    let branch = Node {
        origin: None,
        read_from: None,
        unbalanced: false,
        body: Body::Branch(vec![BranchItem {
            key: b"k".to_vec(),
            child: Child::Node(Box::new(Node::empty_leaf())),
        }]),
    };
    let unspilled = Corruption::ChildNotSpilled { element: 0 };
    assert_eq!(branch.unencodable(), Some(unspilled));
    let many = Node {
        body: Body::Leaf(
            (0..=u16::MAX as u32 + 1)
                .map(|i| LeafItem {
                    flags: 0,
                    key: i.to_be_bytes().to_vec(),
                    value: Vec::new(),
                })
                .collect(),
        ),
        ..Node::empty_leaf()
    };
    let count = u16::MAX as usize + 2;
    let overflow = Corruption::ElementCountOverflow { count };
    assert_eq!(many.unencodable(), Some(overflow));
}

#[test]
fn image_extent_follows_the_elements_not_the_run() {
    let n = leaf(&[(b"ab", b"xyz"), (b"c", b"")]);
    let mut buf = vec![0u8; 4096];
    n.encode(&mut buf, PageId(9), 4096).unwrap();
    assert_eq!(image_extent(&buf, PageKind::Leaf, 2, 4096), Ok(54));
    // A claimed run of a million pages does not change what the elements use.
    assert_eq!(image_extent(&buf, PageKind::Leaf, 2, 1 << 32), Ok(54));
    page::write_u32(&mut buf, 16 + 12, 5000); // elem 0's value reaches past the run
    let err = image_extent(&buf, PageKind::Leaf, 2, 4096);
    assert_eq!(err, Err(Corruption::ElementOverrun { offset: 16 }));
}

#[test]
fn split_follows_fill_percent_and_keeps_two_keys() {
    // 10 items of 416 bytes (16 + 400) in 4096-byte pages at 50 %: a piece takes items while
    // 16 + Σ ≤ 2048 → 4 items (1680; a fifth would make 2096).
    let sizes = vec![416; 10];
    assert_eq!(split_points(&sizes, 4096, 0.5), vec![4]);
    // Small enough to fit: no split.
    assert!(split_points(&[100; 10], 4096, 0.5).is_empty());
    // Four huge items never split (fewer than 5 items).
    assert!(split_points(&[100_000; 4], 4096, 0.5).is_empty());
    // Five huge items: the first piece keeps 2 items, the remainder 3 stays whole.
    assert_eq!(split_points(&[100_000; 5], 4096, 0.5), vec![2]);
}

/// The engine encodes into reused buffers and zeroes only what lies past `size()`: that is
/// sound only if `encode` writes every byte before it. Encoding over 0xAA and over zeros must
/// give the same first `size()` bytes, and leave the rest alone.
#[test]
fn encode_writes_every_byte_up_to_its_size() {
    let branch = Node {
        origin: None,
        read_from: None,
        unbalanced: false,
        body: Body::Branch(vec![
            BranchItem {
                key: b"a".to_vec(),
                child: Child::Page(PageId(7)),
            },
            BranchItem {
                key: b"mm".to_vec(),
                child: Child::Page(PageId(9)),
            },
        ]),
    };
    for n in [
        leaf(&[(b"ab", b"xyz"), (b"c", b""), (b"d", &[0; 40])]),
        branch,
    ] {
        let mut zeroed = vec![0u8; 512];
        let mut dirty = vec![0xAAu8; 512];
        n.encode(&mut zeroed, PageId(4), 512).unwrap();
        n.encode(&mut dirty, PageId(4), 512).unwrap();
        let size = n.size();
        assert_eq!(zeroed[..size], dirty[..size]);
        assert!(dirty[size..].iter().all(|&b| b == 0xAA));
    }
}
