//! The freelist page: its size, encoding and (untrusting) decoding.
//!
//! ```text
//! offset  size   field
//!      0    16   page header: id, flags = FREELIST, count, overflow = pages - 1
//!     16   8*n   ids, u64 little-endian, ascending              (n <  0xFFFF: count = n)
//!     16     8   n                                              (n >= 0xFFFF: count = 0xFFFF)
//!     24   8*n   ids
//! ```
//!
//! The page stores free and pending ids alike: after a crash there is no reader left, so pending
//! pages are reusable. Exactly 0xFFFF ids already takes the escape, as in bbolt.
//!
//! Sizing differs from bbolt on purpose: bbolt allocates `estimate / page_size + 1` pages, one
//! too many whenever the estimate is a multiple of the page size; we allocate the ceiling. Both
//! read the same, since the reader follows the count, not the page count.
//!
//! Invariants: `decode_page` never panics and never allocates more than the buffer can hold nor
//! more than [`MAX_FREE_IDS`] ids; on success its ids are ascending, unique, >= 2 and below the
//! high-water mark.

use crate::corruption::Corruption;
use crate::error::{Error, Result};
use crate::limits::MAX_FREE_IDS;
use crate::page::{read_u64, ByteSink, PageHeader, FLAG_FREELIST, PAGE_HEADER_SIZE};
use crate::types::{PageId, PageSpan};

/// `count` field value meaning "the real count is the first u64 of the data".
const COUNT_ESCAPE: u16 = 0xFFFF;
const ID_SIZE: usize = 8;

/// Bytes a freelist page of `id_count` ids needs (bbolt's `EstimatedWritePageSize`): every
/// byte its encoding writes; the rest of its pages are zero.
pub fn encoded_size(id_count: u64) -> u64 {
    let escape = if id_count >= u64::from(COUNT_ESCAPE) {
        ID_SIZE as u64
    } else {
        0
    };
    id_count
        .checked_mul(ID_SIZE as u64)
        .and_then(|ids| ids.checked_add(PAGE_HEADER_SIZE as u64 + escape))
        .expect("freelist size overflows u64")
}

/// Pages needed by a freelist page holding `id_count` ids (at least one).
pub fn page_count_for(id_count: u64, page_size: u32) -> u64 {
    assert!(
        page_size as usize > PAGE_HEADER_SIZE + ID_SIZE,
        "page size {page_size} too small"
    );
    encoded_size(id_count).div_ceil(u64::from(page_size))
}

/// Serialise a freelist page at `start`, zero padded to whole pages.
pub fn encode_page(start: PageId, ids: &[PageId], page_size: u32) -> Vec<u8> {
    let pages = page_count_for(ids.len() as u64, page_size);
    let len = usize::try_from(pages * u64::from(page_size)).expect("freelist page fits memory");
    let mut buf = Vec::with_capacity(len);
    encode_page_into(&mut buf, start, ids, page_size, pages);
    buf
}

/// Append the freelist page for `ids` at `start` to `buf`, spread over `pages` pages (at least
/// `page_count_for(ids.len())`; the header's overflow says `pages - 1`), zero-filled to the end.
pub fn encode_page_into(
    buf: &mut impl ByteSink,
    start: PageId,
    ids: &[PageId],
    page_size: u32,
    pages: u64,
) {
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "freelist ids must be strictly ascending"
    );
    let n = ids.len() as u64;
    encode_with(buf, start, n, page_size, pages, ids.iter().map(|id| id.0));
}

/// [`encode_page_into`] for the ids of `runs` (ascending, disjoint; they may touch): no list
/// of one id per page is built, the ids are written straight from the runs.
pub fn encode_runs_into(
    buf: &mut impl ByteSink,
    start: PageId,
    runs: &[PageSpan],
    page_size: u32,
    pages: u64,
) {
    assert!(
        runs.windows(2).all(|w| w[0].end() <= w[1].start),
        "freelist runs must be ascending and disjoint"
    );
    let n = runs.iter().map(|r| r.count).sum();
    let ids = runs.iter().flat_map(|r| r.start.0..r.end().0);
    encode_with(buf, start, n, page_size, pages, ids);
}

