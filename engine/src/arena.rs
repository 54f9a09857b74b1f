//! The commit's page images, in one buffer the writer keeps from commit to commit.
//!
//! A page image is its encoded bytes followed by zeros to the end of its run: the format leaves
//! the tail unused, and the file must hold zeros there (the same bytes bbolt would write).
//! Allocating a zeroed run per node, as first built, zeroed every page in full and then
//! overwrote most of it: a quarter of a one-key commit's instructions went to `memset`, and
//! another tenth to allocating and freeing the runs.
//!
//! Here each page of the buffer remembers how many of its leading bytes the image last placed
//! there may have made non-zero. Placing a new image zeroes only the bytes the old one wrote
//! past what the new one writes, so a commit's zeroing follows how much its images shrank, not
//! their size.
//!
//! The buffer is kept only while it is small ([`RETAIN_BYTES`]): a commit of many pages (a
//! large value, a bulk load) gets a buffer of its own, freed when it ends, so that the memory a
//! database holds between commits does not follow its largest commit.
//!
//! The images a commit placed stay in the buffer until the next commit places its own. A
//! branch whose keys did not change (a one-key write changes one child pointer in each branch
//! on its path) lands, in a commit that writes the same path, where its last image lies:
//! [`PageArena::place_over`] hands that image back, and the caller rewrites the page ids in it
//! instead of encoding every key again.
//!
//! Invariants: in page `j` of `bytes`, every byte at or past `written[j]` is zero; `prior` lists
//! the images the last completed commit placed, each still as it left it.

use crashlab_format::page::ByteSink;
use crashlab_format::types::PageId;
use std::ops::Range;

/// The most buffer kept from one commit to the next: 256 pages of 4 KiB, where a one-key
/// commit uses about 6.
pub(crate) const RETAIN_BYTES: usize = 1 << 20;

#[derive(Debug, Default)]
pub(crate) struct PageArena {
    page_size: usize,
    bytes: Vec<u8>,
    /// Per page of `bytes`: the leading bytes that may be non-zero.
    written: Vec<usize>,
    /// Pages handed out since the last [`PageArena::reset`].
    used: usize,
    /// Bytes zeroed since the last [`PageArena::take_zeroed`]: the stale bytes cleared, and the
    /// buffer's growth (which comes zeroed).
    zeroed: u64,
    /// Each image placed by [`PageArena::place_image`] since the last reset.
    placed: Vec<Placed>,
    /// The images the last completed commit placed (see [`PageArena::complete`]).
    prior: Vec<Placed>,
    /// Whether the commit that placed `placed` completed.
    completed: bool,
}

/// An image in the buffer: the page it was written to, where it lies, how long it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Placed {
    id: PageId,
    first: usize,
    pages: usize,
    len: usize,
}

impl PageArena {
    /// Start a commit of pages of `page_size` bytes: every page may be handed out again.
    pub fn reset(&mut self, page_size: u32) {
        let page_size = page_size as usize;
        assert!(page_size > 0, "pages have a size");
        if page_size != self.page_size {
            // Another page size (a database reopened differently): start over.
            *self = PageArena {
                page_size,
                ..PageArena::default()
            };
        }
        self.used = 0;
        // A commit that failed half way may have placed images that no page holds.
        self.prior.clear();
        if std::mem::take(&mut self.completed) {
            std::mem::swap(&mut self.prior, &mut self.placed);
        }
        self.placed.clear();
    }

    /// The commit that placed this buffer's images completed: its pages hold them, so the next
    /// commit may find them with [`PageArena::place_over`].
    pub fn complete(&mut self) {
        self.completed = true;
    }

    /// [`PageArena::place`] for the image of page `id`, remembered for the next commit.
    pub fn place_image(
        &mut self,
        id: PageId,
        pages: usize,
        len: usize,
    ) -> (Range<usize>, &mut [u8]) {
        let first = self.used;
        self.placed.push(Placed {
            id,
            first,
            pages,
            len,
        });
        self.place(pages, len)
    }

    /// Room for the image of page `id` (`len` bytes in `pages` pages), as
    /// [`PageArena::place_image`] gives it, but holding the image of page `prior` that the last
    /// completed commit placed, when that image lies exactly where this one goes, over as many
    /// pages: the caller then rewrites what changed in it (the run is [`PageArena::run_mut`] of
    /// the range returned, with the old image's length). Where the old image was longer, its
    /// bytes past `len` are left for the caller to zero once it has moved what it needs of them
    /// (they are counted as zeroed here). `None` when there is no such image (the caller places
    /// and encodes as usual).
    pub fn place_over(
        &mut self,
        id: PageId,
        prior: PageId,
        pages: usize,
        len: usize,
    ) -> Option<(Range<usize>, usize)> {
        // The last commit placed its images in order: the one lying where this one goes is
        // found by its first page.
        let at = self
            .prior
            .binary_search_by_key(&self.used, |p| p.first)
            .ok()?;
        let old = self.prior[at];
        if old.id != prior || old.pages != pages {
            return None;
        }
        self.placed.push(Placed {
            id,
            first: old.first,
            pages,
            len,
        });
        Some((self.claim(pages, len, false), old.len))
    }

