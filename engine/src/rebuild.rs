//! Rebuilding the free set when the freelist is not persisted (`no_freelist_sync`): free =
//! `[2, high-water)` minus every page reachable from any bucket.
//!
//! One bitmap over the high-water mark (bounded by the file length, which open has checked) and
//! one pass over it to emit free ids in order. A page reached twice, a page of the wrong type or
//! a tree deeper than the limits is a typed corruption error: a free set built from a corrupt
//! tree would hand out live pages.

use crate::bucket::{decode_header, BucketRoot};
use crate::counters::Counters;
use crate::error::{Corruption, Error, Result};
use crate::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crate::meta::Meta;
use crate::node::{Body, Child, LeafItem};
use crate::pager::Pager;
use crate::types::PageId;

/// A fixed-size bitmap over page ids.
pub(crate) struct PageBitmap {
    words: Vec<u64>,
}

impl PageBitmap {
    pub fn new(pages: u64) -> PageBitmap {
        PageBitmap {
            words: vec![0; pages.div_ceil(64) as usize],
        }
    }

    /// Set bit `id`; returns whether it was already set.
    pub fn set(&mut self, id: u64) -> bool {
        let (w, b) = ((id / 64) as usize, id % 64);
        let was = self.words[w] >> b & 1 == 1;
        self.words[w] |= 1 << b;
        was
    }

    pub fn get(&self, id: u64) -> bool {
        self.words
            .get((id / 64) as usize)
            .is_some_and(|w| w >> (id % 64) & 1 == 1)
    }
}

/// Sub-bucket roots referenced by the bucket items of a leaf (inline buckets are searched for
/// nested paged buckets too, bounded by `MAX_BUCKET_DEPTH`).
pub(crate) fn bucket_roots(
    items: &[LeafItem],
    page: PageId,
    depth: usize,
    out: &mut Vec<(PageId, usize)>,
) -> Result<()> {
    if depth > MAX_BUCKET_DEPTH {
        return Err(Error::corrupted(page, Corruption::BucketsTooDeep));
    }
    for it in items.iter().filter(|it| it.is_bucket()) {
        match decode_header(&it.value, page)?.root {
            BucketRoot::Page(id) => out.push((id, depth)),
            BucketRoot::Inline(n) => {
                if let Body::Leaf(inner) = &n.body {
                    bucket_roots(inner, page, depth + 1, out)?;
                }
            }
        }
    }
    Ok(())
}

/// The sorted free page ids of the snapshot `meta`.
pub(crate) fn free_pages(
    pager: &Pager,
    meta: &Meta,
    counters: &mut Counters,
) -> Result<Vec<PageId>> {
    let hwm = meta.high_water;
    let mut seen = PageBitmap::new(hwm.0);
    seen.set(0);
    seen.set(1);
    // (page, tree level, bucket depth, the page that references it)
    let mut stack: Vec<(PageId, usize, usize, PageId)> = vec![(meta.root, 0, 1, meta.slot())];
    let mut roots = Vec::new();
    while let Some((id, level, depth, from)) = stack.pop() {
        if level > MAX_TREE_DEPTH {
            return Err(Error::corrupted(from, Corruption::TreeTooDeep));
        }
        let node = pager.node(id, hwm, from)?;
        let span = node.origin.expect("pager nodes carry their origin");
        for p in span.ids() {
            counters.rebuild_pages_visited += 1;
            if seen.set(p.0) {
                return Err(Error::corrupted(
                    from,
                    Corruption::ReachedTwice { target: p },
                ));
            }
        }
        match &node.body {
            Body::Branch(items) => {
                for it in items {
                    if let Child::Page(c) = it.child {
                        stack.push((c, level + 1, depth, id));
                    }
                }
            }
            Body::Leaf(items) => {
                roots.clear();
                bucket_roots(items, id, depth, &mut roots)?;
                stack.extend(roots.iter().map(|&(r, d)| (r, 0, d + 1, id)));
            }
        }
    }
    Ok((2..hwm.0).filter(|&p| !seen.get(p)).map(PageId).collect())
}

#[cfg(test)]
mod tests {
    use super::PageBitmap;

    #[test]
    fn bitmap_sets_and_reports() {
        let mut b = PageBitmap::new(130);
        assert!(!b.set(129));
        assert!(b.set(129));
        assert!(b.get(129));
        assert!(!b.get(128));
        assert!(!b.get(100_000), "out of range reads as unset");
    }
}