fn encode_with(
    buf: &mut impl ByteSink,
    start: PageId,
    n: u64,
    page_size: u32,
    pages: u64,
    ids: impl Iterator<Item = u64>,
) {
    assert!(
        pages >= page_count_for(n, page_size),
        "freelist pages too few"
    );
    let len = usize::try_from(pages * u64::from(page_size)).expect("freelist page fits memory");
    let escaped = n >= u64::from(COUNT_ESCAPE);
    let header = PageHeader {
        id: start,
        flags: FLAG_FREELIST,
        count: if escaped { COUNT_ESCAPE } else { n as u16 },
        overflow: u32::try_from(pages - 1).expect("freelist overflow fits the header"),
    };
    // Zero the page once and write the ids in place: assembling them in a zeroed chunk first
    // zeroed as many bytes again (glibc's `rep stosb`: 8,200 of a one-key Set's instructions).
    let page_start = buf.len();
    buf.zero_fill_to(page_start + len);
    let page = buf.tail_mut(page_start);
    header.encode(page);
    let mut at = PAGE_HEADER_SIZE;
    if escaped {
        page[at..at + ID_SIZE].copy_from_slice(&n.to_le_bytes());
        at += ID_SIZE;
    }
    let mut written = 0u64;
    for (slot, id) in page[at..].chunks_exact_mut(ID_SIZE).zip(ids) {
        slot.copy_from_slice(&id.to_le_bytes());
        written += 1;
    }
    assert_eq!(written, n, "the count matches the ids written");
}

/// Negative control only (`DebugHooks::freelist_count_wraps`): rewrite an escaped freelist page
/// of `n` ids in `buf` as a writer that forgot the escape would have written it: the count
/// field holds `n` truncated to 16 bits and the ids start right after the header.
pub fn forget_count_escape(buf: &mut [u8], n: u64) {
    assert!(
        n >= u64::from(COUNT_ESCAPE),
        "only an escaped page has an escape to forget"
    );
    let ids_end = PAGE_HEADER_SIZE + ID_SIZE + ID_SIZE * n as usize;
    assert!(buf.len() >= ids_end, "the page holds its ids");
    crate::page::write_u16(buf, 10, n as u16);
    buf.copy_within(PAGE_HEADER_SIZE + ID_SIZE..ids_end, PAGE_HEADER_SIZE);
    buf[ids_end - ID_SIZE..ids_end].fill(0);
}

/// Bytes the freelist page whose first page is `first` needs: header, escaped count and ids.
/// `claimed` is the length of the run its header claims; a count past it, or past
/// [`MAX_FREE_IDS`], is an error before any buffer grows.
pub fn page_extent(first: &[u8], page: PageId, claimed: u64) -> Result<u64> {
    let header = PageHeader::decode(first, page)?;
    let (count, escape) = if header.count == COUNT_ESCAPE {
        let Some(n) = first.get(PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + ID_SIZE) else {
            return Err(Error::corrupted(
                page,
                Corruption::FreelistEscapeWithoutCount,
            ));
        };
        (read_u64(n, 0), ID_SIZE as u64)
    } else {
        (u64::from(header.count), 0)
    };
    let data = PAGE_HEADER_SIZE as u64 + escape;
    check_count(count, claimed.saturating_sub(data) / ID_SIZE as u64, page)?;
    // count <= MAX_FREE_IDS, so this does not overflow.
    Ok(data + count * ID_SIZE as u64)
}

/// A count must fit the bytes that hold it and the limit on ids.
fn check_count(count: u64, capacity: u64, page: PageId) -> Result<()> {
    if count > capacity {
        let reason = Corruption::FreelistCountExceedsPage { count, capacity };
        return Err(Error::corrupted(page, reason));
    }
    if count > MAX_FREE_IDS {
        return Err(Error::TooManyFreeIds {
            what: "freelist page",
            count,
            max: MAX_FREE_IDS,
        });
    }
    Ok(())
}

