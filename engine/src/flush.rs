//! Step 4 of the commit protocol (and the syncs of steps 3 and 5): a commit's encoded pages go
//! out sorted by id, serialised into one buffer sized by `Options::presize`, one `write_at` per
//! run of contiguous pages; every write and sync is counted.

use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::presize::{PresizePolicy, SizedBuf};
use crashlab_format::types::PageId;

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
    /// Bytes already encoded (a node's image), copied into the commit buffer.
    Bytes(&'a [u8]),
    /// `len` bytes that `encode` appends to the commit buffer: the freelist page, which may be
    /// megabytes, is encoded straight into it instead of into a buffer of its own and copied.
    Encoded {
        len: usize,
        encode: &'a dyn Fn(&mut SizedBuf),
    },
}

impl PageImage<'_> {
    pub fn len(&self) -> usize {
        match self {
            PageImage::Bytes(bytes) => bytes.len(),
            PageImage::Encoded { len, .. } => *len,
        }
    }

    /// Append the image to `buf`.
    fn append_to(&self, buf: &mut SizedBuf) {
        match self {
            PageImage::Bytes(bytes) => buf.extend_from_slice(bytes),
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

/// A commit's encoded pages and their total length, counted as they were added.
pub(crate) struct DirtyPages<'a> {
    pub pages: Vec<(PageId, PageImage<'a>)>,
    pub bytes: usize,
}

/// Serialise the dirty pages, sorted by id, into one buffer sized by `policy` (`Estimate`: the
/// byte count kept as pages were encoded, exact for free — a page count × page size would fall
/// short by every overflow page and every page of a multi-page freelist; `Exact`: sum the
/// lengths, one step per dirty entry), then write each run of contiguous pages with one
/// `write_at`.
pub(crate) fn write_pages(
    storage: &dyn crate::Storage,
    page_size: u32,
    dirty: DirtyPages<'_>,
    policy: PresizePolicy,
    counters: &mut Counters,
) -> Result<()> {
    let DirtyPages {
        pages: mut dirty,
        bytes,
    } = dirty;
    dirty.sort_by_key(|(id, _)| *id);
    let mut buf = SizedBuf::for_policy(policy, bytes, || {
        let size = dirty.iter().map(|(_, image)| image.len()).sum();
        (size, dirty.len() as u64)
    });
    let runs = serialise_runs(&dirty, page_size, &mut buf);
    debug_assert_eq!(buf.len(), bytes, "the running byte count is exact");
    counters.add_buffer_work(&buf.work());
    counters.write_calls_saved += (dirty.len() - runs.len()) as u64;
    for run in runs {
        let bytes = &buf.as_slice()[run.offset..run.offset + run.len];
        write_at(storage, run.first, page_size, bytes, counters)?;
    }
    Ok(())
}

/// Contiguous pages starting at `first`, at `offset..offset + len` of the commit buffer.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    first: PageId,
    offset: usize,
    len: usize,
}

/// Append the pages of `dirty` (sorted by id, whole pages, no overlap) to `buf`; return the runs
/// of contiguous pages.
fn serialise_runs(
    dirty: &[(PageId, PageImage<'_>)],
    page_size: u32,
    buf: &mut SizedBuf,
) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::with_capacity(dirty.len());
    let mut next_id = None;
    for (id, image) in dirty {
        let len = image.len();
        assert_eq!(len % page_size as usize, 0, "dirty page of whole pages");
        assert!(len > 0, "dirty page is empty");
        if let Some(next) = next_id {
            assert!(*id >= next, "dirty pages overlap at {id}");
        }
        let offset = buf.len();
        image.append_to(buf);
        match runs.last_mut() {
            Some(run) if next_id == Some(*id) => run.len += len,
            _ => runs.push(Run {
                first: *id,
                offset,
                len,
            }),
        }
        next_id = Some(PageId(id.0 + (len / page_size as usize) as u64));
    }
    runs
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
