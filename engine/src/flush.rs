//! Step 4 of the commit protocol (and the syncs of steps 3 and 5): a commit's encoded pages go
//! out sorted by id, one `write_at` per run of contiguous pages, a run of images that do not
//! already lie back to back serialised first into one buffer sized by `Options::presize`; every
//! write and sync is counted.

use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::presize::{PresizePolicy, SizedBuf};
use crashlab_format::types::PageId;
use std::ops::Range;

/// File length to grow to: the next power of two while under 16 MiB, then 16 MiB steps.
pub(crate) fn grow_to(needed: u64) -> u64 {
    const STEP: u64 = 16 << 20;
    if needed <= STEP {
        needed.next_power_of_two().max(32 << 10)
    } else {
        needed.div_ceil(STEP) * STEP
    }
}

/// One dirty page run's image.
#[derive(Clone, Copy)]
pub(crate) enum PageImage<'a> {
    /// Bytes already encoded (a node's image): the `len` bytes at `at` in `buffer`, the arena
    /// that placed them. Written from there when they are a run of their own, or when the
    /// run's images lie back to back in one buffer; else copied into the commit buffer.
    Bytes {
        buffer: &'a [u8],
        at: usize,
        len: usize,
    },
    /// `len` bytes that `encode` appends to the commit buffer: the freelist page, which may be
    /// megabytes, is encoded straight into it instead of into a buffer of its own and copied.
    Encoded {
        len: usize,
        encode: &'a (dyn Fn(&mut SizedBuf) + Sync),
    },
}

impl<'a> PageImage<'a> {
    /// The image at `at` in `buffer`.
    pub fn placed(buffer: &'a [u8], at: Range<usize>) -> PageImage<'a> {
        assert!(at.end <= buffer.len(), "image {at:?} inside its buffer");
        PageImage::Bytes {
            buffer,
            at: at.start,
            len: at.len(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            PageImage::Bytes { len, .. } | PageImage::Encoded { len, .. } => *len,
        }
    }

    /// Append the image to `buf`.
    fn append_to(&self, buf: &mut SizedBuf) {
        match self {
            PageImage::Bytes { buffer, at, len } => buf.extend_from_slice(&buffer[*at..at + len]),
            PageImage::Encoded { len, encode } => {
                let before = buf.len();
                encode(buf);
                assert_eq!(
                    buf.len() - before,
                    *len,
                    "an encoder writes what it claimed"
                );
            }
        }
    }
}

/// A commit's encoded pages and their total length, counted as they were added, and a list
/// for their runs; both lists are the writer's, kept from commit to commit (`shared.rs`).
pub(crate) struct DirtyPages<'a, 'k> {
    pub pages: &'k mut Vec<(PageId, PageImage<'a>)>,
    pub bytes: usize,
    pub runs: &'k mut Vec<Run>,
}

/// The emptied allocation of a page list, for a list whose images borrow from elsewhere. A
/// commit's list borrows its images from the writer's arenas, so the list cannot be kept from
/// commit to commit, but its allocation can: collecting a `vec::IntoIter` into a `Vec` of an
/// element of the same layout reuses the allocation (`a_recycled_list_keeps_its_allocation`).
pub(crate) fn recycle<'b>(mut list: Vec<(PageId, PageImage<'_>)>) -> Vec<(PageId, PageImage<'b>)> {
    list.clear();
    list.into_iter()
        .map(|_| -> (PageId, PageImage<'b>) { unreachable!("the list is empty") })
        .collect()
}

/// Write the dirty pages, sorted by id, one `write_at` per run of contiguous pages.
///
/// A run of one encoded image (most runs of a small commit: a leaf, its branches, the root) is
/// written from where it lies; copying it first would cost a page of `memcpy` and change no
/// byte on disk. So is a run whose images the arena placed back to back in page order (a leaf
/// and the branch above it, given consecutive pages as they were spilled). A run of images in
/// different places, or holding one still to be encoded (a long freelist page), is serialised
/// into one commit buffer sized by `policy` (`Estimate`: the bytes of those runs, summed by the
/// plan that found them; `Exact`: a pass summing their images, one step per image; `Grow`:
/// doubling from small), made only if some run needs it.
pub(crate) fn write_pages(
    storage: &dyn crate::Storage,
    page_size: u32,
    dirty: DirtyPages<'_, '_>,
    policy: PresizePolicy,
    counters: &mut Counters,
) -> Result<()> {
    let DirtyPages {
        pages: dirty,
        bytes,
        runs,
    } = dirty;
    dirty.sort_by_key(|(id, _)| *id);
    plan_runs(dirty, page_size, runs);
    debug_assert_eq!(
        runs.iter().map(|run| run.len).sum::<usize>(),
        bytes,
        "the running byte count is exact"
    );
    let mut buf = None;
    for run in runs.iter() {
        if let Some(image) = run.direct(dirty) {
            write_at(storage, run.first, page_size, image, counters)?;
            continue;
        }
        let buf = buf.get_or_insert_with(|| commit_buffer(policy, dirty, runs));
        let offset = buf.len();
        for (_, image) in &dirty[run.images.clone()] {
            image.append_to(buf);
        }
        write_at(
            storage,
            run.first,
            page_size,
            &buf.as_slice()[offset..],
            counters,
        )?;
    }
    if let Some(buf) = &buf {
        counters.add_buffer_work(&buf.work());
    }
    counters.write_calls_saved += (dirty.len() - runs.len()) as u64;
    Ok(())
}

/// The buffer for the runs of `runs` that are not written from where they lie, sized by
/// `policy`.
fn commit_buffer(
    policy: PresizePolicy,
    dirty: &[(PageId, PageImage<'_>)],
    runs: &[Run],
) -> SizedBuf {
    let buffered = || runs.iter().filter(|run| run.direct(dirty).is_none());
    SizedBuf::for_policy(policy, buffered().map(|run| run.len).sum(), || {
        let images = buffered().flat_map(|run| &dirty[run.images.clone()]);
        images.fold((0, 0), |(size, steps), (_, image)| {
            (size + image.len(), steps + 1)
        })
    })
}

/// Contiguous pages starting at `first`, `len` bytes, made of the images `images` (indices
/// into the sorted dirty list).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Run {
    first: PageId,
    images: Range<usize>,
    len: usize,
}

impl Run {
    /// The run's bytes where they already lie, when its images are encoded and back to back in
    /// one buffer in page order (a run of one image always is): written from there without
    /// the commit buffer. `None` for a run that goes through the buffer.
    fn direct<'d>(&self, dirty: &[(PageId, PageImage<'d>)]) -> Option<&'d [u8]> {
        let images = &dirty[self.images.clone()];
        let PageImage::Bytes { buffer, at, .. } = images.first()?.1 else {
            return None;
        };
        let mut end = at;
        for (_, image) in images {
            match *image {
                PageImage::Bytes {
                    buffer: b,
                    at: next,
                    len,
                } if std::ptr::eq(b, buffer) && next == end => end += len,
                _ => return None,
            }
        }
        Some(&buffer[at..end])
    }
}

