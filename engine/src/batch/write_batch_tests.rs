//! Unit tests for `WriteBatch`. Expected bytes and figures are worked out by hand from the
//! encoding in the module header, never copied from the code's output.
#![allow(clippy::indexing_slicing, clippy::unwrap_used)]

use super::*;

/// put([a], k, vv) then delete([a, b], ""), written out by hand.
const TWO_RECORDS: [u8; 38] = [
    2, 0, 0, 0, // offset 0: count = 2
    1, 1, // offset 4: put, 1 component
    1, 0, 0, 0, b'a', // offset 6: component "a"
    1, 0, 0, 0, b'k', // offset 11: key "k"
    2, 0, 0, 0, b'v', b'v', // offset 16: value "vv"
    2, 2, // offset 22: delete, 2 components
    1, 0, 0, 0, b'a', // offset 24: component "a"
    1, 0, 0, 0, b'b', // offset 29: component "b"
    0, 0, 0, 0, // offset 34: key "" (delete: no value); end at 38
];
/// Record bytes of the put above (offsets 4..22) and of the delete (22..38).
const PUT_RECORD_SIZE: usize = 18;
const DELETE_RECORD_SIZE: usize = 16;

fn two_records() -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(&[b"a"], b"k", b"vv");
    batch.delete(&[b"a", b"b"], b"");
    batch
}

fn rejection(bytes: &[u8]) -> MalformedBatch {
    WriteBatch::from_bytes(bytes.to_vec()).expect_err("bytes must be rejected")
}

fn with_header(count: u32, records: &[u8]) -> Vec<u8> {
    let mut bytes = count.to_le_bytes().to_vec();
    bytes.extend_from_slice(records);
    bytes
}

#[test]
fn empty_batch_is_a_zero_count_header() {
    let batch = WriteBatch::new();
    assert_eq!(batch.as_bytes(), &[0, 0, 0, 0]);
    assert_eq!(batch.len(), 0);
    assert!(batch.is_empty());
    assert_eq!(batch.encoded_len(), 4);
    assert_eq!(WriteBatch::default(), batch);
    assert_eq!(WriteBatch::with_capacity(0), batch);
    assert_eq!(WriteBatch::with_capacity(1000), batch);
    assert_eq!(batch.records().unwrap(), Vec::new());
    assert_eq!(WriteBatch::from_bytes(vec![0, 0, 0, 0]).unwrap(), batch);
}

#[test]
fn byte_layout_matches_the_hand_written_encoding() {
    let batch = two_records();
    assert_eq!(batch.as_bytes(), &TWO_RECORDS[..]);
    assert_eq!(batch.len(), 2);
    assert!(!batch.is_empty());
    assert_eq!(batch.encoded_len(), 38);
    assert_eq!(4 + PUT_RECORD_SIZE + DELETE_RECORD_SIZE, TWO_RECORDS.len());
}

#[test]
fn hand_written_encoding_decodes() {
    let batch = WriteBatch::from_bytes(TWO_RECORDS.to_vec()).unwrap();
    let expected = vec![
        Record::Put {
            path: vec![&b"a"[..]],
            key: b"k",
            value: b"vv",
        },
        Record::Delete {
            path: vec![&b"a"[..], &b"b"[..]],
            key: b"",
        },
    ];
    assert_eq!(batch.records().unwrap(), expected);
    assert_eq!(batch.len(), 2);
}

#[test]
fn round_trip_nested_paths_empty_values_binary_bytes() {
    let every_byte: Vec<u8> = (0..=255).collect();
    let deep_path: Vec<&[u8]> = (0..MAX_BUCKET_DEPTH).map(|_| &b"d"[..]).collect();
    let mut batch = WriteBatch::new();
    batch.put(&[b"top", b"mid", b"leaf"], b"key", b"");
    batch.put(&[b"\x00\xff", b""], &every_byte, &every_byte[..17]);
    batch.delete(&[b"top"], b"\x00");
    batch.put(&deep_path, b"", b"\xff\xff\xff\xff");
    batch.delete(&[&every_byte], &[]);
    let expected = vec![
        Record::Put {
            path: vec![&b"top"[..], b"mid", b"leaf"],
            key: b"key",
            value: b"",
        },
        Record::Put {
            path: vec![&b"\x00\xff"[..], b""],
            key: &every_byte,
            value: &every_byte[..17],
        },
        Record::Delete {
            path: vec![&b"top"[..]],
            key: b"\x00",
        },
        Record::Put {
            path: deep_path.clone(),
            key: b"",
            value: b"\xff\xff\xff\xff",
        },
        Record::Delete {
            path: vec![&every_byte[..]],
            key: b"",
        },
    ];
    assert_eq!(batch.records().unwrap(), expected);
    let adopted = WriteBatch::from_bytes(batch.as_bytes().to_vec()).unwrap();
    assert_eq!(adopted, batch);
    assert_eq!(adopted.records().unwrap(), expected);
}

