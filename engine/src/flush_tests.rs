//! Unit tests of `flush.rs` (kept apart so the module reads at once).

use super::{grow_to, serialise_runs, PageImage, Run};
use crate::presize::{BufferWork, PresizePolicy, SizedBuf};
use crashlab_format::types::PageId;

/// Pages 2, 3–4 (an overflow node), 5 and 7 of 512 bytes: 2560 bytes in two runs.
fn dirty() -> Vec<(PageId, Vec<u8>)> {
    vec![
        (PageId(2), vec![2; 512]),
        (PageId(3), vec![3; 1024]),
        (PageId(5), vec![5; 512]),
        (PageId(7), vec![7; 512]),
    ]
}

fn serialise(policy: PresizePolicy) -> (Vec<Run>, SizedBuf) {
    let owned = dirty();
    let dirty: Vec<(PageId, PageImage<'_>)> = owned
        .iter()
        .map(|(id, b)| (*id, PageImage::Bytes(b)))
        .collect();
    let mut buf = SizedBuf::for_policy(policy, dirty.len() * 512, || (2560, 4));
    let runs = serialise_runs(&dirty, 512, &mut buf);
    (runs, buf)
}

#[test]
fn contiguous_pages_form_one_run() {
    let (runs, buf) = serialise(PresizePolicy::Grow);
    let expected = vec![
        Run {
            first: PageId(2),
            offset: 0,
            len: 2048,
        },
        Run {
            first: PageId(7),
            offset: 2048,
            len: 512,
        },
    ];
    assert_eq!(runs, expected);
    assert_eq!(buf.as_slice()[512..1536], [3; 1024]);
    assert_eq!(buf.as_slice()[2048..], [7; 512]);
}

#[test]
fn commit_buffer_costs_per_policy() {
    // Grow: 64 → 512 (copy 0) → 2048 (copy 512) → 4096 (copy 2048).
    let grow = BufferWork {
        allocations: 1,
        reallocations: 3,
        bytes_copied_by_growth: 2560,
        size_computation_steps: 0,
        bytes_reserved: 64 + 512 + 2048 + 4096,
    };
    assert_eq!(serialise(PresizePolicy::Grow).1.work(), grow);
    // Exact: one step per dirty entry, one allocation.
    let exact = BufferWork {
        allocations: 1,
        size_computation_steps: 4,
        bytes_reserved: 2048 + 512,
        ..BufferWork::default()
    };
    assert_eq!(serialise(PresizePolicy::Exact).1.work(), exact);
    // Estimate: 4 entries × 512 = 2048, short by the overflow page: → 4096 copying 2048.
    let estimate = BufferWork {
        allocations: 1,
        reallocations: 1,
        bytes_copied_by_growth: 2048,
        size_computation_steps: 0,
        bytes_reserved: 2048 + 4096,
    };
    assert_eq!(serialise(PresizePolicy::Estimate).1.work(), estimate);
}

#[test]
fn growth_steps() {
    assert_eq!(grow_to(4 * 4096), 32 << 10);
    assert_eq!(grow_to(33 << 10), 64 << 10);
    assert_eq!(grow_to(16 << 20), 16 << 20);
    assert_eq!(grow_to((16 << 20) + 1), 32 << 20);
}

#[test]
fn an_encoded_image_joins_its_run_with_the_bytes_it_writes() {
    // Pages 2 (bytes), 3–4 (encoded, as the freelist page is) and 5 (bytes): one run.
    let (two, five) = (vec![2u8; 512], vec![5u8; 512]);
    let encode = |buf: &mut SizedBuf| buf.extend_from_slice(&[9u8; 1024]);
    let dirty = [
        (PageId(2), PageImage::Bytes(&two)),
        (
            PageId(3),
            PageImage::Encoded {
                len: 1024,
                encode: &encode,
            },
        ),
        (PageId(5), PageImage::Bytes(&five)),
    ];
    let mut buf = SizedBuf::for_policy(PresizePolicy::Estimate, 2048, || (2048, 3));
    let runs = serialise_runs(&dirty, 512, &mut buf);
    let one_run = Run {
        first: PageId(2),
        offset: 0,
        len: 2048,
    };
    assert_eq!(runs, vec![one_run]);
    let bytes = buf.as_slice();
    assert!(bytes[..512].iter().all(|&b| b == 2));
    assert!(bytes[512..1536].iter().all(|&b| b == 9));
    assert!(bytes[1536..].iter().all(|&b| b == 5));
    assert_eq!(buf.work().allocations, 1, "one buffer, never grown");
    assert_eq!(buf.work().reallocations, 0);
}

#[test]
#[should_panic(expected = "an encoder writes what it claimed")]
fn an_encoder_that_writes_short_is_caught() {
    let encode = |buf: &mut SizedBuf| buf.extend_from_slice(&[9u8; 500]);
    let dirty = [(
        PageId(3),
        PageImage::Encoded {
            len: 512,
            encode: &encode,
        },
    )];
    let mut buf = SizedBuf::for_policy(PresizePolicy::Grow, 512, || (512, 1));
    serialise_runs(&dirty, 512, &mut buf);
}