/// Why a freelist page listing `ids` would not decode under the high-water mark `high_water`,
/// if it would not: ids must ascend strictly and lie in `[2, high_water)`.
pub fn unencodable(ids: &[PageId], high_water: PageId) -> Option<Corruption> {
    if let Some(w) = ids.windows(2).find(|w| w[0] >= w[1]) {
        return Some(Corruption::FreelistDuplicate { id: w[1] });
    }
    match (ids.first(), ids.last()) {
        (Some(&id), _) if id.0 < 2 => Some(Corruption::FreelistMetaPage { id }),
        (_, Some(&id)) if id >= high_water => {
            Some(Corruption::FreelistPastHighWater { id, high_water })
        }
        _ => None,
    }
}

/// [`unencodable`] for runs (ascending, disjoint), in steps that follow the runs.
pub fn unencodable_runs(runs: &[PageSpan], high_water: PageId) -> Option<Corruption> {
    if let Some(w) = runs.windows(2).find(|w| w[0].end() > w[1].start) {
        return Some(Corruption::FreelistDuplicate { id: w[1].start });
    }
    match (runs.first(), runs.last()) {
        (Some(run), _) if run.start.0 < 2 => Some(Corruption::FreelistMetaPage { id: run.start }),
        (_, Some(run)) if run.end() > high_water => Some(Corruption::FreelistPastHighWater {
            id: PageId(run.end().0 - 1),
            high_water,
        }),
        _ => None,
    }
}

/// Decode the freelist page `page` (with its overflow pages) from untrusted bytes.
pub fn decode_page(buf: &[u8], page: PageId, high_water: PageId) -> Result<Vec<PageId>> {
    let (count, data) = checked_header(buf, page)?;
    let mut ids = Vec::with_capacity(count);
    for chunk in data.chunks_exact(ID_SIZE).take(count) {
        ids.push(checked_id(chunk, page, high_water)?);
    }
    if !ids.windows(2).all(|w| w[0] <= w[1]) {
        // bbolt sorts on read; a writer that forgot to sort is not corruption.
        ids.sort_unstable();
    }
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        let reason = Corruption::FreelistDuplicate { id: w[0] };
        return Err(Error::corrupted(page, reason));
    }
    Ok(ids)
}

/// [`decode_page`] into ascending, disjoint, maximal runs, checking the same things: a sorted
/// list (what every writer writes) becomes runs as it is read, with no list of one id per page;
/// an unsorted one (bbolt sorts on read) is decoded as a list, sorted, then grouped.
pub fn decode_runs(buf: &[u8], page: PageId, high_water: PageId) -> Result<Vec<PageSpan>> {
    let (count, data) = checked_header(buf, page)?;
    let mut runs: Vec<PageSpan> = Vec::new();
    for chunk in data.chunks_exact(ID_SIZE).take(count) {
        let id = checked_id(chunk, page, high_water)?;
        match runs.last_mut() {
            Some(run) if run.end() == id => run.count += 1,
            Some(run) if run.end() < id => runs.push(PageSpan::new(id, 1)),
            Some(_) => return Ok(runs_of_sorted(&decode_page(buf, page, high_water)?)),
            None => runs.push(PageSpan::new(id, 1)),
        }
    }
    Ok(runs)
}

/// Maximal runs of strictly ascending ids.
fn runs_of_sorted(ids: &[PageId]) -> Vec<PageSpan> {
    let mut runs: Vec<PageSpan> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some(run) if run.end() == id => run.count += 1,
            _ => runs.push(PageSpan::new(id, 1)),
        }
    }
    runs
}

