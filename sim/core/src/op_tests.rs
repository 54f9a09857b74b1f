//! Unit tests of `op.rs` (kept apart so the module reads at once).

use super::*;

#[test]
fn every_op_round_trips_through_text() {
    let p = vec![Name::new("a"), Name::new(vec![0u8, 255])];
    let ops = [
        Op::CreateBucket(p.clone()),
        Op::DeleteBucket(p.clone()),
        Op::Put {
            path: p.clone(),
            key: Name::new("k1"),
            len: 300,
            version: 7,
        },
        Op::Delete {
            path: p.clone(),
            key: Name::new("0xzz-literal"),
        },
        Op::Get {
            path: p.clone(),
            key: Name::new(vec![1u8]),
        },
        Op::Scan { path: p.clone() },
        Op::Range {
            path: p.clone(),
            range: KeyRange::default(),
        },
        Op::Range {
            path: p.clone(),
            range: KeyRange {
                from: Some(Name::new("k1")),
                to: Some(Name::new(vec![9u8])),
                reverse: true,
                limit: Some(3),
            },
        },
        Op::Range {
            path: p.clone(),
            range: KeyRange {
                to: Some(Name::new("k5")),
                limit: Some(0),
                ..KeyRange::default()
            },
        },
        Op::NextSequence { path: p.clone() },
        Op::SetSequence {
            path: p,
            value: u64::MAX,
        },
        Op::Check,
        Op::Commit,
        Op::Rollback,
        Op::BeginReader,
        Op::EndReader(3),
        Op::Reopen,
        Op::Crash,
        Op::PowerCutIn(4),
        Op::Group {
            callers: 7,
            calls: 1,
            seed: 99,
            schedule: None,
        },
        Op::Group {
            callers: 64,
            calls: 20,
            seed: 5,
            schedule: None,
        },
        Op::Group {
            callers: 3,
            calls: 2,
            seed: 5,
            schedule: Some("0+1/2/0+2/1".parse().unwrap()),
        },
    ];
    for op in ops {
        let text = op.to_string();
        assert_eq!(text.parse::<Op>(), Ok(op.clone()), "{text}");
        // The whole first word: the coverage signature counts operation kinds by `kind`.
        assert_eq!(text.split(' ').next(), Some(op.kind()), "{text}");
    }
    assert_eq!(
        Op::CreateBucket(vec![Name::new(vec![0u8, 255])]).to_string(),
        "create 0x00ff"
    );
}

#[test]
fn bad_lines_say_what_was_expected() {
    assert!("put a k"
        .parse::<Op>()
        .unwrap_err()
        .contains("put PATH KEY len=N v=N"));
    assert!("put a k len=x v=1"
        .parse::<Op>()
        .unwrap_err()
        .contains("not a number"));
    assert!("frobnicate"
        .parse::<Op>()
        .unwrap_err()
        .contains("unknown operation"));
    assert!("get a 0x1".parse::<Op>().unwrap_err().contains("even"));
    assert!("get a/ k".parse::<Op>().unwrap_err().contains("must be"));
    assert!("range a rev from=k"
        .parse::<Op>()
        .unwrap_err()
        .contains("in order"));
    assert!("range".parse::<Op>().unwrap_err().contains("range PATH"));
    assert!("set-seq a -1".parse::<Op>().unwrap_err().contains("u64"));
}

#[test]
fn a_range_selects_like_a_cursor_reads() {
    let listing: Vec<(Vec<u8>, u8)> = (1..=5u8).map(|i| (vec![i], i)).collect();
    let keys = |r: KeyRange| -> Vec<u8> { r.select(&listing).iter().map(|x| x.1).collect() };
    let name = |b: u8| Some(Name::new(vec![b]));
    assert_eq!(keys(KeyRange::default()), [1, 2, 3, 4, 5]);
    let mid = KeyRange {
        from: name(2),
        to: name(5),
        ..KeyRange::default()
    };
    assert_eq!(keys(mid.clone()), [2, 3, 4], "from inclusive, to exclusive");
    let back = KeyRange {
        reverse: true,
        limit: Some(2),
        ..mid
    };
    assert_eq!(keys(back), [4, 3]);
    let absent = KeyRange {
        from: Some(Name::new(vec![3, 0])),
        limit: Some(1),
        ..KeyRange::default()
    };
    assert_eq!(
        keys(absent),
        [4],
        "a seek to an absent key lands on the next"
    );
}