    /// The page just past the image placed last, when nothing was placed after it: an image of
    /// that page placed next lies back to back with it, and the two go out in one write
    /// without a copy (`flush.rs`).
    pub fn page_after_last(&self) -> Option<PageId> {
        let last = self.placed.last()?;
        (last.first + last.pages == self.used).then(|| last.id.plus(last.pages as u64))
    }

    /// The bytes at `range`, one that [`PageArena::place_over`] returned.
    pub fn run_mut(&mut self, range: Range<usize>) -> &mut [u8] {
        &mut self.bytes[range]
    }

    /// Room for an image of `pages` pages whose first `len` bytes the caller overwrites in
    /// full: returns where it lies in [`PageArena::bytes`] and the run, every byte of which
    /// from `len` on is zero.
    pub fn place(&mut self, pages: usize, len: usize) -> (Range<usize>, &mut [u8]) {
        let range = self.claim(pages, len, true);
        (range.clone(), &mut self.bytes[range])
    }

    /// Hand out the next `pages` pages for an image of `len` bytes. With `clear`, the bytes the
    /// last image there wrote past `len` are zeroed; without, the caller zeroes them.
    fn claim(&mut self, pages: usize, len: usize, clear: bool) -> Range<usize> {
        let ps = self.page_size;
        assert!(ps > 0, "reset before place");
        assert!(pages >= 1 && len <= pages * ps, "an image fits its run");
        let first = self.used;
        let end = first + pages;
        if end > self.written.len() {
            // New pages come zeroed, written to nowhere.
            self.zeroed += ((end - self.written.len()) * ps) as u64;
            self.bytes.resize(end * ps, 0);
            self.written.resize(end, 0);
        }
        for (i, written) in self.written[first..end].iter_mut().enumerate() {
            let new = len.saturating_sub(i * ps).min(ps);
            if *written > new {
                if clear {
                    let page = (first + i) * ps;
                    self.bytes[page + new..page + *written].fill(0);
                }
                self.zeroed += (*written - new) as u64;
            }
            *written = new;
        }
        self.used = end;
        first * ps..end * ps
    }

    /// End a commit: give the buffer back if it grew past [`RETAIN_BYTES`].
    pub fn trim(&mut self) {
        if self.bytes.len() > RETAIN_BYTES {
            let page_size = self.page_size;
            let zeroed = self.zeroed;
            // The images go with the buffer (`completed` false: nothing to find next time).
            *self = PageArena {
                page_size,
                zeroed,
                ..PageArena::default()
            };
        }
    }

    /// The bytes zeroed since the last call (the `image_bytes_zeroed` counter).
    pub fn take_zeroed(&mut self) -> u64 {
        std::mem::take(&mut self.zeroed)
    }

    /// Every image placed since the last reset, at the ranges [`PageArena::place`] returned.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.used * self.page_size]
    }
}

/// A run [`PageArena::place`] handed out, for an encoder that appends (the freelist page's):
/// every byte from the image length given to `place` on is zero already, so appending zeros
/// there only moves the end; before it, the last image's bytes are cleared as a `Vec` would.
pub(crate) struct ZeroedRun<'a> {
    run: &'a mut [u8],
    len: usize,
    /// Bytes from here on are zero.
    zero_from: usize,
}