#[test]
fn round_trip_sizes_add_up() {
    let mut batch = WriteBatch::new();
    // 2 + (4 + 3) + (4 + 5) + (4 + 0) = 22 bytes.
    batch.put(&[b"abc"], b"hello", b"");
    // 2 + (4 + 1) + (4 + 1) + (4 + 2) = 18 bytes.
    batch.delete(&[b"x", b"y"], b"zz");
    assert_eq!(batch.encoded_len(), 4 + 22 + 18);
    assert_eq!(batch.len(), 2);
}

#[test]
fn rejects_truncated_header() {
    for bytes in [&[][..], &[2], &[2, 0, 0]] {
        let error = rejection(bytes);
        assert_eq!(error.offset, 0, "{error}");
        assert!(error.reason.contains("header"), "{error}");
    }
}

#[test]
fn rejects_bad_tag() {
    for tag in [0u8, 3, 0xff] {
        let error = rejection(&with_header(1, &[tag, 1, 0, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(error.offset, 4, "{error}");
        assert!(error.reason.contains("tag"), "{error}");
    }
    // The second record's tag, at offset 22.
    let mut bytes = TWO_RECORDS.to_vec();
    bytes[22] = 7;
    assert_eq!(rejection(&bytes).offset, 22);
}

#[test]
fn rejects_zero_and_too_many_path_components() {
    for component_count in [0u8, 65, 255] {
        let error = rejection(&with_header(1, &[2, component_count, 0, 0, 0, 0]));
        assert_eq!(error.offset, 5, "{error}");
        assert!(error.reason.contains("components"), "{error}");
    }
}

#[test]
fn accepts_exactly_max_depth_components() {
    let mut records = vec![2, 64];
    for _ in 0..64 {
        records.extend_from_slice(&[0, 0, 0, 0]);
    }
    records.extend_from_slice(&[0, 0, 0, 0]); // empty key
    let batch = WriteBatch::from_bytes(with_header(1, &records)).unwrap();
    let records = batch.records().unwrap();
    assert_eq!(
        records,
        vec![Record::Delete {
            path: vec![&b""[..]; 64],
            key: b""
        }]
    );
}

#[test]
fn rejects_lengths_running_past_the_end() {
    // Key length u32::MAX at offset 11.
    let mut bytes = with_header(1, &[1, 1, 1, 0, 0, 0, b'a']);
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    let error = rejection(&bytes);
    assert_eq!(error.offset, 11, "{error}");
    assert!(error.reason.contains("key"), "{error}");

    // Component length 2 with one byte left, at offset 6.
    let error = rejection(&with_header(1, &[2, 1, 2, 0, 0, 0, b'a']));
    assert_eq!(error.offset, 6, "{error}");

    // Value length one past the end, at offset 16: the value has 2 bytes, the field says 3.
    let mut bytes = TWO_RECORDS[..22].to_vec();
    bytes[0] = 1;
    bytes[16] = 3;
    let error = rejection(&bytes);
    assert_eq!(error.offset, 16, "{error}");
    assert!(error.reason.contains("value"), "{error}");

    // Every length u32::MAX in turn (the component at 6, the key at 11, the value at 16).
    for field_offset in [6, 11, 16] {
        let mut bytes = TWO_RECORDS.to_vec();
        bytes[field_offset..field_offset + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(rejection(&bytes).offset, field_offset);
    }
}

#[test]
fn rejects_truncation_inside_a_record() {
    // Cut the hand-written batch (with its header fixed to 1) at every byte of the put record.
    for end in 5..22 {
        let mut bytes = TWO_RECORDS[..end].to_vec();
        bytes[0] = 1;
        let error = rejection(&bytes);
        assert!(
            error.offset >= 4 && error.offset <= end,
            "cut at {end}: {error}"
        );
    }
    // A length field cut short: the key length at offset 11 has only 2 bytes.
    let error = rejection(&with_header(1, &[2, 1, 1, 0, 0, 0, b'a', 0, 0]));
    assert_eq!(error.offset, 11, "{error}");
    assert_eq!(
        error.reason,
        "key length of 4 bytes runs past the end (2 remain)"
    );
}

#[test]
fn rejects_count_mismatch_both_ways() {
    // Header says 3, two records present: the error is at the end.
    let mut bytes = TWO_RECORDS.to_vec();
    bytes[0] = 3;
    let error = rejection(&bytes);
    assert_eq!(error.offset, 38, "{error}");
    assert!(
        error.reason.contains('3') && error.reason.contains('2'),
        "{error}"
    );

    // Header says 1, two records present: the error is where the second record starts.
    bytes[0] = 1;
    let error = rejection(&bytes);
    assert_eq!(error.offset, 22, "{error}");
    assert!(error.reason.contains("more follow"), "{error}");

    // Header says 1, no records.
    let error = rejection(&[1, 0, 0, 0]);
    assert_eq!(error.offset, 4, "{error}");

    // A huge count over a tiny buffer is an error, not an allocation.
    let error = rejection(&[0xff, 0xff, 0xff, 0xff]);
    assert_eq!(error.offset, 4, "{error}");
}

#[test]
fn rejects_trailing_bytes() {
    let mut bytes = TWO_RECORDS.to_vec();
    bytes.push(0xaa);
    let error = rejection(&bytes);
    assert_eq!(error.offset, 38, "{error}");
    assert!(error.reason.contains("trailing"), "{error}");

    let error = rejection(&[0, 0, 0, 0, 0]);
    assert_eq!(error.offset, 4, "{error}");
}

#[test]
fn error_message_names_offset_and_reason() {
    let error = MalformedBatch {
        offset: 7,
        reason: "bad".to_string(),
    };
    assert_eq!(error.to_string(), "malformed write batch at byte 7: bad");
}

/// What merging costs when the merged batch fits the first 64 bytes.
fn one_allocation() -> MergeWork {
    MergeWork {
        buffer: BufferWork {
            allocations: 1,
            bytes_reserved: 64,
            ..BufferWork::default()
        },
        ..MergeWork::default()
    }
}

#[test]
fn merge_of_zero_batches_is_empty() {
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        let (merged, work) = WriteBatch::merge(&[], strategy).unwrap();
        assert_eq!(merged.as_bytes(), &[0, 0, 0, 0]);
        assert!(merged.is_empty());
        assert_eq!(work, one_allocation());
    }
}

#[test]
fn merge_of_empty_batches_is_empty() {
    let empty = WriteBatch::new();
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        let (merged, work) = WriteBatch::merge(&[&empty, &empty, &empty], strategy).unwrap();
        assert_eq!(merged.as_bytes(), &[0, 0, 0, 0]);
        assert_eq!(work, one_allocation());
    }
}

fn merge_inputs() -> (WriteBatch, WriteBatch, WriteBatch) {
    let mut put = WriteBatch::new();
    put.put(&[b"a"], b"k", b"vv");
    let mut delete = WriteBatch::new();
    delete.delete(&[b"a", b"b"], b"");
    (put, WriteBatch::new(), delete)
}

#[test]
fn append_copies_exactly_the_record_bytes() {
    let (put, empty, delete) = merge_inputs();
    let (merged, work) =
        WriteBatch::merge(&[&put, &empty, &delete], MergeStrategy::Append).unwrap();
    assert_eq!(merged.as_bytes(), &TWO_RECORDS[..]);
    assert_eq!(merged.len(), 2);
    let expected = MergeWork {
        bytes_copied: 34,
        records_decoded: 0,
        records_encoded: 0,
        // Grow: header and 34 record bytes fit the first 64 bytes.
        buffer: BufferWork {
            allocations: 1,
            bytes_reserved: 64,
            ..BufferWork::default()
        },
    };
    assert_eq!(work, expected);
}

#[test]
fn rebuild_decodes_and_encodes_every_record() {
    let (put, empty, delete) = merge_inputs();
    let (merged, work) =
        WriteBatch::merge(&[&put, &empty, &delete], MergeStrategy::Rebuild).unwrap();
    assert_eq!(merged.as_bytes(), &TWO_RECORDS[..]);
    assert_eq!(merged.len(), 2);
    let expected = MergeWork {
        bytes_copied: 34,
        records_decoded: 2,
        records_encoded: 2,
        buffer: BufferWork {
            allocations: 1,
            bytes_reserved: 64,
            ..BufferWork::default()
        },
    };
    assert_eq!(work, expected);
}

#[test]
fn merge_keeps_order_and_repeats() {
    let (put, _, delete) = merge_inputs();
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        let (merged, work) = WriteBatch::merge(&[&delete, &put, &delete], strategy).unwrap();
        let records = merged.records().unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0], delete.records().unwrap()[0]);
        assert_eq!(records[1], put.records().unwrap()[0]);
        assert_eq!(records[2], delete.records().unwrap()[0]);
        assert_eq!(work.bytes_copied, 16 + 18 + 16);
        assert_eq!(merged.encoded_len(), 4 + 16 + 18 + 16);
    }
}