/// The id count and the bytes holding the ids of the freelist page `page`, after checking its
/// header names it and says freelist, and that the count fits the bytes and the limit.
fn checked_header(buf: &[u8], page: PageId) -> Result<(usize, &[u8])> {
    let header = PageHeader::decode(buf, page)?;
    if header.id != page {
        let reason = Corruption::WrongId { found: header.id };
        return Err(Error::corrupted(page, reason));
    }
    if header.flags != FLAG_FREELIST {
        let reason = Corruption::FreelistFlags {
            flags: header.flags,
        };
        return Err(Error::corrupted(page, reason));
    }
    id_count_and_data(buf, header.count, page)
}

/// The real id count and the bytes where the ids start, after checking the count fits `buf`.
fn id_count_and_data(buf: &[u8], count: u16, page: PageId) -> Result<(usize, &[u8])> {
    let after_header = buf.get(PAGE_HEADER_SIZE..).unwrap_or_default();
    let (count, data) = if count == COUNT_ESCAPE {
        let Some((escaped, rest)) = after_header.split_first_chunk::<ID_SIZE>() else {
            return Err(Error::corrupted(
                page,
                Corruption::FreelistEscapeWithoutCount,
            ));
        };
        (u64::from_le_bytes(*escaped), rest)
    } else {
        (u64::from(count), after_header)
    };
    check_count(count, (data.len() / ID_SIZE) as u64, page)?;
    // count <= capacity, which is a usize.
    Ok((count as usize, data))
}