/// The runs of contiguous pages in `dirty` (sorted by id, whole pages, no overlap), into `runs`.
fn plan_runs(dirty: &[(PageId, PageImage<'_>)], page_size: u32, runs: &mut Vec<Run>) {
    runs.clear();
    let mut next_id = None;
    for (at, (id, image)) in dirty.iter().enumerate() {
        let len = image.len();
        assert_eq!(len % page_size as usize, 0, "dirty page of whole pages");
        assert!(len > 0, "dirty page is empty");
        if let Some(next) = next_id {
            assert!(*id >= next, "dirty pages overlap at {id}");
        }
        match runs.last_mut() {
            Some(run) if next_id == Some(*id) => {
                run.len += len;
                run.images.end = at + 1;
            }
            _ => runs.push(Run {
                first: *id,
                images: at..at + 1,
                len,
            }),
        }
        next_id = Some(PageId(id.0 + (len / page_size as usize) as u64));
    }
}

pub(crate) fn write_at(
    storage: &dyn crate::Storage,
    id: PageId,
    page_size: u32,
    bytes: &[u8],
    counters: &mut Counters,
) -> Result<()> {
    let offset = id.0 * u64::from(page_size);
    storage
        .write_at(offset, bytes)
        .map_err(|e| Error::io("write", e))?;
    counters.write_calls += 1;
    counters.pages_written += bytes.len() as u64 / u64::from(page_size);
    counters.bytes_written += bytes.len() as u64;
    Ok(())
}

pub(crate) fn sync(
    storage: &dyn crate::Storage,
    opts: &crate::Options,
    c: &mut Counters,
) -> Result<()> {
    if opts.no_sync {
        return Ok(());
    }
    storage.sync().map_err(|e| Error::io("sync", e))?;
    c.syncs += 1;
    Ok(())
}

#[cfg(test)]
#[path = "flush_tests.rs"]
mod tests;
