//! Rebuilding the free set when the freelist is not persisted (`no_freelist_sync`): free =
//! `[2, high-water)` minus every page reachable from any bucket.
//!
//! The reached pages are kept as runs ([`PageSet`]) and the free set is their gaps below the
//! high-water mark, so memory and work follow the pages the walk reads, never the high-water
//! mark a meta claims (a sparse 1 TiB file claims 2^31 pages in 48 KiB; a list of its free ids
//! would take 16 GiB). A page reached twice, a page of the wrong type or a tree deeper than the
//! limits is a typed corruption error: a free set built from a corrupt tree would hand out live
//! pages.

use crate::counters::Counters;
use crate::error::{Corruption, Error, Result};
use crate::pager::Pager;
use crashlab_format::bucket::{decode_header, BucketRoot};
use crashlab_format::limits::{MAX_BUCKET_DEPTH, MAX_TREE_DEPTH};
use crashlab_format::meta::Meta;
use crashlab_format::node::{Body, Child, LeafItem};
use crashlab_format::pageset::PageSet;
use crashlab_format::types::{PageId, PageSpan};

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
        match decode_header(it.value(), page)?.root {
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

/// The free pages of the snapshot `meta`, as runs.
pub(crate) fn free_pages(pager: &Pager, meta: &Meta, counters: &mut Counters) -> Result<PageSet> {
    let reached = reached_pages(pager, meta, counters)?;
    Ok(gaps_below(&reached, meta.high_water))
}

/// The pages in `[2, high_water)` that `used` does not hold, as runs.
pub(crate) fn gaps_below(used: &PageSet, high_water: PageId) -> PageSet {
    let mut free = PageSet::new();
    for gap in used.gaps(PageId(2), high_water) {
        free.insert(gap.start, gap.end());
    }
    free
}

/// The metas and every page reachable from a bucket of the snapshot `meta`, as runs: what the
/// rebuild walks, failing on the first page it cannot use.
pub(crate) fn reached_pages(
    pager: &Pager,
    meta: &Meta,
    counters: &mut Counters,
) -> Result<PageSet> {
    let hwm = meta.high_water;
    let mut seen = PageSet::new();
    seen.insert(PageId(0), PageId(2));
    // (page, tree level, the depth of the bucket the tree belongs to, the page that references
    // it). The root bucket is at depth 0 and a top-level bucket at 1, as the writer counts.
    let mut stack: Vec<(PageId, usize, usize, PageId)> = vec![(meta.root, 0, 0, meta.slot())];
    let mut roots = Vec::new();
    while let Some((id, level, depth, from)) = stack.pop() {
        if level > MAX_TREE_DEPTH {
            return Err(Error::corrupted(from, Corruption::TreeTooDeep));
        }
        let node = pager.node(id, hwm, from)?;
        let span = node.origin.expect("pager nodes carry their origin");
        counters.rebuild_pages_visited += span.count;
        if let Some(twice) = seen.insert(span.start, span.end()).first() {
            let target = twice.start;
            return Err(Error::corrupted(from, Corruption::ReachedTwice { target }));
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
    Ok(seen)
}

/// The free set the next open will rebuild once a commit drops the persisted freelist of `meta`
/// (`no_freelist_sync` on a file that had one), less the pages still in use: the old freelist
/// `span`, which the commit frees (pending), and the `pending` pages. The walk is the one that
/// open will make: if it fails, the commit must not drop the freelist, or the file would no
/// longer open.
///
/// Using it as the free set also drops what the persisted list got wrong: a live page it lists
/// is reached, so no longer free (FORMAT.md §10), and a page it leaked is free again.
pub(crate) fn free_after_dropping(
    pager: &Pager,
    meta: &Meta,
    span: PageSpan,
    pending: &[PageId],
    counters: &mut Counters,
) -> Result<PageSet> {
    debug_assert!(meta.has_freelist() && meta.freelist == span.start);
    let mut used = reached_pages(pager, meta, counters)?;
    if let Some(twice) = used.insert(span.start, span.end()).first() {
        // The tree reaches the freelist page: freeing it would free a live page.
        let target = twice.start;
        return Err(Error::corrupted(
            meta.slot(),
            Corruption::ReachedTwice { target },
        ));
    }
    for &id in pending {
        used.insert(id, id.plus(1));
    }
    Ok(gaps_below(&used, meta.high_water))
}
