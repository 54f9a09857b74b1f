//! Unit tests of `flush.rs` (kept apart so the module reads at once).

use super::{grow_to, plan_runs, recycle, write_pages, DirtyPages, PageImage, Run};
use crate::counters::Counters;
use crate::presize::{PresizePolicy, SizedBuf};
use crate::storage::MemStorage;
use crashlab_format::types::PageId;

/// Pages 2, 3–4 (an overflow node), 5 and 7 of 512 bytes: 2560 bytes in two runs, the first of
/// three images each in a buffer of its own (so the run is buffered), the second of one
/// (written from where it lies).
fn dirty() -> Vec<(PageId, Vec<u8>)> {
    vec![
        (PageId(2), vec![2; 512]),
        (PageId(3), vec![3; 1024]),
        (PageId(5), vec![5; 512]),
        (PageId(7), vec![7; 512]),
    ]
}

fn images(owned: &[(PageId, Vec<u8>)]) -> Vec<(PageId, PageImage<'_>)> {
    owned
        .iter()
        .map(|(id, b)| (*id, PageImage::placed(b, 0..b.len())))
        .collect()
}

/// Write `pages` (in the order given) to a fresh store; its bytes and the counters.
fn write(mut pages: Vec<(PageId, PageImage<'_>)>, policy: PresizePolicy) -> (Vec<u8>, Counters) {
    let storage = MemStorage::new();
    let mut counters = Counters::default();
    let bytes = pages.iter().map(|(_, image)| image.len()).sum();
    // A kept list of runs from an earlier commit: planning starts it afresh.
    let mut runs = vec![Run {
        first: PageId(99),
        images: 0..1,
        len: 512,
    }];
    let dirty = DirtyPages {
        pages: &mut pages,
        bytes,
        runs: &mut runs,
    };
    write_pages(&storage, 512, dirty, policy, &mut counters).expect("write");
    (storage.snapshot(), counters)
}

#[test]
fn contiguous_pages_form_one_run() {
    let owned = dirty();
    let expected = vec![
        Run {
            first: PageId(2),
            images: 0..3,
            len: 2048,
        },
        Run {
            first: PageId(7),
            images: 3..4,
            len: 512,
        },
    ];
    let mut runs = Vec::new();
    plan_runs(&images(&owned), 512, &mut runs);
    assert_eq!(runs, expected);
}

#[test]
fn a_recycled_list_keeps_its_allocation() {
    let owned = dirty();
    let mut list = images(&owned);
    list.reserve(60);
    let (at, capacity) = (list.as_ptr() as usize, list.capacity());
    let kept: Vec<(PageId, PageImage<'static>)> = recycle(list);
    assert!(kept.is_empty());
    assert_eq!((kept.as_ptr() as usize, kept.capacity()), (at, capacity));
}

#[test]
fn every_page_lands_at_its_offset_one_call_per_run() {
    let mut owned = dirty();
    owned.reverse();
    let (file, c) = write(images(&owned), PresizePolicy::Estimate);
    assert_eq!(file.len(), 8 * 512);
    assert!(file[..1024].iter().all(|&b| b == 0), "pages 0–1 untouched");
    for (page, byte) in [(2, 2), (3, 3), (4, 3), (5, 5), (6, 0), (7, 7)] {
        let at = page * 512;
        assert!(file[at..at + 512].iter().all(|&b| b == byte), "page {page}");
    }
    assert_eq!((c.write_calls, c.write_calls_saved), (2, 2));
    assert_eq!((c.pages_written, c.bytes_written), (5, 2560));
}

#[test]
fn commit_buffer_costs_per_policy() {
    // Only the run of pages 2–5 (2048 bytes, three images) goes through the buffer.
    let owned = dirty();
    let work = |policy| {
        let (_, c) = write(images(&owned), policy);
        [
            c.buffer_allocations,
            c.buffer_reallocations,
            c.buffer_bytes_copied_by_growth,
            c.size_computation_steps,
            c.buffer_bytes_reserved,
        ]
    };
    // Grow: 64 → 512 for page 2 (copying nothing), → 2048 for pages 3–4 (copying page 2).
    assert_eq!(work(PresizePolicy::Grow), [1, 2, 512, 0, 64 + 512 + 2048]);
    // Exact: one step per buffered image, one allocation.
    assert_eq!(work(PresizePolicy::Exact), [1, 0, 0, 3, 2048]);
    // Estimate: the plan's sum of the buffered runs, one allocation, no pass.
    assert_eq!(work(PresizePolicy::Estimate), [1, 0, 0, 0, 2048]);
}

#[test]
fn lone_pages_make_no_buffer() {
    let owned = vec![
        (PageId(2), vec![2; 512]),
        (PageId(4), vec![4; 1024]),
        (PageId(7), vec![7; 512]),
    ];
    for policy in [
        PresizePolicy::Grow,
        PresizePolicy::Exact,
        PresizePolicy::Estimate,
    ] {
        let (file, c) = write(images(&owned), policy);
        assert_eq!(&file[4 * 512..6 * 512], &[4; 1024][..]);
        assert_eq!((c.write_calls, c.write_calls_saved), (3, 0));
        assert_eq!((c.buffer_allocations, c.buffer_bytes_reserved), (0, 0));
    }
}

/// Pages 2, 3–4 and 5 placed in one arena at `at` (byte offsets, 512-byte pages), as a commit
/// places its nodes; the file written and the counters.
fn write_from_one_arena(at: [usize; 3]) -> (Vec<u8>, Counters) {
    let mut arena = vec![0u8; 3072];
    let pages = [(PageId(2), 512), (PageId(3), 1024), (PageId(5), 512)];
    for ((id, len), at) in pages.iter().zip(at) {
        arena[at..at + len].fill(id.0 as u8);
    }
    let dirty = pages.iter().zip(at);
    let dirty = dirty.map(|(&(id, len), at)| (id, PageImage::placed(&arena, at..at + len)));
    write(dirty.collect(), PresizePolicy::Estimate)
}

fn holds_pages_2_to_5(file: &[u8]) -> bool {
    let expected = [[2u8; 512], [3; 512], [3; 512], [5; 512]].concat();
    file[1024..3072] == expected[..]
}

#[test]
fn a_run_back_to_back_in_its_arena_is_written_from_there() {
    let (file, c) = write_from_one_arena([512, 1024, 2048]);
    assert!(holds_pages_2_to_5(&file));
    assert_eq!((c.write_calls, c.write_calls_saved), (1, 2));
    assert_eq!((c.buffer_allocations, c.buffer_bytes_reserved), (0, 0));
}

#[test]
fn a_run_out_of_order_or_with_a_gap_in_its_arena_is_buffered() {
    // Page 3 placed before page 2; then a gap of one page between pages 3–4 and 5.
    for at in [[1024, 0, 2048], [0, 512, 2048]] {
        let (file, c) = write_from_one_arena(at);
        assert!(holds_pages_2_to_5(&file), "placed at {at:?}");
        assert_eq!((c.write_calls, c.buffer_allocations), (1, 1), "at {at:?}");
        assert_eq!(c.buffer_bytes_reserved, 2048);
    }
}

#[test]
fn images_at_adjoining_offsets_of_two_buffers_are_buffered() {
    // Offsets 0..512 and 512..1024 follow each other, but in different buffers.
    let (a, b) = (vec![2u8; 1024], vec![3u8; 1024]);
    let dirty = vec![
        (PageId(2), PageImage::placed(&a, 0..512)),
        (PageId(3), PageImage::placed(&b, 512..1024)),
    ];
    let (file, c) = write(dirty, PresizePolicy::Estimate);
    assert!(file[1024..1536].iter().all(|&x| x == 2));
    assert!(file[1536..2048].iter().all(|&x| x == 3));
    assert_eq!((c.write_calls, c.buffer_allocations), (1, 1));
}

#[test]
fn growth_steps() {
    assert_eq!(grow_to(4 * 4096), 32 << 10);
    assert_eq!(grow_to(33 << 10), 64 << 10);
    assert_eq!(grow_to(16 << 20), 16 << 20);
    assert_eq!(grow_to((16 << 20) + 1), 32 << 20);
}

/// An image of 1,024 bytes encoded only when the buffer takes it (as the freelist page is).
fn nines(encode: &(dyn Fn(&mut SizedBuf) + Sync)) -> PageImage<'_> {
    PageImage::Encoded { len: 1024, encode }
}

#[test]
fn an_encoded_image_joins_its_run_with_the_bytes_it_writes() {
    // Pages 2 (bytes), 3–4 (encoded, as the freelist page is) and 5 (bytes): one run.
    let (two, five) = (vec![2u8; 512], vec![5u8; 512]);
    let encode = |buf: &mut SizedBuf| buf.extend_from_slice(&[9u8; 1024]);
    let dirty = vec![
        (PageId(2), PageImage::placed(&two, 0..512)),
        (PageId(3), nines(&encode)),
        (PageId(5), PageImage::placed(&five, 0..512)),
    ];
    let (file, c) = write(dirty, PresizePolicy::Estimate);
    assert!(file[1024..1536].iter().all(|&b| b == 2));
    assert!(file[1536..2560].iter().all(|&b| b == 9));
    assert!(file[2560..3072].iter().all(|&b| b == 5));
    assert_eq!(c.write_calls, 1);
    assert_eq!(c.buffer_allocations, 1, "one buffer, never grown");
    assert_eq!(c.buffer_reallocations, 0);
}

#[test]
fn an_encoded_image_alone_still_goes_through_the_buffer() {
    let encode = |buf: &mut SizedBuf| buf.extend_from_slice(&[9u8; 1024]);
    let two = vec![2u8; 512];
    let dirty = vec![
        (PageId(2), PageImage::placed(&two, 0..512)),
        (PageId(6), nines(&encode)),
    ];
    let (file, c) = write(dirty, PresizePolicy::Estimate);
    assert!(file[3072..4096].iter().all(|&b| b == 9));
    assert_eq!((c.write_calls, c.buffer_bytes_reserved), (2, 1024));
}

#[test]
#[should_panic(expected = "an encoder writes what it claimed")]
fn an_encoder_that_writes_short_is_caught() {
    let encode = |buf: &mut SizedBuf| buf.extend_from_slice(&[9u8; 500]);
    let dirty = vec![(
        PageId(3),
        PageImage::Encoded {
            len: 512,
            encode: &encode,
        },
    )];
    write(dirty, PresizePolicy::Grow);
}