#[test]
fn merge_default_strategy_is_append() {
    assert_eq!(MergeStrategy::default(), MergeStrategy::Append);
}

/// A batch whose invariant is broken on purpose (only this module can build one).
fn broken_batch() -> WriteBatch {
    WriteBatch {
        buf: SizedBuf::adopt(vec![1, 0, 0, 0, 9]),
        count: 1,
    }
}

#[test]
fn rebuild_reports_a_malformed_batch() {
    let good = two_records();
    let error = merge_rebuild(&[&good, &broken_batch()], WriteBatch::new()).unwrap_err();
    assert_eq!(error.offset, 4, "{error}");
    assert!(broken_batch().records().is_err());
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "invariant: valid batch")]
fn append_checks_inputs_in_debug_builds() {
    let _ = WriteBatch::merge(&[&broken_batch()], MergeStrategy::Append);
}

#[test]
#[should_panic(expected = "needs a bucket path")]
fn put_without_path_panics() {
    WriteBatch::new().put(&[], b"k", b"v");
}

#[test]
#[should_panic(expected = "deeper than MAX_BUCKET_DEPTH")]
fn put_deeper_than_max_depth_panics() {
    let path: Vec<&[u8]> = vec![b"x"; MAX_BUCKET_DEPTH + 1];
    WriteBatch::new().delete(&path, b"k");
}

