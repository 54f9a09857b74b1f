//! Tests of `node.rs`: the byte layout, decoding damaged elements, and what encoding refuses.

use super::*;

fn leaf(pairs: &[(&[u8], &[u8])]) -> Node {
    let items = pairs.iter().map(|(k, v)| LeafItem::new(0, k, v)).collect();
    Node::built(Body::Leaf(items))
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
    let n = Node::built(Body::Branch(items));
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
        items[0] = LeafItem::new(LEAF_FLAG_BUCKET, b"k", &[0; BUCKET_HEADER_SIZE - 1]);
    }
    let short = Corruption::BucketValueTooShort { element: 0 };
    assert_eq!(n.unencodable(), Some(short));
    let branch = Node::built(Body::Branch(vec![BranchItem {
        key: b"k".to_vec(),
        child: Child::Node(Box::default()),
    }]));
    let unspilled = Corruption::ChildNotSpilled { element: 0 };
    assert_eq!(branch.unencodable(), Some(unspilled));
    let many = Node {
        body: Body::Leaf(
            (0..=u16::MAX as u32 + 1)
                .map(|i| LeafItem::new(0, &i.to_be_bytes(), b""))
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
    let branch = Node::built(Body::Branch(vec![
        BranchItem {
            key: b"a".to_vec(),
            child: Child::Page(PageId(7)),
        },
        BranchItem {
            key: b"mm".to_vec(),
            child: Child::Page(PageId(9)),
        },
    ]));
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

/// The element layout written one field at a time, as the encoder first did: the reference for
/// the encoder that writes each element in one piece.
fn reference_image(n: &Node, id: PageId, len: usize, page_size: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let count = n.len();
    page::write_u64(&mut buf, 0, id.0);
    let flags = if n.is_leaf() { FLAG_LEAF } else { FLAG_BRANCH };
    page::write_u16(&mut buf, 8, flags);
    page::write_u16(&mut buf, 10, count as u16);
    page::write_u32(&mut buf, 12, (len.div_ceil(page_size) - 1) as u32);
    let mut data = table_end(count);
    for i in 0..count {
        let elem = table_end(i);
        let (key, value, flags, child) = match &n.body {
            Body::Leaf(items) => (items[i].key(), items[i].value(), items[i].flags, None),
            Body::Branch(items) => match items[i].child {
                Child::Page(id) => (&items[i].key[..], &[][..], 0, Some(id)),
                Child::Node(_) => unreachable!("encodable"),
            },
        };
        match child {
            None => {
                page::write_u32(&mut buf, elem, flags);
                page::write_u32(&mut buf, elem + 4, (data - elem) as u32);
                page::write_u32(&mut buf, elem + 8, key.len() as u32);
                page::write_u32(&mut buf, elem + 12, value.len() as u32);
            }
            Some(child) => {
                page::write_u32(&mut buf, elem, (data - elem) as u32);
                page::write_u32(&mut buf, elem + 4, key.len() as u32);
                page::write_u64(&mut buf, elem + 8, child.0);
            }
        }
        buf[data..data + key.len()].copy_from_slice(key);
        buf[data + key.len()..data + key.len() + value.len()].copy_from_slice(value);
        data += key.len() + value.len();
    }
    buf
}

/// A node of ascending keys (short ones included, the first sometimes empty), now and then
/// with what encoding must refuse: bad leaf flags, a short bucket value, an unspilled child.
fn random_node(seed: &mut u64) -> Node {
    let mut next = |n: u64| {
        *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (*seed >> 33) % n
    };
    let count = next(40) as usize;
    let mut keys: Vec<Vec<u8>> = (0..count)
        .map(|_| (0..next(20)).map(|_| next(256) as u8).collect())
        .collect();
    keys.sort();
    keys.dedup();
    let leaf = next(2) == 0;
    let body = if leaf {
        Body::Leaf(
            keys.into_iter()
                .map(|key| {
                    let flags = match next(100) {
                        0 => 2,
                        1..=20 => LEAF_FLAG_BUCKET,
                        _ => 0,
                    };
                    LeafItem::new(flags, &key, &vec![7; next(40) as usize])
                })
                .collect(),
        )
    } else {
        Body::Branch(
            keys.into_iter()
                .map(|key| BranchItem {
                    key,
                    child: match next(200) {
                        0 => Child::Node(Box::default()),
                        n => Child::Page(PageId(n)),
                    },
                })
                .collect(),
        )
    };
    Node {
        body,
        ..Node::empty_leaf()
    }
}

/// `encode_in_order` refuses exactly what `encode` refuses for ascending keys, and writes the
/// bytes the field-by-field layout gives, over a dirty buffer as over a zeroed one.
#[test]
fn encode_in_order_agrees_with_encode_and_the_reference_layout() {
    let mut seed = 20;
    let mut written = 0;
    for _ in 0..2_000 {
        let n = random_node(&mut seed);
        let size = n.size();
        let len = size.div_ceil(512).max(1) * 512;
        let mut fast = vec![0xAAu8; len];
        fast[size..].fill(0);
        let mut checked = vec![0u8; len];
        let got = n.encode_in_order(&mut fast, PageId(6), 512, size);
        assert_eq!(got, n.encode(&mut checked, PageId(6), 512), "{n:?}");
        if got.is_ok() {
            assert_eq!(fast, checked);
            assert_eq!(fast, reference_image(&n, PageId(6), len, 512));
            written += 1;
        }
    }
    assert!(written > 500, "most random nodes are encodable: {written}");
}

/// An item keeps its key and value apart in its one buffer: a value replaced in place or
/// resized leaves the key as it was, and two items whose bytes join to the same string but
/// split it differently are different items.
#[test]
fn an_item_keeps_key_and_value_apart_in_one_buffer() {
    let mut it = LeafItem::new(0, b"key", b"abc");
    assert_eq!(
        (it.key(), it.value(), it.bytes()),
        (&b"key"[..], &b"abc"[..], &b"keyabc"[..])
    );
    it.set_value(b"xyz");
    assert_eq!((it.key(), it.value()), (&b"key"[..], &b"xyz"[..]));
    it.set_value(b"a longer value");
    assert_eq!(
        (it.key(), it.value()),
        (&b"key"[..], &b"a longer value"[..])
    );
    it.set_value(b"");
    assert_eq!(
        (it.key(), it.value(), it.bytes()),
        (&b"key"[..], &b""[..], &b"key"[..])
    );
    assert_ne!(LeafItem::new(0, b"ab", b"c"), LeafItem::new(0, b"a", b"bc"));
    assert_ne!(
        LeafItem::new(0, b"a", b"b"),
        LeafItem::new(LEAF_FLAG_BUCKET, b"a", b"b")
    );
    assert_eq!(LeafItem::new(0, b"a", b"bc"), LeafItem::new(0, b"a", b"bc"));
}