impl<'a> ZeroedRun<'a> {
    /// `run` as `place(_, image_len)` returned it.
    pub fn new(run: &'a mut [u8], image_len: usize) -> ZeroedRun<'a> {
        debug_assert!(run[image_len..].iter().all(|&b| b == 0), "the tail is zero");
        ZeroedRun {
            run,
            len: 0,
            zero_from: image_len,
        }
    }
}

impl ByteSink for ZeroedRun<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        self.run[self.len..end].copy_from_slice(bytes);
        self.len = end;
    }
    fn zero_fill_to(&mut self, len: usize) {
        assert!(len <= self.run.len(), "past the end of the run");
        if self.len < self.zero_from {
            self.run[self.len..len.min(self.zero_from)].fill(0);
        }
        self.len = self.len.max(len);
    }
    fn tail_mut(&mut self, at: usize) -> &mut [u8] {
        &mut self.run[at..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::{PageArena, ZeroedRun, RETAIN_BYTES};
    use crashlab_format::page::ByteSink;
    use crashlab_format::types::PageId;

    /// The bytes of every image placed, as a fresh zeroed run with the image written would be.
    #[test]
    fn a_reused_page_reads_as_a_fresh_zeroed_one() {
        let mut a = PageArena::default();
        a.reset(64);
        let (r, run) = a.place(2, 100);
        assert_eq!(r, 0..128);
        assert!(run.iter().all(|&b| b == 0));
        run[..100].fill(0xAA);
        let (r, run) = a.place(1, 64);
        assert_eq!(r, 128..192);
        run.fill(0xBB);
        // Next commit: shorter images at the same places must not show the old bytes.
        a.reset(64);
        let (_, run) = a.place(1, 10);
        assert!(run[10..].iter().all(|&b| b == 0), "{run:?}");
        run[..10].fill(1);
        let (_, run) = a.place(2, 70);
        assert!(run[70..].iter().all(|&b| b == 0), "{run:?}");
        run[..70].fill(2);
        // The growth (3 pages) and the stale bytes: 54 of the first page, 64 - 6 of the third.
        assert_eq!(a.take_zeroed(), 192 + 54 + 58);
        assert_eq!(a.take_zeroed(), 0);
        let mut expected = vec![1u8; 10];
        expected.resize(64, 0);
        expected.extend([2u8; 70]);
        expected.resize(192, 0);
        assert_eq!(a.bytes(), &expected[..]);
    }

    #[test]
    fn a_large_commit_does_not_keep_its_buffer() {
        let mut a = PageArena::default();
        a.reset(4096);
        a.place(RETAIN_BYTES / 4096, 10);
        a.trim();
        assert_eq!(a.bytes.len(), RETAIN_BYTES, "at the limit it is kept");
        a.reset(4096);
        a.place(RETAIN_BYTES / 4096 + 1, 10);
        a.trim();
        assert!(a.bytes.is_empty() && a.written.is_empty());
        // What is given back was zeroed as it grew, and stays counted.
        assert_eq!(a.take_zeroed(), (RETAIN_BYTES + 4096) as u64);
        a.reset(4096);
        let (r, run) = a.place(1, 0);
        assert_eq!(r, 0..4096);
        assert!(run.iter().all(|&b| b == 0));
    }

    /// Appending to a placed run leaves what a `Vec` would hold, though the last image was longer.
    #[test]
    fn a_zeroed_run_appends_as_a_vec_does() {
        let mut a = PageArena::default();
        a.reset(64);
        a.place(1, 64).1.fill(7);
        a.reset(64);
        let (_, run) = a.place(1, 20);
        let mut sink = ZeroedRun::new(run, 20);
        let mut vec = Vec::new();
        for s in [&mut sink as &mut dyn ByteSink, &mut vec] {
            s.extend_from_slice(&[1, 2, 3]);
            s.zero_fill_to(64);
            s.tail_mut(3)[..2].copy_from_slice(&[4, 5]);
        }
        assert_eq!(sink.len(), 64);
        assert_eq!(a.bytes(), &vec[..]);
        assert_eq!(
            a.take_zeroed(),
            64 + 44,
            "the growth, then the stale bytes past 20"
        );
    }

    /// An image of the last completed commit comes back only where it lies and as long as it
    /// was, with its bytes; after a commit that did not complete, nothing does.
    #[test]
    fn place_over_finds_the_last_completed_commits_image_where_it_lies() {
        let (a_id, b_id) = (PageId(10), PageId(11));
        let mut a = PageArena::default();
        a.reset(64);
        a.place_image(a_id, 1, 30).1[..30].fill(1);
        a.place_image(b_id, 1, 40).1[..40].fill(2);
        a.complete();
        a.reset(64);
        // Page 11's image lies in the second page: not where the first image goes.
        assert_eq!(a.place_over(PageId(20), b_id, 1, 40), None);
        let (first, old_len) = a
            .place_over(PageId(20), a_id, 1, 30)
            .expect("page 10's image");
        assert_eq!(old_len, 30);
        assert!(a.run_mut(first)[..30].iter().all(|&b| b == 1));
        // A shorter image over page 11's: the old bytes stay for the caller to move and zero.
        let (second, old_len) = a
            .place_over(PageId(21), b_id, 1, 35)
            .expect("page 11's image");
        assert_eq!(old_len, 40);
        let run = a.run_mut(second);
        assert!(run[..40].iter().all(|&b| b == 2));
        run[35..40].fill(0);
        assert_eq!(
            a.take_zeroed(),
            128 + 5,
            "growth, and the 5 bytes the caller zeroes"
        );
        // Not completed: its images are not found by the next commit, nor the older ones.
        a.reset(64);
        assert_eq!(a.place_over(PageId(30), PageId(20), 1, 30), None);
        assert_eq!(a.place_over(PageId(30), a_id, 1, 30), None);
    }

    #[test]
    fn the_page_after_the_last_image_only_while_nothing_followed_it() {
        let mut a = PageArena::default();
        a.reset(64);
        assert_eq!(a.page_after_last(), None, "nothing placed");
        a.place_image(PageId(7), 2, 100);
        assert_eq!(
            a.page_after_last(),
            Some(PageId(9)),
            "an image of pages 7–8"
        );
        a.place_image(PageId(3), 1, 10);
        assert_eq!(
            a.page_after_last(),
            Some(PageId(4)),
            "the last placed, not the highest"
        );
        a.place(1, 10);
        assert_eq!(a.page_after_last(), None, "something else lies after it");
        a.reset(64);
        assert_eq!(a.page_after_last(), None, "a new commit placed nothing yet");
    }

    #[test]
    fn another_page_size_starts_over() {
        let mut a = PageArena::default();
        a.reset(64);
        a.place(1, 64).1.fill(7);
        a.reset(128);
        let (r, run) = a.place(1, 0);
        assert_eq!(r, 0..128);
        assert!(run.iter().all(|&b| b == 0));
    }
}