/// Ten puts of a 20-byte value at key "k" in bucket "a": 36 bytes each (2 + 5 + 5 + 24), so
/// 4 + 360 = 364 bytes. Record r (from 0) spans 4 + 36r .. 40 + 36r; its value starts at
/// 20 + 36r.
fn ten_puts() -> Vec<Record<'static>> {
    let put = Record::Put {
        path: vec![&b"a"[..]],
        key: b"k",
        value: &[7u8; 20],
    };
    assert_eq!(put.encoded_size(), 36);
    vec![put; 10]
}

#[test]
fn with_policy_grow_doubles_from_64() {
    let records = ten_puts();
    let batch = WriteBatch::with_policy(PresizePolicy::Grow, &records, 0);
    assert_eq!(batch.encoded_len(), 364);
    // 64 → 128 at record 1's value (56 bytes there), → 256 at record 3's value (128 bytes),
    // → 512 at record 7's tag (256 bytes).
    let expected = BufferWork {
        allocations: 1,
        reallocations: 3,
        bytes_copied_by_growth: 56 + 128 + 256,
        size_computation_steps: 0,
        bytes_reserved: 64 + 128 + 256 + 512,
    };
    assert_eq!(batch.buffer_work(), expected);
}

#[test]
fn with_policy_exact_walks_every_record_and_never_grows() {
    let records = ten_puts();
    let batch = WriteBatch::with_policy(PresizePolicy::Exact, &records, 0);
    let expected = BufferWork {
        allocations: 1,
        size_computation_steps: 10,
        bytes_reserved: 364,
        ..BufferWork::default()
    };
    assert_eq!(batch.buffer_work(), expected);
}

#[test]
fn with_policy_estimate_doubles_once_when_short() {
    let records = ten_puts();
    // 200 bytes: record 5's value (at 200..220) does not fit; 200 → 400, copying 200 bytes.
    let batch = WriteBatch::with_policy(PresizePolicy::Estimate, &records, 200);
    let expected = BufferWork {
        allocations: 1,
        reallocations: 1,
        bytes_copied_by_growth: 200,
        size_computation_steps: 0,
        bytes_reserved: 200 + 400,
    };
    assert_eq!(batch.buffer_work(), expected);
    let same = WriteBatch::with_policy(PresizePolicy::Grow, &records, 0);
    assert_eq!(batch, same);
}

#[test]
fn merge_policies_give_the_same_bytes_and_their_own_costs() {
    let (put, empty, delete) = merge_inputs();
    let inputs = [&put, &empty, &delete];
    for strategy in [MergeStrategy::Append, MergeStrategy::Rebuild] {
        let merge = |policy| WriteBatch::merge_with_policy(&inputs, strategy, policy).unwrap();
        let (grow, grow_work) = merge(PresizePolicy::Grow);
        let (exact, exact_work) = merge(PresizePolicy::Exact);
        let (estimate, estimate_work) = merge(PresizePolicy::Estimate);
        assert_eq!(grow.as_bytes(), &TWO_RECORDS[..]);
        assert_eq!(exact, grow);
        assert_eq!(estimate, grow);
        let one = BufferWork {
            allocations: 1,
            bytes_reserved: 64,
            ..BufferWork::default()
        };
        assert_eq!(grow_work.buffer, one);
        // Exact walks the two records; Estimate sums the lengths for free. Both reserve the
        // exact 4 + 34 bytes.
        let sized = BufferWork {
            bytes_reserved: 38,
            ..one
        };
        let walked = BufferWork {
            size_computation_steps: 2,
            ..sized
        };
        assert_eq!(exact_work.buffer, walked);
        assert_eq!(estimate_work.buffer, sized);
    }
}