fn checked_id(chunk: &[u8], page: PageId, high_water: PageId) -> Result<PageId> {
    let id = PageId(read_u64(chunk, 0));
    if id.0 < 2 {
        return Err(Error::corrupted(page, Corruption::FreelistMetaPage { id }));
    }
    if id >= high_water {
        let reason = Corruption::FreelistPastHighWater { id, high_water };
        return Err(Error::corrupted(page, reason));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{read_u16, read_u32, write_u64};

    const PS: u32 = 4096;

    fn ids(range: std::ops::Range<u64>) -> Vec<PageId> {
        range.map(PageId).collect()
    }

    fn reason(r: Result<Vec<PageId>>) -> String {
        match r {
            Err(Error::Corrupted { page, reason }) => format!("{page}: {reason}"),
            Err(e @ Error::TooManyFreeIds { .. }) => e.to_string(),
            other => panic!("expected Corrupted, got {other:?}"),
        }
    }

    #[test]
    fn page_counts() {
        // 16 + 8n bytes, +8 from 0xFFFF ids on; ceiling of bytes / page size.
        assert_eq!(page_count_for(0, PS), 1);
        assert_eq!(page_count_for(510, PS), 1); // 16 + 4080 = 4096 exactly: bbolt would take 2
        assert_eq!(page_count_for(511, PS), 2);
        assert_eq!(page_count_for(65534, PS), 128); // 16 + 524272 = 524288 = 128 pages exactly
        assert_eq!(page_count_for(65534, 512), 1024);
        assert_eq!(page_count_for(65535, 512), 1025); // 16 + 8 + 524280 = 524304 bytes
        assert_eq!(page_count_for(65532, 512), 1024); // 16 + 524256 = 524272 bytes
    }

    #[test]
    fn small_round_trips_and_layout() {
        for n in [0u64, 1] {
            let list = ids(7..7 + n);
            let buf = encode_page(PageId(5), &list, PS);
            assert_eq!(buf.len(), PS as usize);
            assert_eq!(read_u64(&buf, 0), 5);
            assert_eq!(read_u16(&buf, 8), FLAG_FREELIST);
            assert_eq!(u64::from(read_u16(&buf, 10)), n);
            assert_eq!(read_u32(&buf, 12), 0);
            assert_eq!(decode_page(&buf, PageId(5), PageId(100)).unwrap(), list);
        }
        let buf = encode_page(PageId(5), &[PageId(9)], PS);
        assert_eq!(read_u64(&buf, 16), 9, "first id right after the header");
    }

    #[test]
    fn large_round_trips_use_the_escape_from_65535() {
        for (n, escaped) in [(65534u64, false), (65535, true), (65536, true)] {
            let list = ids(2..2 + n);
            let buf = encode_page(PageId(3), &list, PS);
            let pages = (16 + 8 * n + if escaped { 8 } else { 0 }).div_ceil(4096);
            assert_eq!(buf.len() as u64, pages * 4096, "n = {n}");
            assert_eq!(u64::from(read_u32(&buf, 12)), pages - 1);
            if escaped {
                assert_eq!(read_u16(&buf, 10), 0xFFFF);
                assert_eq!(&buf[16..24], &n.to_le_bytes());
                assert_eq!(read_u64(&buf, 24), 2);
            } else {
                assert_eq!(u64::from(read_u16(&buf, 10)), n);
                assert_eq!(read_u64(&buf, 16), 2);
            }
            let back = decode_page(&buf, PageId(3), PageId(2 + n)).unwrap();
            assert_eq!(back, list, "n = {n}");
        }
    }

    #[test]
    fn unsorted_ids_are_sorted_on_read() {
        let mut buf = encode_page(PageId(5), &[PageId(8), PageId(9)], PS);
        write_u64(&mut buf, 16, 9);
        write_u64(&mut buf, 24, 8);
        assert_eq!(
            decode_page(&buf, PageId(5), PageId(10)).unwrap(),
            vec![PageId(8), PageId(9)]
        );
    }

    #[test]
    fn header_corruptions() {
        let buf = encode_page(PageId(5), &[PageId(8)], PS);
        assert!(reason(decode_page(&buf, PageId(6), PageId(10))).contains("header names page 5"));
        let mut bad = buf.clone();
        bad[8] = 0x02; // leaf
        assert!(reason(decode_page(&bad, PageId(5), PageId(10))).contains("expected freelist"));
        bad[8] = 0x12; // freelist | leaf: bbolt compares flags with ==
        assert!(reason(decode_page(&bad, PageId(5), PageId(10))).contains("expected freelist"));
        assert!(reason(decode_page(&buf[..15], PageId(5), PageId(10))).contains("shorter"));
    }

    #[test]
    fn id_corruptions() {
        let buf = encode_page(PageId(5), &[PageId(8), PageId(9)], PS);
        let mut bad = buf.clone();
        write_u64(&mut bad, 16, 1);
        assert!(reason(decode_page(&bad, PageId(5), PageId(10)))
            .starts_with("5: freelist lists meta page 1"));
        write_u64(&mut bad, 16, 0);
        assert!(reason(decode_page(&bad, PageId(5), PageId(10))).contains("meta page 0"));
        // 9 is at the high-water mark 9: never allocated, so it cannot be free.
        assert!(reason(decode_page(&buf, PageId(5), PageId(9))).contains("high-water mark 9"));
        let mut dup = buf.clone();
        write_u64(&mut dup, 24, 8);
        assert!(reason(decode_page(&dup, PageId(5), PageId(10))).contains("page 8 twice"));
    }

    #[test]
    fn counts_past_the_buffer_are_rejected_without_allocating() {
        let buf = encode_page(PageId(5), &[PageId(8)], 512);
        // 512 bytes hold (512 - 16) / 8 = 62 ids.
        let mut bad = buf.clone();
        bad[10..12].copy_from_slice(&63u16.to_le_bytes());
        assert!(
            reason(decode_page(&bad, PageId(5), PageId(10))).contains("count 63 exceeds the 62")
        );
        bad[10..12].copy_from_slice(&62u16.to_le_bytes());
        // 62 fits: the padding zeros then read as page 0.
        assert!(reason(decode_page(&bad, PageId(5), PageId(10))).contains("meta page 0"));
        // Escaped count of u64::MAX: with_capacity for it would panic, so passing proves the
        // check runs first. The 488 bytes after the escape hold 61 ids.
        bad[10..12].copy_from_slice(&0xFFFFu16.to_le_bytes());
        write_u64(&mut bad, 16, u64::MAX);
        let r = reason(decode_page(&bad, PageId(5), PageId(10)));
        assert!(
            r.contains(&format!("count {} exceeds the 61", u64::MAX)),
            "{r}"
        );
        // An escape with no room for the count itself.
        let r = reason(decode_page(&bad[..20], PageId(5), PageId(10)));
        assert!(r.contains("escape without a count"), "{r}");
    }

    fn spans(v: &[(u64, u64)]) -> Vec<PageSpan> {
        v.iter()
            .map(|&(s, n)| PageSpan::new(PageId(s), n))
            .collect()
    }

    #[test]
    fn runs_encode_to_the_bytes_of_their_ids() {
        // Touching runs (7+2, 9+1) and counts on both sides of the escape and of a chunk.
        for runs in [
            spans(&[]),
            spans(&[(7, 2), (9, 1), (20, 3)]),
            spans(&[(2, 65534)]),
            spans(&[(2, 65534), (70000, 1)]),
            spans(&[(3, 511), (600, 513), (5000, 1)]),
        ] {
            let ids: Vec<PageId> = runs.iter().flat_map(|r| r.ids()).collect();
            let pages = page_count_for(ids.len() as u64, PS) + 1;
            let (mut from_ids, mut from_runs) = (Vec::new(), Vec::new());
            encode_page_into(&mut from_ids, PageId(5), &ids, PS, pages);
            encode_runs_into(&mut from_runs, PageId(5), &runs, PS, pages);
            assert!(from_ids == from_runs, "{} ids", ids.len());
            assert_eq!(from_runs.len() as u64, pages * u64::from(PS));
        }
    }

    #[test]
    fn decode_runs_groups_what_decode_page_reads() {
        let runs = spans(&[(2, 3), (9, 1), (11, 600)]);
        let mut buf = Vec::new();
        encode_runs_into(&mut buf, PageId(1000), &runs, PS, 2);
        let hwm = PageId(1000);
        assert_eq!(decode_runs(&buf, PageId(1000), hwm).unwrap(), runs);
        // Unsorted (bbolt sorts on read): ids 3 and 2 swapped give the same runs.
        let mut unsorted = buf.clone();
        write_u64(&mut unsorted, 16, 3);
        write_u64(&mut unsorted, 24, 2);
        assert_eq!(decode_runs(&unsorted, PageId(1000), hwm).unwrap(), runs);
        // Every corruption decode_page names, decode_runs names the same way.
        let mut dup = buf.clone();
        write_u64(&mut dup, 24, 2);
        let mut meta = buf.clone();
        write_u64(&mut meta, 32, 1);
        let runs_reason = |b: &[u8], hwm| reason(decode_runs(b, PageId(1000), hwm).map(|_| vec![]));
        for (bad, hwm) in [(&dup, hwm), (&meta, hwm), (&buf, PageId(610))] {
            let want = reason(decode_page(bad, PageId(1000), hwm));
            assert_eq!(runs_reason(bad, hwm), want);
        }
        assert!(runs_reason(&buf[..15], hwm).contains("shorter"));
        assert!(runs_reason(&dup, hwm).contains("page 2 twice"));
    }

    #[test]
    fn unencodable_runs_agrees_with_unencodable() {
        let hwm = PageId(100);
        for runs in [
            spans(&[(2, 3), (5, 1)]),
            spans(&[(1, 3)]),
            spans(&[(90, 10)]),
            spans(&[(90, 11)]),
            spans(&[(3, 3), (4, 1)]),
        ] {
            let ids: Vec<PageId> = runs.iter().flat_map(|r| r.ids()).collect();
            let mut sorted_ids = ids.clone();
            sorted_ids.sort();
            // Overlapping runs list a page twice; `unencodable` sees it in the id order.
            let want = unencodable(&ids, hwm).map(|c| c.to_string());
            let got = unencodable_runs(&runs, hwm).map(|c| c.to_string());
            assert_eq!(got.is_some(), want.is_some(), "{runs:?}");
            if sorted_ids == ids {
                assert_eq!(got, want, "{runs:?}");
            }
        }
    }
}
