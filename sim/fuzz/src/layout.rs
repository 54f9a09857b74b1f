//! Where the structures of a (well-formed) base file lie, byte by byte: the metas, the freelist
//! page, every branch and leaf page and inline bucket image the trees reach, each element
//! header, each bucket header, and who points at whom. The mutators aim at these offsets, so
//! a mutation changes one field of one structure and the engine reads past the outer checks.
//!
//! The parse trusts nothing it reads either (a base is a file like any other): every offset is
//! bounds-checked, each page is entered once, and nothing recurses.

use crashlab_format::meta::{Meta, META_SIZE};
use crashlab_format::page::{
    read_u16, read_u32, read_u64, ELEMENT_SIZE, FLAG_BRANCH, FLAG_FREELIST, FLAG_LEAF,
    LEAF_FLAG_BUCKET, PAGE_HEADER_SIZE,
};
use crashlab_format::types::PageId;
use std::collections::{BTreeMap, BTreeSet};

const HEADER: u64 = PAGE_HEADER_SIZE as u64;
const ELEMENT: u64 = ELEMENT_SIZE as u64;
/// A bucket header's size (root u64, sequence u64).
pub const BUCKET_HEADER: u64 = 16;

/// One element header of a node image.
#[derive(Clone, Debug)]
pub struct Element {
    /// Byte offset of the 16-byte element header in the file.
    pub offset: u64,
    /// A branch element's child page.
    pub child: Option<u64>,
    /// A leaf element that is a sub-bucket: index into [`Layout::buckets`].
    pub bucket: Option<usize>,
}

/// A branch or leaf node: a page (with its overflow pages) or an inline bucket's image.
#[derive(Clone, Debug)]
pub struct NodeImage {
    /// The page id; `None` for an inline image.
    pub page: Option<u64>,
    /// The page whose bytes hold it (itself for a page).
    pub host: u64,
    /// Byte offset of its page header.
    pub offset: u64,
    pub branch: bool,
    pub elements: Vec<Element>,
}

/// A sub-bucket's header, stored as a leaf value.
#[derive(Clone, Debug)]
pub struct BucketRef {
    /// Byte offset of the 16-byte header (root, sequence).
    pub offset: u64,
    /// The root page; 0 for an inline bucket.
    pub root: u64,
}

#[derive(Clone, Debug)]
pub struct Layout {
    pub page_size: u32,
    pub file_len: u64,
    /// Both metas as stored, when they decode and validate.
    pub metas: [Option<Meta>; 2],
    /// The slot of the meta in use (the valid one with the higher txid).
    pub in_use: usize,
    pub high_water: u64,
    /// The freelist page and its page count, when the meta in use has one.
    pub freelist: Option<(u64, u64)>,
    pub nodes: Vec<NodeImage>,
    pub buckets: Vec<BucketRef>,
    /// Page → the page that references it (a branch's child, or a bucket's root page).
    pub parent: BTreeMap<u64, u64>,
}

impl Layout {
    /// Parse `bytes`; `None` when neither meta validates (then only blind mutations apply).
    pub fn parse(bytes: &[u8]) -> Option<Layout> {
        let page_size = Meta::decode(bytes.get(..HEADER as usize + META_SIZE)?, PageId(0))
            .ok()?
            .page_size;
        let meta_at = |slot: u64| {
            let at = (slot * u64::from(page_size)) as usize;
            let buf = bytes.get(at..at + HEADER as usize + META_SIZE)?;
            Meta::decode(buf, PageId(slot)).ok()
        };
        let metas = [meta_at(0), meta_at(1)];
        let in_use = match metas {
            [Some(a), Some(b)] => usize::from(b.txid > a.txid),
            [Some(_), None] => 0,
            [None, Some(_)] => 1,
            [None, None] => return None,
        };
        let meta = metas[in_use]?;
        let mut layout = Layout {
            page_size,
            file_len: bytes.len() as u64,
            metas,
            in_use,
            high_water: meta.high_water.0,
            freelist: None,
            nodes: Vec::new(),
            buckets: Vec::new(),
            parent: BTreeMap::new(),
        };
        layout.freelist = meta
            .has_freelist()
            .then(|| layout.span_of(bytes, meta.freelist.0, FLAG_FREELIST))
            .flatten()
            .map(|pages| (meta.freelist.0, pages));
        layout.walk(bytes, meta.root.0);
        Some(layout)
    }

    pub fn meta(&self) -> Meta {
        self.metas[self.in_use].expect("the meta in use decoded")
    }

