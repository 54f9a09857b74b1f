//! Step 2 of the commit protocol: the freelist page (free ∪ pending ids) and where its image
//! is assembled.
//!
//! A page of a few ids is mostly zeros. Encoded into the commit buffer, which is allocated
//! afresh for every commit, that page was zeroed in full each time: 4,096 of a one-key Set's
//! instructions (glibc's `rep stosb`, counted per byte). It is placed instead in the writer's
//! second arena (`WriterState::fixed`), where the freelist image of the commit before lay, so
//! only what the list shrank by is zeroed, and then written like a node's image (from where it
//! lies, or through the commit buffer when it joins a run of other pages). When its page
//! directly follows the page of the node placed last, it is placed right after that node in
//! the node arena instead: the run they form then goes out from the arena without a copy (most
//! one-key writes, under either freelist). A long list (one that would not leave the arena
//! small enough to keep) is encoded straight into the commit buffer as before: kept nowhere,
//! it would be zeroed anyway, and copied once more.

use super::Sink;
use crate::arena::{ZeroedRun, RETAIN_BYTES};
use crate::counters::shape;
use crate::error::{Error, FormatError, Result};
use crate::spill::SpillSink;
use crashlab_format::freelist;
use crashlab_format::limits::MAX_FREE_IDS;
use crashlab_format::page::ByteSink;
use crashlab_format::types::{PageId, PageSpan};
use std::ops::Range;

/// Where a commit's freelist page image is.
pub(super) enum FreelistImage {
    /// Encoded into an arena, at this range of its bytes: the node arena when the page follows
    /// the node placed last there (`after_nodes`), else the fixed arena.
    Placed {
        start: PageId,
        at: Range<usize>,
        after_nodes: bool,
    },
    /// Too long to keep: encoded straight into the commit buffer (`flush.rs`).
    Encoded(LongList),
}

/// A freelist page encoded only when the commit buffer takes it.
pub(super) struct LongList {
    pub start: PageId,
    list: List,
}

/// What a freelist page lists.
struct List {
    start: PageId,
    pages: u64,
    page_size: u32,
    /// Free and pending pages, ascending.
    runs: Vec<PageSpan>,
    /// Pages in `runs`: the ids the page lists.
    ids: u64,
    /// A negative control forgets the count escape (see `DebugHooks`).
    wrap_count: bool,
}

impl List {
    fn len(&self) -> usize {
        usize::try_from(self.pages * u64::from(self.page_size)).expect("freelist fits memory")
    }

    fn encode(&self, buf: &mut impl ByteSink) {
        let at = buf.len();
        freelist::encode_runs_into(buf, self.start, &self.runs, self.page_size, self.pages);
        if self.wrap_count && self.ids >= shape::FREELIST_ESCAPE_IDS {
            freelist::forget_count_escape(buf.tail_mut(at), self.ids);
        }
    }
}

impl LongList {
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn encode(&self, buf: &mut impl ByteSink) {
        self.list.encode(buf);
    }
}

/// Allocate the freelist page (free ∪ pending ids) and assemble or describe its image.
pub(super) fn write_freelist(sink: &mut Sink<'_>) -> Result<PageSpan> {
    // The reservation's pages still held go back to the free set once this page is taken.
    let estimate =
        sink.freelist.free_count() + sink.freelist.pending_count() + sink.reservation.held();
    // One 8-byte id per free page, by the format: refuse before building the list.
    if estimate > MAX_FREE_IDS {
        return Err(Error::Format(FormatError::TooManyFreeIds {
            what: "freelist page",
            count: estimate,
            max: MAX_FREE_IDS,
        }));
    }
    let pages = freelist::page_count_for(estimate, sink.page_size);
    let start = sink.allocate(pages)?;
    sink.give_back_reserved();
    // As runs: the free set's and the pending pages', never one entry per free page, in the
    // writer's kept list.
    let mut runs = std::mem::take(sink.free_runs);
    sink.freelist.all_runs_into(&mut runs);
    let ids: u64 = runs.iter().map(|r| r.count).sum();
    // Pair check: the page must decode under the meta this commit writes.
    if let Some(reason) = freelist::unencodable_runs(&runs, sink.high_water) {
        return Err(Error::corrupted(start, reason));
    }
    // Allocation only shrinks the list (the reservation's remainder was counted in the
    // estimate), so the encoding fits; the header records the pages actually allocated so the
    // next commit frees all of them.
    assert!(freelist::page_count_for(ids, sink.page_size) <= pages);
    let list = List {
        start,
        pages,
        page_size: sink.page_size,
        runs,
        ids,
        wrap_count: sink.wrap_freelist_count,
    };
    let len = list.len();
    let escaped = ids >= shape::FREELIST_ESCAPE_IDS;
    sink.counters.freelist_escaped_writes += u64::from(escaped);
    sink.counters.freelist_long_writes += u64::from(pages >= shape::FREELIST_LONG_PAGES);
    sink.counters.freelist_pages_written += pages;
    sink.counters.freelist_bytes_written += len as u64;
    sink.dirty_bytes += len;
    // The fixed arena also takes the meta page; past that it would not be kept.
    let image = if len + sink.page_size as usize <= RETAIN_BYTES {
        let used = usize::try_from(freelist::encoded_size(ids)).expect("freelist fits memory");
        let pages = usize::try_from(pages).expect("freelist fits memory");
        // Placed after the node whose page it follows, the run they form is written from the
        // arena as it lies; anywhere else, it would be copied into the commit buffer with them.
        let after_nodes = sink.arena.page_after_last() == Some(start)
            && sink.arena.bytes().len() + len <= RETAIN_BYTES;
        let arena = if after_nodes {
            &mut *sink.arena
        } else {
            &mut *sink.fixed
        };
        let (at, run) = arena.place(pages, used);
        list.encode(&mut ZeroedRun::new(run, used));
        *sink.free_runs = list.runs;
        FreelistImage::Placed {
            start,
            at,
            after_nodes,
        }
    } else {
        FreelistImage::Encoded(LongList { start, list })
    };
    sink.freelist_page = Some(image);
    Ok(PageSpan::new(start, pages))
}