#[test]
fn values_depend_on_key_length_and_version() {
    let k = Name::new("k");
    assert_eq!(value_bytes(&k, 10, 1).len(), 10);
    assert_ne!(value_bytes(&k, 10, 1), value_bytes(&k, 10, 2));
    assert_eq!(value_bytes(&k, 10, 1), value_bytes(&k, 10, 1));
}

/// Values are built in `u16` arithmetic; they must stay the bytes of the `u32` definition (every
/// saved case's image depends on them), also past 65,536 bytes, where the `u16` index wraps.
#[test]
fn values_are_the_u32_definition() {
    let definition = |key: &Name, len: u32, version: u32| -> Vec<u8> {
        let seed = key
            .0
            .iter()
            .fold(version.wrapping_mul(2_654_435_761), |h, &b| {
                h.rotate_left(5) ^ u32::from(b)
            });
        (0..len)
            .map(|i| (seed.wrapping_add(i.wrapping_mul(31)) >> 3) as u8)
            .collect()
    };
    for (key, version) in [("k", 1), ("k47", 9_999), ("", u32::MAX), ("big12", 1 << 30)] {
        let key = Name::new(key);
        for len in [0, 1, 15, 16, 17, 300, 2_049, 70_001] {
            assert_eq!(
                value_bytes(&key, len, version),
                definition(&key, len, version),
                "{key} len={len} v={version}"
            );
        }
    }
}

/// The hex of a name that is not plain, and a path's text, are what the formatting machinery
/// wrote before they were written by hand: every trace hash and case file depends on them.
#[test]
fn names_and_paths_print_as_the_formatting_machinery_does() {
    for len in [1usize, 2, 31, 32, 33, 64, 65, 200] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
        let reference: String = std::iter::once("0x".to_string())
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        let name = Name::new(bytes.clone());
        assert!(!name.plain(), "length {len} is hex");
        assert_eq!(name.to_string(), reference, "length {len}");
    }
    let every_byte = Name::new((0..=255u8).collect::<Vec<u8>>());
    let reference: String = (0..=255u8).map(|b| format!("{b:02x}")).collect();
    assert_eq!(every_byte.to_string(), format!("0x{reference}"));
    let path = vec![Name::new("a"), Name::new(vec![0u8, 0xff]), Name::new("b.c")];
    let joined = path
        .iter()
        .map(Name::to_string)
        .collect::<Vec<_>>()
        .join("/");
    assert_eq!(joined, "a/0x00ff/b.c");
    assert_eq!(path_to_string(&path), joined);
    assert_eq!(PathText(&path).to_string(), joined);
    assert_eq!(path_to_string(&Vec::new()), "");
}

/// Any line of operation names and operand-like words parses to an operation or is refused,
/// and never panics (regression 017: four operations read their path before they counted the
/// words); what parses prints back as the same operation.
mod any_line {
    use super::*;
    use proptest::prelude::*;

    /// Every operation's name, and two that are none.
    fn heads() -> Vec<&'static str> {
        OP_NAMES.iter().copied().chain(["", "Scan"]).collect()
    }

    /// Operands of every shape the parser knows, valid and not, and limits' edges.
    const WORDS: [&str; 34] = [
        "a",
        "a/b",
        "a//b",
        "/",
        "0x",
        "0xzz",
        "0x00ff",
        "k1",
        "len=5",
        "len=",
        "len=4294967296",
        "len=999999999",
        "v=1",
        "v=x",
        "from=k1",
        "to=",
        "rev",
        "limit=0",
        "limit=99999999999",
        "callers=2",
        "callers=0",
        "calls=3",
        "seed=1",
        "seed=",
        "batches=",
        "batches=0+1",
        "batches=1/0",
        "batches=0/0/0",
        "1",
        "-1",
        "18446744073709551616",
        "=",
        "é",
        "#",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn parses_or_refuses_and_never_panics(
            head in 0..OP_NAMES.len() + 2,
            rest in prop::collection::vec(0..WORDS.len(), 0..6),
        ) {
            let words: Vec<&str> = std::iter::once(heads()[head])
                .chain(rest.iter().map(|&w| WORDS[w]))
                .collect();
            let line = words.join(" ");
            if let Ok(op) = line.parse::<Op>() {
                let again = op.to_string().parse::<Op>();
                prop_assert_eq!(again, Ok(op), "`{}`", line);
            }
        }
    }
}