    /// Byte offset of page `id`.
    pub fn offset(&self, id: u64) -> u64 {
        id.saturating_mul(u64::from(self.page_size))
    }

    /// Pages of the node or freelist at `id` (1 + overflow), when its header has `flags` and
    /// the span lies below the high-water mark and inside the file.
    fn span_of(&self, bytes: &[u8], id: u64, flags: u16) -> Option<u64> {
        if id < 2 || id >= self.high_water {
            return None;
        }
        let at = usize::try_from(self.offset(id)).ok()?;
        let header = bytes.get(at..at + HEADER as usize)?;
        if read_u64(header, 0) != id || read_u16(header, 8) != flags {
            return None;
        }
        let pages = 1 + u64::from(read_u32(header, 12));
        let end = id.checked_add(pages)?;
        let in_file = self.offset(end) <= bytes.len() as u64;
        (end <= self.high_water && in_file).then_some(pages)
    }

    /// Every page the trees reach from the root bucket's root page, depth first.
    fn walk(&mut self, bytes: &[u8], root: u64) {
        let mut seen = BTreeSet::new();
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let kind = [FLAG_BRANCH, FLAG_LEAF]
                .into_iter()
                .find_map(|f| self.span_of(bytes, id, f).map(|p| (f, p)));
            let Some((flags, pages)) = kind else { continue };
            let start = self.offset(id);
            let end = start + pages * u64::from(self.page_size);
            let node = self.node_at(bytes, (start, end), flags == FLAG_BRANCH, Some(id), id);
            for child in node.elements.iter().filter_map(|e| e.child) {
                self.parent.entry(child).or_insert(id);
                stack.push(child);
            }
            let roots: Vec<u64> = node
                .elements
                .iter()
                .filter_map(|e| e.bucket)
                .map(|b| self.buckets[b].root)
                .filter(|&r| r != 0)
                .collect();
            for r in roots {
                self.parent.entry(r).or_insert(id);
                stack.push(r);
            }
            self.nodes.push(node);
        }
    }

    /// The node whose bytes are `start..end`; records its buckets and, for a page, the inline
    /// images inside it (an inline image inside an inline image is not followed: the format has
    /// none, and following them would recurse).
    fn node_at(
        &mut self,
        bytes: &[u8],
        (start, end): (u64, u64),
        branch: bool,
        page: Option<u64>,
        host: u64,
    ) -> NodeImage {
        let count = bytes
            .get(start as usize + 10..start as usize + 12)
            .map_or(0, |b| u64::from(read_u16(b, 0)));
        let mut node = NodeImage {
            page,
            host,
            offset: start,
            branch,
            elements: Vec::new(),
        };
        let mut inline = Vec::new();
        for i in 0..count {
            let at = start + HEADER + i * ELEMENT;
            let Some(elem) = bytes.get(at as usize..(at + ELEMENT) as usize) else {
                break;
            };
            if at + ELEMENT > end {
                break;
            }
            let mut e = Element {
                offset: at,
                child: None,
                bucket: None,
            };
            if branch {
                e.child = Some(read_u64(elem, 8));
            } else if read_u32(elem, 0) & LEAF_FLAG_BUCKET != 0 {
                let value = at + u64::from(read_u32(elem, 4)) + u64::from(read_u32(elem, 8));
                let vsize = u64::from(read_u32(elem, 12));
                let header = bytes.get(value as usize..(value + BUCKET_HEADER) as usize);
                if let (Some(h), true) = (header, vsize >= BUCKET_HEADER && value + vsize <= end) {
                    let root = read_u64(h, 0);
                    e.bucket = Some(self.buckets.len());
                    self.buckets.push(BucketRef {
                        offset: value,
                        root,
                    });
                    if root == 0 && page.is_some() && vsize >= BUCKET_HEADER + HEADER {
                        inline.push((value + BUCKET_HEADER, value + vsize));
                    }
                }
            }
            node.elements.push(e);
        }
        for (s, e) in inline {
            let image = self.node_at(bytes, (s, e), false, None, host);
            self.nodes.push(image);
        }
        node
    }

    /// The pages on the way from page `id` up to the root bucket's root (`id` excluded).
    pub fn ancestors(&self, id: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = id;
        while let Some(&p) = self.parent.get(&at) {
            if out.contains(&p) || out.len() > 256 {
                break;
            }
            out.push(p);
            at = p;
        }
        out
    }

    /// Page ids of the branch and leaf pages the trees reach.
    pub fn node_pages(&self) -> Vec<u64> {
        self.nodes.iter().filter_map(|n| n.page).collect()
    }
}
